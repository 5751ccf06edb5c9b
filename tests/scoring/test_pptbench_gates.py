"""scoring.pptbench gate repeatability and gate policies: by hand, against statsmodels, and on PPTBench's published
scores.csv / leaderboard.csv (read in place from ../shared)."""

import csv
import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from scoring.pptbench import GATE_POLICY_COLUMNS, gate_policies, gate_repeatability
from tests.data.paths import PPTBENCH as DATA
from tests.data.paths import needs_shared

needs_data = needs_shared(DATA)


def _frame(gate_counts, totals):
    return pd.DataFrame(
        {
            "candidate_id": "c__high",
            "task_id": [f"t{i}" for i in range(len(gate_counts))],
            "gate_count": gate_counts,
            "total_score": totals,
        }
    )


def test_gate_repeatability_by_hand():
    row = gate_repeatability(_frame([0, 3, 1, 2], [80, 0, 70, 0])).iloc[0]
    # Agreement per task (3 rounds): 1, 1, 1/3, 1/3 -> P̄ = 2/3; gate share 6/12 -> P_e = 1/2; κ = (2/3 − 1/2)/(1/2)
    assert (row["n"], row["unanimous_rate"], row["flipped"]) == (4, 0.5, 2)
    assert row["fleiss_kappa"] == pytest.approx(1 / 3)
    assert math.isnan(gate_repeatability(_frame([0, 0], [1, 2])).iloc[0]["fleiss_kappa"])
    with pytest.raises(ValueError):
        gate_repeatability(_frame([4], [0]))


def test_gate_policies_by_hand():
    table = gate_policies(_frame([0, 1, 2, 3], [80, 60, 0, 0]))
    assert list(table.columns) == GATE_POLICY_COLUMNS
    table = table.set_index("policy")
    assert table.loc["at_least_one", "passing"] == 3 and math.isnan(table.loc["at_least_one", "mean_score"])
    assert (table.loc["majority", "passing"], table.loc["majority", "mean_score"]) == (2, 35.0)
    assert (table.loc["unanimous", "passing"], table.loc["unanimous", "mean_score"]) == (1, 20.0)


def _published():
    with open(DATA / "scores.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@needs_data
def test_gate_policies_reproduce_pptbench_majority_and_astra_unanimous():
    """Majority: PPTBench's published leaderboard (passing = tasks − majority_gate_count, mean = mean_final_score).
    Unanimous: recomputed here with the csv module, row by row, for the five Astra configurations (Table 12)."""
    ours = gate_policies(pd.read_csv(DATA / "scores.csv")).set_index(["candidate_id", "policy"])
    board = pd.read_csv(DATA / "leaderboard.csv").set_index("candidate_id")
    for candidate, row in board.iterrows():
        majority = ours.loc[(candidate, "majority")]
        assert majority["passing"] == row["task_count"] - row["majority_gate_count"]
        assert majority["mean_score"] == pytest.approx(row["mean_final_score"], abs=1e-9)
    rows = _published()
    astra = sorted({r["candidate_id"] for r in rows if r["candidate_id"].startswith("gpt-6-astra__")})
    assert len(astra) == 5
    for candidate in astra:
        own = [r for r in rows if r["candidate_id"] == candidate]
        clean = [r for r in own if r["gate_count"] == "0"]
        unanimous = ours.loc[(candidate, "unanimous")]
        assert unanimous["passing"] == len(clean)
        assert unanimous["mean_score"] == pytest.approx(sum(float(r["total_score"]) for r in clean) / len(own))
        assert ours.loc[(candidate, "at_least_one"), "passing"] == sum(r["gate_count"] != "3" for r in own)


@needs_data
def test_gate_repeatability_on_pptbench_against_statsmodels():
    ours = gate_repeatability(pd.read_csv(DATA / "scores.csv")).set_index("candidate_id")
    assert len(ours) == 36 and (ours["n"] == 500).all()
    rows = _published()
    for candidate in ["gpt-6-astra__high", "glm-5.3-flash__max"]:
        gated = np.array([int(r["gate_count"]) for r in rows if r["candidate_id"] == candidate])
        counts = np.column_stack([gated, 3 - gated])
        assert ours.loc[candidate, "fleiss_kappa"] == pytest.approx(fleiss_kappa(counts))
        assert ours.loc[candidate, "flipped"] == int(((gated == 1) | (gated == 2)).sum())
        assert ours.loc[candidate, "unanimous_rate"] == pytest.approx(np.isin(gated, [0, 3]).mean())


# PPTBench's published headline for GPT-6 Astra / Codex (README of Einsia/PPTBench, "Results"): score /100 and share of
# tasks clearing the hard gates, under its majority rule (at least two of three rounds decide), 500 tasks each.
PUBLISHED_ASTRA_MAJORITY = {
    "low": (59.42, 63.0),
    "medium": (68.16, 71.6),
    "high": (77.34, 80.8),
    "xhigh": (72.60, 74.8),
    "max": (68.76, 71.0),
}


@needs_data
def test_majority_policy_reproduces_pptbench_published_astra_results():
    with open(DATA / "scores.csv", newline="", encoding="utf-8") as handle:
        frame = pd.DataFrame(csv.DictReader(handle))
    frame["gate_count"] = frame["gate_count"].astype(int)
    frame["total_score"] = frame["total_score"].astype(float)
    policies = gate_policies(frame[frame["candidate_id"].str.startswith("gpt-6-astra__")])
    majority = policies[policies["policy"] == "majority"].set_index("candidate_id")
    for effort, (score, passed_percent) in PUBLISHED_ASTRA_MAJORITY.items():
        row = majority.loc[f"gpt-6-astra__{effort}"]
        assert round(row["mean_score"], 2) == pytest.approx(score, abs=0.006)
        assert round(100 * row["passing"] / 500, 1) == pytest.approx(passed_percent, abs=0.05)
