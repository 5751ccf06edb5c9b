"""Rating studies (PPTArena, REFERENCE 9): ordinal 0–5 ratings on the study's axes, by humans in the browser or from a
CSV (task_id, configuration, rater, rater_kind, run, axis, rating) that also carries the judges' repeated runs.

Optional import columns: category (the item's category; empty: the figure's corpus field), judge_family (judge rows:
the judge's model family, for the cross-judge ranking check), instruction and style_target (the rating item's task
text, stored once per study and artifact on StudyArtifact and shown above the ratings)."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils import timezone

from core.errors import Invalid
from core.imports import ImportReport, Progress, RowError, import_rows
from core.readers import read_csv

from .. import quality
from ..models import ArtifactLease, Rating, Study, StudyArtifact, StudyKind
from .artifact_studies import (
    AXIS_MAX_LENGTH,
    ArtifactsOfRows,
    Undone,
    artifact_figure_field,
    artifact_lease_open,
    artifact_lease_reopen,
    import_study,
)

RATING_COLUMNS = ("task_id", "configuration", "rater", "rater_kind", "run", "axis", "rating")
OPTIONAL_RATING_COLUMNS = ("category", "judge_family", "instruction", "style_target")
ITEM_TEXT_COLUMNS = ("instruction", "style_target")
CATEGORY_MAX_LENGTH = 100
DEFAULT_RATING_STUDY = "ratings"
RUN_MAX = 1000


def _rating_value(value) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"not a number: {value!r}") from None
    if number != int(number) or not quality.RATING_MIN <= number <= quality.RATING_MAX:
        raise ValueError(f"must be a whole number from {quality.RATING_MIN} to {quality.RATING_MAX}, got {value!r}")
    return int(number)


def rating_submit(*, token: str, annotator, ratings: dict) -> list[Rating]:
    """Store a human's ratings of their open artifact lease: one 0–5 rating for every axis of the study."""
    with transaction.atomic():
        lease = artifact_lease_open(token=token, annotator=annotator, kind=StudyKind.RATING)
        axes = lease.study.rating_axes
        missing = [a for a in axes if a not in ratings]
        unknown = sorted(set(ratings) - set(axes))
        if missing or unknown:
            raise Invalid(f"rate exactly the axes {', '.join(axes)}")
        values = {}
        for axis in axes:
            try:
                values[axis] = _rating_value(ratings[axis])
            except ValueError as error:
                raise Invalid(f"{axis}: {error}") from None
        stored = [
            Rating.objects.update_or_create(
                study=lease.study,
                artifact_id=lease.artifact_id,
                rater=annotator.get_username(),
                rater_kind=Rating.RaterKind.HUMAN,
                run=1,
                axis=axis,
                defaults={"rating": value, "category": artifact_figure_field(lease.artifact_id)},
            )[0]
            for axis, value in values.items()
        ]
        ArtifactLease.objects.filter(pk=lease.pk).update(state=ArtifactLease.State.SUBMITTED, closed_at=timezone.now())
        return stored


def rating_undo(*, study: Study, annotator) -> Undone:
    """Withdraw the rater's last ratings in `study` and reopen its artifact; they come back as {"ratings": {axis: n}}
    for the screen to put back."""
    with transaction.atomic():
        lease = artifact_lease_reopen(study=study, annotator=annotator)
        stored = Rating.objects.filter(
            study=study,
            artifact_id=lease.artifact_id,
            rater=annotator.get_username(),
            rater_kind=Rating.RaterKind.HUMAN,
            run=1,
            imported=False,
        )
        previous = {"ratings": dict(stored.values_list("axis", "rating"))}
        stored.delete()
        return Undone(lease=lease, previous=previous)


def _store(study: Study, row: dict, artifacts: ArtifactsOfRows) -> bool:
    row = {k: ("" if v is None else str(v).strip()) for k, v in row.items() if k is not None}
    for name in RATING_COLUMNS:
        if not row.get(name):
            raise RowError(name, "missing or empty")
    if row["rater_kind"] not in Rating.RaterKind.values:
        raise RowError("rater_kind", f"must be human or judge, got {row['rater_kind']!r}")
    try:
        run = int(row["run"])
    except ValueError:
        raise RowError("run", f"not a whole number: {row['run']!r}") from None
    if not 1 <= run <= RUN_MAX:
        raise RowError("run", f"must lie in 1..{RUN_MAX}, got {run}")
    if len(row["axis"]) > AXIS_MAX_LENGTH or not row["axis"].replace("_", "").isalnum():
        raise RowError("axis", f"{row['axis']!r}: letters, digits and _ only, up to {AXIS_MAX_LENGTH} characters")
    if len(row["rater"]) > 150:
        raise RowError("rater", "longer than 150 characters")
    try:
        value = _rating_value(row["rating"])
    except ValueError as error:
        raise RowError("rating", str(error)) from None
    for name in ("category", "judge_family"):
        if len(row.get(name, "")) > CATEGORY_MAX_LENGTH:
            raise RowError(name, f"longer than {CATEGORY_MAX_LENGTH} characters")
    if row.get("judge_family") and row["rater_kind"] != Rating.RaterKind.JUDGE:
        raise RowError("judge_family", "only judge ratings have a judge family")
    artifact_id = artifacts(row)
    _store_item_text(study, artifact_id, row)
    key = {"study": study, "artifact_id": artifact_id, "rater": row["rater"], "rater_kind": row["rater_kind"]}
    stored = Rating.objects.filter(**key, run=run, axis=row["axis"]).values_list("rating", flat=True).first()
    if stored is not None:
        if stored == value:
            return False
        raise RowError("rating", f"{row['rater']} run {run} already rated {row['axis']} {stored}; not overwritten")
    Rating.objects.create(
        **key,
        run=run,
        axis=row["axis"],
        rating=value,
        category=row.get("category") or artifacts.figure_field(artifact_id),
        judge_family=row.get("judge_family", ""),
        imported=True,
    )
    if row["axis"] not in study.rating_axes:
        study.rating_axes = [*study.rating_axes, row["axis"]]
        study.save(update_fields=["rating_axes"])
    return True


def _store_item_text(study: Study, artifact_id: int, row: dict) -> None:
    """Keep a row's instruction / style target on the study's artifact: the first non-empty text is stored, the same
    text again changes nothing, a different one is a RowError (one item, one task text)."""
    given = {name: row[name] for name in ITEM_TEXT_COLUMNS if row.get(name)}
    if not given:
        return
    item, _ = StudyArtifact.objects.get_or_create(study=study, artifact_id=artifact_id)
    changed = []
    for name, text in given.items():
        stored = getattr(item, name)
        if stored and stored != text:
            raise RowError(name, "differs from the text stored for this item already; not overwritten")
        if not stored:
            setattr(item, name, text)
            changed.append(name)
    if changed:
        item.save(update_fields=changed)


def ratings_import(*, path: Path, study: str = DEFAULT_RATING_STUDY, progress: Progress | None = None) -> ImportReport:
    """Import ratings from CSV; idempotent (a row stored already is counted, not written again)."""
    report = ImportReport(source=str(path), noun="ratings")
    target = import_study(name=study, kind=StudyKind.RATING, report=report)
    artifacts = ArtifactsOfRows()
    return import_rows(
        rows=read_csv(path, required=RATING_COLUMNS),
        store=lambda row, line: _store(target, row, artifacts),
        report=report,
        progress=progress,
    )
