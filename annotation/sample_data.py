"""`make run` demo, last step: the synthetic `demo` study with its simulated votes, the sample annotator assigned.

The study is created before its votes are imported so its settings are the demo's: a target per pair above the
imported votes and a generous quota, so the `annotator` account still has items to vote on.
"""

from __future__ import annotations

from core import demo_bundle

DEMO_TARGET_PER_PAIR = 30  # the densest pair has 20 imported votes plus overlap: items remain to vote on
DEMO_QUOTA = 1000


def load_sample_study() -> str:
    from django.contrib.auth import get_user_model

    from agents import selectors as agent_selectors

    from . import services
    from .models import Study
    from .services import gate_reviews, ratings

    slugs = demo_bundle.configuration_slugs()
    if len(agent_selectors.configurations_by_slugs(slugs=slugs)) < len(slugs):
        return ""
    study = Study.objects.filter(name=demo_bundle.DEMO_STUDY).first()
    created = study is None
    if created:
        study = services.study_create(
            name=demo_bundle.DEMO_STUDY,
            configurations=slugs,
            description=f"[synthetic] Demo study: {demo_bundle.SYNTHETIC_NOTE}.",
            target_per_pair=DEMO_TARGET_PER_PAIR,
            overlap_rate=0.1,
            min_dwell_ms=1500,
            quota_per_annotator=DEMO_QUOTA,
            seed=demo_bundle.bundle_index()["seed"],
        )
    report = services.comparisons_import(path=demo_bundle.BUNDLE_DIR / "battles.csv")
    annotators = get_user_model().objects.filter(username="annotator")
    services.study_annotators_set(study=study, users=annotators)
    # The demo's gate-review and rating studies (PPTBench's and PPTArena's protocols), simulated like its votes.
    reviews = gate_reviews.gate_reviews_import(
        path=demo_bundle.BUNDLE_DIR / "gate_reviews.csv", study="demo-gate-review"
    )
    rating_report = ratings.ratings_import(path=demo_bundle.BUNDLE_DIR / "ratings.csv", study="demo-ratings")
    if not created and not report.created:
        return f"demo study {demo_bundle.DEMO_STUDY!r}: already created"
    return (
        f"demo study {demo_bundle.DEMO_STUDY!r}: {len(slugs)} configurations, {report.created} simulated votes "
        f"imported, annotator assigned; demo-gate-review: {reviews.created} reviews; demo-ratings: {rating_report.created} "
        "ratings"
    )
