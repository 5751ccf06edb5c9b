"""PPTBench's second scoring protocol (REFERENCE 8): the leaderboard.

Pure: standard library + pandas only — no Django, DRF or Celery.

:func:`leaderboard` turns a frame shaped like PPTBench's ``scores.csv`` (DESIGN data contract 4) into PPTBench's own
leaderboard columns; on the published copy it reproduces ``leaderboard.csv`` exactly (tested).
"""

from __future__ import annotations

import pandas as pd

LEADERBOARD_COLUMNS = [
    "rank",
    "candidate_id",
    "task_count",
    "majority_gate_count",
    "majority_gate_rate",
    "mean_layout_score",
    "mean_text_score",
    "mean_local_graphics_score",
    "mean_final_score",
    "mean_issue_count",
    "single_round_issue_rate",
]

# PPTBench's severity weights: points deducted for a finding that affects the whole region (ratio 1), read off its
# published issue-summary.csv: for every issue type whose findings all had ratio 1.0 (mean_max_ratio == 1),
# total_penalty / case_count is exactly 7.5 (high), 3.75 (medium), 1.25 (low) and 0 (diagnostic) — one consistent
# weight per severity (tests/scoring/test_pptbench.py checks this). PPTBench does NOT scale linearly in the ratio,
# though: every finding costs between half the weight and the full weight (per-case penalty/weight ∈ [0.5, 1]; single-
# case rows look like a step function of the ratio: 0.04 → 0.5, 0.2 and 0.24 → 0.6, 0.27–0.33 → 0.8, 1.0 → 1.0), steps
# that cannot be pinned down from aggregates.
SEVERITY_WEIGHT: dict[str, float] = {
    "diagnostic": 0.0,
    "low": 1.25,
    "medium": 3.75,
    "high": 7.5,
}


def leaderboard(scores: pd.DataFrame) -> pd.DataFrame:
    """PPTBench's leaderboard from its ``scores.csv`` rows: per candidate the task count, the
    number and share of majority-gated tasks, the mean layout / text / local-graphics / total
    score over all tasks (gated tasks count as 0), the mean issue count, and the single-round
    issue rate (total single-round findings / total findings; NaN with no findings). Ranked by
    mean final score, highest first (ties: candidate_id order), rank 1…k."""
    frame = scores.copy()
    gate = frame["majority_gate"]
    if gate.dtype != bool:
        gate = gate.astype(str).str.strip().str.lower().map({"true": True, "false": False, "1": True, "0": False})
    frame["_gate"] = gate.astype(bool)
    g = frame.groupby("candidate_id", sort=True)
    issues = g["issue_count"].sum()
    single = g["single_round_issue_count"].sum()
    table = pd.DataFrame(
        {
            "task_count": g.size(),
            "majority_gate_count": g["_gate"].sum().astype(int),
            "majority_gate_rate": g["_gate"].mean(),
            "mean_layout_score": g["layout_score"].mean(),
            "mean_text_score": g["text_score"].mean(),
            "mean_local_graphics_score": g["local_graphics_score"].mean(),
            "mean_final_score": g["total_score"].mean(),
            "mean_issue_count": g["issue_count"].mean(),
            "single_round_issue_rate": (single / issues.where(issues > 0)).astype(float),
        }
    )
    table.index.name = "candidate_id"
    table = table.reset_index().sort_values(
        ["mean_final_score", "candidate_id"], ascending=[False, True], kind="stable"
    )
    table.insert(0, "rank", range(1, len(table) + 1))
    return table[LEADERBOARD_COLUMNS].reset_index(drop=True)


__all__ = ["LEADERBOARD_COLUMNS", "SEVERITY_WEIGHT", "leaderboard"]
