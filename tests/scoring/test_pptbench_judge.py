"""The PPTBench judge end to end against the local stand-in (tests/scoring/judge_server.py): rounds stored with their
raw replies, per-task rows computed by hand, kept apart from imported rows and read by PPTBench's tables; resuming."""

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.errors import Invalid
from core.tables import table_frame
from scoring import pptbench, selectors
from scoring.models import PptbenchJudgeRound, PptbenchScore
from scoring.pptbench_judge_selectors import pptbench_gate_votes_frame
from tests.factories import artifact_create, configuration_create, figure_create
from tests.scoring.judge_server import Faults, JudgeServer, PptbenchResponder, Scripted, reply_body, request_parts

pytestmark = pytest.mark.django_db
JUDGE = "stand-in-judge"


def finding(category, issue_type, fraction):
    dimension = {
        "improper_typography": "text_and_typography",
        "spelling_and_omission": "text_and_typography",
        "node_shape_error": "local_graphics_and_nodes",
        "node_style_error": "local_graphics_and_nodes",
    }[category]
    return {
        "dimension": dimension,
        "category": category,
        "issue_type": issue_type,
        "location": "Systemic",
        "candidate": "what the slide shows",
        "reference": "what the figure shows",
        "affected_count": 1,
        "affected_fraction": fraction,
    }


def plan(semantic="", render="", findings=()):
    return {"semantic": semantic, "render": render, "findings": list(findings)}


WRAP = lambda x: finding("improper_typography", "unexpected_wrap", x)  # noqa: E731  medium 1.5
FONT = lambda x: finding("improper_typography", "font_size", x)  # noqa: E731  low 0.5
MISSING = lambda x: finding("spelling_and_omission", "missing_text", x)  # noqa: E731  high 3.0
ASPECT = lambda x: finding("node_shape_error", "node_aspect_ratio", x)  # noqa: E731  medium 1.5
FILL = lambda x: finding("node_style_error", "node_fill", x)  # noqa: E731  low 0.5


@pytest.fixture
def artifacts():
    figures = [figure_create(f"t{i}", index=i) for i in range(3)]
    direct = configuration_create("m1-direct", model="m1", workflow="direct", position=0)
    special = configuration_create("m1-special", model="m1", workflow="specialized", position=1)
    return {
        "A": artifact_create(direct, figures[0]),
        "B": artifact_create(direct, figures[1]),
        "C": artifact_create(direct, figures[2], gate_passed=False, reason="multiple_slides"),
        "D": artifact_create(special, figures[0]),
        "E": artifact_create(special, figures[1]),
        "F": artifact_create(special, figures[2]),
    }


def plans_for(a):
    return {
        # semantic gate in one round, rendering gate in another: two of three → zero (6 calls: 3 + 2 + 1)
        a["A"].render_sha256: [
            plan(semantic="edge A -> B reversed"),
            plan(render="text overflows"),
            plan(findings=[WRAP(0.6)]),
        ],
        # wrap 0.6 and 0.4 → 0.6, two rounds: 3.75; missing text 0.01: 3.0; font size 0.2: 0.75; one finding outside
        # the taxonomy dropped → text 40 − 7.5 = 32.5, total 92.5, 3 issues, 2 single-round (9 calls)
        a["B"].render_sha256: [
            plan(findings=[WRAP(0.6), MISSING(0.01)]),
            plan(findings=[WRAP(0.4)]),
            plan(findings=[{**FONT(0.2), "issue_type": "not_a_type"}, FONT(0.2)]),
        ],
        # one semantic gate (outvoted); aspect ratio 0.3 and 0.6 → 1.5 × 2.5 = 3.75; fill 0.05 → 0.625 → 0.62:
        # local 30 − 4.37 = 25.63, total 95.63, 2 issues, 1 single-round (7 calls: 3 + 2 + 2)
        a["D"].render_sha256: [
            plan(semantic="missing node"),
            plan(findings=[ASPECT(0.3)]),
            plan(findings=[ASPECT(0.6), FILL(0.05)]),
        ],
        # the same wrap in all three rounds: text 36.25, 1 issue, 0 single-round (9 calls)
        a["E"].render_sha256: [plan(findings=[WRAP(0.6)])] * 3,
        a["F"].render_sha256: [plan()] * 3,  # nothing found: 100 (9 calls)
    }


def judge(server, *, run=1, protocol="chat", **options):
    out = io.StringIO()
    call_command(
        "judge_pptbench",
        judge_model=JUDGE,
        base_url=server.base_url,
        run=run,
        protocol=protocol,
        api_key_env="",
        concurrency=9,
        no_progress=True,
        stdout=out,
        **options,
    )
    return out.getvalue()


def rows(source):
    frame = selectors.pptbench_frame(source=source)
    return frame.set_index(["candidate_id", "task_id"]).sort_index(), frame.attrs["notes"]


def test_a_judge_run_end_to_end_gives_scores_csv_rows_the_pptbench_tables_accept(artifacts):
    with JudgeServer(responder=PptbenchResponder(plans_for(artifacts))) as server:
        output = judge(server)
    assert "6 artifacts scored, 0 with a failed round" in output and "1 findings outside the taxonomy" in output
    assert len(server.requests) == 6 + 9 + 0 + 7 + 9 + 9  # the artifact gate (C) calls nobody
    stages = [request_parts("chat", r.body)[0] for r in server.requests]
    assert stages.count("pptbench_semantic_gate") == 15 and stages.count("pptbench_render_gate") == 13

    frame, notes = rows(f"{JUDGE}/1")
    assert "stand-in-judge run 1" in notes[0]
    columns = ["majority_gate", "gate_count", "layout_score", "text_score", "local_graphics_score", "total_score"]
    columns += ["issue_count", "single_round_issue_count"]
    expected = {
        ("m1-direct", "t0"): [True, 2, 0.0, 0.0, 0.0, 0.0, 0, 0],
        ("m1-direct", "t1"): [False, 0, 30.0, 32.5, 30.0, 92.5, 3, 2],
        ("m1-direct", "t2"): [True, 3, 0.0, 0.0, 0.0, 0.0, 0, 0],
        ("m1-special", "t0"): [False, 1, 30.0, 40.0, 25.63, 95.63, 2, 1],
        ("m1-special", "t1"): [False, 0, 30.0, 36.25, 30.0, 96.25, 1, 0],
        ("m1-special", "t2"): [False, 0, 30.0, 40.0, 30.0, 100.0, 0, 0],
    }
    assert {k: list(v) for k, v in frame[columns].iterrows()} == expected

    # Every round is stored with its raw replies; the finding outside the taxonomy is an error of its round.
    rounds = PptbenchJudgeRound.objects.filter(judge_run__judge=JUDGE)
    assert rounds.count() == 18 and set(rounds.values_list("status", flat=True)) == {"ok"}
    assert sorted(rounds.filter(artifact=artifacts["A"]).values_list("gate", flat=True)) == ["", "render", "semantic"]
    assert set(rounds.filter(artifact=artifacts["C"]).values_list("gate", flat=True)) == {"artifact"}
    b_rounds = list(rounds.filter(artifact=artifacts["B"]))
    assert sum(len(r.finding_errors) for r in b_rounds) == 1
    assert all(json.loads(r.stages["findings"]["raw_reply"])["findings"] for r in b_rounds)

    # PPTBench's own tables read these rows: the leaderboard and the gate votes, by hand.
    board = table_frame("pptbench-leaderboard", source=f"{JUDGE}/1")
    assert any("stand-in-judge run 1" in note for note in board.attrs["notes"])
    board = board.set_index("candidate_id")
    assert board.loc["m1-special", "rank"] == 1 and board.loc["m1-direct", "majority_gate_count"] == 2
    assert board.loc["m1-direct", "mean_final_score"] == pytest.approx(92.5 / 3)
    assert board.loc["m1-special", "mean_final_score"] == pytest.approx((95.63 + 96.25 + 100) / 3)
    assert board.loc["m1-direct", "single_round_issue_rate"] == pytest.approx(2 / 3)
    votes = table_frame("gate-policies", source=f"{JUDGE}/1").set_index(["candidate_id", "policy"])
    assert list(votes.loc["m1-direct", "passing"]) == [2, 1, 1]  # at least one, majority, unanimous
    assert list(votes.loc["m1-special", "passing"]) == [3, 3, 2]

    # Table 12's gate votes from the stored rounds: at least one passing round scores A from its one passing round
    # (wrap 0.6 alone: 96.25), which the majority vote zeroes; the unanimous vote zeroes D (one gated round).
    gate_votes = pptbench_gate_votes_frame().set_index(["candidate_id", "task_id", "policy"])
    assert list(gate_votes.loc[("m1-direct", "t0"), "total_score"]) == [96.25, 0.0, 0.0]
    assert list(gate_votes.loc[("m1-special", "t0"), "passing"]) == [True, True, False]
    assert list(gate_votes.loc[("m1-direct", "t2"), "passing"]) == [False, False, False]

    # Kept apart: the published source (the imported scores.csv) has none of these rows, and says so.
    published, published_notes = rows(None)
    assert published.empty and "published scores.csv" in published_notes[0]
    assert PptbenchScore.objects.filter(judge_run__isnull=True).count() == 0
    assert table_frame("pptbench-leaderboard").empty
    # An imported row for the same configuration and task lives beside the judged one, each read by its own source.
    PptbenchScore.objects.create(
        configuration=artifacts["B"].configuration,
        task_id="t1",
        majority_gate=False,
        gate_count=0,
        layout_score=1,
        text_score=2,
        local_graphics_score=3,
        total_score=6,
        issue_count=0,
        single_round_issue_count=0,
    )
    assert list(rows(None)[0]["total_score"]) == [6.0]
    assert rows(f"{JUDGE}/1")[0].loc[("m1-direct", "t1"), "total_score"] == 92.5
    assert pptbench.leaderboard(frame.reset_index()).shape[0] == 2

    # Table 13 from the stored findings: only two-round issues → m1-direct t1 96.25, m1-special t0 96.25 (aspect
    # ratio alone); means move by 3.75 / 3 and 0.62 / 3, the order stays.
    sensitivity = table_frame("pptbench-detail-sensitivity").set_index("policy")
    assert list(sensitivity.index) == [
        "published",
        "two_round_support",
        "unit_multiplier",
        "equal_weights",
        "max_per_category",
    ]
    two = sensitivity.loc["two_round_support"]
    assert (two["kendall_tau"], two["reversed_pairs"], two["tasks"]) == (1.0, 0, 3)
    assert two["max_change"] == pytest.approx(1.25) and two["median_change"] == pytest.approx((1.25 + 0.62 / 3) / 2)

    # A second pass finds nothing left to do and calls nobody.
    with JudgeServer(responder=PptbenchResponder()) as again:
        assert "0 artifacts scored" in judge(again)
    assert again.requests == []


def test_a_failed_stage_is_kept_with_its_raw_reply_and_only_it_is_asked_again(artifacts):
    responder = PptbenchResponder(plans_for(artifacts))
    broken = {"left": 1}

    def flaky(protocol, body):  # the first findings call gets a cut-off reply
        if request_parts(protocol, body)[0] == "pptbench_findings" and broken["left"]:
            broken["left"] -= 1
            return Scripted(200, reply_body(protocol, '{"findings": [{"dimen'))
        return responder(protocol, body)

    with JudgeServer(responder=flaky) as server:
        with pytest.raises(CommandError, match="1 artifacts have a failed round"):
            judge(server, protocol="responses", configuration="m1-special", max_attempts=1)
    failed = PptbenchJudgeRound.objects.get(status="failed")
    assert failed.stages["findings"]["raw_reply"] == '{"findings": [{"dimen' and "findings" in failed.error
    assert failed.stages["semantic_gate"]["ok"] and failed.stages["render_gate"]["ok"]
    assert PptbenchScore.objects.filter(judge_run__isnull=False).count() == 2  # the third waits for its round

    with JudgeServer(responder=responder) as server:
        assert "1 artifacts scored" in judge(server, protocol="responses", configuration="m1-special")
    assert [request_parts("responses", r.body)[0] for r in server.requests] == ["pptbench_findings"]
    assert PptbenchScore.objects.filter(judge_run__isnull=False).count() == 3
    assert PptbenchJudgeRound.objects.filter(status="failed").count() == 0


def test_sources_and_runs_are_refused_with_a_sentence(artifacts):
    with pytest.raises(Invalid, match="no PPTBench judge run"):
        selectors.pptbench_frame(source="nobody/1")
    with pytest.raises(Invalid, match="source must be"):
        selectors.pptbench_frame(source="nobody")
    with pytest.raises(Invalid, match="no PPTBench judge run yet"):
        table_frame("pptbench-detail-sensitivity")
    with pytest.raises(Invalid, match="holds no findings"):
        table_frame("pptbench-detail-sensitivity", source="published")
    with JudgeServer(responder=PptbenchResponder(plans_for(artifacts))) as server:
        judge(server, configuration="m1-special")
        with pytest.raises(CommandError, match="family"):
            judge(server, family="other")
    assert isinstance(table_frame("pptbench-detail-sensitivity"), pd.DataFrame)


@pytest.fixture
def tasks_in_process():
    from config.celery_app import app

    previous, app.conf.task_always_eager = app.conf.task_always_eager, True
    yield app
    app.conf.task_always_eager = previous


def test_judge_workers_take_enqueued_artifacts_and_give_the_same_rows(artifacts, tasks_in_process):
    """`--enqueue`: one task per artifact on the judge queue; the task (run in process here) stores the same rounds and
    rows as the command judging them itself."""
    assert tasks_in_process.amqp.router.route({}, "scoring.judge_pptbench_artifact")["queue"].name == "judge"
    with JudgeServer(responder=PptbenchResponder(plans_for(artifacts))) as server:
        output = judge(server, enqueue=True)
    assert "6 artifacts queued" in output
    assert len(server.requests) == 6 + 9 + 0 + 7 + 9 + 9
    frame, _ = rows(f"{JUDGE}/1")
    assert dict(frame["total_score"]) == {
        ("m1-direct", "t0"): 0.0,
        ("m1-direct", "t1"): 92.5,
        ("m1-direct", "t2"): 0.0,
        ("m1-special", "t0"): 95.63,
        ("m1-special", "t1"): 96.25,
        ("m1-special", "t2"): 100.0,
    }
    assert PptbenchJudgeRound.objects.filter(judge_run__judge=JUDGE, status="ok").count() == 18
    with JudgeServer(responder=PptbenchResponder()) as again:
        assert "0 artifacts queued" in judge(again, enqueue=True)
    assert again.requests == []


def test_a_run_stops_at_its_budget_counting_what_it_spent_before(artifacts):
    """Every stand-in reply is 100 input and 20 output tokens: at $10 and $50 per million a call costs $0.002, an
    artifact's three rounds of three stages $0.018. A budget of two artifacts judges two, then nothing more."""
    prices = dict(price_input=10.0, price_output=50.0)
    budget = 2 * 0.018 + 0.0001
    with JudgeServer(responder=PptbenchResponder()) as server:
        output = judge(server, budget=budget, **prices)
        assert len(server.requests) == 2 * 9
        assert "cost so far $0.04" in output and "stopped at the budget of $0.04" in output
        assert PptbenchScore.objects.filter(judge_run__judge=JUDGE).exclude(task_id="t2").count() == 2
        judge(server, budget=budget, **prices)  # spent already: nobody is called
        assert len(server.requests) == 2 * 9
        output = judge(server, budget=3 * 0.018 + 0.0001, **prices)
        assert len(server.requests) == 3 * 9 and "stopped at the budget" in output
        with pytest.raises(CommandError, match="needs --price-input"):
            judge(server, budget=1.0)


def test_the_window_adapts_to_a_limit_it_is_never_told_and_no_round_fails():
    """Default pacing (adaptive from one artifact's rounds) against a stand-in that allows 40 requests/s, then 20 after
    half a second, and answers 1 in 50 with a 500 and 1 in 50 cut off: every artifact gets its row, no round fails,
    the 429s were met and the window grew past its start."""
    from scoring.judge_client import JudgeSettings
    from scoring.judge_pacing import PacingSettings
    from scoring.pptbench_judge_services import (
        pptbench_artifacts_to_judge,
        pptbench_judge_artifacts,
        pptbench_judge_run_ensure,
    )

    figures = [figure_create(f"p{i}", index=i) for i in range(12)]
    configuration = configuration_create("m2-direct", model="m2", workflow="direct", position=0)
    for figure in figures:
        artifact_create(configuration, figure)
    faults = Faults(latency=(0.05, 0.1), limits=((0, 40), (0.5, 20)), server_error_rate=0.02, malformed_rate=0.02)
    with JudgeServer(faults=faults, responder=PptbenchResponder()) as server:
        run = pptbench_judge_run_ensure(judge=JUDGE, family="stand", run=1, api="chat", base_url=server.base_url)
        settings = JudgeSettings(protocol="chat", base_url=server.base_url, model=JUDGE, api_key_env="")
        counts = pptbench_judge_artifacts(
            artifacts=pptbench_artifacts_to_judge(judge_run=run),
            judge_run=run,
            settings=settings,
            pacing=PacingSettings(start_concurrency=3, max_concurrency=99),
        )
        statuses = [status for _, status in server.served]
    assert (counts.scored, counts.failed) == (12, 0)
    assert PptbenchJudgeRound.objects.filter(judge_run=run, status="ok").count() == 12 * 3
    assert statuses.count(429) > 0 and statuses.count(500) > 0  # the limit and the faults were met, and waited out
    assert counts.peak_concurrency > 3  # it grew while calls succeeded
