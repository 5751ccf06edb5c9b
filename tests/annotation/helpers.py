"""Helpers shared by the annotation service tests: a small study, one vote, a rejecting import, the pool counters."""

import io

from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import services
from tests.annotation.data import SLUGS, build_corpus, next_lease, submit_vote


def make_study(**settings):
    figs, configs, artifacts = build_corpus(figures=settings.pop("figures", 6), failed=settings.pop("failed", ()))
    settings.setdefault("min_dwell_ms", 0)
    study = services.study_create(name=settings.pop("name", "pilot"), configurations=SLUGS, **settings)
    return study, figs, configs


def vote(study, user, outcome="a", reason="clearer arrows", dwell_ms=5000):
    lease = next_lease(study=study, annotator=user)
    return lease, submit_vote(token=lease.token, annotator=user, outcome=outcome, reason=reason, dwell_ms=dwell_ms)


def import_rejecting(path, *, rejected: int) -> str:
    """Run import_comparisons on a file with bad rows; its error output. The command fails only when no row of the
    file is stored (README, exit status)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        call_command("import_comparisons", path, no_progress=True, stdout=stdout, stderr=stderr)
    except CommandError as error:
        assert f"all {rejected} rows rejected" in str(error)
    assert f", {rejected} rejected" in stdout.getvalue()
    return stderr.getvalue()


def _counters(study):
    from annotation.models import Item, StudyFigure, StudyPair

    return (
        sorted(
            Item.objects.filter(study=study).values_list(
                "pk", "open_count", "submitted_count", "votes", "in_pool", "is_overlap"
            )
        ),
        sorted(
            StudyPair.objects.filter(study=study).values_list(
                "config_x_id", "config_y_id", "votes", "open_fresh", "x_left", "y_left"
            )
        ),
        sorted(StudyFigure.objects.filter(study=study).values_list("figure_id", "uses")),
    )
