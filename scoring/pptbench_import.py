"""Writes for PPTBench's released results beyond scores.csv (issue 29): its issue summary and generation metrics, and
the inputs this app defines for the analyses PPTBench's release has no file for — repeated per-judge gate decisions
(paper Table 3), review and revision turns and task domains (paper Table 10).

Every importer is idempotent: a row already stored with the same values is counted unchanged; one stored with other
values is refused naming the field, so a changed file never silently overwrites what the tables were built from.

The input formats this app defines (CSV with a header; more columns may follow and are ignored):

- gate repeats: ``judge, task_id, candidate_id, repeat, gate`` — one judge's gate decision (``True``: a semantic or
  rendering gate fired) on a (task, candidate) in repeat 1, 2, 3 … of the same judge round.
- process: ``task_id, candidate_id, review_turns, revision_turns`` — the agent's review and revision turns.
- domains: ``task_id, domain``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from django.db import models

from agents import services as agent_services
from core.bulk_write import insert_rows
from core.imports import ImportReport, Progress, RowError, import_batches
from core.readers import read_csv

from .models import PptbenchGateRepeat, PptbenchGeneration, PptbenchIssueSummary, PptbenchProcess, PptbenchTaskDomain
from .services import pptbench_scores_import

ISSUE_SUMMARY_COLUMNS = (
    "dimension",
    "category",
    "issue_type",
    "severity",
    "case_count",
    "mean_max_ratio",
    "total_penalty",
    "single_round_rate",
)
GENERATION_COLUMNS = (
    "candidate_id",
    "task_count",
    "valid_artifacts",
    "invalid_artifacts",
    "failed_tasks",
    "total_tokens",
    "average_tokens_per_task",
    "total_cost_usd",
    "average_cost_per_task_usd",
    "usage_status",
)
GATE_REPEAT_COLUMNS = ("judge", "task_id", "candidate_id", "repeat", "gate")
PROCESS_COLUMNS = ("task_id", "candidate_id", "review_turns", "revision_turns")
DOMAIN_COLUMNS = ("task_id", "domain")
SEVERITIES = ("diagnostic", "low", "medium", "high")
# The files of a PPTBench results/ folder this app reads, in import order (scores first: the others name its
# candidates); the optional inputs this app defines are read when present beside them.
RESULT_FILES = ("scores.csv", "issue-summary.csv", "generation-metrics.csv")
OPTIONAL_FILES = ("gate-repeats.csv", "process.csv", "domains.csv")
MAX_TEXT = 200


# ---------------------------------------------------------------------------------------------------------- fields
def _text(row: dict, name: str, *, max_length: int = MAX_TEXT) -> str:
    value = (row.get(name) or "").strip()
    if not value:
        raise RowError(name, "missing or empty")
    if len(value) > max_length:
        raise RowError(name, f"longer than {max_length} characters")
    return value


def _number(row: dict, name: str, *, integer: bool = False, low: float = 0.0, high: float | None = None) -> float:
    raw = (row.get(name) or "").strip()
    try:
        value = int(raw) if integer else float(raw)
    except (TypeError, ValueError, OverflowError):
        kind = "a whole number" if integer else "a number"
        raise RowError(name, f"expected {kind}, got {raw!r}") from None
    if not math.isfinite(value) or value < low or (high is not None and value > high):
        bound = f"{low:g}…{high:g}" if high is not None else f"at least {low:g}"
        raise RowError(name, f"expected {bound}, got {raw!r}")
    return value


def _boolean(row: dict, name: str) -> bool:
    raw = (row.get(name) or "").strip()
    if raw not in ("True", "False", "true", "false", "1", "0"):
        raise RowError(name, f"expected True or False, got {raw!r}")
    return raw in ("True", "true", "1")


def _candidate(row: dict, cache: dict):
    slug = _text(row, "candidate_id", max_length=80)
    if "__" not in slug:
        raise RowError("candidate_id", f"expected <model>__<effort>, got {slug!r}")
    if slug not in cache:
        model, effort = slug.rsplit("__", 1)
        cache[slug] = agent_services.configuration_ensure_external(
            slug=slug, model=model, reasoning_effort=effort, suite="pptbench"
        )
    return cache[slug]


# ---------------------------------------------------------------------------------------------------------- loop
def _import(
    *,
    path: Path,
    model: type[models.Model],
    required: tuple[str, ...],
    key_fields: tuple[str, ...],
    values: Callable[[dict], dict],
    noun: str,
    progress: Progress | None,
) -> ImportReport:
    """The shared loop: `values(row)` → the model's field values (or RowError); rows keyed by `key_fields`."""
    value_fields = None
    stored: dict[tuple, dict] = {}
    for row in model.objects.values():
        stored[tuple(row[f] for f in key_fields)] = row
    seen: set[tuple] = set()

    def validate(row: dict, _line: int):
        nonlocal value_fields
        fields = values(row)
        key = tuple(fields[f] for f in key_fields)
        if key in seen:
            raise RowError(key_fields[-1], f"a second row for {', '.join(map(str, key))} in the same file")
        seen.add(key)
        if key in stored:
            for name, value in fields.items():
                if stored[key][name] != value:
                    raise RowError(name, f"stored already as {stored[key][name]!r}, this file says {value!r}")
            return None
        return fields

    return import_batches(
        rows=read_csv(path, required=required),
        validate=validate,
        write=lambda batch: insert_rows(model, batch),
        report=ImportReport(source=str(path), noun=noun),
        progress=progress,
    )


# ---------------------------------------------------------------------------------------------------------- files
def pptbench_issue_summary_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    """PPTBench's issue-summary.csv: one row per (dimension, category, issue type)."""

    def values(row: dict) -> dict:
        severity = _text(row, "severity")
        if severity not in SEVERITIES:
            raise RowError("severity", f"expected one of {', '.join(SEVERITIES)}, got {severity!r}")
        return dict(
            dimension=_text(row, "dimension", max_length=64),
            category=_text(row, "category", max_length=64),
            issue_type=_text(row, "issue_type", max_length=64),
            severity=severity,
            case_count=int(_number(row, "case_count", integer=True)),
            mean_max_ratio=_number(row, "mean_max_ratio", high=1.0),
            total_penalty=_number(row, "total_penalty", high=1e9),
            single_round_rate=_number(row, "single_round_rate", high=1.0),
        )

    return _import(
        path=path,
        model=PptbenchIssueSummary,
        required=ISSUE_SUMMARY_COLUMNS,
        key_fields=("dimension", "category", "issue_type"),
        values=values,
        noun="issue types",
        progress=progress,
    )


def pptbench_generation_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    """PPTBench's generation-metrics.csv: one row per candidate; valid + invalid + failed must equal the task count."""
    configurations: dict = {}

    def values(row: dict) -> dict:
        fields = dict(
            task_count=int(_number(row, "task_count", integer=True, high=1e7)),
            valid_artifacts=int(_number(row, "valid_artifacts", integer=True, high=1e7)),
            invalid_artifacts=int(_number(row, "invalid_artifacts", integer=True, high=1e7)),
            failed_tasks=int(_number(row, "failed_tasks", integer=True, high=1e7)),
            total_tokens=int(_number(row, "total_tokens", integer=True, high=1e15)),
            average_tokens_per_task=_number(row, "average_tokens_per_task", high=1e12),
            total_cost_usd=_number(row, "total_cost_usd", high=1e9),
            average_cost_per_task_usd=_number(row, "average_cost_per_task_usd", high=1e9),
            usage_status=_text(row, "usage_status", max_length=40),
        )
        outcomes = fields["valid_artifacts"] + fields["invalid_artifacts"] + fields["failed_tasks"]
        if outcomes != fields["task_count"]:
            raise RowError("task_count", f"valid + invalid + failed = {outcomes}, not {fields['task_count']}")
        return dict(configuration_id=_candidate(row, configurations).pk, **fields)

    return _import(
        path=path,
        model=PptbenchGeneration,
        required=GENERATION_COLUMNS,
        key_fields=("configuration_id",),
        values=values,
        noun="candidates",
        progress=progress,
    )


def pptbench_gate_repeats_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    """Repeated per-judge gate decisions (this app's format, see the module doc)."""
    configurations: dict = {}

    def values(row: dict) -> dict:
        return dict(
            judge=_text(row, "judge"),
            configuration_id=_candidate(row, configurations).pk,
            task_id=_text(row, "task_id", max_length=64),
            repeat=int(_number(row, "repeat", integer=True, low=1, high=1000)),
            gate=_boolean(row, "gate"),
        )

    return _import(
        path=path,
        model=PptbenchGateRepeat,
        required=GATE_REPEAT_COLUMNS,
        key_fields=("judge", "configuration_id", "task_id", "repeat"),
        values=values,
        noun="gate decisions",
        progress=progress,
    )


def pptbench_process_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    """Review and revision turns per (task, candidate) (this app's format, see the module doc)."""
    configurations: dict = {}

    def values(row: dict) -> dict:
        return dict(
            configuration_id=_candidate(row, configurations).pk,
            task_id=_text(row, "task_id", max_length=64),
            review_turns=_number(row, "review_turns", high=1e6),
            revision_turns=_number(row, "revision_turns", high=1e6),
        )

    return _import(
        path=path,
        model=PptbenchProcess,
        required=PROCESS_COLUMNS,
        key_fields=("configuration_id", "task_id"),
        values=values,
        noun="process rows",
        progress=progress,
    )


def pptbench_domains_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    """The domain of each PPTBench task (this app's format, see the module doc)."""

    def values(row: dict) -> dict:
        return dict(task_id=_text(row, "task_id", max_length=64), domain=_text(row, "domain", max_length=100))

    return _import(
        path=path,
        model=PptbenchTaskDomain,
        required=DOMAIN_COLUMNS,
        key_fields=("task_id",),
        values=values,
        noun="task domains",
        progress=progress,
    )


IMPORTERS: dict[str, Callable[..., ImportReport]] = {
    "scores.csv": pptbench_scores_import,
    "issue-summary.csv": pptbench_issue_summary_import,
    "generation-metrics.csv": pptbench_generation_import,
    "gate-repeats.csv": pptbench_gate_repeats_import,
    "process.csv": pptbench_process_import,
    "domains.csv": pptbench_domains_import,
}
