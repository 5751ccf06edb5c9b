"""Import human comparisons in the battle-row contract (DESIGN 5) from CSV, JSON Lines or the JSON table document."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents import selectors as agent_selectors
from core.imports import ImportReport, Progress, RowError, import_rows
from core.readers import read_csv, read_json_document, read_jsonl
from corpus import selectors as corpus_selectors
from corpus.protocol import OUTCOMES

from .. import selectors
from ..models import Comparison, Item, Study
from .counters import CounterChanges
from .votes import MAX_DWELL_MS, provenance

BATTLE_COLUMNS = selectors.BATTLE_COLUMNS
REQUIRED_COLUMNS = ("comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "outcome")


def _battle_rows(path: Path):
    """CSV (*.csv, header on line 1), the JSON document `export --format json` writes (*.json), or JSON Lines."""
    if path.suffix.lower() == ".csv":
        return read_csv(path, required=REQUIRED_COLUMNS)
    if path.suffix.lower() == ".json":
        document = read_json_document(path)
        if document is not None:
            return document
    return read_jsonl(path)


def _study_for_import(name: str, configurations: list, report: ImportReport) -> Study:
    study = Study.objects.filter(name=name).first()
    if study is None:
        study = Study.objects.create(name=name, description="created by import_comparisons")
        report.notes.append(f"created study {name}")
    have = set(study.configurations.values_list("pk", flat=True))
    missing = [c for c in configurations if c.pk not in have]
    if missing:
        study.configurations.add(*missing)
    return study


def _text(row: dict, name: str) -> str:
    value = row.get(name)
    return "" if value is None else str(value).strip()


def _created_at(text: str):
    if not text:
        return timezone.now()
    try:
        parsed = parse_datetime(text)
    except ValueError:  # well formed but impossible, e.g. month 13
        parsed = None
    if parsed is None:
        raise RowError("created_at", f"not an ISO 8601 date-time: {text!r}")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


def _dwell(text: str) -> int | None:
    if not text:
        return None
    try:
        dwell = int(float(text))
    except (ValueError, OverflowError):
        raise RowError("dwell_ms", f"not a number: {text!r}") from None
    if not 0 <= dwell < MAX_DWELL_MS:
        raise RowError("dwell_ms", f"{dwell} is not a duration in milliseconds (0 to {MAX_DWELL_MS - 1})")
    return dwell


def comparison_import_row(*, row: dict, line: int, report: ImportReport) -> bool:
    """Store one battle row; True if created, False if its comparison_id is stored already. Raises RowError."""
    row = {k: _text(row, k) for k in row if k is not None}
    for name in REQUIRED_COLUMNS:
        if not row.get(name):
            raise RowError(name, "missing or empty")
    try:
        validate_slug(row["study"])
    except ValidationError:
        raise RowError("study", f"{row['study']!r} is not a study name (letters, digits, - and _ only)") from None
    if len(row["study"]) > Study._meta.get_field("name").max_length:
        raise RowError("study", "longer than 80 characters")
    if Comparison.objects.filter(comparison_id=row["comparison_id"]).exists():
        return False
    if row["outcome"] not in OUTCOMES:
        raise RowError("outcome", f"{row['outcome']!r} is not one of {', '.join(OUTCOMES)}")
    figure_id = corpus_selectors.figure_ids(task_ids=[row["task_id"]]).get(row["task_id"])
    if figure_id is None:
        raise RowError("task_id", f"unknown figure {row['task_id']!r}")
    found = {c.slug: c for c in agent_selectors.configurations_by_slugs(slugs=[row["config_a"], row["config_b"]])}
    for name in ("config_a", "config_b"):
        if row[name] not in found:
            raise RowError(name, f"unknown configuration {row[name]!r}")
    a, b = found[row["config_a"]], found[row["config_b"]]
    if a == b:
        raise RowError("config_b", "a configuration cannot be compared with itself")
    left = row.get("left_config") or row["config_a"]
    if left != row["config_a"]:
        raise RowError("left_config", f"must equal config_a (the configuration shown on the left), got {left!r}")
    artifacts = agent_selectors.artifacts_for_figures(figure_ids=[figure_id], configuration_ids=[a.pk, b.pk])
    for name, configuration in (("config_a", a), ("config_b", b)):
        if (configuration.pk, figure_id) not in artifacts:
            raise RowError(name, f"no artifact of {configuration.slug} for figure {row['task_id']}")
    created_at, dwell = _created_at(row.get("created_at", "")), _dwell(row.get("dwell_ms", ""))
    seen = {}
    for side, configuration in (("a", a), ("b", b)):
        stored = provenance(artifacts[(configuration.pk, figure_id)])
        for kind in ("render", "audit"):
            given = row.get(f"{kind}_sha256_{side}", "")
            seen[f"{kind}_sha256_{side}"] = given or stored[kind]
            if given and given != stored[kind]:
                report.warn(
                    line,
                    f"{kind}_sha256_{side}",
                    f"differs from the stored {kind} of this artifact "
                    f"(the vote was made on another {kind}; imported and linked anyway)",
                )
    study = _study_for_import(row["study"], [a, b], report)
    x, y = sorted((a, b), key=lambda c: (c.position, c.slug))
    item, _ = Item.objects.get_or_create(
        study=study,
        figure_id=figure_id,
        config_x=x,
        config_y=y,
        defaults={"artifact_x": artifacts[(x.pk, figure_id)], "artifact_y": artifacts[(y.pk, figure_id)]},
    )
    user = get_user_model().objects.filter(username=row["annotator"]).first()
    Comparison.objects.create(
        comparison_id=row["comparison_id"],
        study=study,
        item=item,
        annotator=user,
        annotator_name=row["annotator"],
        artifact_a=artifacts[(a.pk, figure_id)],
        artifact_b=artifacts[(b.pk, figure_id)],
        left_config=a,
        outcome=row["outcome"],
        reason=row.get("reason", ""),
        dwell_ms=dwell,
        counted=True,
        imported=True,
        created_at=created_at,
        **seen,
    )
    CounterChanges(study.pk).imported_vote(item_id=item.pk, x=x.pk, y=y.pk).apply()
    return True


def comparisons_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    report = ImportReport(source=str(path))
    return import_rows(
        rows=_battle_rows(path),
        store=lambda row, line: comparison_import_row(row=row, line=line, report=report),
        report=report,
        progress=progress,
    )
