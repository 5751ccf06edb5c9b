"""How stable is the human Elo ranking, and how many votes would settle it (issue 16).

Pure: numpy, pandas and scipy only — no Django, DRF or Celery. Reuses the batched Bradley–Terry
machinery of :mod:`bt_elo.bradley_terry` (per-figure win matrices, draw-count weights, the batched
Newton fit) and the stability summary of :mod:`scoring.stability`, so Elo stability reads exactly
like the PPTBench score-stability table.

Four verbs:

* :func:`elo_stability` — resample a fraction of the source figures (each with all its votes),
  refit, and summarise rank agreement with the full-study fit per fraction.
* :func:`elo_adjacent` — for neighbours in the fitted order: the bootstrap interval of the Elo
  difference, the rank-flip probability, and the further votes on that pair projected to separate
  them (Fisher information, see :func:`votes_to_separate`).
* :func:`plan_study` — simulate whole studies from a Bradley–Terry model with per-figure random
  effects and ties, and report per vote budget the expected CI half-width, the probability of
  recovering the true order and of each adjacent swap.
* :func:`next_pairs_adaptive` (:mod:`bt_elo.allocation`, re-exported here) — which pairs to ask
  about next: pairs under the floor first, then by rank-flip probability × expected variance
  reduction.

Units: Elo points throughout the public interface (ELO_SCALE = 400 / ln 10 Elo per unit of
Bradley–Terry log-strength β).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components

# PRIORITY_COLUMNS and next_pairs_adaptive are re-exported: callers import them from here.
from bt_elo.allocation import (  # noqa: F401
    DEFAULT_PAIR_FLOOR,
    PRIORITY_COLUMNS,
    _greedy_allocation,
    _pairs,
    _sigmoid,
    next_pairs_adaptive,
)
from bt_elo.bradley_terry import (
    ELO_SCALE,
    REGULARISATION_ALPHA,
    _batched_fit,
    _bootstrap_from_figures,
    _configurations,
    _strongly_connected,
    bootstrap_elo,
    elo_from_beta,
    figure_win_matrices,
    fit_bradley_terry,
)
from corpus.protocol import (
    ALLOCATION_COVERAGE,
    ALLOCATIONS,
    ELO_BOOTSTRAP_RESAMPLES,
    ELO_BOOTSTRAP_SEED,
    ELO_STABILITY_FRACTIONS,
    PAPER_CONFIGURATIONS,
    PAPER_FIGURES,
    PAPER_TIE_RATE,
    PAPER_VOTES,
)
from scoring.stability import STABILITY_COLUMNS, kendall_tau_to_reference, summarise_draws

# Two-sided 95 % normal quantile for the planner's analytic intervals.
Z_95 = 1.959963984540054

ELO_STABILITY_COLUMNS = STABILITY_COLUMNS + ["figures_available", "regularised_resamples"]
ELO_ADJACENT_COLUMNS = [
    "upper",
    "lower",
    "elo_gap",
    "difference_ci_low",
    "difference_ci_high",
    "rank_flip_probability",
    "votes_to_separate",
    "pair_votes",
]
PLAN_COLUMNS = [
    "budget",
    "allocation",
    "mean_ci_half_width",
    "empirical_ci_half_width",
    "order_recovered_probability",
    "kendall_tau_mean",
]
PLAN_SWAP_COLUMNS = ["budget", "allocation", "upper", "lower", "true_gap", "swap_probability"]


# --------------------------------------------------------------------------------------------
# Shared pieces


def subsample_weights(n_clusters: int, draws: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """resamples × n_clusters draw counts of ``draws`` clusters drawn with replacement.

    ``bradley_terry.cluster_weights`` is the special case draws = n_clusters (same stream).
    """
    picks = rng.integers(0, n_clusters, size=(resamples, draws), dtype=np.int32)
    offsets = (np.arange(resamples, dtype=np.int64) * n_clusters)[:, None]
    return np.bincount((picks + offsets).ravel(), minlength=resamples * n_clusters).reshape(resamples, n_clusters)


def information_laplacian(n: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Fisher information of β (batched): the Laplacian of N_ij σ(β_i − β_j) σ(β_j − β_i).

    ``n``: … × K × K vote counts (both directions equal), ``beta``: … × K.
    """
    sig = _sigmoid(beta[..., :, None] - beta[..., None, :])
    off = n * sig * np.swapaxes(sig, -1, -2)
    lap = -off
    k = beta.shape[-1]
    idx = np.arange(k)
    lap[..., idx, idx] = off.sum(axis=-1)
    return lap


def _laplacian_pinv(lap: np.ndarray) -> np.ndarray:
    """Pseudo-inverse of a connected Laplacian: (L + 11ᵀ/K)⁻¹ − 11ᵀ/K (gauge Σβ = 0)."""
    k = lap.shape[-1]
    j = np.full((k, k), 1.0 / k)
    return np.linalg.inv(lap + j) - j


def _component_pinv(lap: np.ndarray) -> np.ndarray:
    """:func:`_laplacian_pinv` within each connected component of the vote graph, NaN between components: the votes
    say nothing about how two configurations never linked by a chain of votes compare (a configuration without votes
    is a component of its own)."""
    k = lap.shape[-1]
    linked = (np.abs(lap) > 0) & ~np.eye(k, dtype=bool)
    count, labels = connected_components(linked, directed=False)
    inverse = np.full((k, k), np.nan)
    for component in range(count):
        members = np.flatnonzero(labels == component)
        inverse[np.ix_(members, members)] = _laplacian_pinv(lap[np.ix_(members, members)])
    return inverse


# --------------------------------------------------------------------------------------------
# Stability under figure resampling


def elo_stability(
    comparisons: pd.DataFrame,
    *,
    fractions: Sequence[float] = ELO_STABILITY_FRACTIONS,
    resamples: int = ELO_BOOTSTRAP_RESAMPLES,
    seed: int = ELO_BOOTSTRAP_SEED,
    configurations=None,
    ties: str = "half",
) -> pd.DataFrame:
    """Rank stability of Elo when only a fraction of the source figures had been annotated.

    For each fraction f, ``sample_size`` = round(f · F) figures (at least 1) are drawn with
    replacement from the F source figures, each bringing all its comparisons (the cluster
    bootstrap of REFERENCE 6 at a smaller size); every resample is refitted with the batched
    Newton solver and compared with the full-study fit exactly as :mod:`scoring.stability`
    compares task-resampled means (Kendall τ, top-k sets, percentile Elo intervals). One
    generator serves all fractions in order. Columns: the ``pptbench-stability`` columns, then
    ``figures_available`` and ``regularised_resamples`` (resamples whose comparison graph was
    not strongly connected and got choix's small prior, as in the Elo table).
    """
    configurations = _configurations(comparisons, configurations)
    ratings = fit_bradley_terry(comparisons, configurations=configurations, ties=ties)
    per_figure = figure_win_matrices(comparisons, configurations, ties=ties)
    n_figures = per_figure.shape[0]
    rng = np.random.default_rng(seed)
    rows = []
    for fraction in fractions:
        if not 0 < fraction <= 1:
            raise ValueError("fractions must lie in (0, 1]")
        size = max(1, round(fraction * n_figures))
        weights = subsample_weights(n_figures, size, resamples, rng)
        elo, regularised = _bootstrap_from_figures(per_figure, weights, start=ratings.beta)
        summary = summarise_draws(models=configurations, full_values=ratings.elo, draws=elo, sample_size=size)
        rows.append({**summary.stability, "figures_available": n_figures, "regularised_resamples": regularised})
    return pd.DataFrame(rows, columns=ELO_STABILITY_COLUMNS)


def votes_to_separate(
    *, elo_gap: float, half_width: float, information_per_vote: float, difference_variance: float
) -> float:
    """Further votes on one pair until its difference interval excludes zero at the current effect.

    Method (Fisher information, Sherman–Morrison): n more votes on pair (u, l) add n·w·ccᵀ to
    the information of β, with c = e_u − e_l and w = σ(Δβ)σ(−Δβ) per vote, so the variance of
    the difference falls from v₀ = cᵀI⁺c to v₀ / (1 + n·w·v₀). The bootstrap half-width h₀ is
    scaled by the same factor (the design effect of clustering and ties is taken as unchanged),
    and the interval excludes zero once h₀ / √(1 + n·w·v₀) ≤ |gap|:

        n = ((h₀ / gap)² − 1) / (w · v₀), rounded up.

    When all the information on the pair comes from its own n_pair votes, v₀ = 1 / (n_pair · w)
    and this is exactly n_pair · (h₀ / gap)² − n_pair (half-width ∝ 1 / √n_pair); indirect
    evidence through other configurations makes each direct vote worth relatively less.
    Returns 0 when h₀ ≤ |gap| (already separated), inf when the gap is 0, and NaN when no chain of votes links the
    two (v₀ unknown: the first vote between them changes everything).
    """
    if not math.isfinite(difference_variance):
        return math.nan
    gap = abs(elo_gap)
    if half_width <= gap and gap > 0:
        return 0.0
    if gap == 0 or information_per_vote * difference_variance <= 0:
        return math.inf
    return float(math.ceil(((half_width / gap) ** 2 - 1.0) / (information_per_vote * difference_variance)))


def elo_adjacent(
    comparisons: pd.DataFrame,
    *,
    resamples: int = ELO_BOOTSTRAP_RESAMPLES,
    seed: int = ELO_BOOTSTRAP_SEED,
    configurations=None,
    ties: str = "half",
) -> pd.DataFrame:
    """Neighbours in the fitted Elo order: gap, 95 % cluster-bootstrap interval of the Elo
    difference (percentile, numpy "linear"), P(lower ahead in a resample), votes to separate.

    The bootstrap is :func:`bradley_terry.bootstrap_elo` (same seed, same draws as the Elo
    table). ``votes_to_separate`` is 0 when the interval already excludes zero, inf when the gap
    is 0, else the Fisher-information projection of :func:`votes_to_separate`. ``pair_votes``
    counts the votes that compared the two directly (ties included).
    """
    configurations = _configurations(comparisons, configurations)
    boot = bootstrap_elo(comparisons, configurations=configurations, resamples=resamples, seed=seed, ties=ties)
    per_figure = figure_win_matrices(comparisons, configurations, ties="half")
    votes = per_figure.sum(axis=0)
    votes = votes + votes.T  # each vote adds 1 across the pair's two cells (a tie 0.5 + 0.5)
    beta = boot.ratings.beta
    inverse_information = _component_pinv(information_laplacian(votes, beta))
    order = np.argsort(-boot.ratings.elo, kind="stable")
    rows = []
    for upper, lower in itertools.pairwise(order):
        difference = boot.samples[:, upper] - boot.samples[:, lower]
        low, high = np.quantile(difference, [0.025, 0.975])
        gap = float(boot.ratings.elo[upper] - boot.ratings.elo[lower])
        separated = low > 0 or high < 0
        m = inverse_information
        w = float(_sigmoid(beta[upper] - beta[lower]) * _sigmoid(beta[lower] - beta[upper]))
        needed = (
            0.0
            if separated
            else votes_to_separate(
                elo_gap=gap,
                half_width=float(high - low) / 2.0,
                information_per_vote=w,
                difference_variance=float(m[upper, upper] + m[lower, lower] - 2.0 * m[upper, lower]),
            )
        )
        rows.append(
            {
                "upper": configurations[upper],
                "lower": configurations[lower],
                "elo_gap": gap,
                "difference_ci_low": float(low),
                "difference_ci_high": float(high),
                "rank_flip_probability": float(np.mean(difference < 0)),
                "votes_to_separate": needed,
                "pair_votes": round(float(votes[upper, lower])),
            }
        )
    table = pd.DataFrame(rows, columns=ELO_ADJACENT_COLUMNS)
    unlinked = connected_components((votes > 0) & ~np.eye(len(configurations), dtype=bool), directed=False)[0]
    if unlinked > 1:
        table.attrs["notes"] = [
            f"The votes form {unlinked} groups not linked by any chain of votes (a configuration without votes is a "
            "group of its own): Elo compares configurations only within a group, and votes_to_separate is empty "
            "between groups."
        ]
    return table


# --------------------------------------------------------------------------------------------
# Simulated studies


@dataclass(frozen=True)
class StudyPlan:
    summary: pd.DataFrame  # PLAN_COLUMNS, one row per budget
    swaps: pd.DataFrame  # PLAN_SWAP_COLUMNS, one row per budget × true adjacent pair
    true_elo: np.ndarray
    method: str


@dataclass
class _Studies:
    """S simulated studies growing vote by vote (internal to the planner)."""

    beta: np.ndarray  # K true log-strengths, best first
    effects: np.ndarray  # S × F × K per-figure shifts
    tie_rate: float
    rng: np.random.Generator
    a: np.ndarray  # S × V configuration shown as A
    b: np.ndarray
    figure: np.ndarray
    credit: np.ndarray  # credit to A: 1, 0.5 (tie) or 0
    dealt: np.ndarray  # S × (passes · F) figure order: shuffled passes over all figures

    def add(self, pair: np.ndarray, pairs: np.ndarray) -> None:
        """Cast the votes ``pair`` (S × n pair indices, in order) in every study."""
        s, f, _ = self.effects.shape
        n = pair.shape[1]
        swap = self.rng.random((s, n)) < 0.5  # which side is shown as A does not matter to BT
        a = np.where(swap, pairs[pair, 1], pairs[pair, 0])
        b = np.where(swap, pairs[pair, 0], pairs[pair, 1])
        # Figures are dealt in shuffled passes, so every figure is used before any is reused.
        start = self.a.shape[1]
        position = np.arange(start, start + n)
        while self.dealt.shape[1] <= position.max():
            fresh = self.rng.permuted(np.tile(np.arange(f), (s, 1)), axis=1)
            self.dealt = np.concatenate([self.dealt, fresh], axis=1)
        figure = self.dealt[:, position]
        rows = np.arange(s)[:, None]
        diff = self.beta[a] - self.beta[b] + self.effects[rows, figure, a] - self.effects[rows, figure, b]
        u = self.rng.random((s, n))
        tie = u < self.tie_rate
        win = self.rng.random((s, n)) < _sigmoid(diff)
        credit = np.where(tie, 0.5, np.where(win, 1.0, 0.0))
        self.a = np.concatenate([self.a, a], axis=1)
        self.b = np.concatenate([self.b, b], axis=1)
        self.figure = np.concatenate([self.figure, figure], axis=1)
        self.credit = np.concatenate([self.credit, credit], axis=1)

    def fit(self, votes: int | None = None):
        """Fitted β (S × K), sandwich covariance (S × K × K, β units), connected mask (S)."""
        v = self.a.shape[1] if votes is None else votes
        s, f, k = self.effects.shape
        a, b, credit, figure = self.a[:, :v], self.b[:, :v], self.credit[:, :v], self.figure[:, :v]
        rows = np.repeat(np.arange(s), v)
        w = np.zeros((s, k, k))
        np.add.at(w, (rows, a.ravel(), b.ravel()), credit.ravel())
        np.add.at(w, (rows, b.ravel(), a.ravel()), 1.0 - credit.ravel())
        n = w + np.swapaxes(w, 1, 2)
        alpha = np.where(_strongly_connected(w), 0.0, REGULARISATION_ALPHA)
        beta = _batched_fit(w, alpha)
        # Cluster-robust sandwich: bread = Fisher information, meat = Σ_figures U_f U_fᵀ with U_f
        # the figure's summed score (credit − σ)(e_A − e_B); it carries ties and clustering.
        residual = credit - _sigmoid(np.take_along_axis(beta, a, 1) - np.take_along_axis(beta, b, 1))
        score = np.zeros((s, f, k))
        np.add.at(score, (rows, figure.ravel(), a.ravel()), residual.ravel())
        np.add.at(score, (rows, figure.ravel(), b.ravel()), -residual.ravel())
        meat = np.einsum("sfk,sfl->skl", score, score)
        connected = _strongly_connected(n)  # n is symmetric: strong = plain connectivity
        lap = information_laplacian(n, beta)
        lap[~connected] = np.eye(k)  # placeholder; these studies get infinite intervals below
        bread = _laplacian_pinv(lap)
        covariance = bread @ meat @ bread
        covariance[~connected] = np.inf
        return beta, covariance, connected


def _round_robin(rng: np.random.Generator, simulations: int, n_pairs: int, votes: int) -> np.ndarray:
    """S × votes pair indices: rounds of every pair once, shuffled within each round (coverage)."""
    rounds = -(-votes // n_pairs)
    per_round = rng.permuted(np.tile(np.arange(n_pairs), (simulations, rounds, 1)), axis=2)
    return per_round.reshape(simulations, -1)[:, :votes]


def _sequence_from_counts(rng: np.random.Generator, counts: np.ndarray) -> np.ndarray:
    """S × n pair indices casting counts[s, p] votes on pair p, in shuffled order."""
    sequence = np.stack([np.repeat(np.arange(counts.shape[1]), row) for row in counts])
    return rng.permuted(sequence, axis=1)


def _pair_counts(sequence: np.ndarray, n_pairs: int) -> np.ndarray:
    offsets = (np.arange(sequence.shape[0]) * n_pairs)[:, None]
    return np.bincount((sequence + offsets).ravel(), minlength=sequence.shape[0] * n_pairs).reshape(-1, n_pairs)


def _evaluate(beta_hat, covariance, true_beta):
    """Per-study metrics: mean analytic half-width (Elo), order recovered, Kendall τ, swaps."""
    k = true_beta.size
    variances = np.diagonal(covariance, axis1=1, axis2=2)
    half_width = Z_95 * ELO_SCALE * np.sqrt(variances).mean(axis=1)
    order = np.argsort(-beta_hat, axis=1, kind="stable")
    recovered = (order == np.arange(k)[None, :]).all(axis=1)
    tau = kendall_tau_to_reference(np.arange(k), order)
    swapped = beta_hat[:, 1:] > beta_hat[:, :-1]  # true order is 0, 1, …, K − 1
    return half_width, recovered, tau, swapped


def plan_study(
    *,
    configurations: int | Sequence[str] = PAPER_CONFIGURATIONS,
    figures: int = PAPER_FIGURES,
    strength_spread: float = 300.0,
    tie_rate: float = PAPER_TIE_RATE,
    cluster_sd: float = 100.0,
    budgets: Sequence[int] = (1000, 2000, PAPER_VOTES),
    simulations: int = 100,
    seed: int = 0,
    allocation: str = ALLOCATION_COVERAGE,
    floor: int = DEFAULT_PAIR_FLOOR,
    round_votes: int | None = None,
) -> StudyPlan:
    """Simulate studies and report, per vote budget, how precise and how right Elo would be.

    Model: K configurations with true Elo equally spaced over ``strength_spread`` points (best
    first). Each vote goes to a figure (figures dealt in shuffled passes) whose per-configuration
    shifts are N(0, ``cluster_sd``²) Elo — the clustering the cluster bootstrap exists for; it is
    a tie with probability ``tie_rate`` (half a win each) and otherwise Bradley–Terry on the
    shifted strengths. ``allocation``: "coverage" deals pairs round-robin (equal per-pair counts,
    shuffled within each round); "adaptive" casts ``floor`` votes per pair first and then, in
    rounds of ``round_votes`` (default max(#pairs, budget/30)), refits every study and spends the
    round with :func:`next_pairs_adaptive`'s greedy rule. Budgets are nested within a study (a
    smaller budget is a prefix of a larger one), so the curves are comparable across budgets.

    Method (fast enough for a web request at small ``simulations``): every study is fitted by
    the batched Newton solver, and intervals are analytic, not bootstrapped — a cluster-robust
    sandwich (Fisher information as bread, per-figure score sums as meat), which carries ties
    and figure clustering and approximates the figure bootstrap. ``mean_ci_half_width`` is the
    mean over studies and configurations of 1.96 × the sandwich sd of Elo;
    ``empirical_ci_half_width`` is 1.96 × the sd of fitted Elo across the simulated studies (the
    truth the analytic figure should match). ``order_recovered_probability`` is the share of
    studies whose fitted order is the true order; ``swaps`` gives, for each truly adjacent pair,
    the share of studies that rank the lower one above.
    """
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}")
    names = (
        tuple(f"cfg{i + 1:02d}" for i in range(configurations))
        if isinstance(configurations, int)
        else tuple(configurations)
    )
    k = len(names)
    if k < 2:
        raise ValueError("need at least two configurations")
    budgets = sorted(int(b) for b in budgets)
    pairs = _pairs(k)
    true_elo = np.linspace(strength_spread / 2, -strength_spread / 2, k)
    true_beta = true_elo / ELO_SCALE
    rng = np.random.default_rng(seed)
    studies = _Studies(
        beta=true_beta,
        effects=rng.normal(0.0, cluster_sd / ELO_SCALE, size=(simulations, figures, k)),
        tie_rate=tie_rate,
        rng=rng,
        a=np.zeros((simulations, 0), dtype=np.int64),
        b=np.zeros((simulations, 0), dtype=np.int64),
        figure=np.zeros((simulations, 0), dtype=np.int64),
        credit=np.zeros((simulations, 0)),
        dealt=np.zeros((simulations, 0), dtype=np.int64),
    )
    fits = {}
    if allocation == ALLOCATION_COVERAGE:
        studies.add(_round_robin(rng, simulations, len(pairs), budgets[-1]), pairs)
        for budget in budgets:
            fits[budget] = studies.fit(budget)
    else:
        step = round_votes or max(len(pairs), budgets[-1] // 30)
        counts = np.zeros((simulations, len(pairs)), dtype=np.int64)
        warmup = min(floor * len(pairs), budgets[-1])
        if warmup:
            # The floor first, round-robin: every pair reaches it before any pair exceeds it.
            sequence = _round_robin(rng, simulations, len(pairs), warmup)
            studies.add(sequence, pairs)
            counts += _pair_counts(sequence, len(pairs))
        cast = warmup
        for budget in [b for b in budgets if b <= warmup]:
            fits[budget] = studies.fit(budget)
        while cast < budgets[-1]:
            next_stop = min([b for b in budgets if b > cast] + [cast + step])
            beta_hat, covariance, connected = studies.fit()
            covariance = np.where(connected[:, None, None], covariance, np.eye(k)[None])
            add = _greedy_allocation(beta_hat, covariance, counts, floor, pairs, next_stop - cast)
            studies.add(_sequence_from_counts(rng, add), pairs)
            counts += add
            cast = next_stop
            if cast in budgets:
                fits[cast] = studies.fit()
    summary, swaps = [], []
    for budget in budgets:
        beta_hat, covariance, _ = fits[budget]
        half_width, recovered, tau, swapped = _evaluate(beta_hat, covariance, true_beta)
        spread = Z_95 * elo_from_beta(beta_hat).std(axis=0, ddof=1).mean() if simulations > 1 else math.nan
        summary.append(
            {
                "budget": budget,
                "allocation": allocation,
                "mean_ci_half_width": float(np.mean(half_width)),
                "empirical_ci_half_width": float(spread),
                "order_recovered_probability": float(recovered.mean()),
                "kendall_tau_mean": float(tau.mean()),
            }
        )
        for n in range(k - 1):
            swaps.append(
                {
                    "budget": budget,
                    "allocation": allocation,
                    "upper": names[n],
                    "lower": names[n + 1],
                    "true_gap": float(true_elo[n] - true_elo[n + 1]),
                    "swap_probability": float(swapped[:, n].mean()),
                }
            )
    return StudyPlan(
        summary=pd.DataFrame(summary, columns=PLAN_COLUMNS),
        swaps=pd.DataFrame(swaps, columns=PLAN_SWAP_COLUMNS),
        true_elo=true_elo,
        method="batched Bradley-Terry fits; cluster-robust sandwich intervals (figure clusters), no bootstrap",
    )
