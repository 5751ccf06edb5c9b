"""bt_elo.stability on simulated studies with known strengths. Pure tests: no database.

Known answers come from the true simulation parameters, hand-derived formulas, choix fits and
independent simulation loops written here — never from the code under test.
"""

import math

import choix
import numpy as np
import pandas as pd
import pytest

from bt_elo.bradley_terry import ELO_SCALE, bootstrap_elo
from bt_elo.stability import (
    ELO_ADJACENT_COLUMNS,
    ELO_STABILITY_COLUMNS,
    PLAN_COLUMNS,
    PRIORITY_COLUMNS,
    _component_pinv,
    elo_adjacent,
    elo_stability,
    next_pairs_adaptive,
    plan_study,
    votes_to_separate,
)
from scoring.stability import STABILITY_COLUMNS


def simulate(rng, beta, *, figures, votes, tie_share=0.0, figure_sd=0.0):
    """Votes over figures (each at least once when votes ≥ figures); figure effects N(0, figure_sd²)."""
    k = len(beta)
    names = np.array([f"c{i}" for i in range(k)])
    effect = rng.normal(0.0, figure_sd, size=(figures, k))
    task = np.concatenate([np.arange(figures), rng.integers(0, figures, size=votes - figures)])
    i = rng.integers(0, k, size=votes)
    j = (i + rng.integers(1, k, size=votes)) % k
    diff = beta[i] - beta[j] + effect[task, i] - effect[task, j]
    u = rng.random(votes)
    p_a = (1.0 - tie_share) / (1.0 + np.exp(-diff))
    outcome = np.where(u < p_a, "a", np.where(u < 1.0 - tie_share, "b", "tie_success"))
    return pd.DataFrame({"task_id": task, "config_a": names[i], "config_b": names[j], "outcome": outcome})


# ------------------------------------------------------------------------------ adjacent pairs


def test_difference_intervals_cover_the_true_gap_about_95_percent():
    # No ties and no figure effects: the data are exactly Bradley–Terry, so the true Elo gap of
    # every pair is ELO_SCALE · (β_u − β_l).
    beta = np.array([0.6, 0.25, -0.1, -0.75])
    rng = np.random.default_rng(2024)
    covered = total = 0
    for study in range(50):
        comparisons = simulate(rng, beta, figures=150, votes=500)
        table = elo_adjacent(comparisons, resamples=300, seed=study)
        assert list(table.columns) == ELO_ADJACENT_COLUMNS
        index = table["upper"].str[1].astype(int), table["lower"].str[1].astype(int)
        truth = ELO_SCALE * (beta[index[0].to_numpy()] - beta[index[1].to_numpy()])
        covered += int(((table["difference_ci_low"] <= truth) & (truth <= table["difference_ci_high"])).sum())
        total += len(table)
    coverage = covered / total
    assert 0.89 <= coverage <= 0.99, coverage


def test_flip_probability_matches_a_direct_bootstrap_loop_with_choix():
    beta = np.array([0.3, 0.15, -0.45])
    rng = np.random.default_rng(7)
    comparisons = simulate(rng, beta, figures=120, votes=360, tie_share=0.3, figure_sd=0.5)
    table = elo_adjacent(comparisons, resamples=2000, seed=1)

    # Direct: resample figures with our own stream, refit each resample with choix, count reversals.
    names = ["c0", "c1", "c2"]
    figures = np.sort(comparisons["task_id"].unique())
    by_figure = {f: g for f, g in comparisons.groupby("task_id")}
    loop_rng = np.random.default_rng(99)
    flips = np.zeros(len(table))
    loops = 600
    for _ in range(loops):
        sample = pd.concat([by_figure[f] for f in loop_rng.choice(figures, size=len(figures))])
        w = np.zeros((3, 3))
        for a, b, outcome in sample[["config_a", "config_b", "outcome"]].itertuples(index=False):
            ia, ib = names.index(a), names.index(b)
            credit = {"a": 1.0, "b": 0.0}.get(outcome, 0.5)
            w[ia, ib] += credit
            w[ib, ia] += 1.0 - credit
        strength = choix.ilsr_pairwise_dense(w, alpha=1e-3)  # alpha only guards a rare disconnected draw
        for n, (upper, lower) in enumerate(zip(table["upper"], table["lower"])):
            flips[n] += strength[names.index(lower)] > strength[names.index(upper)]
    direct = flips / loops
    # Monte Carlo: sd ≤ 0.02 for 600 loops; the table's own 2,000 draws add ≤ 0.011.
    np.testing.assert_allclose(table["rank_flip_probability"], direct, atol=0.07)
    assert (table["rank_flip_probability"] > 0.02).any()  # the example is not trivially separated


def test_votes_to_separate_reduces_to_the_direct_rule_for_two_configurations():
    # Two configurations: all information is direct, v0 = 1 / (n_pair · w), so the projection is
    # n_pair · (h / gap)² − n_pair rounded up.
    rng = np.random.default_rng(3)
    comparisons = simulate(rng, np.array([0.08, -0.08]), figures=80, votes=120, tie_share=0.3)
    row = elo_adjacent(comparisons, resamples=500, seed=4).iloc[0]
    n_pair = len(comparisons)
    half = (row["difference_ci_high"] - row["difference_ci_low"]) / 2
    assert row["pair_votes"] == n_pair
    if row["difference_ci_low"] > 0:
        assert row["votes_to_separate"] == 0
    else:
        assert row["votes_to_separate"] == pytest.approx(
            math.ceil(n_pair * (half / row["elo_gap"]) ** 2 - n_pair), abs=1
        )


def test_votes_to_separate_edge_cases():
    assert votes_to_separate(elo_gap=30.0, half_width=20.0, information_per_vote=0.25, difference_variance=0.01) == 0
    assert (
        votes_to_separate(elo_gap=0.0, half_width=20.0, information_per_vote=0.25, difference_variance=0.01) == math.inf
    )
    # h = 2 · gap ⇒ (h/gap)² − 1 = 3 ⇒ n = 3 / (0.25 · 0.04) = 300.
    assert votes_to_separate(elo_gap=10.0, half_width=20.0, information_per_vote=0.25, difference_variance=0.04) == 300


# ------------------------------------------------------------------------------ stability by fraction


def test_elo_stability_full_fraction_matches_the_elo_bootstrap_and_grows_with_fraction():
    rng = np.random.default_rng(11)
    beta = np.linspace(0.6, -0.6, 5)
    comparisons = simulate(rng, beta, figures=200, votes=700, tie_share=0.3, figure_sd=0.5)
    table = elo_stability(comparisons, fractions=(1.0, 0.1, 0.5), resamples=300, seed=5)
    assert list(table.columns) == ELO_STABILITY_COLUMNS and ELO_STABILITY_COLUMNS[:10] == STABILITY_COLUMNS
    assert list(table["sample_size"]) == [200, 20, 100]
    # Fraction 1.0 drawn first is the ordinary cluster bootstrap with the same seed.
    boot = bootstrap_elo(comparisons, resamples=300, seed=5)
    assert table["mean_model_ci_width"].iloc[0] == pytest.approx(np.mean(boot.ci_high - boot.ci_low))
    # Fewer figures: wider intervals and less agreement with the full ranking.
    by_size = table.set_index("sample_size")
    assert (
        by_size.loc[20, "mean_model_ci_width"]
        > by_size.loc[100, "mean_model_ci_width"]
        > by_size.loc[200, "mean_model_ci_width"]
    )
    assert by_size.loc[20, "kendall_tau_mean"] < by_size.loc[200, "kendall_tau_mean"]


# ------------------------------------------------------------------------------ planner


def direct_swap_probability(rng, elo, *, per_pair, tie_rate, studies):
    """Independent simulation: round-robin votes, ties at tie_rate, choix fit; share of swaps."""
    beta = np.asarray(elo) / ELO_SCALE
    k = len(beta)
    swaps = np.zeros(k - 1)
    for _ in range(studies):
        w = np.zeros((k, k))
        for i in range(k):
            for j in range(i + 1, k):
                tie = rng.random(per_pair) < tie_rate
                win = rng.random(per_pair) < 1.0 / (1.0 + math.exp(-(beta[i] - beta[j])))
                credit = np.where(tie, 0.5, win.astype(float)).sum()
                w[i, j] += credit
                w[j, i] += per_pair - credit
        strength = choix.ilsr_pairwise_dense(w, alpha=1e-3)
        swaps += strength[1:] > strength[:-1]
    return swaps / studies


def test_planner_swap_probabilities_match_a_direct_simulation():
    plan = plan_study(
        configurations=3,
        figures=300,
        strength_spread=80.0,
        tie_rate=0.3,
        cluster_sd=0.0,
        budgets=(300,),
        simulations=800,
        seed=3,
    )
    assert list(plan.summary.columns) == PLAN_COLUMNS
    np.testing.assert_allclose(plan.true_elo, [40.0, 0.0, -40.0])
    direct = direct_swap_probability(np.random.default_rng(8), plan.true_elo, per_pair=100, tie_rate=0.3, studies=800)
    # Two binomial estimates near 0.2: sd of the difference ≈ 0.02.
    np.testing.assert_allclose(plan.swaps["swap_probability"], direct, atol=0.07)
    assert (direct > 0.05).all()


def test_planner_analytic_interval_matches_the_spread_of_fitted_elo_under_clustering():
    plan = plan_study(
        configurations=5,
        figures=200,
        strength_spread=200.0,
        tie_rate=0.3,
        cluster_sd=120.0,
        budgets=(800,),
        simulations=300,
        seed=4,
    )
    row = plan.summary.iloc[0]
    assert row["mean_ci_half_width"] == pytest.approx(row["empirical_ci_half_width"], rel=0.15)


def test_planner_is_monotone_in_budget():
    plan = plan_study(
        configurations=6,
        figures=300,
        strength_spread=240.0,
        tie_rate=0.3,
        cluster_sd=100.0,
        budgets=(450, 900, 1800, 3600),
        simulations=80,
        seed=6,
    )
    summary = plan.summary
    assert summary["mean_ci_half_width"].is_monotonic_decreasing
    assert summary["empirical_ci_half_width"].is_monotonic_decreasing
    assert summary["kendall_tau_mean"].is_monotonic_increasing
    assert summary["order_recovered_probability"].iloc[-1] > summary["order_recovered_probability"].iloc[0]
    swaps = plan.swaps.groupby("budget")["swap_probability"].mean()
    assert swaps.iloc[-1] < swaps.iloc[0]
    # Half-width ∝ 1/√budget: quadrupling the votes roughly halves it.
    ratio = summary["mean_ci_half_width"].iloc[0] / summary["mean_ci_half_width"].iloc[2]
    assert 1.7 < ratio < 2.3


def test_adaptive_planner_beats_coverage_on_order_recovery():
    common = {
        "configurations": 6,
        "figures": 400,
        "strength_spread": 150.0,
        "tie_rate": 0.3,
        "cluster_sd": 80.0,
        "budgets": (2000,),
        "simulations": 80,
        "seed": 2,
        "floor": 5,
    }
    coverage = plan_study(allocation="coverage", **common).summary.iloc[0]
    adaptive = plan_study(allocation="adaptive", **common).summary.iloc[0]
    assert adaptive["order_recovered_probability"] > coverage["order_recovered_probability"]


# ------------------------------------------------------------------------------ adaptive order


def test_adaptive_order_serves_below_floor_pairs_first_then_close_uncertain_pairs():
    names = ["A", "B", "C", "D"]
    elo = np.array([1120.0, 1110.0, 1000.0, 770.0])
    draws = elo + np.random.default_rng(0).normal(0.0, 30.0, size=(4000, 4))
    votes = np.array(
        [
            [0, 40, 3, 30],
            [40, 0, 30, 30],
            [3, 30, 0, 8],
            [30, 30, 8, 0],
        ]
    )
    table = next_pairs_adaptive(configurations=names, pair_votes=votes, floor=10, elo=elo, elo_draws=draws, batch=20)
    assert list(table.columns) == PRIORITY_COLUMNS
    pairs = list(zip(table["upper"], table["lower"]))
    # Below the floor, fewest votes first: A–C (3) then C–D (8).
    assert pairs[:2] == [("A", "C"), ("C", "D")]
    assert list(table["below_floor"]) == [True, True, False, False, False, False]
    # Then the close pair A–B (10 Elo apart) before anything far apart.
    assert pairs[2] == ("A", "B")
    assert table["flip_probability"].iloc[2] > 0.3
    assert table.loc[table["upper"].eq("A") & table["lower"].eq("D"), "flip_probability"].item() == 0.0
    # The batch first fills the deficits (7 + 2), then goes mostly to A–B.
    allocated = dict(zip(pairs, table["next_votes"]))
    assert allocated[("A", "C")] == 7 and allocated[("C", "D")] == 2
    assert sum(allocated.values()) == 20
    assert allocated[("A", "B")] == max(v for p, v in allocated.items() if p not in {("A", "C"), ("C", "D")})
    assert allocated[("A", "D")] == 0


def test_elo_adjacent_with_a_configuration_without_votes_states_the_unlinked_groups():
    """A third configuration no vote mentions: the table still answers; its neighbour row has no votes-to-separate
    (no chain of votes links the two), the linked pair keeps a number, and a note says why."""
    rng = np.random.default_rng(3)
    comparisons = simulate(rng, np.array([0.4, 0.0]), figures=12, votes=40)
    table = elo_adjacent(comparisons, configurations=["c0", "c1", "idle"], resamples=60, seed=1)
    assert len(table) == 2
    touching = table[(table["upper"] == "idle") | (table["lower"] == "idle")]
    for needed in touching["votes_to_separate"]:
        assert math.isnan(needed) or needed == 0.0  # unknown, or already separated by the bootstrap
    assert "not linked by any chain of votes" in table.attrs["notes"][0]


def test_component_pseudo_inverse_by_hand():
    """Two configurations with information w between them and a third with none: within the pair the pseudo-inverse of
    [[w, −w], [−w, w]] is [[1, −1], [−1, 1]] / 4w; between the pair and the third it is unknown."""
    w = 2.5
    lap = np.array([[w, -w, 0.0], [-w, w, 0.0], [0.0, 0.0, 0.0]])
    inverse = _component_pinv(lap)
    np.testing.assert_allclose(inverse[:2, :2], np.array([[1.0, -1.0], [-1.0, 1.0]]) / (4 * w))
    assert np.isnan(inverse[0, 2]) and np.isnan(inverse[2, 1])
    assert inverse[2, 2] == 0.0  # a lone configuration: the gauge fixes it


def test_votes_to_separate_is_unknown_without_a_chain_of_votes():
    assert math.isnan(
        votes_to_separate(elo_gap=30.0, half_width=80.0, information_per_vote=0.25, difference_variance=math.nan)
    )
