"""scoring.pptbench: the leaderboard against PPTBench's published copy, merge_rounds by hand."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scoring.pptbench import (
    LEADERBOARD_COLUMNS, SEVERITY_WEIGHT, Finding, RoundResult, leaderboard, merge_rounds,
)

from tests.data.paths import PPTBENCH as DATA
needs_data = pytest.mark.skipif(not (DATA / "scores.csv").exists(), reason="PPTBench copy not present")


@needs_data
def test_leaderboard_reproduces_pptbench():
    ours = leaderboard(pd.read_csv(DATA / "scores.csv"))
    theirs = pd.read_csv(DATA / "leaderboard.csv")
    assert list(ours.columns) == LEADERBOARD_COLUMNS == list(theirs.columns)
    assert list(ours["candidate_id"]) == list(theirs["candidate_id"])
    assert list(ours["rank"]) == list(theirs["rank"])
    for col in LEADERBOARD_COLUMNS[2:]:
        np.testing.assert_allclose(ours[col].to_numpy(float), theirs[col].to_numpy(float), rtol=0, atol=1e-9)


def test_leaderboard_by_hand():
    frame = pd.DataFrame({
        "task_id": ["t1", "t2", "t1", "t2"],
        "candidate_id": ["a__high", "a__high", "b__low", "b__low"],
        "majority_gate": ["True", "False", "False", "False"],
        "gate_count": [2, 0, 1, 0],
        "layout_score": [0, 30, 20, 10], "text_score": [0, 40, 30, 20],
        "local_graphics_score": [0, 20, 30, 10], "total_score": [0, 90, 80, 40],
        "issue_count": [0, 2, 3, 1], "single_round_issue_count": [0, 1, 0, 1],
    })
    lb = leaderboard(frame)
    # b: mean total (80+40)/2 = 60 > a: (0+90)/2 = 45 -> b ranks first.
    assert list(lb["candidate_id"]) == ["b__low", "a__high"]
    b, a = lb.iloc[0], lb.iloc[1]
    assert (a["majority_gate_count"], a["majority_gate_rate"]) == (1, 0.5)
    assert a["mean_layout_score"] == 15 and a["mean_text_score"] == 20 and a["mean_local_graphics_score"] == 10
    assert a["mean_issue_count"] == 1 and a["single_round_issue_rate"] == 0.5  # 1 / 2
    assert b["single_round_issue_rate"] == 0.25  # 1 / (3+1)
    assert b["mean_final_score"] == 60


@needs_data
def test_severity_weights_match_full_ratio_issues():
    """Issue types whose every finding had ratio 1 cost exactly the weight per case."""
    summary = pd.read_csv(DATA / "issue-summary.csv")
    full = summary[summary["mean_max_ratio"] == 1.0]
    assert set(full["severity"]) >= {"low", "medium", "high", "diagnostic"}
    per_case = full["total_penalty"] / full["case_count"]
    np.testing.assert_allclose(per_case, full["severity"].map(SEVERITY_WEIGHT), atol=1e-9)
    # ... and no finding ever costs more than its weight, nor less than half of it.
    pos = summary[summary["severity"] != "diagnostic"]
    frac = pos["total_penalty"] / pos["case_count"] / pos["severity"].map(SEVERITY_WEIGHT)
    assert frac.between(0.5, 1.0 + 1e-9).all()
    assert (summary.loc[summary["severity"] == "diagnostic", "total_penalty"] == 0).all()


def F(dim, cat, issue, sev, ratio):
    return Finding(dim, cat, issue, sev, ratio)


LAY, TXT, LOC = "layout_and_composition", "text_and_typography", "local_graphics_and_nodes"


def test_majority_gate_zeroes_everything():
    rounds = [RoundResult(True), RoundResult(True, ()), RoundResult(False, (F(TXT, "c", "i", "high", 1.0),))]
    m = merge_rounds(rounds)
    assert m.majority_gate and m.gate_count == 2
    assert (m.layout_score, m.text_score, m.local_graphics_score, m.total_score) == (0, 0, 0, 0)
    assert m.issue_count == 0


def test_merge_by_hand():
    r1 = RoundResult(False, (F(TXT, "typo", "wrap", "medium", 0.4), F(LAY, "panel", "spacing", "low", 1.0)))
    r2 = RoundResult(False, (F(TXT, "typo", "wrap", "medium", 0.8),))
    r3 = RoundResult(True, (F(LOC, "node", "size", "high", 1.0),))  # gated round: ignored
    m = merge_rounds([r1, r2, r3])
    assert not m.majority_gate and m.gate_count == 1
    # text: 40 - 3.75*0.8 = 37.0 ; layout: 30 - 1.25*1.0 = 28.75 ; local: 30 (gated round's finding dropped)
    assert m.text_score == pytest.approx(37.0)
    assert m.layout_score == pytest.approx(28.75)
    assert m.local_graphics_score == 30.0
    assert m.total_score == pytest.approx(95.75)
    assert m.issue_count == 2
    by = {f.issue_type: f for f in m.findings}
    assert by["wrap"].rounds == 2 and by["wrap"].affected_ratio == 0.8 and not by["wrap"].single_round
    assert by["spacing"].single_round
    assert m.single_round_issue_count == 1


def test_dimension_clipped_at_zero_and_diagnostic_free():
    many = tuple(F(LAY, "panel", f"i{k}", "high", 1.0) for k in range(5))  # 5 * 7.5 = 37.5 > 30
    m = merge_rounds([RoundResult(False, many + (F(LOC, "shadow", "shadow_presence", "diagnostic", 1.0),)),
                      RoundResult(False), RoundResult(False)])
    assert m.layout_score == 0.0
    assert m.local_graphics_score == 30.0  # diagnostic costs nothing
    assert m.total_score == 70.0  # 0 + 40 + 30
    assert m.issue_count == 6 and m.single_round_issue_count == 6


def test_finding_validation():
    with pytest.raises(ValueError):
        Finding(LAY, "c", "i", "critical", 0.5)
    with pytest.raises(ValueError):
        Finding("colour", "c", "i", "low", 0.5)
    with pytest.raises(ValueError):
        Finding(LAY, "c", "i", "low", 1.5)
