"""Judge records, the judge command against a local server, PPTBench import: what is stored and the tables."""

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.tables import table_frame
from scoring.models import JudgeRecord, JudgeRun
from tests.factories import artifact_create, configuration_create, figure_create
from tests.scoring.judge_server import JudgeServer, reply_body

pytestmark = pytest.mark.django_db
from tests.data.paths import PPTBENCH, needs_shared


def reply(t, s, l, e, v, **extra):
    body = {
        "score": t + s + l + e + v,
        "subscores": {"text": t, "semantic_structure": s, "layout": l, "editability": e, "visual_detail": v},
        "major_errors": [],
        "minor_errors": ["small"],
        "editability_assessment": "native shapes",
        "reason": "close match",
    }
    body.update(extra)
    return body


@pytest.fixture
def study_data():
    figures = [figure_create(f"t{i}", index=i, field="cs.CV" if i < 2 else "cs.CL") for i in range(3)]
    direct = configuration_create("m1-direct", model="m1", workflow="direct", position=0)
    special = configuration_create("m1-specialized", model="m1", workflow="specialized", position=1)
    artifacts = {
        ("m1-direct", "t0"): artifact_create(direct, figures[0]),
        ("m1-direct", "t1"): artifact_create(direct, figures[1]),
        ("m1-direct", "t2"): artifact_create(direct, figures[2], gate_passed=False, reason="multiple_slides"),
        ("m1-specialized", "t0"): artifact_create(special, figures[0], cap=50),
        ("m1-specialized", "t1"): artifact_create(special, figures[1]),
        ("m1-specialized", "t2"): artifact_create(special, figures[2]),
    }
    return artifacts


def record_line(configuration, task_id, body, run=1, judge="gpt-judge", family="gpt"):
    return json.dumps(
        {"task_id": task_id, "configuration": configuration, "judge": judge, "judge_family": family, "run": run, **body}
    )


def test_imported_records_give_final_scores_and_config_scores_by_hand(tmp_path, study_data):
    lines = [
        record_line("m1-direct", "t0", reply(18, 25, 12, 20, 8)),  # Q 83 → s 83
        record_line("m1-direct", "t1", reply(10, 10, 10, 10, 5)),  # Q 45 → s 45; t2 gate failure → 0
        record_line("m1-specialized", "t0", reply(20, 30, 15, 25, 10)),  # Q 100, capped → 50
        record_line("m1-specialized", "t1", reply(15, 20, 10, 20, 5)),  # Q 70; t2 has no record → missing
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n")
    call_command("import_judge_records", path, no_progress=True, stdout=io.StringIO())
    assert JudgeRecord.objects.count() == 4

    scores = table_frame("config-scores", run="1").set_index("configuration")
    assert scores.loc["m1-direct", "n"] == 3 and scores.loc["m1-direct", "mean"] == pytest.approx((83 + 45 + 0) / 3)
    assert scores.loc["m1-direct", "share_ge_80"] == pytest.approx(1 / 3) and scores.loc[
        "m1-direct", "share_lt_50"
    ] == pytest.approx(2 / 3)
    assert scores.loc["m1-specialized", "n"] == 2 and scores.loc["m1-specialized", "mean"] == pytest.approx(
        (50 + 70) / 2
    )
    assert scores.loc["m1-specialized", "missing"] == 1
    # The gate failure's subscores count as 0: mean text (18 + 10 + 0) / 3.
    assert scores.loc["m1-direct", "text"] == pytest.approx(28 / 3)

    effects = table_frame("paired-effects", run="1").iloc[0]
    # Paired over tasks with both sides: t0 (50 − 83) and t1 (70 − 45) → mean −4; one win, one loss.
    assert effects["n"] == 2 and effects["delta"] == pytest.approx(-4.0)
    assert (effects["wins"], effects["ties"], effects["losses"]) == (1, 0, 1)

    # Re-import changes nothing; a contradicting line is refused and the stored record is kept.
    out = io.StringIO()
    call_command("import_judge_records", path, no_progress=True, stdout=out)
    assert "4 records: 0 imported, 4 already stored" in out.getvalue()


def test_the_scores_frame_is_kept_per_state_and_follows_every_change_it_reads(tmp_path, study_data):
    """scores_frame is cached (core.cache) per state of records, runs, artifacts and configurations: a new record, a
    renamed configuration and a changed gate each show at once, and an unchanged state is a cache hit."""
    from agents.models import Artifact, Configuration
    from scoring import selectors

    path = tmp_path / "records.jsonl"
    path.write_text(record_line("m1-direct", "t0", reply(18, 25, 12, 20, 8)) + "\n")
    call_command("import_judge_records", path, no_progress=True, stdout=io.StringIO())
    first = selectors.scores_frame()
    assert first["score"].notna().sum() == 2  # t0 of m1-direct (83) and m1-direct's gate failure on t2 (0)
    with CaptureQueriesContext(connection) as hit:
        pd.testing.assert_frame_equal(selectors.scores_frame(), first)
    with CaptureQueriesContext(connection) as miss:
        selectors.scores_frame.uncached()
    # A hit reads the state alone (records' count and newest id, their newest update, runs, artifacts, configurations);
    # building the frame reads rows.
    assert len(hit) == 5 and not any(
        "scoring_judgerecord" in q["sql"] and "COUNT" not in q["sql"] and "MAX" not in q["sql"] for q in hit
    )
    assert any("scoring_judgerecord" in q["sql"] and "COUNT" not in q["sql"] for q in miss)
    path.write_text(record_line("m1-direct", "t1", reply(10, 10, 10, 10, 5)) + "\n")
    call_command("import_judge_records", path, no_progress=True, stdout=io.StringIO())
    assert selectors.scores_frame()["score"].notna().sum() == 3
    Configuration.objects.filter(slug="m1-direct").update(model="m2")
    assert set(selectors.scores_frame()["model"]) == {"m1", "m2"}
    artifact = study_data[("m1-direct", "t0")]
    Artifact.objects.filter(pk=artifact.pk).update(gate_passed=False, audited_at=timezone.now())
    frame = selectors.scores_frame().set_index(["configuration", "task_id"])
    assert frame.loc[("m1-direct", "t0"), "score"] == 0.0


@pytest.mark.parametrize(
    "table,analysis",
    [
        ("config-scores", "config_scores"),
        ("paired-effects", "paired_effects"),
        ("harness-effects", "harness_effects"),
        ("domain-scores", "domain_scores"),
        ("judge-runs", "judge_runs"),
        ("structural-audit", "structural_audit"),
    ],
)
def test_each_automated_table_is_computed_once_per_state_of_the_scores(
    tmp_path, study_data, monkeypatch, table, analysis
):
    from scoring import stats

    path = tmp_path / "records.jsonl"
    path.write_text(record_line("m1-direct", "t0", reply(18, 25, 12, 20, 8)) + "\n")
    call_command("import_judge_records", path, no_progress=True, stdout=io.StringIO())
    calls = []
    original = getattr(stats, analysis)
    monkeypatch.setattr(stats, analysis, lambda *a, **k: calls.append(1) or original(*a, **k))
    first = table_frame(table)
    pd.testing.assert_frame_equal(table_frame(table), first)
    assert len(calls) == 1  # the second read is the cached table
    path.write_text(record_line("m1-direct", "t1", reply(10, 10, 10, 10, 5)) + "\n")
    call_command("import_judge_records", path, no_progress=True, stdout=io.StringIO())
    table_frame(table)
    assert len(calls) == 2  # a new record is a new state


def test_bad_judge_record_lines_are_reported_and_good_ones_land(tmp_path, study_data):
    lines = [
        record_line("m1-direct", "t0", reply(18, 25, 12, 20, 8)),
        "{not json",
        record_line("m1-direct", "t1", reply(10, 10, 10, 10, 5, score=99)),
        record_line("m1-direct", "t1", reply(10, 31, 10, 10, 5)),
        record_line("nope", "t1", reply(10, 10, 10, 10, 5)),
        json.dumps({"task_id": "t1", "configuration": "m1-direct"}),
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n")
    err = io.StringIO()
    call_command("import_judge_records", path, no_progress=True, stdout=io.StringIO(), stderr=err)  # good rows: exit 0
    messages = err.getvalue().splitlines()
    assert messages[0].startswith(f"{path}:2 $: malformed JSON")
    assert messages[1].startswith(f"{path}:3 score:")
    assert messages[2].startswith(f"{path}:4 subscores.semantic_structure:")
    assert messages[3].startswith(f"{path}:5 task_id: no artifact of configuration 'nope'")
    assert messages[4].startswith(f"{path}:6 judge: missing field")
    assert JudgeRecord.objects.count() == 1


def test_judge_command_against_a_local_server_stores_records_and_resumes(study_data, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-local-test")
    with JudgeServer() as server:
        # Five gate-passed artifacts: one 429 first, one persistently non-sum, the rest fine.
        server.push(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0"})
        for body in (reply(18, 25, 12, 20, 8), reply(10, 10, 10, 10, 5), reply(20, 30, 15, 25, 10)):
            server.push(200, reply_body("chat", json.dumps(body)))
        bad = json.dumps(reply(1, 1, 1, 1, 1, score=50))
        for _ in range(2):
            server.push(200, reply_body("chat", bad))
        server.push(200, reply_body("chat", json.dumps(reply(15, 20, 10, 20, 5))))
        with pytest.raises(CommandError, match="1 judgements failed"):
            call_command(
                "judge",
                judge_model="qwen-judge",
                base_url=server.base_url,
                run=1,
                family="qwen",
                protocol="chat",
                api_key_env="JUDGE_KEY",
                concurrency=1,
                max_attempts=2,
                no_progress=True,
                stdout=io.StringIO(),
            )
        assert server.requests[0].headers["authorization"] == "Bearer sk-local-test"
        run = JudgeRun.objects.get(judge="qwen-judge", run=1)
        assert run.records.filter(status="ok").count() == 4
        failed = run.records.get(status="failed")
        assert failed.score is None and "score" in failed.error and failed.raw_reply == bad
        assert len(failed.attempts) == 2
        # Resume: only the failed artifact is asked again.
        server.push(200, reply_body("chat", json.dumps(reply(5, 5, 5, 5, 5))))
        before = len(server.requests)
        call_command(
            "judge",
            judge_model="qwen-judge",
            base_url=server.base_url,
            run=1,
            family="qwen",
            protocol="chat",
            api_key_env="JUDGE_KEY",
            concurrency=1,
            no_progress=True,
            stdout=io.StringIO(),
        )
        assert len(server.requests) == before + 1
    run.refresh_from_db()
    assert run.status == "done" and run.records.filter(status="ok").count() == 5
    stored = JudgeRecord.objects.get(judge_run=run, artifact=study_data[("m1-direct", "t0")])
    assert stored.input_tokens > 0 and stored.prompt_hash and "native shapes" == stored.editability_assessment


def test_judge_enqueue_sends_one_task_per_artifact_to_the_judge_queue_and_the_task_stores_its_record(
    study_data, monkeypatch
):
    """`judge --enqueue`: the tasks run in process here (the real worker path is tests/faults/
    test_workers_on_other_hosts.py); each stores the artifact's record, and a second enqueue sends nothing."""
    from config.celery_app import app

    monkeypatch.setenv("JUDGE_KEY", "sk-local-test")
    assert app.amqp.router.route({}, "scoring.judge_artifact")["queue"].name == "judge"
    previous, app.conf.task_always_eager = app.conf.task_always_eager, True
    options = dict(
        judge_model="qwen-judge", base_url="", run=1, family="qwen", protocol="chat", api_key_env="JUDGE_KEY"
    )
    try:
        with JudgeServer() as server:
            scores = [(18, 25, 12, 20, 8), (10, 10, 10, 10, 5), (20, 30, 15, 25, 10), (15, 20, 10, 20, 5), (5,) * 5]
            for parts in scores:
                server.push(200, reply_body("chat", json.dumps(reply(*parts))))
            out = io.StringIO()
            call_command(
                "judge", **{**options, "base_url": server.base_url}, enqueue=True, no_progress=True, stdout=out
            )
            assert "5 artifacts queued" in out.getvalue() and len(server.requests) == 5
            again = io.StringIO()
            call_command(
                "judge", **{**options, "base_url": server.base_url}, enqueue=True, no_progress=True, stdout=again
            )
            assert "0 artifacts queued" in again.getvalue() and len(server.requests) == 5
    finally:
        app.conf.task_always_eager = previous
    run = JudgeRun.objects.get(judge="qwen-judge", run=1)
    assert sorted(run.records.filter(status="ok").values_list("score", flat=True)) == sorted(sum(p) for p in scores)
    assert not run.records.filter(artifact=study_data[("m1-direct", "t2")]).exists()  # gate failure: not judged


@needs_shared(PPTBENCH)
def test_pptbench_import_reproduces_the_published_leaderboard():
    out = io.StringIO()
    call_command("import_pptbench_scores", PPTBENCH / "scores.csv", stdout=out)
    assert "18000 scores: 18000 imported" in out.getvalue()
    ours = table_frame("pptbench-leaderboard")
    published = pd.read_csv(PPTBENCH / "leaderboard.csv")
    assert list(ours.columns[: len(published.columns)]) == list(published.columns)
    merged = published.merge(ours, on="candidate_id", suffixes=("", "_ours"))
    assert len(merged) == 36
    for column in published.columns:
        if column == "candidate_id":
            continue
        assert (merged[column] - merged[f"{column}_ours"]).abs().max() <= 1e-9, column
    again = io.StringIO()
    call_command("import_pptbench_scores", PPTBENCH / "scores.csv", stdout=again)
    assert "18000 scores: 0 imported, 18000 already stored" in again.getvalue()
