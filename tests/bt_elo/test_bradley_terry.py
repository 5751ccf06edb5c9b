"""Bradley–Terry Elo (REFERENCE 6). Pure tests: no database.

Known answers come from hand calculation or from choix called directly, never from the code under
test.
"""

import math

import choix
import numpy as np
import pandas as pd
import pytest

from bt_elo import bradley_terry as bt
from bt_elo.bradley_terry import (
    bootstrap_elo,
    elo_from_beta,
    fit_bradley_terry,
    record_table,
    win_matrix,
)
from corpus.protocol import ELO_BOOTSTRAP_RESAMPLES, ELO_BOOTSTRAP_SEED

COLUMNS = ["task_id", "config_a", "config_b", "outcome"]


def frame(rows):
    """rows: (task_id, config_a, config_b, outcome, times)."""
    out = []
    for task, a, b, outcome, times in rows:
        out.extend([(task, a, b, outcome)] * times)
    return pd.DataFrame(out, columns=COLUMNS)


def simulate_study(rng, strengths, *, figures=990, votes=4270, tie_share=0.3, figure_sd=1.0):
    """Votes over figures; each figure shifts every configuration by its own N(0, figure_sd²) effect."""
    k = len(strengths)
    names = np.array([f"cfg{i:02d}" for i in range(k)])
    effect = rng.normal(0.0, figure_sd, size=(figures, k))
    task = np.concatenate([np.arange(figures), rng.integers(0, figures, size=votes - figures)])
    i = rng.integers(0, k, size=votes)
    j = (i + rng.integers(1, k, size=votes)) % k
    diff = strengths[i] - strengths[j] + effect[task, i] - effect[task, j]
    u = rng.random(votes)
    p_a = (1.0 - tie_share) / (1.0 + np.exp(-diff))
    tie_kind = np.where(rng.random(votes) < 0.5, "tie_success", "tie_failure")
    outcome = np.where(u < p_a, "a", np.where(u < 1.0 - tie_share, "b", tie_kind))
    return pd.DataFrame({"task_id": task, "config_a": names[i], "config_b": names[j], "outcome": outcome})


def doubled_votes(comparisons, configurations):
    """choix pairwise list: a decisive vote twice (winner, loser), a tie once each way."""
    index = {c: n for n, c in enumerate(configurations)}
    data = []
    for a, b, outcome in zip(comparisons["config_a"], comparisons["config_b"], comparisons["outcome"]):
        a, b = index[a], index[b]
        if outcome == "a":
            data += [(a, b), (a, b)]
        elif outcome == "b":
            data += [(b, a), (b, a)]
        else:
            data += [(a, b), (b, a)]
    return data


# ------------------------------------------------------------------------------ hand-solved


def test_two_configurations_closed_form():
    # A beats B 3 times, B beats A once: p = 3/4 = sigmoid(beta_A - beta_B) ⇒ diff = ln 3.
    # Elo diff = 400·log10(3) = 190.84850188786497, split ±95.42425094393249 around 1000.
    comparisons = frame([(1, "A", "B", "a", 2), (2, "B", "A", "b", 1), (3, "A", "B", "b", 1)])
    ratings = fit_bradley_terry(comparisons)
    assert ratings.configurations == ("A", "B")
    assert ratings.regularisation == "none"
    np.testing.assert_allclose(ratings.elo, [1095.42425094393249, 904.57574905606751], atol=1e-6)
    np.testing.assert_allclose(ratings.beta, [math.log(3) / 2, -math.log(3) / 2], atol=1e-9)


def test_symmetric_cycle_gives_equal_strengths():
    # A>B, B>C, C>A twice each and the reverse once each: every configuration has the same record
    # against the same opponents, so by symmetry all betas are equal and every Elo is 1000.
    comparisons = frame(
        [
            (1, "A", "B", "a", 2), (1, "A", "B", "b", 1),
            (2, "B", "C", "a", 2), (2, "B", "C", "b", 1),
            (3, "C", "A", "a", 2), (3, "C", "A", "b", 1),
        ]
    )  # fmt: skip
    ratings = fit_bradley_terry(comparisons)
    np.testing.assert_allclose(ratings.elo, [1000.0, 1000.0, 1000.0], atol=1e-6)


def test_three_configuration_chain_closed_form():
    # A–B: A wins 2, B wins 1; B–C: B wins 3, C wins 1; A and C never meet. On a tree the
    # likelihood factorises per edge, so beta_A − beta_B = ln 2 and beta_B − beta_C = ln 3.
    # In Elo: A − B = 400·log10 2 = 120.41199826559248, B − C = 400·log10 3 = 190.84850188786497.
    # Mean 1000 ⇒ B = 1000 + (190.84850188786497 − 120.41199826559248)/3 = 1023.4788345407575,
    # A = 1143.8908328063500, C = 832.6303326528925.
    comparisons = frame([(1, "A", "B", "a", 2), (2, "B", "A", "a", 1), (3, "C", "B", "b", 3), (4, "B", "C", "b", 1)])
    ratings = fit_bradley_terry(comparisons)
    np.testing.assert_allclose(ratings.elo, [1143.8908328063500, 1023.4788345407575, 832.6303326528925], atol=1e-6)
    # Never-compared A–C is reported, but the graph is strongly connected, so the MLE is exact.
    assert ratings.diagnostics.never_compared == (("A", "C"),)
    assert ratings.diagnostics.connected
    assert ratings.regularisation == "none"


def test_elo_from_beta_formula():
    # 1000 + 400/ln10 · (beta − mean): beta (0, ln 10) ⇒ ±200.
    np.testing.assert_allclose(elo_from_beta([0.0, math.log(10)]), [800.0, 1200.0])


# ------------------------------------------------------------------------------ counting


def test_win_matrix_and_record_table():
    comparisons = frame(
        [
            (1, "A", "B", "a", 2),
            (1, "B", "A", "a", 1),
            (2, "A", "C", "tie_success", 1),
            (3, "C", "A", "tie_failure", 2),
        ]
    )
    w = win_matrix(comparisons, ("A", "B", "C"))
    # A over B: 2; B over A: 1; A–C: three ties ⇒ 1.5 each way.
    np.testing.assert_array_equal(w, [[0, 2, 1.5], [1, 0, 0], [1.5, 0, 0]])
    table = record_table(comparisons).set_index("configuration")
    assert table.loc["A"].to_dict() == {"wins": 2, "losses": 1, "ties": 3, "ties_success": 1, "ties_failure": 2, "n": 6}
    assert table.loc["C"].to_dict() == {"wins": 0, "losses": 0, "ties": 3, "ties_success": 1, "ties_failure": 2, "n": 3}
    assert list(table.columns) == ["wins", "losses", "ties", "ties_success", "ties_failure", "n"]


def test_a_tie_is_half_a_win():
    base = frame([(1, "A", "B", "a", 3), (2, "B", "C", "a", 2), (3, "C", "A", "a", 1), (4, "A", "C", "a", 1)])
    with_ties = pd.concat([base, frame([(5, "A", "B", "tie_success", 1), (6, "B", "A", "tie_failure", 1)])])
    with_split = pd.concat([base, frame([(5, "A", "B", "a", 1), (6, "A", "B", "b", 1)])])
    # Two ties on a pair = one win each way.
    np.testing.assert_allclose(fit_bradley_terry(with_ties).elo, fit_bradley_terry(with_split).elo, atol=1e-9)
    # "drop" ignores ties altogether.
    np.testing.assert_allclose(fit_bradley_terry(with_ties, ties="drop").elo, fit_bradley_terry(base).elo, atol=1e-9)


def test_order_invariance():
    rng = np.random.default_rng(3)
    comparisons = simulate_study(rng, np.linspace(-1, 1, 6), figures=120, votes=500)
    swapped = comparisons.assign(
        config_a=comparisons["config_b"],
        config_b=comparisons["config_a"],
        outcome=comparisons["outcome"].replace({"a": "b", "b": "a"}),
    )
    np.testing.assert_allclose(fit_bradley_terry(swapped).elo, fit_bradley_terry(comparisons).elo, atol=1e-9)
    first = bootstrap_elo(comparisons, resamples=50, seed=1)
    second = bootstrap_elo(swapped, resamples=50, seed=1)
    np.testing.assert_allclose(first.samples, second.samples, atol=1e-8)


def test_validation():
    with pytest.raises(ValueError, match="unknown outcomes"):
        fit_bradley_terry(frame([(1, "A", "B", "left", 1)]))
    with pytest.raises(ValueError, match="against itself"):
        fit_bradley_terry(frame([(1, "A", "A", "a", 1)]))
    with pytest.raises(ValueError, match="not listed"):
        fit_bradley_terry(frame([(1, "A", "B", "a", 1)]), configurations=["A"])
    with pytest.raises(ValueError, match="ties"):
        fit_bradley_terry(frame([(1, "A", "B", "a", 1)]), ties="ignore")


# ------------------------------------------------------------------------------ against choix


def test_point_estimate_matches_choix_on_doubled_votes():
    rng = np.random.default_rng(11)
    comparisons = simulate_study(rng, np.linspace(-0.8, 0.8, 10), figures=300, votes=1300)
    ratings = fit_bradley_terry(comparisons)
    reference = choix.ilsr_pairwise(10, doubled_votes(comparisons, ratings.configurations), tol=1e-13, max_iter=10_000)
    np.testing.assert_allclose(ratings.elo, elo_from_beta(reference), atol=1e-6)


@pytest.mark.parametrize("undefeated", [False, True])
def test_batched_newton_matches_choix(undefeated):
    rng = np.random.default_rng(5)
    comparisons = simulate_study(rng, np.linspace(-1, 1, 8), figures=200, votes=900)
    if undefeated:  # cfg07 never loses: choix's alpha prior on both sides.
        loses = ((comparisons.config_a == "cfg07") & (comparisons.outcome != "a")) | (
            (comparisons.config_b == "cfg07") & (comparisons.outcome != "b")
        )
        comparisons = comparisons[~loses]
    configurations = bt._configurations(comparisons, None)
    per_figure = bt.figure_win_matrices(comparisons, configurations)
    everything_once = np.ones((1, per_figure.shape[0]), dtype=int)
    batched, regularised = bt._bootstrap_from_figures(per_figure, everything_once)
    alpha = bt.REGULARISATION_ALPHA if undefeated else 0.0
    reference = choix.ilsr_pairwise_dense(
        bt.win_matrix(comparisons, configurations), alpha=alpha, tol=1e-13, max_iter=100_000
    )
    np.testing.assert_allclose(batched[0], elo_from_beta(reference), atol=1e-6)
    np.testing.assert_allclose(batched[0], fit_bradley_terry(comparisons).elo, atol=1e-6)
    assert regularised == int(undefeated)


# ------------------------------------------------------------------------------ recovery


def test_recovers_known_strengths():
    rng = np.random.default_rng(2026)
    strengths = np.array([-1.2, -0.4, 0.0, 0.5, 1.1])
    k, votes = len(strengths), 40_000
    i = rng.integers(0, k, size=votes)
    j = (i + rng.integers(1, k, size=votes)) % k
    a_wins = rng.random(votes) < 1.0 / (1.0 + np.exp(-(strengths[i] - strengths[j])))
    names = np.array(list("VWXYZ"))
    comparisons = pd.DataFrame(
        {"task_id": np.arange(votes), "config_a": names[i], "config_b": names[j], "outcome": np.where(a_wins, "a", "b")}
    )
    ratings = fit_bradley_terry(comparisons)
    # Standard error per Elo here is about 3; 15 Elo is a loose but meaningful band.
    np.testing.assert_allclose(ratings.elo, elo_from_beta(strengths), atol=15)


# ------------------------------------------------------------------------------ not strongly connected


def test_undefeated_configuration_is_regularised_and_finite():
    comparisons = frame([(1, "A", "B", "a", 5), (2, "C", "A", "b", 4), (3, "B", "C", "a", 3), (4, "C", "B", "a", 2)])
    ratings = fit_bradley_terry(comparisons)
    assert not ratings.diagnostics.connected
    assert ratings.diagnostics.undefeated == ("A",)
    assert ratings.diagnostics.winless == ()
    assert ratings.regularisation.startswith("choix alpha=0.001")
    assert "A undefeated" in ratings.regularisation
    assert np.all(np.isfinite(ratings.elo))
    assert ratings.elo[0] == ratings.elo.max()
    assert ratings.elo.mean() == pytest.approx(1000.0)


def test_never_compared_pair_that_disconnects_and_winless():
    # C only ever meets A and never wins: C is winless, B–C never compared.
    comparisons = frame([(1, "A", "B", "a", 2), (2, "A", "B", "b", 1), (3, "A", "C", "a", 3)])
    ratings = fit_bradley_terry(comparisons)
    assert ratings.diagnostics.winless == ("C",)
    assert ("B", "C") in ratings.diagnostics.never_compared
    assert ratings.regularisation != "none"
    assert np.all(np.isfinite(ratings.elo))
    assert ratings.elo[2] == ratings.elo.min()


def test_two_components():
    comparisons = frame(
        [(1, "A", "B", "a", 2), (1, "A", "B", "b", 1), (2, "C", "D", "a", 1), (2, "C", "D", "tie_success", 1)]
    )
    ratings = fit_bradley_terry(comparisons)
    assert ratings.diagnostics.components == (("A", "B"), ("C", "D"))
    assert "2 strong components" in ratings.regularisation
    assert np.all(np.isfinite(ratings.elo))
    result = bootstrap_elo(comparisons, resamples=40, seed=3)
    assert np.all(np.isfinite(result.samples))
    assert result.regularised_resamples == 40


def test_configuration_without_comparisons():
    comparisons = frame([(1, "A", "B", "a", 2), (1, "A", "B", "b", 1)])
    ratings = fit_bradley_terry(comparisons, configurations=["A", "B", "Z"])
    assert ratings.regularisation != "none"
    assert np.all(np.isfinite(ratings.elo))
    assert ratings.as_dict()["diagnostics"]["never_compared"] == [["A", "Z"], ["B", "Z"]]


# ------------------------------------------------------------------------------ bootstrap


def test_bootstrap_defaults_and_reproducibility():
    rng = np.random.default_rng(8)
    comparisons = simulate_study(rng, np.linspace(-1, 1, 5), figures=150, votes=600)
    first = bootstrap_elo(comparisons, resamples=200)
    again = bootstrap_elo(comparisons, resamples=200)
    other = bootstrap_elo(comparisons, resamples=200, seed=ELO_BOOTSTRAP_SEED + 1)
    assert first.seed == ELO_BOOTSTRAP_SEED == 20260720 and ELO_BOOTSTRAP_RESAMPLES == 2000
    np.testing.assert_array_equal(first.samples, again.samples)
    assert not np.allclose(first.samples, other.samples)
    assert first.samples.shape == (200, 5)
    np.testing.assert_allclose(first.samples.mean(axis=1), 1000.0)
    np.testing.assert_array_equal(first.ci_low, np.percentile(first.samples, 2.5, axis=0))
    assert np.all(first.ci_low < first.ratings.elo) and np.all(first.ratings.elo < first.ci_high)
    np.testing.assert_allclose(first.rank_probabilities.sum(axis=0), 1.0)
    np.testing.assert_allclose(first.rank_probabilities.sum(axis=1), 1.0)
    # cfg04 is strongest: mostly rank 1.
    assert first.rank_probabilities[4, 0] > 0.5


def test_bootstrap_resamples_whole_figures():
    # Every figure holds one A-win and one B-win of the same pair; any figure resample keeps the
    # record balanced, so every replicate is exactly 1000 / 1000.
    comparisons = frame([(t, "A", "B", o, 1) for t in range(30) for o in ("a", "b")])
    result = bootstrap_elo(comparisons, resamples=100, seed=4)
    np.testing.assert_allclose(result.samples, 1000.0, atol=1e-9)


def test_ci_coverage_with_clustered_figure_effects():
    strengths = np.linspace(-0.9, 0.9, 10)
    # Estimand: the tie-as-half-win BT fit on the population; approximate it by a huge study
    # drawn from the same process (figure effects attenuate and ties dilute the raw strengths).
    truth = fit_bradley_terry(simulate_study(np.random.default_rng(0), strengths, figures=100_000, votes=430_000)).elo
    rng = np.random.default_rng(1)
    covered = []
    for _ in range(40):
        study = simulate_study(rng, strengths)
        result = bootstrap_elo(study, resamples=300, seed=int(rng.integers(1 << 31)))
        covered.append((result.ci_low <= truth) & (truth <= result.ci_high))
    coverage = float(np.mean(covered))
    print(f"\n95% cluster-bootstrap CI coverage over 40 simulated studies × 10 configurations: {coverage:.3f}")
    assert 0.85 <= coverage <= 0.99
