"""`make run` sample: a small comparison study over the sample agents, with the sample annotator assigned, so
/annotate/ shows real renderings at once and /coordinate/ has a study to watch."""

from __future__ import annotations

SAMPLE_STUDY = "sample"


def load_sample_study() -> str:
    from django.contrib.auth import get_user_model

    from agents import selectors as agent_selectors

    from . import services
    from .models import Study

    if Study.objects.filter(name=SAMPLE_STUDY).exists():
        return f"sample study {SAMPLE_STUDY!r}: already created"
    slugs = [c.slug for c in agent_selectors.configuration_list() if c.slug.startswith("sample-")]
    if len(slugs) < 2:
        return ""
    study = services.study_create(
        name=SAMPLE_STUDY,
        configurations=slugs,
        description="Sample study over the sample agents (make run).",
        target_per_pair=6,
        overlap_rate=0.2,
        min_dwell_ms=1500,
        quota_per_annotator=20,
    )
    annotators = get_user_model().objects.filter(username="annotator")
    services.study_annotators_set(study=study, users=annotators)
    return f"sample study {SAMPLE_STUDY!r}: {len(slugs)} configurations, {study.items.filter(in_pool=True).count()} items, annotator assigned"
