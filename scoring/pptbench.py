"""PPTBench's second scoring protocol (REFERENCE 8): leaderboard and round merging.

Pure: standard library + pandas only — no Django, DRF or Celery.

* :func:`leaderboard` turns a frame shaped like PPTBench's ``scores.csv`` (DESIGN data contract 4)
  into PPTBench's own leaderboard columns; on the published copy it reproduces
  ``leaderboard.csv`` exactly (tested).
* :func:`merge_rounds` turns three (or more) independent judge rounds into one score: majority
  gate, union of findings by (dimension, category, issue_type) keeping the largest affected
  fraction, fixed severity penalties subtracted from each dimension's maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

LEADERBOARD_COLUMNS = [
    "rank", "candidate_id", "task_count", "majority_gate_count", "majority_gate_rate",
    "mean_layout_score", "mean_text_score", "mean_local_graphics_score", "mean_final_score",
    "mean_issue_count", "single_round_issue_rate",
]

# REFERENCE 8 — the three visual-detail dimensions and their maxima (sum 100).
DIMENSION_MAXIMA: dict[str, float] = {
    "layout_and_composition": 30.0,
    "text_and_typography": 40.0,
    "local_graphics_and_nodes": 30.0,
}
DIMENSION_SCORE_FIELDS: dict[str, str] = {
    "layout_and_composition": "layout",
    "text_and_typography": "text",
    "local_graphics_and_nodes": "local_graphics",
}
SEVERITIES: tuple[str, ...] = ("diagnostic", "low", "medium", "high")

# Severity weights: points deducted for a finding that affects the whole region (ratio 1).
# This app's fixed rule is penalty = SEVERITY_WEIGHT[severity] × affected_ratio.
# The weights are PPTBench's, read off its published issue-summary.csv: for every issue type whose
# findings all had ratio 1.0 (mean_max_ratio == 1), total_penalty / case_count is exactly
# 7.5 (high), 3.75 (medium), 1.25 (low) and 0 (diagnostic) — one consistent weight per severity
# (tests/scoring/test_pptbench.py checks this). PPTBench does NOT scale linearly in the ratio,
# though: total_penalty / (case_count × mean_max_ratio) is far from constant, and every finding
# costs between half the weight and the full weight (per-case penalty/weight ∈ [0.5, 1]; single-
# case rows look like a step function of the ratio: 0.04 → 0.5, 0.2 and 0.24 → 0.6,
# 0.27–0.33 → 0.8, 1.0 → 1.0). Those steps cannot be pinned down from aggregates, so this app
# keeps the linear rule; totals from merge_rounds therefore differ from PPTBench's own.
SEVERITY_WEIGHT: dict[str, float] = {
    "diagnostic": 0.0,
    "low": 1.25,
    "medium": 3.75,
    "high": 7.5,
}
# A gate must fire in at least this many rounds to zero the artifact (REFERENCE 8: two of three).
MAJORITY_GATE_ROUNDS = 2


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
    table = pd.DataFrame({
        "task_count": g.size(),
        "majority_gate_count": g["_gate"].sum().astype(int),
        "majority_gate_rate": g["_gate"].mean(),
        "mean_layout_score": g["layout_score"].mean(),
        "mean_text_score": g["text_score"].mean(),
        "mean_local_graphics_score": g["local_graphics_score"].mean(),
        "mean_final_score": g["total_score"].mean(),
        "mean_issue_count": g["issue_count"].mean(),
        "single_round_issue_rate": (single / issues.where(issues > 0)).astype(float),
    })
    table.index.name = "candidate_id"
    table = table.reset_index().sort_values(["mean_final_score", "candidate_id"],
                                            ascending=[False, True], kind="stable")
    table.insert(0, "rank", range(1, len(table) + 1))
    return table[LEADERBOARD_COLUMNS].reset_index(drop=True)


@dataclass(frozen=True)
class Finding:
    dimension: str
    category: str
    issue_type: str
    severity: str
    affected_ratio: float

    def __post_init__(self) -> None:
        if self.dimension not in DIMENSION_MAXIMA:
            raise ValueError(f"unknown dimension {self.dimension!r}; expected one of {sorted(DIMENSION_MAXIMA)}")
        if self.severity not in SEVERITY_WEIGHT:
            raise ValueError(f"unknown severity {self.severity!r}; expected one of {list(SEVERITIES)}")
        if not 0.0 <= float(self.affected_ratio) <= 1.0:
            raise ValueError(f"affected_ratio must be in [0, 1], got {self.affected_ratio!r}")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dimension, self.category, self.issue_type)


@dataclass(frozen=True)
class RoundResult:
    """One judge round: whether a (process-semantics or rendering) gate fired, and its findings."""
    gated: bool
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class MergedFinding:
    dimension: str
    category: str
    issue_type: str
    severity: str
    affected_ratio: float  # the largest over the rounds reporting it
    rounds: int  # how many non-gated rounds reported it
    penalty: float

    @property
    def single_round(self) -> bool:
        return self.rounds == 1


@dataclass(frozen=True)
class MergedScore:
    majority_gate: bool
    gate_count: int
    layout_score: float
    text_score: float
    local_graphics_score: float
    total_score: float
    findings: tuple[MergedFinding, ...] = field(default=())

    @property
    def issue_count(self) -> int:
        return len(self.findings)

    @property
    def single_round_issue_count(self) -> int:
        return sum(f.single_round for f in self.findings)


_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


def merge_rounds(rounds: Sequence[RoundResult]) -> MergedScore:
    """Merge independent judge rounds into one PPTBench-style score.

    A gate firing in ≥ MAJORITY_GATE_ROUNDS rounds zeroes every score (no findings kept).
    Otherwise the findings of the non-gated rounds are united by (dimension, category,
    issue_type): the largest affected ratio is kept (with its severity; if a round reports the
    same key with a different severity at the same ratio, the more severe one), and the number of
    rounds reporting it is counted. Penalty = SEVERITY_WEIGHT[severity] × ratio, subtracted from
    the dimension's maximum, clipped at 0 per dimension; total = sum of the three dimensions.
    """
    if not rounds:
        raise ValueError("merge_rounds needs at least one round")
    gate_count = sum(bool(r.gated) for r in rounds)
    if gate_count >= MAJORITY_GATE_ROUNDS:
        return MergedScore(True, gate_count, 0.0, 0.0, 0.0, 0.0, ())

    best: dict[tuple[str, str, str], Finding] = {}
    seen_in: dict[tuple[str, str, str], int] = {}
    for rnd in rounds:
        if rnd.gated:
            continue
        keys_this_round = set()
        for f in rnd.findings:
            keys_this_round.add(f.key)
            cur = best.get(f.key)
            if cur is None or (f.affected_ratio, _SEVERITY_RANK[f.severity]) > (
                    cur.affected_ratio, _SEVERITY_RANK[cur.severity]):
                best[f.key] = f
        for k in keys_this_round:
            seen_in[k] = seen_in.get(k, 0) + 1

    merged = tuple(
        MergedFinding(f.dimension, f.category, f.issue_type, f.severity, float(f.affected_ratio),
                      seen_in[k], SEVERITY_WEIGHT[f.severity] * float(f.affected_ratio))
        for k, f in sorted(best.items())
    )
    points = {}
    for dim, maximum in DIMENSION_MAXIMA.items():
        deducted = sum(m.penalty for m in merged if m.dimension == dim)
        points[dim] = max(0.0, maximum - deducted)
    layout = points["layout_and_composition"]
    text = points["text_and_typography"]
    local = points["local_graphics_and_nodes"]
    return MergedScore(False, gate_count, layout, text, local, layout + text + local, merged)


__all__ = [
    "LEADERBOARD_COLUMNS", "DIMENSION_MAXIMA", "SEVERITY_WEIGHT", "MAJORITY_GATE_ROUNDS",
    "leaderboard", "Finding", "RoundResult", "MergedFinding", "MergedScore", "merge_rounds",
]
