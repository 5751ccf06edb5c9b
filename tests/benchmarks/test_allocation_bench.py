"""Benchmark: votes needed by coverage vs adaptive pair allocation (issue 16).

Not collected by default (``norecursedirs``); run it explicitly:

    .venv/bin/pytest tests/benchmarks/test_allocation_bench.py -q -s

Paper-scale simulated studies (bt_elo.stability.plan_study): 10 configurations, 1,000 source
figures, 30 % ties (ReFigBench: 4,270 valid annotations of which 2,990 decisive, REFERENCE 5/7),
per-figure random effects of 100 Elo sd, true Elo equally spaced over 300 points (an assumption:
the paper's Elo values are not in REFERENCE). Coverage deals all 45 pairs round-robin; adaptive
casts the 20-vote floor per pair (the sparse-pair threshold) and then spends each round with
next_pairs_adaptive's greedy rule.

Targets are what coverage reaches at the paper's 4,270 votes: its mean analytic 95 % CI
half-width and its probability of recovering the true order. For each allocation the votes
needed to reach each target are read off a budget grid (linear interpolation between grid
points; "> max" when never reached). Runtime is bounded (~1–2 minutes on 2 cores).
"""

import time

import numpy as np
import pandas as pd

from bt_elo.stability import plan_study
from corpus.protocol import PAPER_TIE_RATE, PAPER_VOTES, SPARSE_PAIR_THRESHOLD

STUDY = {
    "configurations": 10,
    "figures": 1000,
    "strength_spread": 300.0,
    "tie_rate": PAPER_TIE_RATE,  # ReFigBench: 4,270 valid annotations, 2,990 decisive
    "cluster_sd": 100.0,
    "simulations": 200,
    "seed": 20260816,
    "floor": SPARSE_PAIR_THRESHOLD,
}
BUDGETS = (1000, 1500, 2000, 3000, PAPER_VOTES, 6000, 8500, 12000, 16000)


def votes_to_reach(summary: pd.DataFrame, column: str, target: float, *, lower_is_better: bool) -> float:
    """First budget at which ``column`` reaches ``target``, interpolated linearly; inf if never."""
    budgets = summary["budget"].to_numpy(float)
    values = summary[column].to_numpy(float)
    reached = values <= target if lower_is_better else values >= target
    if not reached.any():
        return float("inf")
    first = int(np.argmax(reached))
    if first == 0:
        return budgets[0]
    b0, b1, v0, v1 = budgets[first - 1], budgets[first], values[first - 1], values[first]
    return float(b0 + (target - v0) * (b1 - b0) / (v1 - v0)) if v1 != v0 else b1


def test_adaptive_vs_coverage_votes_to_equal_precision_and_order():
    plans = {}
    for allocation in ("coverage", "adaptive"):
        start = time.perf_counter()
        plans[allocation] = plan_study(budgets=BUDGETS, allocation=allocation, **STUDY)
        print(f"\n{allocation}: {time.perf_counter() - start:.1f} s for {STUDY['simulations']} studies")
    summary = pd.concat([plan.summary for plan in plans.values()], ignore_index=True)
    with pd.option_context("display.width", 160, "display.precision", 3):
        print(summary.to_string(index=False))

    at_paper = plans["coverage"].summary.set_index("budget").loc[PAPER_VOTES]
    half_width_target = at_paper["mean_ci_half_width"]
    order_target = at_paper["order_recovered_probability"]
    print(
        f"\ntargets (coverage at {PAPER_VOTES} votes): mean CI half-width {half_width_target:.2f} Elo, "
        f"P(true order) {order_target:.3f}"
    )
    needs = {}
    for allocation, plan in plans.items():
        needs[allocation] = (
            votes_to_reach(plan.summary, "mean_ci_half_width", half_width_target, lower_is_better=True),
            votes_to_reach(plan.summary, "order_recovered_probability", order_target, lower_is_better=False),
        )
        print(
            f"{allocation:>9}: {needs[allocation][0]:8.0f} votes to the CI target, {needs[allocation][1]:8.0f} to the order target"
        )
    ratio_ci = needs["coverage"][0] / needs["adaptive"][0]
    ratio_order = needs["coverage"][1] / needs["adaptive"][1]
    print(f"ratio coverage / adaptive: CI half-width {ratio_ci:.2f}, P(true order) {ratio_order:.2f}")

    swaps = pd.concat([plan.swaps for plan in plans.values()])
    swaps = swaps[swaps["budget"] == PAPER_VOTES].pivot(
        index=["upper", "lower"], columns="allocation", values="swap_probability"
    )
    print(f"\nadjacent swap probability at {PAPER_VOTES} votes:\n{swaps.to_string()}")

    assert needs["coverage"][0] == PAPER_VOTES  # the target is coverage's own grid point
    assert needs["adaptive"][1] < needs["coverage"][1]  # adaptive spends its votes on the order
