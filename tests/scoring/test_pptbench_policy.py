"""scoring.pptbench_policy and the stage checks of scoring.pptbench_judge: gates, merge and penalties on findings
computed by hand, each Table 13 variant, the sensitivity table, and the taxonomy against PPTBench's published
issue-summary.csv (../shared)."""

import json

import pandas as pd
import pytest

from scoring.pptbench_judge import FindingsReply, GateReply, stage
from scoring.pptbench_policy import (
    DETAIL_POLICIES,
    Finding,
    Round,
    detail_sensitivity,
    fraction_multiplier,
    protocol,
    score_task,
    severity_of,
    validate_findings,
)
from scoring.rubric import JudgeReplyError
from tests.data.paths import PPTBENCH, needs_shared

TEXT, LAYOUT, LOCAL = "text_and_typography", "layout_and_composition", "local_graphics_and_nodes"


def f(dimension, category, issue_type, fraction):
    return Finding(dimension, category, issue_type, fraction)


WRAP = lambda x: f(TEXT, "improper_typography", "unexpected_wrap", x)  # noqa: E731  medium: 1.5
FONT = lambda x: f(TEXT, "improper_typography", "font_size", x)  # noqa: E731  low: 0.5
MISSING = lambda x: f(TEXT, "spelling_and_omission", "missing_text", x)  # noqa: E731  high: 3.0
OUTSIDE = lambda x: f(TEXT, "text_overflow_or_edge_touch", "outside_text_box", x)  # noqa: E731  high
ASPECT = lambda x: f(LOCAL, "node_shape_error", "node_aspect_ratio", x)  # noqa: E731  medium
FILL = lambda x: f(LOCAL, "node_style_error", "node_fill", x)  # noqa: E731  low


def test_the_frozen_constants():
    p = protocol()
    assert p.rounds == 3 and p.gated_rounds_to_zero == 2
    assert p.dimension_points == {LAYOUT: 30.0, TEXT: 40.0, LOCAL: 30.0}
    assert p.severity_points == {"high": 3.0, "medium": 1.5, "low": 0.5, "diagnostic": 0.0}
    steps = {0.0: 1.0, 0.02: 1.0, 0.021: 1.25, 0.1: 1.25, 0.11: 1.5, 0.25: 1.5, 0.26: 2.0, 0.5: 2.0, 0.51: 2.5, 1: 2.5}
    assert {x: fraction_multiplier(x) for x in steps} == steps
    # An issue type's own severity wins over its category's default; the rest take the default.
    assert severity_of("panel_style_error", "panel_shadow") == "diagnostic"  # category default: low
    assert severity_of("improper_typography", "unexpected_wrap") == "medium"  # category default: low
    assert severity_of("spelling_and_omission", "subscript") == "high"  # listed nowhere: the category's high


def test_a_gate_in_two_of_three_rounds_scores_zero():
    rounds = [Round(gate="semantic"), Round(gate="render"), Round(findings=(WRAP(0.6),))]
    assert score_task(rounds).row() == {
        "majority_gate": True,
        "gate_count": 2,
        "layout_score": 0.0,
        "text_score": 0.0,
        "local_graphics_score": 0.0,
        "total_score": 0.0,
        "issue_count": 0,
        "single_round_issue_count": 0,
    }
    # One gated round is outvoted: the two others are scored, the gated round's findings (none) ignored.
    one = score_task([Round(gate="semantic"), Round(findings=(WRAP(0.6),)), Round()])
    assert (one.majority_gate, one.gate_count, one.text_score, one.total_score) == (False, 1, 36.25, 96.25)
    # Table 12's other gate votes: at least one passing round scores the last round alone; unanimous needs three.
    assert score_task(rounds, passes_needed=1).total_score == 96.25  # 40 - 1.5 × 2.5
    assert score_task([Round(gate="render"), Round(), Round()], passes_needed=3).majority_gate is True


def test_a_finding_in_one_round_only():
    score = score_task([Round(findings=(WRAP(0.6),)), Round(), Round()])
    # medium 1.5 × 2.5 (fraction > 0.5) = 3.75 off the 40 text points
    assert (score.layout_score, score.text_score, score.local_graphics_score) == (30.0, 36.25, 30.0)
    assert (score.total_score, score.issue_count, score.single_round_issue_count) == (96.25, 1, 1)


def test_the_same_issue_at_different_fractions_keeps_the_largest():
    rounds = [Round(findings=(OUTSIDE(0.05),)), Round(findings=(OUTSIDE(0.3),)), Round(findings=(OUTSIDE(0.1),))]
    score = score_task(rounds)
    # high 3.0 × 2.0 (0.25 < 0.3 ≤ 0.5) = 6.0, once: one merged issue found in all three rounds
    assert (score.text_score, score.issue_count, score.single_round_issue_count) == (34.0, 1, 0)
    (issue,) = score.issues
    assert (issue.affected_fraction, issue.support, issue.points) == (0.3, 3, 6.0)
    # Twice in one round counts that round once (support 1), still the largest fraction.
    twice = score_task([Round(findings=(OUTSIDE(0.05), OUTSIDE(0.6))), Round(), Round()])
    assert (twice.text_score, twice.issue_count, twice.single_round_issue_count) == (32.5, 1, 1)


def test_diagnostic_findings_count_but_cost_nothing():
    rounds = [
        Round(
            findings=(
                f(LOCAL, "node_shadow_error", "shadow_presence", 1.0),
                f(LAYOUT, "panel_misalignment", "global_scale", 1.0),
            )
        ),
        Round(findings=(f(LAYOUT, "panel_style_error", "panel_shadow", 0.8),)),
        Round(),
    ]
    score = score_task(rounds)
    assert (score.total_score, score.issue_count, score.single_round_issue_count) == (100.0, 3, 3)
    assert {i.severity for i in score.issues} == {"diagnostic"}


def test_a_dimension_loses_at_most_its_points():
    many = tuple(f(TEXT, "spelling_and_omission", t, 1.0) for t in ("missing_text", "extra_text", "substituted_text"))
    many += tuple(f(TEXT, "text_overflow_or_edge_touch", t, 1.0) for t in ("text_clipping", "text_truncation"))
    score = score_task([Round(findings=many), Round(), Round()])  # 5 high × 2.5 = 37.5 of 40
    assert score.text_score == 2.5
    # missing text again merges into the one above; outside_text_box adds 7.5: 45 > 40, the text dimension is 0
    more = score_task([Round(findings=(*many, MISSING(0.01), OUTSIDE(1.0))), Round(), Round()])
    assert (more.text_score, more.total_score) == (0.0, 60.0)


# One task for every variant: round 1 wrap 0.6, font size 0.2, aspect ratio 0.3, fill 0.05; round 2 wrap 0.4 and
# missing text 0.01; round 3 gated (rendering). Merged: wrap 0.6 in two rounds, the rest in one.
VARIANT_ROUNDS = [
    Round(findings=(WRAP(0.6), FONT(0.2), ASPECT(0.3), FILL(0.05))),
    Round(findings=(WRAP(0.4), MISSING(0.01))),
    Round(gate="render"),
]


@pytest.mark.parametrize(
    ("policy", "layout", "text", "local", "total", "issues", "single"),
    [
        # wrap 1.5×2.5 = 3.75, font 0.5×1.5 = 0.75, missing 3.0×1 = 3.0 → text 32.5; aspect 1.5×2 = 3.0,
        # fill 0.5×1.25 = 0.625 → 0.62 (rounded as the ranker rounds) → local 26.38
        ("published", 30.0, 32.5, 26.38, 88.88, 5, 4),
        # only the wrap has two rounds' support
        ("two_round_support", 30.0, 36.25, 30.0, 96.25, 1, 0),
        # every issue its base: text 40 − (1.5 + 0.5 + 3.0), local 30 − (1.5 + 0.5)
        ("unit_multiplier", 30.0, 35.0, 28.0, 93.0, 5, 4),
        # each dimension a third of 100: 30/30, 32.5/40, 26.38/30 of 33.33…
        ("equal_weights", 33.33, 27.08, 29.31, 89.72, 5, 4),
        # the font size (0.75) goes: wrap is the larger penalty of improper_typography
        ("max_per_category", 30.0, 33.25, 26.38, 89.63, 5, 4),
    ],
)
def test_each_detail_policy_variant(policy, layout, text, local, total, issues, single):
    score = score_task(VARIANT_ROUNDS, policy=DETAIL_POLICIES[policy])
    assert (score.majority_gate, score.gate_count) == (False, 1)
    assert (score.layout_score, score.text_score, score.local_graphics_score) == (layout, text, local)
    assert (score.total_score, score.issue_count, score.single_round_issue_count) == (total, issues, single)


def test_detail_sensitivity_by_hand():
    rows = [("published", "a", 90), ("published", "b", 80), ("published", "c", 70)]
    rows += [("unit_multiplier", "a", 85), ("unit_multiplier", "b", 88), ("unit_multiplier", "c", 70)]
    scores = pd.DataFrame(
        [(c, "t1", p, s) for p, c, s in rows], columns=["candidate_id", "task_id", "policy", "total_score"]
    )
    table = detail_sensitivity(scores).set_index("policy")
    assert list(table.index) == ["published", "unit_multiplier"]
    same = table.loc["published"]
    assert (same["kendall_tau"], same["max_change"], same["reversed_pairs"]) == (1.0, 0.0, 0)
    moved = table.loc["unit_multiplier"]
    # a–b swap, a–c and b–c keep their order: τ = (2 − 1) / 3; changes |−5|, |+8|, 0 → median 5, largest 8
    assert moved["kendall_tau"] == pytest.approx(1 / 3)
    assert (moved["median_change"], moved["max_change"], moved["reversed_pairs"], moved["pairs"]) == (5.0, 8.0, 1, 3)
    assert (moved["configurations"], moved["tasks"]) == (3, 1)


def test_findings_outside_the_taxonomy_are_errors_not_crashes():
    good = {"dimension": TEXT, "category": "improper_typography", "issue_type": "unexpected_wrap"}
    good |= {"affected_fraction": 0.5, "affected_count": 2, "location": "x", "candidate": "c", "reference": "r"}
    items = [
        good,
        {**good, "issue_type": "missing_text"},  # a type of another category
        {**good, "category": "node_fill"},  # not a category
        {**good, "dimension": LAYOUT},  # the category belongs to another dimension
        {**good, "affected_fraction": 1.2},
        {**good, "affected_count": 0},
        "not an object",
    ]
    findings, errors = validate_findings(items)
    assert findings == [Finding(TEXT, "improper_typography", "unexpected_wrap", 0.5, 2, "x", "c", "r")]
    assert [e.split(":")[0] for e in errors] == [
        "findings[1].issue_type",
        "findings[2].category",
        "findings[3].category",
        "findings[4].affected_fraction",
        "findings[5].affected_count",
        "findings[6].$",
    ]


def test_stage_replies_are_checked():
    gate = stage("semantic_gate")
    assert gate.validate_reply('{"triggered": true, "reason": "edge A -> B reversed"}') == GateReply(
        True, "edge A -> B reversed"
    )
    for bad in ('{"triggered": true, "reason": " "}', '{"triggered": "yes", "reason": ""}', "not json", "[]"):
        with pytest.raises(JudgeReplyError):
            gate.validate_reply(bad)
    findings = stage("findings")
    reply = findings.validate_reply(json.dumps({"findings": [{"dimension": "nope"}], "summary": "s"}))
    assert isinstance(reply, FindingsReply) and reply.findings == () and len(reply.errors) == 1
    with pytest.raises(JudgeReplyError):
        findings.validate_reply('{"findings": {}, "summary": ""}')
    # The findings prompt lists every issue type of the taxonomy (generated from the same file as the policy).
    assert (
        all(t in findings.system_prompt for (_, t) in protocol().severity)
        and "{taxonomy}" not in findings.system_prompt
    )


@needs_shared(PPTBENCH)
def test_taxonomy_and_penalties_agree_with_published_issue_summary():
    summary = pd.read_csv(PPTBENCH / "issue-summary.csv")
    ours = [severity_of(r.category, r.issue_type) for r in summary.itertuples()]
    assert ours == list(summary["severity"])  # all 217 issue types, same severity
    assert all(protocol().category_dimension[r.category] == r.dimension for r in summary.itertuples())
    # A type found once costs exactly base × step(its fraction), rounded to cents (13 such rows).
    single = summary[summary["case_count"] == 1]
    points = [
        round(protocol().severity_points[r.severity] * fraction_multiplier(r.mean_max_ratio), 2)
        for r in single.itertuples()
    ]
    assert len(single) == 13 and points == pytest.approx(list(single["total_penalty"]), abs=1e-9)
