"""The judge command's run loop (a service): judge artifacts at the API's rate with an adaptive window
(``scoring.judge_pacing``), a cost cap, a progress callback, and claims that make a kill at any moment safe.

Every database write happens on the calling thread; only the HTTP calls run on the pool's threads. Each artifact is
claimed (``services.judge_record_claim``) with a lease before its call, the leases of the calls in flight are renewed
by a heartbeat, and the outcome replaces the claim in the same row. A killed command therefore leaves at most its
in-flight claims, which lapse within a lease, and the same command run again judges exactly what is left: one record
per artifact and run, none lost.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import NamedTuple

from django.db import transaction
from django.db.models import Count, Sum

from . import services
from .judge_client import JudgeSettings, make_client
from .judge_pacing import CostMeter, Pacer, PacingSettings, Progress
from .models import JudgeRecord, JudgeRun
from .rubric import load_rubric

JUDGE_LEASE_SECONDS = 30.0  # a killed command's claims are taken over this long after its last heartbeat
PROGRESS_SECONDS = 0.5
PAUSE_CHECK_SECONDS = 2.0
RATE_SECONDS = 10.0  # the progress line's rate is over the last ten seconds


class JudgeRunResult(NamedTuple):
    ok: int
    failed: int
    left: int  # not judged: paused, stopped by the budget, or held by another worker
    budget_reached: bool
    held_elsewhere: int
    cost_usd: float | None


def judge_run_spent(judge_run: JudgeRun) -> tuple[float, int]:
    """What the run's records cost so far, and how many of them carry a cost."""
    spent = JudgeRecord.objects.filter(judge_run=judge_run).aggregate(total=Sum("cost_usd"), n=Count("cost_usd"))
    return spent["total"] or 0.0, spent["n"]


def judge_artifacts(
    *,
    artifacts: Sequence,
    judge_run: JudgeRun,
    settings: JudgeSettings,
    rubric_version: str,
    pacing: PacingSettings | None = None,
    on_done: Callable[[JudgeRecord], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    lease_seconds: float = JUDGE_LEASE_SECONDS,
) -> JudgeRunResult:
    """Judge ``artifacts`` in one run; stops early when the run is paused or the budget would be passed."""
    return _RunLoop(
        artifacts, judge_run, settings, rubric_version, pacing or PacingSettings(), on_done, on_progress, lease_seconds
    ).run()


class _RunLoop:
    def __init__(self, artifacts, judge_run, settings, rubric_version, pacing, on_done, on_progress, lease_seconds):
        self.judge_run, self.settings, self.rubric_version = judge_run, settings, rubric_version
        self.on_done, self.on_progress, self.lease = on_done, on_progress, lease_seconds
        self.pending = deque(artifacts)
        self.total = len(artifacts)
        self.pacer = Pacer(pacing)
        spent, priced = judge_run_spent(judge_run)
        self.cost = CostMeter(pacing.budget_usd, spent_before=spent, priced_before=priced)
        self.client = make_client(settings, load_rubric(rubric_version), pacer=self.pacer)
        self.in_flight: dict[Future, tuple[object, int]] = {}
        self.held: deque[tuple[float, object]] = deque()  # (when to try again, artifact) claimed by a live worker
        self.held_once: set[int] = set()
        self.held_elsewhere = 0
        self.ok = self.failed = 0
        self.finished: deque[float] = deque()
        self.started = time.monotonic()
        self.paused = self.budget_reached = False

    def run(self) -> JudgeRunResult:
        pool = ThreadPoolExecutor(max_workers=self.pacer.settings.max_concurrency, thread_name_prefix="judge")
        clean = False
        try:
            self._loop(pool)
            clean = True
        finally:
            if not clean:  # interrupted (Ctrl-C, SIGTERM, a crash): what is in flight is given back at once
                services.judge_claims_release(
                    record_ids=[pk for _, pk in self.in_flight.values()], error="interrupted before the judge replied"
                )
            pool.shutdown(wait=clean, cancel_futures=True)
            self.client.close()
        self._report()
        left = self.total - self.ok - self.failed
        return JudgeRunResult(self.ok, self.failed, left, self.budget_reached, self.held_elsewhere, self._cost_so_far())

    def _loop(self, pool: ThreadPoolExecutor) -> None:
        last_beat = last_report = last_pause_check = time.monotonic()
        while True:
            now = time.monotonic()
            if now - last_pause_check >= PAUSE_CHECK_SECONDS:
                last_pause_check = now
                self.judge_run.refresh_from_db(fields=["status"])
                self.paused = self.judge_run.status == JudgeRun.Status.PAUSED
            while self.held and self.held[0][0] <= now:
                self.pending.append(self.held.popleft()[1])
            if not self.paused:
                self._start_more(pool)
            if not self.in_flight:
                if self.paused or self.budget_reached or not (self.pending or self.held):
                    break
                time.sleep(0.05)  # only held artifacts remain: wait for their claims to lapse
                continue
            done, _ = wait(list(self.in_flight), timeout=0.2, return_when=FIRST_COMPLETED)
            with transaction.atomic():
                records = [self._store(future) for future in done]
            if self.on_done:
                for record in records:
                    self.on_done(record)
            now = time.monotonic()
            if now - last_beat >= self.lease / 3:
                last_beat = now
                services.judge_claims_renew(
                    record_ids=[pk for _, pk in self.in_flight.values()], lease_seconds=self.lease
                )
            if now - last_report >= PROGRESS_SECONDS:
                last_report = now
                self._report()

    def _start_more(self, pool: ThreadPoolExecutor) -> None:
        """Claim what may start now in one transaction (one commit, not one per artifact), then send it."""
        room = 0
        while len(self.pending) > room and self.pacer.may_start(in_flight=len(self.in_flight) + room):
            if not self.cost.may_start(in_flight=len(self.in_flight) + room):
                self.budget_reached = room == 0 and not self.in_flight and not self.cost.may_start(in_flight=0)
                break
            room += 1
        claimed = []
        with transaction.atomic():
            for _ in range(room):
                artifact = self.pending.popleft()
                claim = services.judge_record_claim(
                    artifact=artifact,
                    judge_run=self.judge_run,
                    rubric_version=self.rubric_version,
                    lease_seconds=self.lease,
                )
                if claim is None:
                    self._skip(artifact)
                else:
                    claimed.append((artifact, claim.pk))
        for index, (artifact, pk) in enumerate(claimed):
            try:
                inputs = services.judge_inputs_for(artifact)
            except BaseException as error:
                services.judge_claims_release(
                    record_ids=[pk for _, pk in claimed[index:]], error=f"{type(error).__name__}: {error}"
                )
                raise
            self.in_flight[pool.submit(self.client.judge, inputs)] = (artifact, pk)

    def _skip(self, artifact) -> None:
        """Claimed by someone else: done already (counted), or held; a held claim is tried once more after a lease."""
        record = JudgeRecord.objects.get(artifact=artifact, judge_run=self.judge_run)
        if record.status == JudgeRecord.Status.OK:
            self.ok += 1
        elif artifact.pk in self.held_once:
            self.held_elsewhere += 1
        else:
            self.held_once.add(artifact.pk)
            self.held.append((time.monotonic() + self.lease + 0.5, artifact))

    def _store(self, future: Future) -> JudgeRecord:
        artifact, _ = self.in_flight.pop(future)
        outcome = future.result()
        record = services.judge_record_store(
            artifact=artifact, judge_run=self.judge_run, outcome=outcome, rubric_version=self.rubric_version
        )
        self.cost.add(outcome.usage.cost_usd)
        self.ok, self.failed = self.ok + outcome.ok, self.failed + (not outcome.ok)
        self.finished.append(time.monotonic())
        return record

    def _cost_so_far(self) -> float | None:
        priced = self.settings.price_input_per_mtok is not None and self.settings.price_output_per_mtok is not None
        return self.cost.spent if priced else None

    def _report(self) -> None:
        if self.on_progress is None:
            return
        now = time.monotonic()
        while self.finished and self.finished[0] < now - RATE_SECONDS:
            self.finished.popleft()
        span = min(RATE_SECONDS, now - self.started)
        self.on_progress(
            Progress(
                done=self.ok,
                failed=self.failed,
                total=self.total,
                elapsed=now - self.started,
                rate=len(self.finished) / span if span > 0 else 0.0,
                cost_usd=self._cost_so_far(),
                concurrency=self.pacer.window.allowed,
                rate_limited=self.pacer.rate_limited,
            )
        )
