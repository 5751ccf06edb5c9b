"""The judge at an API's rate limit (issue 31): `manage.py judge` with its default settings and no rate configured,
against the stand-in allowing 50 requests/s, then 20 after a minute, never announced (429 with Retry-After), with a
latency of 0.3-0.7 s and 1 % of replies a 500 and 1 % cut off mid-JSON.

1. Rate: one command over REFIG_JUDGE_BENCH_N judgements (default 4,000, so the drop falls inside the run): the
   judgements stored per second against what the stand-in allowed over the same span (the integral of its limit),
   before and after the drop and in all. Target: at least 90 %, no failed judgement.
2. Kill and resume: the same command in a subprocess on a second judge run of the same artifacts (50 requests/s),
   SIGKILLed when half are stored, then run again: exactly one record per artifact and run, all ok.
3. The PPTBench judge (`manage.py judge_pptbench`, defaults, no rate configured) on REFIG_PPTBENCH_JUDGE_BENCH_N
   artifacts (default 200: 1,800 calls) against 50 requests/s dropping to 20 after 20 s: calls answered per second
   against what was allowed. Target: at least 90 %, no failed round. Then a second run SIGKILLed when half its rows
   are stored and run again: one row and three ok rounds per artifact.

Run: make bench, or .venv/bin/pytest tests/benchmarks/test_judge_rate_bench.py -q -s (DATABASE_URL for PostgreSQL)
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db.models import Count

from scoring.models import JudgeRecord, JudgeRun
from tests.celery_worker import database_url_for_worker
from tests.scoring.judge_load import answer_well, artifacts_to_judge
from tests.scoring.judge_server import Faults, JudgeServer

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
N = int(os.environ.get("REFIG_JUDGE_BENCH_N", "4000"))
LIMITS = ((0.0, 50.0), (60.0, 20.0))
FAULTS = Faults(latency=(0.3, 0.7), limits=LIMITS, server_error_rate=0.01, malformed_rate=0.01, seed=31)
TARGET = 0.90


def allowed(start: float, end: float, limits: tuple[tuple[float, float], ...] = LIMITS) -> float:
    """Requests the stand-in's limit allows between two offsets from its first request."""
    total = 0.0
    for i, (at, rate) in enumerate(limits):
        until = limits[i + 1][0] if i + 1 < len(limits) else float("inf")
        total += rate * max(0.0, min(end, until) - max(start, at))
    return total


def per_artifact(run: JudgeRun) -> dict[int, int]:
    rows = JudgeRecord.objects.filter(judge_run=run).values("artifact").annotate(n=Count("id"))
    return {row["artifact"]: row["n"] for row in rows}


def command_env() -> dict[str, str]:
    """What a judge command in a subprocess needs to work on this test's database and media."""
    return dict(
        os.environ,
        DATABASE_URL=database_url_for_worker(),
        DJANGO_MEDIA_ROOT=str(django_settings.MEDIA_ROOT),
        CELERY_TASK_ALWAYS_EAGER="1",
    )


def answered_times(served: list[tuple[float, int]]) -> list[float]:
    """When each call the stand-in answered with a 200 was answered, from its first request (its limit's clock)."""
    return [t - served[0][0] for t, status in served if status == 200]


def command(server: JudgeServer, run: int) -> list[str]:
    """The command line a user types: defaults, no rate configured."""
    return [sys.executable, "manage.py", "judge", "--judge-model", "gpt-judge", "--base-url", server.base_url] + [
        "--run",
        str(run),
        "--api-key-env",
        "",
        "--no-progress",
    ]


def test_the_judge_keeps_the_allowed_rate_and_resumes_after_a_kill():
    artifacts_to_judge(N)
    lines = [f"judge at the rate limit: {N} judgements, limit {LIMITS[0][1]:g}/s then {LIMITS[1][1]:g}/s at 60 s"]

    # 1. the rate, defaults, no rate configured
    with JudgeServer(faults=FAULTS, responder=answer_well) as server:
        out, err = io.StringIO(), io.StringIO()
        call_command(
            "judge",
            judge_model="gpt-judge",
            base_url=server.base_url,
            run=1,
            api_key_env="",
            stdout=out,
            stderr=err,
        )
        served = list(server.served)
    run = JudgeRun.objects.get(judge="gpt-judge", run=1)
    counts = per_artifact(run)
    failed = run.records.exclude(status="ok").count()
    ok_times = answered_times(served)  # the span: from the stand-in's first request to its last 200
    span = ok_times[-1]
    statuses = [status for _, status in served]
    total_rate = len(counts) / span
    share = len(counts) / allowed(0, span)
    lines.append(
        f"  all:    {len(counts)} judgements in {span:.1f} s = {total_rate:.1f}/s, allowed {allowed(0, span):.0f} "
        f"-> {100 * share:.1f} % of the allowed rate"
    )
    before = [t for t in ok_times if t < LIMITS[1][0]]
    after = [t for t in ok_times if t >= LIMITS[1][0]]
    drop = min(span, LIMITS[1][0])
    for name, times, start, end in (("50/s", before, 0.0, drop), ("20/s", after, drop, span)):
        if times and end > start:
            lines.append(
                f"  {name}:   {len(times)} 200s in {end - start:.1f} s = {len(times) / (end - start):.1f}/s "
                f"({100 * len(times) / allowed(start, end):.1f} % of allowed)"
            )
    lines.append(
        f"  replies: {statuses.count(200)} 200 (incl. malformed), {statuses.count(429)} 429, {statuses.count(500)} 500; "
        f"failed judgements {failed}, records per artifact {set(counts.values())}"
    )

    # 2. kill halfway, then the same command again
    with JudgeServer(faults=Faults(latency=(0.3, 0.7), limits=((0.0, 50.0),), seed=32), responder=answer_well) as srv:
        argv = command(srv, 2)
        env = command_env()
        first = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while JudgeRecord.objects.filter(judge_run__run=2, status="ok").count() < N // 2:
            assert first.poll() is None, "the first command ended before it was killed"
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        run2 = JudgeRun.objects.get(judge="gpt-judge", run=2)
        at_kill = dict(run2.records.values_list("status").annotate(n=Count("id")))
        started = time.monotonic()
        resumed = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        resume_seconds = time.monotonic() - started
        answered = sum(status == 200 for _, status in srv.served)
    counts2 = per_artifact(run2)
    lines.append(
        f"  kill at {at_kill}; resume in {resume_seconds:.1f} s: {resumed.stdout.strip()}; "
        f"records per artifact {set(counts2.values())} over {len(counts2)} artifacts, "
        f"{run2.records.exclude(status='ok').count()} not ok; {answered - N} calls paid twice"
    )
    print("\n" + "\n".join(lines))

    assert len(counts) == N and set(counts.values()) == {1} and failed == 0
    assert share >= TARGET, f"{100 * share:.1f} % of the allowed rate, below {100 * TARGET:.0f} %"
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert len(counts2) == N and set(counts2.values()) == {1}
    assert run2.records.filter(status="ok").count() == N


PPTBENCH_N = int(os.environ.get("REFIG_PPTBENCH_JUDGE_BENCH_N", "200"))  # artifacts: 9 calls each, 3 rounds x 3 stages
PPTBENCH_LIMITS = ((0.0, 50.0), (20.0, 20.0))  # the drop early enough to fall inside a run of 1,800 calls


def test_the_pptbench_judge_keeps_the_allowed_rate():
    """`manage.py judge_pptbench` with its defaults and no rate configured, against the same kind of stand-in: API
    calls answered per second against what the stand-in allowed, no failed round."""
    from scoring.models import PptbenchJudgeRound, PptbenchScore
    from tests.scoring.judge_server import PptbenchResponder

    artifacts_to_judge(PPTBENCH_N)
    faults = Faults(latency=(0.3, 0.7), limits=PPTBENCH_LIMITS, server_error_rate=0.01, malformed_rate=0.01, seed=33)
    with JudgeServer(faults=faults, responder=PptbenchResponder()) as server:
        out = io.StringIO()
        call_command(
            "judge_pptbench",
            judge_model="gpt-judge",
            base_url=server.base_url,
            run=1,
            api_key_env="",
            no_progress=True,
            stdout=out,
        )
        served = list(server.served)
    ok_times = answered_times(served)
    span = ok_times[-1]
    allowed_calls = allowed(0, span, PPTBENCH_LIMITS)
    share = len(ok_times) / allowed_calls
    statuses = [status for _, status in served]
    rows = PptbenchScore.objects.filter(judge_run__judge="gpt-judge").count()
    failed = PptbenchJudgeRound.objects.filter(judge_run__judge="gpt-judge").exclude(status="ok").count()
    print(
        f"\nPPTBench judge at the rate limit: {PPTBENCH_N} artifacts, limit {PPTBENCH_LIMITS[0][1]:g}/s then "
        f"{PPTBENCH_LIMITS[1][1]:g}/s at {PPTBENCH_LIMITS[1][0]:g} s\n"
        f"  {len(ok_times)} calls answered in {span:.1f} s = {len(ok_times) / span:.1f}/s, allowed {allowed_calls:.0f} "
        f"-> {100 * share:.1f} % of the allowed rate\n"
        f"  replies: {statuses.count(200)} 200 (incl. malformed), {statuses.count(429)} 429, {statuses.count(500)} 500; "
        f"rows {rows}, failed rounds {failed}\n  {out.getvalue().strip()}"
    )

    # Kill halfway, then the same command again: one row and three ok rounds per artifact, stored stages not asked again.
    with JudgeServer(
        faults=Faults(latency=(0.3, 0.7), limits=((0.0, 50.0),), seed=34), responder=PptbenchResponder()
    ) as srv:
        argv = [sys.executable, "manage.py", "judge_pptbench", "--judge-model", "gpt-judge"]
        argv += ["--base-url", srv.base_url, "--run", "2", "--api-key-env", "", "--no-progress"]
        env = command_env()
        first = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while PptbenchScore.objects.filter(judge_run__run=2).count() < PPTBENCH_N // 2:
            assert first.poll() is None, f"the first command ended before it was killed: {first.stderr.read()[-2000:]}"
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        rows_at_kill = PptbenchScore.objects.filter(judge_run__run=2).count()
        resumed = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        answered = sum(status == 200 for _, status in srv.served)
    rounds = PptbenchJudgeRound.objects.filter(judge_run__run=2)
    per_artifact_rounds = set(rounds.values("artifact").annotate(n=Count("id")).values_list("n", flat=True))
    print(
        f"  kill at {rows_at_kill} rows; resumed: {resumed.stdout.strip()}; rounds per artifact {per_artifact_rounds}, "
        f"{rounds.exclude(status='ok').count()} not ok; {answered - 9 * PPTBENCH_N} calls answered beyond the "
        f"{9 * PPTBENCH_N} needed (in flight at the kill: paid twice)"
    )
    assert rows == PPTBENCH_N and failed == 0
    assert share >= TARGET, f"{100 * share:.1f} % of the allowed rate, below {100 * TARGET:.0f} %"
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert PptbenchScore.objects.filter(judge_run__run=2).count() == PPTBENCH_N
    assert per_artifact_rounds == {3} and not rounds.exclude(status="ok").exists()
