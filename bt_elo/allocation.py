"""Adaptive vote allocation for a Bradley–Terry study (issue 16): which pairs to ask about next.
Pairs below the coverage floor come first, fewest votes first; the rest are ranked by the probability
that the pair's order flips × the share of its difference's variance one more vote would remove, and
a batch is spread greedily, updating the covariance after each virtual vote (Sherman–Morrison).
:func:`next_pairs_adaptive` serves the live study; the study planner in :mod:`bt_elo.stability`
spends its adaptive rounds with the same greedy rule. Pure: no Django, DRF or Celery."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtr

from bt_elo.bradley_terry import ELO_SCALE
from corpus.protocol import ADAPTIVE_PAIR_FLOOR

# Below-floor pairs are served before any priority ordering.
DEFAULT_PAIR_FLOOR = ADAPTIVE_PAIR_FLOOR

PRIORITY_COLUMNS = [
    "upper",
    "lower",
    "votes",
    "below_floor",
    "elo_gap",
    "flip_probability",
    "variance_reduction",
    "priority",
    "next_votes",
]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _pairs(k: int) -> np.ndarray:
    """All unordered pairs (i < j) of k configurations, P × 2."""
    i, j = np.triu_indices(k, 1)
    return np.stack([i, j], axis=1)


def _priority(beta, covariance, counts, floor, pairs):
    """Batched priority of every pair (S × P) and its parts; β-units covariance S × K × K."""
    i, j = pairs[:, 0], pairs[:, 1]
    d = beta[:, i] - beta[:, j]
    var = np.maximum(covariance[:, i, i] + covariance[:, j, j] - 2.0 * covariance[:, i, j], 1e-12)
    flip = ndtr(-np.abs(d) / np.sqrt(var))
    w = _sigmoid(d) * _sigmoid(-d)
    reduction = w * var / (1.0 + w * var)  # share of the difference's variance one more vote removes
    priority = flip * reduction
    # Below the floor: served first, fewest votes first (the offset dwarfs any priority ≤ 0.5).
    below = counts < floor
    priority = np.where(below, 1.0 + (floor - counts), priority)
    return priority, flip, reduction, w


def _greedy_allocation(beta, covariance, counts, floor, pairs, votes):
    """Allocate ``votes`` votes one at a time to the highest-priority pair, per study (S rows).

    After each virtual vote the covariance is updated as if the vote had been cast (Sherman–
    Morrison with information w = σσ on c = e_i − e_j), so a batch spreads over pairs instead
    of piling onto one. Returns S × P vote counts added.
    """
    s, k = beta.shape
    covariance = covariance.copy()
    added = np.zeros(counts.shape, dtype=np.int64)
    rows = np.arange(s)
    for _ in range(votes):
        priority, _, _, w = _priority(beta, covariance, counts + added, floor, pairs)
        pick = np.argmax(priority, axis=1)
        added[rows, pick] += 1
        c = np.zeros((s, k))
        c[rows, pairs[pick, 0]] = 1.0
        c[rows, pairs[pick, 1]] = -1.0
        vc = np.einsum("skl,sl->sk", covariance, c)
        w_pick = w[rows, pick]
        denominator = 1.0 + w_pick * np.einsum("sk,sk->s", c, vc)
        covariance -= (w_pick / denominator)[:, None, None] * vc[:, :, None] * vc[:, None, :]
    return added


def next_pairs_adaptive(
    *,
    configurations: Sequence[str],
    pair_votes: np.ndarray,
    floor: int = DEFAULT_PAIR_FLOOR,
    elo: np.ndarray,
    elo_draws: np.ndarray,
    batch: int = 1,
) -> pd.DataFrame:
    """Every pair, in the order the next votes should go, with the reasons.

    Inputs: ``pair_votes`` K × K symmetric vote counts so far; ``elo`` the fitted Elo (K); and
    ``elo_draws`` R × K bootstrap Elo samples (e.g. ``BootstrapElo.samples``), used for the
    uncertainty of every difference.

    Order: (1) pairs with fewer than ``floor`` votes, fewest first — coverage of every pair is
    kept whatever the ratings say; (2) the rest by ``priority`` = flip probability × variance
    reduction, where the flip probability is Φ(−|gap| / sd) of the pair's Elo difference (sd
    from the draws; ``flip_probability`` reports the share of draws that reverse the pair) and
    the variance reduction is the share w·v / (1 + w·v) of that difference's variance one more
    direct vote would remove (Fisher information w = σσ per vote, v the variance in β units).
    Close pairs with wide intervals come first — in practice adjacent pairs, since a
    non-adjacent pair's flip probability is small.

    ``next_votes`` spreads the next ``batch`` votes greedily: one vote at a time to the top
    pair, then the covariance is updated as if that vote were cast (Sherman–Morrison) and the
    priorities recomputed, so a batch does not pile onto one pair.
    """
    k = len(configurations)
    elo = np.asarray(elo, dtype=float)
    draws = np.asarray(elo_draws, dtype=float)
    if elo.shape != (k,) or draws.ndim != 2 or draws.shape[1] != k:
        raise ValueError("elo must have K entries and elo_draws R × K columns in configuration order")
    pair_votes = np.asarray(pair_votes)
    pairs = _pairs(k)
    counts = pair_votes[pairs[:, 0], pairs[:, 1]][None, :].astype(np.int64)
    beta = (elo / ELO_SCALE)[None, :]
    covariance = (np.cov(draws, rowvar=False) / ELO_SCALE**2)[None]
    priority, _, reduction, _ = _priority(beta, covariance, counts, floor, pairs)
    allocated = _greedy_allocation(beta, covariance, counts, floor, pairs, batch)[0]
    gap = elo[pairs[:, 0]] - elo[pairs[:, 1]]
    draw_gap = draws[:, pairs[:, 0]] - draws[:, pairs[:, 1]]
    flipped = np.mean(np.sign(draw_gap) != np.sign(gap)[None, :], axis=0)
    upper = np.where(gap >= 0, pairs[:, 0], pairs[:, 1])
    lower = np.where(gap >= 0, pairs[:, 1], pairs[:, 0])
    table = pd.DataFrame(
        {
            "upper": [configurations[u] for u in upper],
            "lower": [configurations[v] for v in lower],
            "votes": counts[0],
            "below_floor": counts[0] < floor,
            "elo_gap": np.abs(gap),
            "flip_probability": flipped,
            "variance_reduction": reduction[0],
            "priority": priority[0],
            "next_votes": allocated,
        }
    )
    return table.sort_values(["priority", "votes"], ascending=[False, True], kind="stable").reset_index(drop=True)
