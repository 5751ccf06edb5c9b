"""Import human comparisons in the battle-row contract (DESIGN 5) from CSV, JSON Lines or the JSON table document."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import DatabaseError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents import selectors as agent_selectors
from core.bulk_write import insert_rows
from core.imports import IMPORT_BATCH, ImportReport, Progress, RowError
from core.readers import SourceRow, read_csv, read_json_document, read_jsonl
from corpus import selectors as corpus_selectors
from corpus.protocol import OUTCOMES

from .. import selectors
from ..models import Comparison, Item, Study
from .counters import BULK_CHUNK, CounterChanges
from .pool import study_lock
from .votes import MAX_DWELL_MS

BATTLE_COLUMNS = selectors.BATTLE_COLUMNS
REQUIRED_COLUMNS = ("comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "outcome")
STUDY_NAME_LENGTH = Study._meta.get_field("name").max_length


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


def row_time(text: str):
    """An import row's ISO 8601 time (empty: now; without a zone: UTC); a RowError naming created_at otherwise."""
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


@dataclass
class _Battle:
    """A validated battle row, ready to write: ids only, and the warnings it brings (dropped if it is refused)."""

    line: int
    comparison_id: str
    study: str
    figure_id: int
    a: object  # Configuration (display order: shown on the left)
    b: object
    artifact_a: int
    artifact_b: int
    annotator: str
    outcome: str
    reason: str
    created_at: object
    dwell_ms: int | None
    provenance: dict[str, str]
    item: tuple[int, int, int]  # the item's key: (figure, x, y), x and y the pair's configurations in study order
    item_artifacts: tuple[int, int]  # the artifacts of x and y
    warnings: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass
class _Lookups:
    """What a batch of rows is validated against, loaded with one query per kind for the whole batch."""

    figures: dict[str, int]
    configurations: dict[str, object]
    stored_ids: set[str]
    artifacts: dict[tuple[int, int], tuple[int, str, dict | None]]  # agent_selectors.artifact_provenance


class _BattleImport:
    """Validate battle rows a batch at a time against preloaded lookups and write each batch in bulk: comparisons,
    the items they name, and the pool counters (one CounterChanges per study, applied in bulk under study_lock)."""

    def __init__(self, report: ImportReport):
        self.report = report
        self.configurations: dict[str, object] = {}
        self.digests: dict[int, str] = {}
        self.seen: set[str] = set()  # comparison ids of this file validated so far (duplicates within the file)

    # --- validation ------------------------------------------------------------------------------------------------
    def lookups(self, rows: list[dict]) -> _Lookups:
        task_ids = {r["task_id"] for r in rows if r.get("task_id")}
        slugs = {r[k] for r in rows for k in ("config_a", "config_b") if r.get(k)}
        unknown = slugs - self.configurations.keys()
        if unknown:
            self.configurations.update({c.slug: c for c in agent_selectors.configurations_by_slugs(slugs=unknown)})
        figures = corpus_selectors.figure_ids(task_ids=task_ids) if task_ids else {}
        ids = [r["comparison_id"] for r in rows if r.get("comparison_id")]
        stored = set()
        for start in range(0, len(ids), BULK_CHUNK):
            chunk = ids[start : start + BULK_CHUNK]
            stored.update(Comparison.objects.filter(comparison_id__in=chunk).values_list("comparison_id", flat=True))
        configuration_ids = [self.configurations[s].pk for s in slugs if s in self.configurations]
        artifacts = (
            agent_selectors.artifact_provenance(figure_ids=figures.values(), configuration_ids=configuration_ids)
            if figures and configuration_ids
            else {}
        )
        return _Lookups(figures, self.configurations, stored, artifacts)

    def provenance(self, artifact: tuple[int, str, dict | None]) -> dict[str, str]:
        """votes.provenance for an artifact_provenance row; the audit digest computed once per artifact."""
        pk, render, summary = artifact
        if pk not in self.digests:
            self.digests[pk] = selectors.audit_digest(summary)
        return {"render": render, "audit": self.digests[pk]}

    def validate(self, row: dict, line: int, found: _Lookups) -> _Battle | None:
        """The row as ids to write, None when its comparison_id is stored already; raises RowError."""
        for name in REQUIRED_COLUMNS:
            if not row.get(name):
                raise RowError(name, "missing or empty")
        try:
            validate_slug(row["study"])
        except ValidationError:
            raise RowError("study", f"{row['study']!r} is not a study name (letters, digits, - and _ only)") from None
        if len(row["study"]) > STUDY_NAME_LENGTH:
            raise RowError("study", f"longer than {STUDY_NAME_LENGTH} characters")
        if row["comparison_id"] in found.stored_ids or row["comparison_id"] in self.seen:
            return None
        if row["outcome"] not in OUTCOMES:
            raise RowError("outcome", f"{row['outcome']!r} is not one of {', '.join(OUTCOMES)}")
        figure_id = found.figures.get(row["task_id"])
        if figure_id is None:
            raise RowError("task_id", f"unknown figure {row['task_id']!r}")
        for name in ("config_a", "config_b"):
            if row[name] not in found.configurations:
                raise RowError(name, f"unknown configuration {row[name]!r}")
        a, b = found.configurations[row["config_a"]], found.configurations[row["config_b"]]
        if row["config_a"] == row["config_b"]:
            raise RowError("config_b", "a configuration cannot be compared with itself")
        left = row.get("left_config") or row["config_a"]
        if left != row["config_a"]:
            raise RowError("left_config", f"must equal config_a (the configuration shown on the left), got {left!r}")
        for name, configuration in (("config_a", a), ("config_b", b)):
            if (configuration.pk, figure_id) not in found.artifacts:
                raise RowError(name, f"no artifact of {configuration.slug} for figure {row['task_id']}")
        created_at, dwell = row_time(row.get("created_at", "")), _dwell(row.get("dwell_ms", ""))
        seen, warnings = {}, []
        for side, configuration in (("a", a), ("b", b)):
            stored = self.provenance(found.artifacts[(configuration.pk, figure_id)])
            for kind in ("render", "audit"):
                given = row.get(f"{kind}_sha256_{side}", "")
                seen[f"{kind}_sha256_{side}"] = given or stored[kind]
                if given and given != stored[kind]:
                    warnings.append(
                        (
                            line,
                            f"{kind}_sha256_{side}",
                            f"differs from the stored {kind} of this artifact "
                            f"(the vote was made on another {kind}; imported and linked anyway)",
                        )
                    )
        self.seen.add(row["comparison_id"])
        artifact_a, artifact_b = found.artifacts[(a.pk, figure_id)][0], found.artifacts[(b.pk, figure_id)][0]
        a_first = (a.position, a.slug) < (b.position, b.slug)
        return _Battle(
            line=line,
            comparison_id=row["comparison_id"],
            study=row["study"],
            figure_id=figure_id,
            a=a,
            b=b,
            artifact_a=artifact_a,
            artifact_b=artifact_b,
            annotator=row["annotator"],
            outcome=row["outcome"],
            reason=row.get("reason", ""),
            created_at=created_at,
            dwell_ms=dwell,
            provenance=seen,
            item=(figure_id, a.pk, b.pk) if a_first else (figure_id, b.pk, a.pk),
            item_artifacts=(artifact_a, artifact_b) if a_first else (artifact_b, artifact_a),
            warnings=warnings,
        )

    # --- writing ---------------------------------------------------------------------------------------------------
    def write(self, battles: list[_Battle]) -> None:
        """Store validated rows in one transaction: studies (created on first sight), items, comparisons, counters."""
        by_study: dict[str, list[_Battle]] = {}
        for battle in battles:
            by_study.setdefault(battle.study, []).append(battle)
        users = dict(
            get_user_model().objects.filter(username__in={b.annotator for b in battles}).values_list("username", "pk")
        )
        with transaction.atomic():
            for name, rows in sorted(by_study.items()):
                self._write_study(name, rows, users)

    def _write_study(self, name: str, rows: list[_Battle], users: dict[str, int]) -> None:
        configurations = {c.pk: c for b in rows for c in (b.a, b.b)}
        study = _study_for_import(name, list(configurations.values()), self.report)
        study_lock(study)
        keys = {}
        changes = CounterChanges(study.pk)
        for b in rows:
            keys[b.item] = b.item_artifacts
            _, x, y = b.item
            changes.imported_vote(item_id=b.item, x=x, y=y)  # by item key until ids are known
        items = _items(study, keys)
        # A new item is written with its counters (they start at zero, so its changes are its values) rather than
        # updated after: on PostgreSQL those updates took a quarter of the ingest benchmark's comparisons import.
        missing = [
            dict(
                study_id=study.pk,
                figure_id=f,
                config_x_id=x,
                config_y_id=y,
                artifact_x_id=ax,
                artifact_y_id=ay,
                **changes.new_item_values((f, x, y)),
            )
            for (f, x, y), (ax, ay) in keys.items()
            if (f, x, y) not in items
        ]
        if missing:  # one another writer made meanwhile fails the batch, which flush() retries row by row
            insert_rows(Item, missing)
            items = _items(study, keys)
        changes.items_identified(items)
        comparisons = []
        for b in rows:
            comparisons.append(
                dict(
                    comparison_id=b.comparison_id,
                    study_id=study.pk,
                    item_id=items[b.item],
                    annotator_id=users.get(b.annotator),
                    annotator_name=b.annotator,
                    artifact_a_id=b.artifact_a,
                    artifact_b_id=b.artifact_b,
                    left_config_id=b.a.pk,
                    outcome=b.outcome,
                    reason=b.reason,
                    dwell_ms=b.dwell_ms,
                    counted=True,
                    imported=True,
                    created_at=b.created_at,
                    **b.provenance,
                )
            )
        insert_rows(Comparison, comparisons)
        changes.apply_in_bulk()

    def flush(self, pending: list[_Battle]) -> None:
        """Write the batch; a batch the database refuses is written again row by row, so the refused row is named."""
        if not pending:
            return
        notes = len(self.report.notes)
        try:
            self.write(pending)
            written = pending
        except DatabaseError:
            del self.report.notes[notes:]
            written = []
            for battle in pending:
                notes = len(self.report.notes)
                try:
                    self.write([battle])
                    written.append(battle)
                except DatabaseError as error:
                    del self.report.notes[notes:]
                    self.seen.discard(battle.comparison_id)
                    self.report.reject(battle.line, "row", _refused(error))
        for battle in written:
            for warning in battle.warnings:
                self.report.warn(*warning)
        self.report.created += len(written)

    def load(self, rows: list[SourceRow]) -> None:
        """Validate and write one batch of source rows."""
        cleaned = [
            (row, {k: _text(row.values, k) for k in row.values if k is not None})
            for row in rows
            if row.values is not None
        ]
        found = self.lookups([values for _, values in cleaned])
        values_of = {id(row): values for row, values in cleaned}
        pending = []
        for row in rows:
            if row.values is None:
                self.report.reject(row.line, row.field, row.reason)
                continue
            try:
                battle = self.validate(values_of[id(row)], row.line, found)
            except RowError as error:
                self.report.reject(row.line, error.field, error.reason)
            else:
                if battle is None:
                    self.report.unchanged += 1
                else:
                    pending.append(battle)
        self.flush(pending)


def _items(study: Study, keys) -> dict[tuple[int, int, int], int]:
    """(figure, x, y) → item id of the study's items among these keys."""
    figure_ids = sorted({f for f, _, _ in keys})
    found = {}
    for start in range(0, len(figure_ids), BULK_CHUNK):
        for f, x, y, pk in Item.objects.filter(
            study=study, figure_id__in=figure_ids[start : start + BULK_CHUNK]
        ).values_list("figure_id", "config_x_id", "config_y_id", "pk"):
            if (f, x, y) in keys:
                found[(f, x, y)] = pk
    return found


def _refused(error: DatabaseError) -> str:
    return f"refused by the database ({str(error).splitlines()[0] if str(error) else type(error).__name__})"


def comparisons_import(*, path: Path, progress: Progress | None = None, batch_size: int = IMPORT_BATCH) -> ImportReport:
    """Stream battle rows; validate each batch against lookups loaded once for it, write it in bulk. Bad rows are
    reported as FILE:LINE field: reason; the good rows around them are kept. Idempotent on comparison_id."""
    report = ImportReport(source=str(path))
    loader = _BattleImport(report)
    batch: list[SourceRow] = []
    for row in _battle_rows(path):
        batch.append(row)
        if len(batch) >= batch_size:
            loader.load(batch)
            if progress is not None:
                progress(sum(r.lines for r in batch))
            batch = []
    loader.load(batch)
    if progress is not None and batch:
        progress(sum(r.lines for r in batch))
    return report
