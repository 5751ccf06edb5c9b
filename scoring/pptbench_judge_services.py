"""Every write of the PPTBench judge (REFERENCE 8): its runs, its rounds with their raw replies, its per-task rows.

A run judges each artifact in ``protocol().rounds`` independent rounds through the same judge client as the rubric
(scoring.judge_client), stage by stage: the semantic gate, then (when it did not fire) the rendering gate, then
(when neither fired) the findings. Every stage's outcome is stored on its round as it arrives, with the raw reply,
attempts and usage, so an interrupted or failed run resumes where it stopped and never pays twice for a stage. An
artifact that failed this app's gate (missing, corrupt, several slides …) is PPTBench's artifact gate in every round,
without a call. Once all rounds of an artifact are ok its row (scores.csv's columns) is written, keyed by the run.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, replace

from django.db import transaction
from django.db.models import Count, Sum

from agents import selectors as agent_selectors

from .judge_client import JudgeOutcome, JudgeSettings, make_client
from .judge_pacing import CostMeter, Pacer, PacingSettings
from .judge_runs import PAUSE_CHECK_SECONDS
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
    ``settings.concurrency``, fixed), with the rubric judge's pacing: the window grows while calls succeed and shrinks
    on 429s, every call waits out a Retry-After, within the per-minute budgets. Calls stream: a round's next stage is
    sent as soon as its last one is stored, so no call waits for another artifact's. Stops early when paused, or before
    an artifact whose expected cost (the mean of the run's artifacts so far) would take the run's cost past the
    budget."""
    pacing = pacing or PacingSettings(
        start_concurrency=settings.concurrency, max_concurrency=settings.concurrency, fixed=True
    )
    return _Stream(artifacts, judge_run, settings, pacing, on_done).run()


class _Stream:
    """One PPTBench judge pass: stage calls in flight on a thread pool, every outcome stored by this thread."""

    def __init__(self, artifacts, judge_run, settings, pacing, on_done) -> None:
        self.judge_run, self.on_done = judge_run, on_done
        self.pending = deque(artifacts)
        self.pacer = Pacer(pacing)
        self.threads = pacing.max_concurrency
        self.clients = {
            name: make_client(replace(settings, concurrency=self.threads), stage(name), pacer=self.pacer)
            for name in STAGES
        }
        spent, priced = pptbench_judge_run_spent(judge_run)
        self.cost = CostMeter(pacing.budget_usd, spent_before=spent, priced_before=priced)
        self.ready: deque[_Unit] = deque()  # rounds whose next stage may be sent
        self.in_flight: dict[Future, tuple[_Unit, str]] = {}
        self.active: dict[int, list[_Unit]] = {}  # artifact id: its rounds still being judged
        self.inputs: dict[int, object] = {}
        self.spending: dict[int, list[float]] = {}  # artifact id: what its calls in this pass cost
        self.scored = self.failed = self.errors = self.peak = 0
        self.paused = self.budget_reached = False

    def run(self) -> JudgeCounts:
        pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="pptbench-judge")
        clean = False
        try:
            self._loop(pool)
            clean = True
        finally:  # interrupted: calls in flight are not waited for (their stages are asked again on resume)
            pool.shutdown(wait=clean, cancel_futures=True)
            for client in self.clients.values():
                client.close()
        spent = self.cost.spent if self.cost.mean_cost is not None else None
        return JudgeCounts(self.scored, self.failed, self.errors, self.budget_reached, spent, self.peak)

    def _loop(self, pool: ThreadPoolExecutor) -> None:
        last_pause_check = -math.inf
        while True:
            if time.monotonic() - last_pause_check >= PAUSE_CHECK_SECONDS:
                last_pause_check = time.monotonic()
                self.judge_run.refresh_from_db(fields=["status"])
                self.paused = self.judge_run.status == JudgeRun.Status.PAUSED
            self._send(pool)
            if not self.in_flight:
                return  # nothing left that may be sent: done, paused or at the budget
            done, _ = wait(list(self.in_flight), return_when=FIRST_COMPLETED)
            for future in done:
                self._store(*self.in_flight.pop(future), future.result())

    def _send(self, pool: ThreadPoolExecutor) -> None:
        while self.pacer.may_start(in_flight=len(self.in_flight)):
            if not self.ready and not self._begin_next():
                return
            unit = self.ready.popleft()
            name = next(n for n in STAGES if unit.needs(n))
            future = pool.submit(self.clients[name].judge, self.inputs[unit.artifact.pk])
            self.in_flight[future] = (unit, name)
            self.peak = max(self.peak, len(self.in_flight))

    def _begin_next(self) -> bool:
        """Start the next artifact's rounds (False: none may start now)."""
        while self.pending and not self.paused:
            if not self.cost.may_start(in_flight=len(self.active)):
                self.budget_reached = not self.active
                return False
            artifact = self.pending.popleft()
            units = self._rounds_to_judge(artifact)
            if units:
                self.inputs[artifact.pk] = replace(judge_inputs_for(artifact), object_summary={})
                self.active[artifact.pk] = units
                self.ready.extend(units)
                return True
            self._finish(artifact, spent=None)  # every round stored already, or gated without a call
        return False

    def _rounds_to_judge(self, artifact) -> list[_Unit]:
        stored = {r.round: r for r in PptbenchJudgeRound.objects.filter(judge_run=self.judge_run, artifact=artifact)}
        units = []
        for number in range(1, protocol().rounds + 1):
            previous = stored.get(number)
            if previous is not None and previous.status == PptbenchJudgeRound.Status.OK:
                continue
            if artifact.gate_passed is False:
                _round_store(self.judge_run, _Unit(artifact, number, {}, gate="artifact"))
                continue
            units.append(_resume(_Unit(artifact, number, dict(previous.stages) if previous else {})))
        return units

    def _store(self, unit: _Unit, name: str, outcome: JudgeOutcome) -> None:
        unit.stages[name] = _stage_record(outcome)
        if outcome.usage.cost_usd is not None:
            self.spending.setdefault(unit.artifact.pk, []).append(outcome.usage.cost_usd)
        if not outcome.ok:
            unit.failed = f"{name}: {outcome.error}"
        elif name in GATE_OF_STAGE:
            unit.gate = GATE_OF_STAGE[name] if outcome.reply.triggered else ""
        else:
            unit.findings, unit.finding_errors = outcome.reply.findings, outcome.reply.errors
            self.errors += len(outcome.reply.errors)
        with transaction.atomic():
            _round_store(self.judge_run, unit)
        if any(unit.needs(n) for n in STAGES):
            self.ready.appendleft(unit)  # its next stage goes out first: rounds finish before new ones start
            return
        rounds = self.active[unit.artifact.pk]
        rounds[:] = [other for other in rounds if other is not unit]
        if not rounds:
            del self.active[unit.artifact.pk], self.inputs[unit.artifact.pk]
            costs = self.spending.pop(unit.artifact.pk, [])
            self._finish(unit.artifact, spent=sum(costs) if costs else None)

    def _finish(self, artifact, *, spent: float | None) -> None:
        self.cost.add(spent)
        row = pptbench_score_store(judge_run=self.judge_run, artifact=artifact)
        self.scored, self.failed = self.scored + (row is not None), self.failed + (row is None)
        if self.on_done:
            self.on_done(artifact)


__all__ = [
    "JudgeCounts",
    "pptbench_artifacts_to_judge",
    "pptbench_judge_artifacts",
    "pptbench_judge_run_ensure",
    "pptbench_judge_run_set_status",
    "pptbench_judge_run_spent",
    "pptbench_score_store",
]
