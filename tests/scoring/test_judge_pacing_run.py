"""The judge run loop against the stand-in under load: it adapts to a rate limit it is never told (and that drops
mid-run) without a failed judgement, stops at a budget, and a kill at any moment followed by the same command leaves
exactly one record per artifact and run. Small runs on a fast stand-in; rates are measured by the benchmark
(tests/benchmarks/test_judge_rate_bench.py), not here."""

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

from scoring import judge_runs, services
from scoring.judge_client import JudgeSettings
from scoring.judge_pacing import PacingSettings
from scoring.models import JudgeRecord, JudgeRun
from tests.celery_worker import database_url_for_worker
from tests.scoring.judge_load import COST, PRICE_INPUT, PRICE_OUTPUT, answer_well, artifacts_to_judge
from tests.scoring.judge_server import Faults, JudgeServer

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = "refig-v1"


def judge_command(server: JudgeServer, *, run: int = 1, **options) -> str:
    out = io.StringIO()
    call_command(
        "judge",
        judge_model="gpt-judge",
        base_url=server.base_url,
        run=run,
        api_key_env="",
        no_progress=True,
        stdout=out,
        **options,
    )
    return out.getvalue()


def records_per_artifact(run: JudgeRun) -> dict[int, int]:
    counts = JudgeRecord.objects.filter(judge_run=run).values("artifact").annotate(n=Count("id"))
    return {row["artifact"]: row["n"] for row in counts}


@pytest.mark.django_db
def test_the_window_grows_backs_off_at_a_limit_that_drops_and_no_judgement_fails():
    ids = artifacts_to_judge(100)
    # 60 requests/s for 1.5 s, then 20/s; 1 in 50 replies a 500 and 1 in 50 cut off mid-JSON.
    faults = Faults(latency=(0.1, 0.2), limits=((0, 60), (1.5, 20)), server_error_rate=0.02, malformed_rate=0.02)
    seen: list[int] = []
    with JudgeServer(faults=faults, responder=answer_well) as server:
        run = services.judge_run_ensure(judge="gpt-judge", family="gpt", run=1, rubric_version=RUBRIC)
        result = judge_runs.judge_artifacts(
            artifacts=services.artifacts_to_judge(judge_run=run),
            judge_run=run,
            settings=JudgeSettings(protocol="responses", base_url=server.base_url, model="gpt-judge", api_key_env=""),
            rubric_version=RUBRIC,
            on_progress=lambda p: seen.append(p.concurrency),
        )
        statuses = [status for _, status in server.served]
    assert (result.ok, result.failed, result.left) == (100, 0, 0)
    assert records_per_artifact(run) == dict.fromkeys(ids, 1)
    assert set(JudgeRecord.objects.filter(judge_run=run).values_list("status", flat=True)) == {"ok"}
    assert statuses.count(429) > 0 and statuses.count(500) > 0  # the limit and the faults were met, and waited out
    assert max(seen) > PacingSettings().start_concurrency  # it grew while calls succeeded
    assert seen[-1] < max(seen)  # and backed off once the limit dropped


@pytest.mark.django_db
def test_a_run_stops_at_its_budget_and_the_budget_counts_what_the_run_spent_before():
    artifacts_to_judge(20)
    with JudgeServer(responder=answer_well) as server:
        prices = dict(price_input=PRICE_INPUT, price_output=PRICE_OUTPUT)
        # 0.002 a judgement: 5 fit in 0.0101, the sixth would pass it.
        out = judge_command(server, budget=5 * COST + 0.0001, **prices)
        run = JudgeRun.objects.get(judge="gpt-judge", run=1)
        assert run.records.filter(status="ok").count() == 5 == len(server.requests)
        assert "5 judged, 0 failed (kept with their raw replies), 15 not reached; cost so far $0.01" in out
        assert "stopped at the budget of $0.01" in out
        # The same budget again: the run has spent it already, nothing is called.
        judge_command(server, budget=5 * COST + 0.0001, **prices)
        assert len(server.requests) == 5
        # A larger one judges up to it, counting what was spent: 10 in all.
        judge_command(server, budget=10 * COST + 0.0001, **prices)
        assert run.records.filter(status="ok").count() == 10 == len(server.requests)
    run.refresh_from_db()
    assert run.status == "active"


@pytest.mark.django_db
def test_a_resume_asks_again_for_what_failed_in_this_run_even_when_another_run_judged_it():
    ids = artifacts_to_judge(3)
    first = services.judge_run_ensure(judge="gpt-judge", family="gpt", run=1, rubric_version=RUBRIC)
    second = services.judge_run_ensure(judge="gpt-judge", family="gpt", run=2, rubric_version=RUBRIC)
    for pk in ids:
        JudgeRecord.objects.create(artifact_id=pk, judge_run=first, status="ok", score=80, rubric_version=RUBRIC)
    JudgeRecord.objects.create(artifact_id=ids[0], judge_run=second, status="ok", score=70, rubric_version=RUBRIC)
    JudgeRecord.objects.create(artifact_id=ids[1], judge_run=second, status="failed", rubric_version=RUBRIC)
    assert sorted(a.pk for a in services.artifacts_to_judge(judge_run=second)) == sorted(ids[1:])
    assert services.artifacts_to_judge(judge_run=first) == []


@pytest.mark.django_db
def test_a_budget_without_prices_is_refused_clearly():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--budget needs --price-input and --price-output"):
        call_command("judge", judge_model="gpt-judge", base_url="http://127.0.0.1:9", run=1, budget=1.0)


@pytest.mark.django_db(transaction=True)
def test_a_judge_command_killed_mid_run_is_resumed_by_the_same_command_with_one_record_per_artifact(tmp_path):
    n = 120
    ids = artifacts_to_judge(n)
    faults = Faults(latency=(0.02, 0.05), limits=((0, 60),))
    with JudgeServer(faults=faults, responder=answer_well) as server:
        command = [sys.executable, "manage.py", "judge", "--judge-model", "gpt-judge", "--base-url", server.base_url]
        command += ["--run", "1", "--api-key-env", "", "--no-progress", "--claim-lease", "2"]
        env = dict(
            os.environ,
            DATABASE_URL=database_url_for_worker(),
            DJANGO_MEDIA_ROOT=str(django_settings.MEDIA_ROOT),
            CELERY_TASK_ALWAYS_EAGER="1",
        )
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while JudgeRecord.objects.filter(status="ok").count() < n // 2:
            assert process.poll() is None, process.stdout.read().decode()
            assert time.monotonic() < deadline, "the first command made no progress"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)  # no chance to release anything
        process.wait(10)
        process.stdout.close()
        run = JudgeRun.objects.get(judge="gpt-judge", run=1)
        running = run.records.filter(status="running").count()
        assert n // 2 <= run.records.filter(status="ok").count() < n
        out = judge_command(server, claim_lease=2)
        answered = sum(status == 200 for _, status in server.served)
    assert records_per_artifact(run) == dict.fromkeys(ids, 1)
    assert run.records.filter(status="ok").count() == n
    run.refresh_from_db()
    assert run.status == "done" and "0 failed" in out and "0 not reached" in out
    # Paid twice at most for the calls in flight at the kill, whose replies never reached the database.
    assert n <= answered <= n + running + PacingSettings().max_concurrency
