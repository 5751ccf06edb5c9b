"""Gate review (PPTBench, REFERENCE 8): humans decide per artifact whether it fails the semantic or rendering gate,
in the browser or from a CSV (task_id, configuration, reviewer, gate_fail, reason; optional gate: which gate a failure
fails, semantic or rendering, as the browser's review records it)."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils import timezone

from core.errors import Invalid
from core.imports import ImportReport, Progress, RowError, import_rows
from core.readers import read_csv

from .. import quality
from ..models import ArtifactLease, GateReview, Study, StudyKind
from .artifact_studies import ArtifactsOfRows, Undone, artifact_lease_open, artifact_lease_reopen, import_study

GATE_REVIEW_COLUMNS = ("task_id", "configuration", "reviewer", "gate_fail", "reason")
OPTIONAL_GATE_REVIEW_COLUMNS = ("gate",)
FAILING_GATES = (GateReview.Gate.SEMANTIC, GateReview.Gate.RENDERING)
DEFAULT_GATE_REVIEW_STUDY = "gate-review"


def gate_review_submit(*, token: str, annotator, gate_fail: bool, gate: str = "", reason: str = "") -> GateReview:
    """Store a reviewer's decision on their open artifact lease. A failure names the gate and needs a reason."""
    reason = (reason or "").strip()
    if gate_fail and gate not in FAILING_GATES:
        raise Invalid("say which gate fails: semantic or rendering")
    if gate_fail and not reason:
        raise Invalid("a gate failure needs a short reason")
    with transaction.atomic():
        lease = artifact_lease_open(token=token, annotator=annotator, kind=StudyKind.GATE_REVIEW)
        review, _ = GateReview.objects.update_or_create(
            study=lease.study,
            artifact_id=lease.artifact_id,
            reviewer=annotator.get_username(),
            defaults={"gate_fail": gate_fail, "gate": gate if gate_fail else "", "reason": reason[:4000]},
        )
        ArtifactLease.objects.filter(pk=lease.pk).update(state=ArtifactLease.State.SUBMITTED, closed_at=timezone.now())
        return review


def gate_review_undo(*, study: Study, annotator) -> Undone:
    """Withdraw the reviewer's last decision in `study` and reopen its artifact; the decision comes back as
    {"verdict": "pass" | "semantic" | "rendering", "reason"} for the screen to put back."""
    with transaction.atomic():
        lease = artifact_lease_reopen(study=study, annotator=annotator)
        reviews = GateReview.objects.filter(
            study=study, artifact_id=lease.artifact_id, reviewer=annotator.get_username(), imported=False
        )
        review, previous = reviews.first(), {}
        if review is not None:
            verdict = (review.gate or GateReview.Gate.SEMANTIC) if review.gate_fail else "pass"
            previous = {"verdict": str(verdict), "reason": review.reason}
        reviews.delete()
        return Undone(lease=lease, previous=previous)


def _store(study: Study, row: dict, artifacts: ArtifactsOfRows) -> bool:
    row = {k: ("" if v is None else str(v).strip()) for k, v in row.items() if k is not None}
    for name in ("task_id", "configuration", "reviewer", "gate_fail"):
        if not row.get(name):
            raise RowError(name, "missing or empty")
    try:
        gate_fail = quality.gate_fail_value(row["gate_fail"])
    except ValueError as error:
        raise RowError("gate_fail", str(error)) from None
    if len(row["reviewer"]) > 150:
        raise RowError("reviewer", "longer than 150 characters")
    gate = row.get("gate", "")
    if gate and gate not in FAILING_GATES:
        raise RowError("gate", f"must be {' or '.join(FAILING_GATES)} (or empty), got {gate!r}")
    if gate and not gate_fail:
        raise RowError("gate", "only a gate failure names the gate it fails")
    artifact_id = artifacts(row)
    wanted = {"gate_fail": gate_fail, "gate": gate, "reason": row.get("reason", "")[:4000]}
    stored = GateReview.objects.filter(study=study, artifact_id=artifact_id, reviewer=row["reviewer"]).first()
    if stored is not None:
        # A file without the gate column says nothing about the gate: the stored one stands.
        if (stored.gate_fail, stored.reason) == (wanted["gate_fail"], wanted["reason"]) and gate in ("", stored.gate):
            return False
        raise RowError("gate_fail", f"{row['reviewer']} already reviewed this artifact differently; not overwritten")
    GateReview.objects.create(study=study, artifact_id=artifact_id, reviewer=row["reviewer"], imported=True, **wanted)
    return True


def gate_reviews_import(
    *, path: Path, study: str = DEFAULT_GATE_REVIEW_STUDY, progress: Progress | None = None
) -> ImportReport:
    """Import gate reviews from CSV; idempotent (a row stored already is counted, not written again)."""
    report = ImportReport(source=str(path), noun="reviews")
    target = import_study(name=study, kind=StudyKind.GATE_REVIEW, report=report)
    artifacts = ArtifactsOfRows()
    return import_rows(
        rows=read_csv(path, required=GATE_REVIEW_COLUMNS[:4]),
        store=lambda row, line: _store(target, row, artifacts),
        report=report,
        progress=progress,
    )
