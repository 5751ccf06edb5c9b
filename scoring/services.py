"""Every write of the scoring app: judge runs and records, imports of outside scores."""
from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from django.db import transaction

from agents import selectors as agent_selectors
from agents.models import Artifact, Configuration
from corpus.manifest import RowError
from corpus.protocol import RUBRIC_AXES

from .judge_client import JudgeInputs, JudgeOutcome, JudgeSettings, make_client
from .models import JudgeRecord, JudgeRun, PptbenchScore
from .rubric import JudgeReplyError, load_rubric, validate_reply

JUDGE_RECORD_FIELDS: tuple[str, ...] = (
    "task_id", "configuration", "judge", "judge_family", "run", "subscores", "score",
    "major_errors", "minor_errors", "editability_assessment", "reason",
)
IMPORTED_RUBRIC = "imported"


class JudgeRunConflict(ValueError):
    pass


def judge_run_ensure(*, judge: str, family: str, run: int, rubric_version: str, protocol: str = "", base_url: str = "",
                     reasoning_effort: str = "", temperature: float | None = None) -> JudgeRun:
    judge_run, created = JudgeRun.objects.get_or_create(
        judge=judge, run=run,
        defaults=dict(family=family, rubric_version=rubric_version, protocol=protocol, base_url=base_url,
                      reasoning_effort=reasoning_effort or "", temperature=temperature),
    )
    if not created and judge_run.family != family:
        raise JudgeRunConflict(f"judge {judge} run {run} is stored under family {judge_run.family!r}, not {family!r}")
    return judge_run


def judge_run_set_status(*, judge_run: JudgeRun, status: str) -> JudgeRun:
    judge_run.status = status
    judge_run.save(update_fields=["status"])
    return judge_run


def _reply_fields(reply) -> dict:
    values = {axis: float(reply.subscores[axis]) for axis in RUBRIC_AXES}
    values.update(score=float(reply.score), major_errors=list(reply.major_errors), minor_errors=list(reply.minor_errors),
                  editability_assessment=reply.editability_assessment, reason=reply.reason)
    return values


def judge_record_store(*, artifact: Artifact, judge_run: JudgeRun, outcome: JudgeOutcome, rubric_version: str) -> JudgeRecord:
    """Store an outcome; a failure is a `failed` record with the raw reply, never a zero score."""
    values = dict(
        status=JudgeRecord.Status.OK if outcome.ok else JudgeRecord.Status.FAILED,
        raw_reply=outcome.raw_reply, error=outcome.error, attempts=[asdict(a) for a in outcome.attempts],
        input_tokens=outcome.usage.input_tokens, output_tokens=outcome.usage.output_tokens, cost_usd=outcome.usage.cost_usd,
        prompt_hash=outcome.prompt_hash, rubric_version=rubric_version, source="judged",
    )
    if outcome.ok:
        values.update(_reply_fields(outcome.reply))
    else:
        values.update({axis: None for axis in RUBRIC_AXES}, score=None)
    record, _ = JudgeRecord.objects.update_or_create(artifact=artifact, judge_run=judge_run, defaults=values)
    return record


def judge_inputs_for(artifact: Artifact) -> JudgeInputs:
    figure = artifact.figure
    with figure.image.open("rb") as handle:
        source = handle.read()
    with artifact.render_png.open("rb") as handle:
        rendering = handle.read()
    mime = "image/png" if figure.image_format == "PNG" else "image/jpeg"
    return JudgeInputs(source_png=source, source_mime=mime, render_png=rendering, object_summary=artifact.audit_summary or {})


def artifacts_to_judge(*, judge_run: JudgeRun, configuration: str | None = None, limit: int | None = None) -> list[Artifact]:
    """Gate-passed artifacts without an ok record in this run (resuming skips completed ones)."""
    artifacts = (
        agent_selectors.artifact_list(configuration=configuration)
        .filter(gate_passed=True)
        .exclude(judge_records__judge_run=judge_run, judge_records__status=JudgeRecord.Status.OK)
    )
    return list(artifacts[:limit] if limit else artifacts)


def judge_artifact(*, artifact: Artifact, judge_run: JudgeRun, settings: JudgeSettings, rubric_version: str) -> JudgeRecord | None:
    judge_run.refresh_from_db(fields=["status"])
    if judge_run.status == JudgeRun.Status.PAUSED:
        return None
    done = JudgeRecord.objects.filter(artifact=artifact, judge_run=judge_run, status=JudgeRecord.Status.OK).first()
    if done is not None:
        return done
    rubric = load_rubric(rubric_version)
    outcome = make_client(settings, rubric).judge(judge_inputs_for(artifact))
    return judge_record_store(artifact=artifact, judge_run=judge_run, outcome=outcome, rubric_version=rubric_version)


def judge_artifacts(*, artifacts: Sequence[Artifact], judge_run: JudgeRun, settings: JudgeSettings, rubric_version: str,
                    on_done: Callable[[JudgeRecord], None] | None = None) -> tuple[int, int]:
    """Judge with `settings.concurrency` parallel calls; stops early when the run is paused."""
    rubric = load_rubric(rubric_version)
    client = make_client(settings, rubric)
    ok = failed = 0
    for start in range(0, len(artifacts), settings.concurrency):
        judge_run.refresh_from_db(fields=["status"])
        if judge_run.status == JudgeRun.Status.PAUSED:
            break
        batch = artifacts[start:start + settings.concurrency]
        outcomes = client.judge_many([judge_inputs_for(a) for a in batch])
        for artifact, outcome in zip(batch, outcomes):
            record = judge_record_store(artifact=artifact, judge_run=judge_run, outcome=outcome, rubric_version=rubric_version)
            ok, failed = ok + outcome.ok, failed + (not outcome.ok)
            if on_done:
                on_done(record)
    return ok, failed


@dataclass
class RecordImportReport:
    created: int = 0
    unchanged: int = 0
    rejected: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.created} records imported, {self.unchanged} already stored, {len(self.rejected)} rejected"


def _import_record_line(text: str, *, artifacts: dict, rubric) -> bool:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise RowError("$", f"malformed JSON ({error.msg} at column {error.colno})") from error
    if not isinstance(record, dict):
        raise RowError("$", "expected a JSON object")
    for name in record:
        if name not in JUDGE_RECORD_FIELDS:
            raise RowError(name, "unknown field")
    for name in JUDGE_RECORD_FIELDS:
        if name not in record:
            raise RowError(name, "missing field")
    for name in ("task_id", "configuration", "judge", "judge_family"):
        if not isinstance(record[name], str) or not record[name]:
            raise RowError(name, "expected a non-empty string")
    run = record["run"]
    if isinstance(run, bool) or not isinstance(run, int) or run < 1:
        raise RowError("run", "expected a run number 1, 2, 3 …")
    reply_text = json.dumps({k: record[k] for k in ("score", "subscores", "major_errors", "minor_errors", "editability_assessment", "reason")})
    try:
        reply = validate_reply(reply_text, rubric)
    except JudgeReplyError as error:
        raise RowError(error.field, error.reason) from error
    artifact = artifacts.get((record["configuration"], record["task_id"]))
    if artifact is None:
        raise RowError("task_id", f"no artifact of configuration {record['configuration']!r} for task {record['task_id']!r}")
    try:
        judge_run = judge_run_ensure(judge=record["judge"], family=record["judge_family"], run=run, rubric_version=IMPORTED_RUBRIC, protocol="imported")
    except JudgeRunConflict as error:
        raise RowError("judge_family", str(error)) from error
    values = dict(status=JudgeRecord.Status.OK, rubric_version=judge_run.rubric_version, source="imported", raw_reply=reply_text, **_reply_fields(reply))
    existing = JudgeRecord.objects.filter(artifact=artifact, judge_run=judge_run).first()
    if existing is not None:
        if existing.status == JudgeRecord.Status.OK and all(getattr(existing, k) == values[k] for k in ("score", *RUBRIC_AXES)):
            return False
        if existing.status == JudgeRecord.Status.OK:
            raise RowError("score", f"a different record for this artifact in {judge_run} is already stored; it is kept")
    JudgeRecord.objects.update_or_create(artifact=artifact, judge_run=judge_run, defaults=values)
    return True


def judge_records_import(*, path: Path, rubric_version: str = "refig-v1", on_line: Callable[[int], None] | None = None) -> RecordImportReport:
    """Judge records in the DESIGN 3 shape; bad lines are reported as FILE:LINE field: reason."""
    rubric = load_rubric(rubric_version)
    artifacts = {(a.configuration.slug, a.figure.task_id): a for a in agent_selectors.artifact_list()}
    report = RecordImportReport()
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if on_line:
                on_line(number)
            if not text.strip():
                continue
            try:
                with transaction.atomic():
                    created = _import_record_line(text, artifacts=artifacts, rubric=rubric)
            except RowError as error:
                report.rejected.append(f"{path}:{number} {error.field}: {error.reason}")
                continue
            report.created += created
            report.unchanged += not created
    return report


PPTBENCH_COLUMNS: tuple[str, ...] = (
    "task_id", "candidate_id", "majority_gate", "gate_count", "layout_score", "text_score",
    "local_graphics_score", "total_score", "issue_count", "single_round_issue_count",
)


def _pptbench_row(row: dict) -> dict:
    def number(name: str, kind=float):
        try:
            return kind(row[name])
        except (TypeError, ValueError) as error:
            raise RowError(name, f"expected a number, got {row[name]!r}") from error

    if row["majority_gate"] not in ("True", "False"):
        raise RowError("majority_gate", f"expected True or False, got {row['majority_gate']!r}")
    if "__" not in row["candidate_id"]:
        raise RowError("candidate_id", f"expected <model>__<effort>, got {row['candidate_id']!r}")
    return dict(
        majority_gate=row["majority_gate"] == "True", gate_count=number("gate_count", int),
        layout_score=number("layout_score"), text_score=number("text_score"),
        local_graphics_score=number("local_graphics_score"), total_score=number("total_score"),
        issue_count=number("issue_count", int), single_round_issue_count=number("single_round_issue_count", int),
    )


def pptbench_scores_import(*, path: Path) -> RecordImportReport:
    """PPTBench's published scores.csv → configurations `<model>__<effort>` (suite pptbench) and scores."""
    report = RecordImportReport()
    configurations: dict[str, Configuration] = {c.slug: c for c in Configuration.objects.filter(suite="pptbench")}
    existing = set(PptbenchScore.objects.values_list("configuration__slug", "task_id"))
    pending: list[PptbenchScore] = []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in PPTBENCH_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            report.rejected.append(f"{path}:1 {missing[0]}: missing column")
            return report
        for number, row in enumerate(reader, start=2):
            try:
                values = _pptbench_row(row)
            except RowError as error:
                report.rejected.append(f"{path}:{number} {error.field}: {error.reason}")
                continue
            slug = row["candidate_id"]
            if (slug, row["task_id"]) in existing:
                report.unchanged += 1
                continue
            if slug not in configurations:
                model, effort = slug.rsplit("__", 1)
                configurations[slug], _ = Configuration.objects.get_or_create(
                    slug=slug, defaults=dict(model=model, harness="pptbench", workflow="pptbench", reasoning_effort=effort,
                                             label=slug, suite="pptbench", position=len(configurations)))
            existing.add((slug, row["task_id"]))
            pending.append(PptbenchScore(configuration=configurations[slug], task_id=row["task_id"], **values))
    PptbenchScore.objects.bulk_create(pending, batch_size=2000)
    report.created = len(pending)
    return report
