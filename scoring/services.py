"""Every write of the scoring app: judge runs and records, imports of outside scores."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from agents import selectors as agent_selectors
from agents import services as agent_services
from core.bulk_write import insert_rows
from core.errors import Conflict
from core.imports import ImportReport, Progress, RowError, import_batches
from core.readers import read_csv, read_jsonl
from corpus.protocol import RUBRIC_AXES

from . import pptbench
from .judge_client import JudgeInputs, JudgeOutcome, JudgeSettings, make_client
from .models import JudgeRecord, JudgeRun, PptbenchScore
from .rubric import JudgeReplyError, load_rubric, validate_reply

JUDGE_RECORD_FIELDS: tuple[str, ...] = (
    "task_id",
    "configuration",
    "judge",
    "judge_family",
    "run",
    "subscores",
    "score",
    "major_errors",
    "minor_errors",
    "editability_assessment",
    "reason",
)
# Optional beside them (the study export and the release carry them): the reply as the judge wrote it, stored as given,
# and the SHA-256 of the prompt it answered (scoring.rubric.prompt_hash). Without a raw reply, the record's fields are.
JUDGE_RECORD_PROVENANCE: tuple[str, ...] = ("raw_reply", "prompt_hash")
IMPORTED_RUBRIC = "imported"
MAX_RUN = 1000
MAX_SCORE_MAGNITUDE = 1e9  # PPTBench scores are 0–100 and counts small; anything near this is a broken file


class JudgeRunConflict(Conflict):
    pass


def judge_run_ensure(
    *,
    judge: str,
    family: str,
    run: int,
    rubric_version: str,
    protocol: str = "",
    base_url: str = "",
    reasoning_effort: str = "",
    temperature: float | None = None,
) -> JudgeRun:
    judge_run, created = JudgeRun.objects.get_or_create(
        judge=judge,
        run=run,
        defaults=dict(
            family=family,
            rubric_version=rubric_version,
            protocol=protocol,
            base_url=base_url,
            reasoning_effort=reasoning_effort or "",
            temperature=temperature,
        ),
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
    values.update(
        score=float(reply.score),
        major_errors=list(reply.major_errors),
        minor_errors=list(reply.minor_errors),
        editability_assessment=reply.editability_assessment,
        reason=reply.reason,
    )
    return values


def judge_record_store(*, artifact, judge_run: JudgeRun, outcome: JudgeOutcome, rubric_version: str) -> JudgeRecord:
    """Store an outcome; a failure is a `failed` record with the raw reply, never a zero score."""
    values = dict(
        status=JudgeRecord.Status.OK if outcome.ok else JudgeRecord.Status.FAILED,
        raw_reply=outcome.raw_reply,
        error=outcome.error,
        attempts=[asdict(a) for a in outcome.attempts],
        input_tokens=outcome.usage.input_tokens,
        output_tokens=outcome.usage.output_tokens,
        cost_usd=outcome.usage.cost_usd,
        prompt_hash=outcome.prompt_hash,
        rubric_version=rubric_version,
        source="judged",
        lease_until=None,
    )
    if outcome.ok:
        values.update(_reply_fields(outcome.reply))
    else:
        values.update({axis: None for axis in RUBRIC_AXES}, score=None)
    record, _ = JudgeRecord.objects.update_or_create(artifact=artifact, judge_run=judge_run, defaults=values)
    return record


def judge_inputs_for(artifact) -> JudgeInputs:
    figure = artifact.figure
    with figure.image.open("rb") as handle:
        source = handle.read()
    with artifact.render_png.open("rb") as handle:
        rendering = handle.read()
    mime = "image/png" if figure.image_format == "PNG" else "image/jpeg"
    return JudgeInputs(
        source_png=source, source_mime=mime, render_png=rendering, object_summary=artifact.audit_summary or {}
    )


def artifacts_to_judge(*, judge_run: JudgeRun, configuration: str | None = None, limit: int | None = None) -> list:
    """Gate-passed artifacts without an ok record in this run (resuming skips completed ones)."""
    # A subquery: exclude() over the reverse relation with two conditions would also drop artifacts with an ok record
    # in another run and any record in this one (a failed or interrupted one), which a resume must judge.
    done = JudgeRecord.objects.filter(judge_run=judge_run, status=JudgeRecord.Status.OK).values("artifact_id")
    artifacts = agent_selectors.artifact_list(configuration=configuration).filter(gate_passed=True).exclude(pk__in=done)
    return list(artifacts[:limit] if limit else artifacts)


# One judge call with its retries (judge_client: up to 600 s per attempt) fits in an hour: the judge task's soft and
# hard time limits. A claim older than the hard limit was made by a worker that is gone (killed, or stopped by the
# limit), so another may take the record over.
JUDGE_SOFT_TIME_LIMIT, JUDGE_TIME_LIMIT = 3600, 3700
JUDGE_CLAIM_STALE_SECONDS = JUDGE_TIME_LIMIT + 200


def judge_record_claim(
    *, artifact, judge_run: JudgeRun, rubric_version: str, lease_seconds: float | None = None
) -> JudgeRecord | None:
    """Claim (artifact, run) before paying for a judge call: the claimed record (status `running`), or None when it is
    done or a live worker holds it. A redelivered task therefore never calls the API a second time. One row per
    (artifact, run) is a unique constraint, so of two workers creating the claim one fails; a failed record, or a
    running one whose claim is stale, is taken over by a conditional UPDATE, which one worker alone can win. With
    ``lease_seconds`` (the judge command, which renews its leases) the claim lapses when its lease does."""
    now = timezone.now()
    lease_until = None if lease_seconds is None else now + timedelta(seconds=lease_seconds)
    try:
        with transaction.atomic():
            return JudgeRecord.objects.create(
                artifact=artifact,
                judge_run=judge_run,
                status=JudgeRecord.Status.RUNNING,
                claimed_at=now,
                lease_until=lease_until,
                rubric_version=rubric_version,
            )
    except IntegrityError:
        pass
    stale = now - timedelta(seconds=JUDGE_CLAIM_STALE_SECONDS)
    running = Q(status=JudgeRecord.Status.RUNNING)
    taken = (
        JudgeRecord.objects.filter(artifact=artifact, judge_run=judge_run)
        .filter(
            Q(status=JudgeRecord.Status.FAILED)
            | running & Q(lease_until__isnull=True) & (Q(claimed_at__lt=stale) | Q(claimed_at__isnull=True))
            | running & Q(lease_until__lt=now)
        )
        .update(status=JudgeRecord.Status.RUNNING, claimed_at=now, lease_until=lease_until)
    )
    return JudgeRecord.objects.get(artifact=artifact, judge_run=judge_run) if taken else None


def judge_claims_renew(*, record_ids: Sequence[int], lease_seconds: float) -> None:
    """The judge command's heartbeat: its claims in flight stay its own for another lease."""
    JudgeRecord.objects.filter(pk__in=list(record_ids), status=JudgeRecord.Status.RUNNING).update(
        lease_until=timezone.now() + timedelta(seconds=lease_seconds)
    )


def judge_claims_release(*, record_ids: Sequence[int], error: str) -> None:
    """Claims given up without an outcome (an interrupted run) become failed records, claimable again at once."""
    JudgeRecord.objects.filter(pk__in=list(record_ids), status=JudgeRecord.Status.RUNNING).update(
        status=JudgeRecord.Status.FAILED, error=error[:2000], lease_until=None
    )


def judge_artifact(
    *, artifact, judge_run: JudgeRun, settings: JudgeSettings, rubric_version: str
) -> JudgeRecord | None:
    """Judge one artifact once: None when the run is paused; the stored record when it is done or being judged by
    another worker; otherwise the record this call stored (ok, or failed with the raw reply)."""
    judge_run.refresh_from_db(fields=["status"])
    if judge_run.status == JudgeRun.Status.PAUSED:
        return None
    if judge_record_claim(artifact=artifact, judge_run=judge_run, rubric_version=rubric_version) is None:
        return JudgeRecord.objects.get(artifact=artifact, judge_run=judge_run)
    try:
        rubric = load_rubric(rubric_version)
        outcome = make_client(settings, rubric).judge(judge_inputs_for(artifact))
    except BaseException as error:
        # Release the claim (a failed record is claimable at once) rather than leave it to go stale.
        JudgeRecord.objects.filter(artifact=artifact, judge_run=judge_run).update(
            status=JudgeRecord.Status.FAILED, error=f"{type(error).__name__}: {error}"[:2000]
        )
        raise
    return judge_record_store(artifact=artifact, judge_run=judge_run, outcome=outcome, rubric_version=rubric_version)


class _RecordImport:
    """Judge records validated one by one, written in bulk: judge runs and the records stored so far are read once
    per judge run, and every record of the file is remembered, so a duplicate line is caught before it is written."""

    def __init__(self, rubric):
        self.rubric = rubric
        self.artifacts = agent_selectors.artifact_ids_by_key()
        self.runs: dict[tuple[str, int], JudgeRun] = {}
        self.stored: dict[int, dict[int, tuple]] = {}  # judge run id → artifact id → (status, pk, score, axes)
        self.seen: set[tuple[int, int]] = set()

    def judge_run(self, judge: str, family: str, run: int) -> JudgeRun:
        key = (judge, run)
        if key not in self.runs:
            try:
                self.runs[key] = judge_run_ensure(
                    judge=judge, family=family, run=run, rubric_version=IMPORTED_RUBRIC, protocol="imported"
                )
            except JudgeRunConflict as error:
                raise RowError("judge_family", str(error)) from error
            self.stored[self.runs[key].pk] = {
                artifact_id: (status, pk, (score, *axes))
                for artifact_id, status, pk, score, *axes in JudgeRecord.objects.filter(
                    judge_run=self.runs[key]
                ).values_list("artifact_id", "status", "pk", "score", *RUBRIC_AXES)
            }
        judge_run = self.runs[key]
        if judge_run.family != family:
            raise RowError(
                "judge_family", f"judge {judge} run {run} is stored under family {judge_run.family!r}, not {family!r}"
            )
        return judge_run

    def validate(self, record: dict, _line: int):
        for name in record:
            if name not in JUDGE_RECORD_FIELDS and name not in JUDGE_RECORD_PROVENANCE:
                raise RowError(name, "unknown field")
        raw_reply, digest = record.get("raw_reply", ""), record.get("prompt_hash", "")
        if not isinstance(raw_reply, str):
            raise RowError("raw_reply", "expected the judge's reply as a string")
        if not isinstance(digest, str) or not re.fullmatch(r"(?:[0-9a-f]{64})?", digest):
            raise RowError("prompt_hash", "expected a SHA-256 as 64 lower-case hexadecimal digits")
        for name in JUDGE_RECORD_FIELDS:
            if name not in record:
                raise RowError(name, "missing field")
        for name in ("task_id", "configuration", "judge", "judge_family"):
            if not isinstance(record[name], str) or not record[name]:
                raise RowError(name, "expected a non-empty string")
        run = record["run"]
        if isinstance(run, bool) or not isinstance(run, int) or not 1 <= run <= MAX_RUN:
            raise RowError("run", f"expected a run number 1, 2, 3 … (at most {MAX_RUN})")
        reply_text = json.dumps(
            {
                k: record[k]
                for k in ("score", "subscores", "major_errors", "minor_errors", "editability_assessment", "reason")
            }
        )
        try:
            reply = validate_reply(reply_text, self.rubric)
        except JudgeReplyError as error:
            raise RowError(error.field, error.reason) from error
        artifact_id = self.artifacts.get((record["configuration"], record["task_id"]))
        if artifact_id is None:
            raise RowError(
                "task_id", f"no artifact of configuration {record['configuration']!r} for task {record['task_id']!r}"
            )
        judge_run = self.judge_run(record["judge"], record["judge_family"], run)
        values = dict(
            status=JudgeRecord.Status.OK,
            rubric_version=judge_run.rubric_version,
            source="imported",
            raw_reply=raw_reply or reply_text,
            prompt_hash=digest,
            **_reply_fields(reply),
        )
        key = (judge_run.pk, artifact_id)
        if key in self.seen:
            raise RowError("task_id", f"a second record for this artifact in {judge_run} in the same file")
        self.seen.add(key)
        stored = self.stored[judge_run.pk].get(artifact_id)
        replaces = None
        if stored is not None:
            status, pk, numbers = stored
            if status == JudgeRecord.Status.OK:
                if numbers == tuple(values[k] for k in ("score", *RUBRIC_AXES)):
                    return None
                raise RowError(
                    "score", f"a different record for this artifact in {judge_run} is already stored; it is kept"
                )
            replaces = pk  # a failed record of the built-in judge gives way to an imported score
        return replaces, dict(artifact_id=artifact_id, judge_run_id=judge_run.pk, **values)

    @staticmethod
    def write(batch: list) -> None:
        if replaced := [pk for pk, _ in batch if pk is not None]:
            JudgeRecord.objects.filter(pk__in=replaced).delete()
        insert_rows(JudgeRecord, [record for _, record in batch])


def judge_records_import(
    *, path: Path, rubric_version: str = "refig-v1", progress: Progress | None = None
) -> ImportReport:
    """Judge records in the DESIGN 3 shape; bad lines are reported as FILE:LINE field: reason."""
    records = _RecordImport(load_rubric(rubric_version))
    report = ImportReport(source=str(path), noun="records")
    return import_batches(
        rows=read_jsonl(path), validate=records.validate, write=records.write, report=report, progress=progress
    )


def _pptbench_row(row: dict) -> dict:
    def number(name: str, kind=float):
        try:
            value = kind(row[name])
        except (TypeError, ValueError, OverflowError):
            raise RowError(name, f"expected a number, got {row[name]!r}") from None
        if not math.isfinite(value) or abs(value) > MAX_SCORE_MAGNITUDE:
            raise RowError(name, f"not a finite score: {row[name]!r}")
        return value

    if row["majority_gate"] not in ("True", "False"):
        raise RowError("majority_gate", f"expected True or False, got {row['majority_gate']!r}")
    if "__" not in row["candidate_id"]:
        raise RowError("candidate_id", f"expected <model>__<effort>, got {row['candidate_id']!r}")
    return dict(
        majority_gate=row["majority_gate"] == "True",
        gate_count=number("gate_count", int),
        layout_score=number("layout_score"),
        text_score=number("text_score"),
        local_graphics_score=number("local_graphics_score"),
        total_score=number("total_score"),
        issue_count=number("issue_count", int),
        single_round_issue_count=number("single_round_issue_count", int),
    )


def pptbench_scores_import(*, path: Path, progress: Progress | None = None) -> ImportReport:
    """PPTBench's published scores.csv → configurations `<model>__<effort>` (suite pptbench) and scores."""
    report = ImportReport(source=str(path), noun="scores")
    existing = set(pptbench_selectors_keys())
    seen: set[tuple[str, str]] = set()
    configurations: dict[str, object] = {}

    def validate(row: dict, _line: int):
        values = _pptbench_row(row)
        slug, task_id = row["candidate_id"].strip(), row["task_id"].strip()
        if not task_id:
            raise RowError("task_id", "missing or empty")
        if (slug, task_id) in existing:
            return None
        if (slug, task_id) in seen:
            raise RowError("task_id", f"a second row for {slug} and {task_id} in the same file")
        seen.add((slug, task_id))
        if slug not in configurations:
            model, effort = slug.rsplit("__", 1)
            configurations[slug] = agent_services.configuration_ensure_external(
                slug=slug, model=model, reasoning_effort=effort, suite="pptbench"
            )
        return dict(configuration_id=configurations[slug].pk, task_id=task_id, **values)

    return import_batches(
        rows=read_csv(path, required=pptbench.SCORES_COLUMNS),
        validate=validate,
        write=lambda batch: insert_rows(PptbenchScore, batch),
        report=report,
        progress=progress,
    )


def pptbench_selectors_keys():
    return PptbenchScore.objects.filter(judge_run__isnull=True).values_list("configuration__slug", "task_id")
