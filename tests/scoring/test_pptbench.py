"""scoring.pptbench: the leaderboard by hand and against PPTBench's published results, read from ../shared."""

import numpy as np
import pandas as pd

from scoring.pptbench import LEADERBOARD_COLUMNS, leaderboard
from scoring.pptbench_policy import fraction_multiplier, protocol
from tests.data.paths import PPTBENCH as DATA
from tests.data.paths import needs_shared

needs_data = needs_shared(DATA)


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
    frame = pd.DataFrame(
        {
            "task_id": ["t1", "t2", "t1", "t2"],
            "candidate_id": ["a__high", "a__high", "b__low", "b__low"],
            "majority_gate": ["True", "False", "False", "False"],
            "gate_count": [2, 0, 1, 0],
            "layout_score": [0, 30, 20, 10],
            "text_score": [0, 40, 30, 20],
            "local_graphics_score": [0, 20, 30, 10],
            "total_score": [0, 90, 80, 40],
            "issue_count": [0, 2, 3, 1],
            "single_round_issue_count": [0, 1, 0, 1],
        }
    )
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
    """Issue types whose every finding had ratio 1 cost exactly the frozen policy's full-ratio weight per case (severity
    base × the multiplier of fraction 1)."""
    weight = {s: base * fraction_multiplier(1.0) for s, base in protocol().severity_points.items()}
    summary = pd.read_csv(DATA / "issue-summary.csv")
    full = summary[summary["mean_max_ratio"] == 1.0]
    assert set(full["severity"]) >= {"low", "medium", "high", "diagnostic"}
    per_case = full["total_penalty"] / full["case_count"]
    np.testing.assert_allclose(per_case, full["severity"].map(weight), atol=1e-9)
    # ... and no finding ever costs more than its weight, nor less than half of it.
    pos = summary[summary["severity"] != "diagnostic"]
    frac = pos["total_penalty"] / pos["case_count"] / pos["severity"].map(weight)
    assert frac.between(0.5, 1.0 + 1e-9).all()
    assert (summary.loc[summary["severity"] == "diagnostic", "total_penalty"] == 0).all()
