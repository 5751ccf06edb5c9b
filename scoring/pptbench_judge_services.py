"""Every write of the PPTBench judge (REFERENCE 8): its runs, its rounds with their raw replies, its per-task rows.

A run judges each artifact in ``protocol().rounds`` independent rounds through the same judge client as the rubric
(scoring.judge_client), stage by stage: the semantic gate, then (when it did not fire) the rendering gate, then
(when neither fired) the findings. Every stage's outcome is stored on its round as it arrives, with the raw reply,
attempts and usage, so an interrupted or failed run resumes where it stopped and never pays twice for a stage. An
artifact that failed this app's gate (missing, corrupt, several slides …) is PPTBench's artifact gate in every round,
without a call. Once all rounds of an artifact are ok its row (scores.csv's columns) is written, keyed by the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from django.db import transaction
from django.db.models import Count, Sum

from agents import selectors as agent_selectors

from .judge_client import JudgeOutcome, JudgeSettings, make_client
from .judge_pacing import CostMeter, Pacer, PacingSettings
from .models import JudgeRun, PptbenchJudgeRound, PptbenchJudgeRun, PptbenchScore
from .pptbench_judge import STAGES, FindingsReply, stage
from .pptbench_policy import Round, finding_dict, parse_finding, protocol, score_task
from .services import JudgeRunConflict, judge_inputs_for

GATE_OF_STAGE = {"semantic_gate": "semantic", "render_gate": "render"}


def pptbench_judge_run_ensure(
    *,
    judge: str,
    family: str,
    run: int,
    api: str,
    base_url: str = "",
    reasoning_effort: str = "",
    temperature: float | None = None,
) -> PptbenchJudgeRun:
    version = protocol().version
    judge_run, created = PptbenchJudgeRun.objects.get_or_create(
        judge=judge,
        run=run,
        defaults=dict(
            family=family,
            api=api,
            base_url=base_url,
            reasoning_effort=reasoning_effort or "",
            temperature=temperature,
            protocol_version=version,
        ),
    )
    if not created and judge_run.family != family:
        raise JudgeRunConflict(f"{judge_run} is stored under family {judge_run.family!r}, not {family!r}")
    if not created and judge_run.protocol_version != version:
        raise JudgeRunConflict(
            f"{judge_run} was judged under {judge_run.protocol_version}, not {version}: use a new run"
        )
    return judge_run


def pptbench_judge_run_set_status(*, judge_run: PptbenchJudgeRun, status: str) -> PptbenchJudgeRun:
    judge_run.status = status
    judge_run.save(update_fields=["status"])
    return judge_run


def pptbench_artifacts_to_judge(
    *, judge_run: PptbenchJudgeRun, configuration: str | None = None, limit: int | None = None
) -> list:
    """Audited artifacts without a row in this run: gate failures, and gate passes with a rendering to show."""
    scored = set(PptbenchScore.objects.filter(judge_run=judge_run).values_list("configuration_id", "task_id"))
    artifacts = [
        artifact
        for artifact in agent_selectors.artifact_list(configuration=configuration).filter(gate_passed__isnull=False)
        if (artifact.configuration_id, artifact.figure.task_id) not in scored
        and (artifact.gate_passed is False or artifact.render_png)
    ]
    return artifacts[:limit] if limit else artifacts


@dataclass
class _Unit:
    """One round of one artifact while it is being judged."""

    artifact: object
    number: int
    stages: dict
    gate: str = ""
    findings: tuple = ()
    finding_errors: tuple = ()
    failed: str = ""
    spent: float | None = None  # what this call's stages cost, when priced

    def done(self, name: str) -> bool:
        return bool(self.stages.get(name, {}).get("ok"))

    def needs(self, name: str) -> bool:
        return not (self.failed or self.gate or self.done(name))


def _stage_record(outcome: JudgeOutcome) -> dict:
    record = {
        "ok": outcome.ok,
        "raw_reply": outcome.raw_reply,
        "error": outcome.error,
        "attempts": [asdict(a) for a in outcome.attempts],
        "input_tokens": outcome.usage.input_tokens,
        "output_tokens": outcome.usage.output_tokens,
        "cost_usd": outcome.usage.cost_usd,
        "prompt_hash": outcome.prompt_hash,
    }
    reply = outcome.reply
    if isinstance(reply, FindingsReply):
        record.update(
            findings=[finding_dict(f) for f in reply.findings], finding_errors=list(reply.errors), summary=reply.summary
        )
    elif reply is not None:
        record.update(triggered=reply.triggered, reason=reply.reason)
    return record


def _resume(unit: _Unit) -> _Unit:
    """The stages a stored (failed) round already has ok decide where it goes on."""
    for name, gate in GATE_OF_STAGE.items():
        if unit.done(name) and unit.stages[name]["triggered"]:
            return replace(unit, gate=gate)
    if unit.done("findings"):
        record = unit.stages["findings"]
        return replace(
            unit,
            findings=tuple(parse_finding(f) for f in record["findings"]),
            finding_errors=tuple(record["finding_errors"]),
        )
    return unit


def _round_store(judge_run: PptbenchJudgeRun, unit: _Unit) -> None:
    complete = bool(unit.gate) or unit.done("findings")
    stages = unit.stages.values()
    costs = [s["cost_usd"] for s in stages if s.get("cost_usd") is not None]
    PptbenchJudgeRound.objects.update_or_create(
        judge_run=judge_run,
        artifact=unit.artifact,
        round=unit.number,
        defaults=dict(
            status=PptbenchJudgeRound.Status.OK if complete and not unit.failed else PptbenchJudgeRound.Status.FAILED,
            gate=unit.gate,
            stages=unit.stages,
            findings=[finding_dict(f) for f in unit.findings],
            finding_errors=list(unit.finding_errors),
            error=unit.failed,
            input_tokens=sum(s.get("input_tokens", 0) for s in stages),
            output_tokens=sum(s.get("output_tokens", 0) for s in stages),
            cost_usd=sum(costs) if costs else None,
        ),
    )


def pptbench_score_store(*, judge_run: PptbenchJudgeRun, artifact) -> PptbenchScore | None:
    """The artifact's row from its stored rounds; None while a round is missing or failed."""
    stored = list(
        PptbenchJudgeRound.objects.filter(judge_run=judge_run, artifact=artifact, status=PptbenchJudgeRound.Status.OK)
    )
    if len(stored) != protocol().rounds:
        return None
    rounds = [
        Round(gate=r.gate, findings=tuple(parse_finding(f) for f in r.findings))
        for r in sorted(stored, key=lambda r: r.round)
    ]
    row, _ = PptbenchScore.objects.update_or_create(
        judge_run=judge_run,
        configuration=artifact.configuration,
        task_id=artifact.figure.task_id,
        defaults=score_task(rounds).row(),
    )
    return row


@dataclass(frozen=True)
class JudgeCounts:
    scored: int = 0
    failed: int = 0  # artifacts with a failed round (kept with its raw reply; a re-run retries it)
    finding_errors: int = 0  # findings dropped for breaking the taxonomy
    budget_reached: bool = False
    cost_usd: float | None = None  # the run's cost so far, all its rounds, when priced
    peak_concurrency: int = 0  # the most calls the pacing let out at once


def pptbench_judge_run_spent(judge_run: PptbenchJudgeRun) -> tuple[float, int]:
    """What the run's rounds cost so far, and how many artifacts that cost is spread over (an artifact, all its rounds,
    is what the budget counts)."""
    spent = PptbenchJudgeRound.objects.filter(judge_run=judge_run, cost_usd__isnull=False).aggregate(
        total=Sum("cost_usd"), artifacts=Count("artifact", distinct=True)
    )
    return spent["total"] or 0.0, spent["artifacts"]


def pptbench_judge_artifacts(
    *,
    artifacts: Sequence,
    judge_run: PptbenchJudgeRun,
    settings: JudgeSettings,
    on_done: Callable[[object], None] | None = None,
    pacing: PacingSettings | None = None,
) -> JudgeCounts:
    """Judge the artifacts' missing rounds, as many calls at a time as ``pacing`` allows (by default
    ``settings.concurrency``, fixed), an artifact's rounds together. The rubric judge's pacing: the window grows while
    calls succeed and shrinks on 429s, every call waits out a Retry-After, within the per-minute budgets. Stops early
    when paused, or before an artifact whose expected cost (the mean of the run's artifacts so far) would take the
    run's cost past the budget."""
    pacing = pacing or PacingSettings(
        start_concurrency=settings.concurrency, max_concurrency=settings.concurrency, fixed=True
    )
    pacer = Pacer(pacing)
    threads = replace(settings, concurrency=pacing.max_concurrency)  # what is in flight is the batch's calls
    clients = {name: make_client(threads, stage(name), pacer=pacer) for name in STAGES}
    rounds = protocol().rounds
    scored = failed = errors = 0
    spent, priced = pptbench_judge_run_spent(judge_run)
    cost = CostMeter(pacing.budget_usd, spent_before=spent, priced_before=priced)
    budget_reached, start, peak = False, 0, 0
    while start < len(artifacts):
        judge_run.refresh_from_db(fields=["status"])
        if judge_run.status == JudgeRun.Status.PAUSED:
            break
        window = pacer.window.allowed
        peak = max(peak, window)
        batch = artifacts[start : start + max(1, window // rounds)]
        allowed = next((k for k in range(len(batch)) if not cost.may_start(in_flight=k)), len(batch))
        if allowed == 0:
            budget_reached = True
            break
        batch, start = batch[:allowed], start + allowed
        stored = {
            (r.artifact_id, r.round): r
            for r in PptbenchJudgeRound.objects.filter(judge_run=judge_run, artifact__in=[a.pk for a in batch])
        }
        units = []
        for artifact in batch:
            for number in range(1, rounds + 1):
                previous = stored.get((artifact.pk, number))
                if previous is not None and previous.status == PptbenchJudgeRound.Status.OK:
                    continue
                if artifact.gate_passed is False:
                    _round_store(judge_run, _Unit(artifact, number, {}, gate="artifact"))
                    continue
                units.append(_resume(_Unit(artifact, number, dict(previous.stages) if previous else {})))
        inputs = {a.pk: replace(judge_inputs_for(a), object_summary={}) for a in {u.artifact for u in units}}
        for name in STAGES:
            pending = [u for u in units if u.needs(name)]
            outcomes = clients[name].judge_many([inputs[u.artifact.pk] for u in pending]) if pending else []
            for unit, outcome in zip(pending, outcomes):
                unit.stages[name] = _stage_record(outcome)
                if outcome.usage.cost_usd is not None:
                    unit.spent = (unit.spent or 0.0) + outcome.usage.cost_usd
                if not outcome.ok:
                    unit.failed = f"{name}: {outcome.error}"
                elif name in GATE_OF_STAGE:
                    unit.gate = GATE_OF_STAGE[name] if outcome.reply.triggered else ""
                else:
                    unit.findings, unit.finding_errors = outcome.reply.findings, outcome.reply.errors
                    errors += len(outcome.reply.errors)
                with transaction.atomic():
                    _round_store(judge_run, unit)
        for artifact in batch:
            costs = [u.spent for u in units if u.artifact is artifact and u.spent is not None]
            cost.add(sum(costs) if costs else None)
            row = pptbench_score_store(judge_run=judge_run, artifact=artifact)
            scored, failed = scored + (row is not None), failed + (row is None)
            if on_done:
                on_done(artifact)
    spent_usd = cost.spent if cost.mean_cost is not None else None
    return JudgeCounts(scored, failed, errors, budget_reached, spent_usd, peak)


__all__ = [
    "JudgeCounts",
    "pptbench_artifacts_to_judge",
    "pptbench_judge_artifacts",
    "pptbench_judge_run_ensure",
    "pptbench_judge_run_set_status",
    "pptbench_judge_run_spent",
    "pptbench_score_store",
]
