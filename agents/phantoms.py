"""Phantom artifacts: the "missing" rows an import used to make for every figure of the corpus, whether or not its run
had a folder for it, found against that run and deleted (the artifacts_prune_phantoms command); and what the rest of
the study holds about an artifact (votes, ratings, gate reviews, judge records, leases), which keeps a row from being
one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.apps import apps
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from .models import Artifact, GateReason

PRUNE_BATCH = 500  # artifacts checked again, locked and deleted per statement

# What the rest of the study holds about an artifact: (app, model, the fields naming the artifact). Human votes,
# ratings and gate reviews, and judge records, in this order; then the leases that showed it to someone.
ARTIFACT_RECORDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("annotation", "Comparison", ("artifact_a", "artifact_b")),
    ("annotation", "Rating", ("artifact",)),
    ("annotation", "GateReview", ("artifact",)),
    ("scoring", "JudgeRecord", ("artifact",)),
)
ARTIFACT_LEASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("annotation", "Lease", ("item__artifact_x", "item__artifact_y")),
    ("annotation", "ArtifactLease", ("artifact",)),
)
HUMAN_RECORDS = {"Comparison": "votes", "Rating": "ratings", "GateReview": "gate reviews"}  # kept by a replacement


def _naming(fields: tuple[str, ...], artifact) -> Q:
    """Rows whose any of `fields` is `artifact` (a pk or an OuterRef)."""
    condition = Q()
    for name in fields:
        condition |= Q(**{name: artifact})
    return condition


def human_records(*, artifact_id: int) -> dict[str, int]:
    """How many votes, ratings and gate reviews name the artifact, by kind."""
    return {
        HUMAN_RECORDS[model]: apps.get_model(app, model).objects.filter(_naming(fields, artifact_id)).count()
        for app, model, fields in ARTIFACT_RECORDS
        if model in HUMAN_RECORDS
    }


@dataclass(frozen=True)
class Phantoms:
    """Missing artifacts whose task folder is absent from a run root, split by whether anything refers to them."""

    run_root: Path
    unreferenced: tuple[tuple[int, str, str], ...]  # (artifact id, configuration slug, task id): phantoms
    referenced: tuple[tuple[int, str, str], ...]  # kept: a vote, rating, gate review, judge record or lease names it
    configurations_absent: tuple[str, ...]  # configurations with artifacts but no folder under the run root


def _phantom_candidates():
    """Missing artifacts with no file stored: the rows the import used to make for every figure of the corpus."""
    return Artifact.objects.filter(
        gate_reason=GateReason.MISSING, pptx="", pptx_sha256="", code="", run_log="", error_log=""
    )


def _unreferenced(artifacts):
    """`artifacts` that no vote, rating, gate review or judge record names, nor any lease (a skip is data too, and
    deleting an artifact under an open lease would leave the study's lease counters wrong)."""
    for app, model, fields in (*ARTIFACT_RECORDS, *ARTIFACT_LEASES):
        rows = apps.get_model(app, model).objects.filter(_naming(fields, OuterRef("pk")))
        artifacts = artifacts.exclude(Exists(rows))
    return artifacts


def phantoms_find(*, run_root: Path) -> Phantoms:
    """The phantom rows of an import that made a missing artifact for every figure: gate reason missing, no pptx,
    code or log stored, no record or lease naming it, and no folder <run_root>/<slug>/<task_id>/. A phantom cannot be
    told from a real missing deck once stored; the folder's absence under the run the rows came from is the evidence,
    so the run root must be that run's."""
    candidates = _phantom_candidates().order_by("configuration__slug", "figure__task_id")
    rows = candidates.values_list("pk", "configuration__slug", "figure__task_id")
    free = set(_unreferenced(candidates).values_list("pk", flat=True))
    absent = [row for row in rows if not (run_root / row[1] / row[2]).is_dir()]
    return Phantoms(
        run_root=run_root,
        unreferenced=tuple(row for row in absent if row[0] in free),
        referenced=tuple(row for row in absent if row[0] not in free),
        configurations_absent=tuple(sorted({slug for _, slug, _ in absent if not (run_root / slug).is_dir()})),
    )


def phantoms_delete(*, phantoms: Phantoms) -> tuple[tuple[int, str, str], ...]:
    """Delete the phantoms found, checking again in the same transaction that each is still one (a vote or a deck may
    have arrived since); the rows are locked, so nothing can name them before they go. Returns those deleted."""
    ids = [pk for pk, _, _ in phantoms.unreferenced]
    gone: set[int] = set()
    with transaction.atomic():
        for start in range(0, len(ids), PRUNE_BATCH):
            batch = _phantom_candidates().filter(pk__in=ids[start : start + PRUNE_BATCH])
            still = list(_unreferenced(batch).select_for_update().values_list("pk", flat=True))
            Artifact.objects.filter(pk__in=still).delete()
            gone.update(still)
    return tuple(row for row in phantoms.unreferenced if row[0] in gone)
