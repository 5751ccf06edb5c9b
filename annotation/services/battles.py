"""Import a votes-only study from battle rows between named systems (issue 30): no corpus, no artifacts.

A battles file is CSV (*.csv) or JSON Lines (any other name), one battle a row, in either the battle-row contract's
column names (DESIGN 5) or the Chatbot Arena's:

- the two systems: `config_a` / `model_a` and `config_b` / `model_b` — any names, kept as given (surrounding spaces
  trimmed); each becomes a configuration of the `votes` suite whose slug is derived reversibly (system_names);
- the outcome: `outcome` / `winner` — `a` / `model_a`, `b` / `model_b`, `tie_success`, `tie_failure` (also the Arena's
  `tie (bothbad)`: both failed), or a plain `tie` (kind not stated: half a win to each side, counted in `ties` only);
- optional: the cluster the bootstrap resamples (`--cluster-column`, e.g. `prompt`, else the first of `cluster`,
  `task_id`, `question_id`, `prompt_id` present; without one each battle is its own cluster; a value too long for the
  column is kept as its SHA-256), an id (`comparison_id`,
  `battle_id` or `id`; else one derived from the line and the row, so re-importing the same file changes nothing),
  `annotator` / `judge`, `reason`, and the time (`created_at` ISO 8601, or the Arena's `tstamp` in Unix seconds).

Bad rows (a system compared with itself, an unknown outcome, a missing name...) are reported as FILE:LINE field:
reason and the good rows are imported (core.imports).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.utils import timezone

from agents import selectors as agent_selectors
from agents import services as agent_services
from core.bulk_write import insert_rows
from core.errors import Invalid
from core.imports import ImportReport, Progress, RowError, import_batches
from core.readers import read_csv, read_jsonl
from corpus.protocol import PLAIN_TIE

from ..models import Comparison, ImportedBattle, Study, StudyKind
from ..selectors.battles import VOTES_SUITE
from ..system_names import system_slug
from .importer import row_time

SYSTEM_COLUMNS = (("config_a", "model_a"), ("config_b", "model_b"))
OUTCOME_COLUMNS = ("outcome", "winner")
CLUSTER_COLUMNS = ("cluster", "task_id", "question_id", "prompt_id")
ID_COLUMNS = ("comparison_id", "battle_id", "id")
ANNOTATOR_COLUMNS = ("annotator", "judge")
OUTCOMES_READ = {
    "a": "a",
    "model_a": "a",
    "b": "b",
    "model_b": "b",
    "tie_success": "tie_success",
    "tie_failure": "tie_failure",
    "tie (bothbad)": "tie_failure",
    PLAIN_TIE: PLAIN_TIE,
}


def _field(model, name: str) -> int:
    return model._meta.get_field(name).max_length


_SYSTEM = ImportedBattle._meta.get_field("system_a").related_model  # agents.Configuration, read through the key
SLUG_LENGTH, NAME_LENGTH = _field(_SYSTEM, "slug"), _field(_SYSTEM, "model")


def _first(row: dict, names: tuple[str, ...]) -> tuple[str, str]:
    """(column, trimmed value) of the first of these columns the row has, ("", "") when it has none."""
    for name in names:
        if name in row:
            value = row[name]
            return name, "" if value is None else str(value).strip()
    return "", ""


def _study_for_battles(name: str, path: Path, report: ImportReport) -> Study:
    """The votes-only study named `name`, created on first sight; a study holding votes on artifacts is refused."""
    try:
        validate_slug(name)
    except ValidationError:
        raise Invalid(f"--study: {name!r} is not a study name (letters, digits, - and _ only)") from None
    if len(name) > _field(Study, "name"):
        raise Invalid(f"--study: longer than {_field(Study, 'name')} characters")
    study = Study.objects.filter(name=name).first()
    if study is None:
        report.notes.append(f"created votes-only study {name}")
        return Study.objects.create(name=name, description=f"votes imported from battles ({path.name})")
    if study.kind != StudyKind.PAIRWISE or Comparison.objects.filter(study=study).exists():
        raise Invalid(
            f"study {name!r} holds {study.kind} work on this app's artifacts; import battles into a study of their own"
        )
    return study


class _Battles:
    """Validate rows one by one against the systems seen so far; write them in bulk (core.imports.import_batches)."""

    def __init__(self, *, study: Study, path: Path, cluster_column: str | None, report: ImportReport):
        self.study, self.path, self.cluster_column, self.report = study, path, cluster_column, report
        self.systems: dict[str, object] = {}  # name as given → Configuration
        self.linked = set(study.configurations.values_list("pk", flat=True))
        self.seen = set(ImportedBattle.objects.filter(study=study).values_list("battle_id", flat=True))

    def system(self, column: str, name: str):
        if name in self.systems:
            return self.systems[name]
        slug = system_slug(name)
        if len(name) > NAME_LENGTH or len(slug) > SLUG_LENGTH:
            raise RowError(column, f"name too long: at most {NAME_LENGTH} characters and {SLUG_LENGTH} in its slug")
        found = agent_selectors.configurations_by_slugs(slugs=[slug])
        if found and found[0].suite != VOTES_SUITE:
            raise RowError(column, f"{name!r} is the slug of a configuration of the {found[0].suite} suite")
        configuration = found[0] if found else None
        if configuration is None:
            configuration = agent_services.configuration_ensure_external(
                slug=slug, model=name, reasoning_effort="", suite=VOTES_SUITE, label=name
            )
        self.systems[name] = configuration
        return configuration

    def validate(self, row: dict, line: int) -> dict | None:
        row = {k: v for k, v in row.items() if k is not None}  # a CSV row's cells beyond the header have no name
        (column_a, name_a), (column_b, name_b) = (_first(row, names) for names in SYSTEM_COLUMNS)
        column_a, column_b = column_a or SYSTEM_COLUMNS[0][0], column_b or SYSTEM_COLUMNS[1][0]
        outcome_column, given = _first(row, OUTCOME_COLUMNS)
        outcome_column = outcome_column or OUTCOME_COLUMNS[0]
        if not given:
            raise RowError(outcome_column, "missing or empty")
        outcome = OUTCOMES_READ.get(given.lower())
        if outcome is None:
            raise RowError(outcome_column, f"{given!r} is not one of {', '.join(OUTCOMES_READ)}")
        for column, name in ((column_a, name_a), (column_b, name_b)):
            if not name:
                raise RowError(column, "missing or empty")
        if name_a == name_b:
            raise RowError(column_b, f"{name_b!r} meets itself: a system cannot be compared with itself")
        id_column, battle_id = _first(row, ID_COLUMNS)
        if not battle_id:  # stable for the same line of the same file: a re-run adds nothing
            canonical = json.dumps(row, sort_keys=True, default=str)
            battle_id = f"line-{line}-{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"
        elif len(battle_id) > _field(ImportedBattle, "battle_id"):
            raise RowError(id_column, f"longer than {_field(ImportedBattle, 'battle_id')} characters")
        if battle_id in self.seen:
            return None
        cluster = battle_id
        cluster_column = self.cluster_column or _first(row, CLUSTER_COLUMNS)[0]
        if cluster_column:
            cluster = _first(row, (cluster_column,))[1]
            if not cluster:
                raise RowError(cluster_column, "missing or empty (the cluster of the bootstrap)")
            if len(cluster) > _field(ImportedBattle, "cluster"):  # a prompt's text, say: only its identity counts
                cluster = "sha256:" + hashlib.sha256(cluster.encode()).hexdigest()
        created_at = _when(row)
        a, b = self.system(column_a, name_a), self.system(column_b, name_b)  # last: a refused row makes no system
        self.seen.add(battle_id)
        return {
            "study_id": self.study.pk,
            "battle_id": battle_id,
            "cluster": cluster,
            "system_a_id": a.pk,
            "system_b_id": b.pk,
            "outcome": outcome,
            "annotator_name": _first(row, ANNOTATOR_COLUMNS)[1][: _field(ImportedBattle, "annotator_name")],
            "reason": _first(row, ("reason",))[1],
            "created_at": created_at,
            "source": f"{self.path.name}:{line}"[: _field(ImportedBattle, "source")],
        }

    def write(self, battles: list[dict]) -> None:
        insert_rows(ImportedBattle, battles)
        new = {b[k] for b in battles for k in ("system_a_id", "system_b_id")} - self.linked
        if new:  # the study lists its systems, so coverage and the Elo tables show every one of them
            self.study.configurations.add(*sorted(new))
            self.linked |= new


def _when(row: dict):
    created = _first(row, ("created_at",))[1]
    if created:
        return row_time(created)
    stamp = _first(row, ("tstamp",))[1]
    if not stamp:
        return timezone.now()
    try:
        return datetime.fromtimestamp(float(stamp), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise RowError("tstamp", f"not a Unix time in seconds: {stamp!r}") from None


def battles_import(
    *, path: Path, study: str, cluster_column: str | None = None, progress: Progress | None = None
) -> ImportReport:
    """Import the battles of `path` into the votes-only study `study` (created when new). Idempotent on the battle id.
    Raises Invalid when the study cannot take them (a study of this app's own votes, a bad name)."""
    report = ImportReport(source=str(path), noun="battles")
    resolved = _study_for_battles(study, path, report)
    battles = _Battles(study=resolved, path=path, cluster_column=cluster_column, report=report)
    rows = read_csv(path) if path.suffix.lower() == ".csv" else read_jsonl(path)
    import_batches(rows=rows, validate=battles.validate, write=battles.write, report=report, progress=progress)
    if battles.systems:
        report.notes.append(f"{len(battles.systems)} systems: {', '.join(sorted(battles.systems))}")
    return report
