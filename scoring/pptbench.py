"""PPTBench's second scoring protocol (REFERENCE 8): the leaderboard.

Pure: standard library + pandas only — no Django, DRF or Celery.

:func:`leaderboard` turns a frame shaped like PPTBench's ``scores.csv`` (DESIGN data contract 4) into PPTBench's own
leaderboard columns; on the published copy it reproduces ``leaderboard.csv`` exactly (tested).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# PPTBench's scores.csv (DESIGN data contract 4): one row per task and candidate. The importer requires these columns
# and every PPTBench table reads frames of this shape.
SCORES_COLUMNS: tuple[str, ...] = (
    "task_id",
    "candidate_id",
    "majority_gate",
    "gate_count",
    "layout_score",
    "text_score",
    "local_graphics_score",
    "total_score",
    "issue_count",
    "single_round_issue_count",
)

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


JUDGE_ROUNDS = 3  # PPTBench runs three independent judge rounds per artifact; gate_count counts the gated ones
GATE_REPEATABILITY_COLUMNS = ["candidate_id", "n", "unanimous_rate", "fleiss_kappa", "flipped"]
GATE_POLICY_COLUMNS = ["candidate_id", "policy", "passing", "mean_score"]
# How many of the three rounds must pass (not gate) for an artifact to pass. PPTBench publishes "majority".
GATE_POLICIES: dict[str, int] = {"at_least_one": 1, "majority": 2, "unanimous": 3}


def gate_repeatability(scores: pd.DataFrame, *, rounds: int = JUDGE_ROUNDS) -> pd.DataFrame:
    """Repeatability of the gate over PPTBench's judge rounds, per candidate: n tasks, the share where every round
    agrees (gate_count 0 or `rounds`), Fleiss' κ with the rounds as raters and gate / no gate as the categories
    (statsmodels; NaN when every round of every task says the same), and how many tasks flipped (rounds disagree)."""
    from statsmodels.stats import inter_rater  # on use: not at every process start

    rows = []
    for candidate, frame in scores.groupby("candidate_id", sort=True):
        gated = frame["gate_count"].astype(int).to_numpy()
        if gated.min() < 0 or gated.max() > rounds:
            raise ValueError(f"{candidate}: gate_count must lie in 0..{rounds}")
        unanimous = (gated == 0) | (gated == rounds)
        counts = np.column_stack([gated, rounds - gated])
        kappa = (
            float(inter_rater.fleiss_kappa(counts, method="fleiss"))
            if np.count_nonzero(counts.sum(axis=0)) == 2
            else float("nan")
        )
        rows.append((candidate, len(frame), float(unanimous.mean()), kappa, int((~unanimous).sum())))
    return pd.DataFrame(rows, columns=GATE_REPEATABILITY_COLUMNS)


def gate_policies(scores: pd.DataFrame, *, rounds: int = JUDGE_ROUNDS) -> pd.DataFrame:
    """Per candidate and gate policy (GATE_POLICIES: how many non-gating rounds an artifact needs), how many tasks pass
    and the mean score over all tasks with non-passing tasks as 0. A task's published total_score merges the findings
    of its non-gated rounds only when at least two rounds passed, so the score is known where the policy's passing set
    lies within those tasks (majority, unanimous); under at_least_one a task passing in one round alone has no
    published score and mean_score is left empty."""
    rows = []
    for candidate, frame in scores.groupby("candidate_id", sort=True):
        passed_rounds = rounds - frame["gate_count"].astype(int)
        total = frame["total_score"].astype(float)
        for policy, needed in GATE_POLICIES.items():
            passing = passed_rounds >= needed
            knowable = needed >= 2
            mean = float(total.where(passing, 0.0).mean()) if knowable else float("nan")
            rows.append((candidate, policy, int(passing.sum()), mean))
    return pd.DataFrame(rows, columns=GATE_POLICY_COLUMNS)


__all__ = [
    "GATE_POLICIES",
    "GATE_POLICY_COLUMNS",
    "GATE_REPEATABILITY_COLUMNS",
    "JUDGE_ROUNDS",
    "LEADERBOARD_COLUMNS",
    "SCORES_COLUMNS",
    "gate_policies",
    "gate_repeatability",
    "leaderboard",
]
