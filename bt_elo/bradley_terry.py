"""Bradley–Terry Elo over the human A/B comparisons (REFERENCE 6).

Pure: numpy, pandas, scipy and choix only — no Django, DRF or Celery.

Input is a plain comparisons frame with columns ``task_id`` (the source figure, the bootstrap
cluster), ``config_a``, ``config_b`` (the configurations shown as A and B) and ``outcome`` in
``BATTLE_OUTCOMES`` ("a" = A better, "b" = B better, any tie = half a win to both sides).

The point estimate is choix's ILSR maximum-likelihood fit of the float win matrix. When the
comparison graph is strongly connected the fit is the exact MLE (alpha = 0). When it is not
(a configuration never wins or never loses, components that never meet) the MLE does not exist
(some strengths run off to infinity), so the fit adds choix's smallest-useful prior, alpha =
``REGULARISATION_ALPHA``, and says so in ``Ratings.regularisation``.

The cluster bootstrap refits 2,000 resamples of source figures at once: per-figure K×K win
matrices are stacked once, each replicate's win matrix is (figure draw counts) @ (per-figure
matrices) in one matmul, and all replicates are solved together by a batched, line-searched
Newton iteration on exactly the objective choix's ILSR solves (``_batched_fit``). Replicates that
are not strongly connected get the same alpha as a non-connected point fit; the others are
exact MLEs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from corpus.protocol import (
    BATTLE_OUTCOMES,
    ELO_BASE,
    ELO_BOOTSTRAP_RESAMPLES,
    ELO_BOOTSTRAP_SEED,
    TIE_OUTCOMES,
)

# Elo points per unit of Bradley–Terry log-strength (REFERENCE 6: 400 / ln 10).
ELO_SCALE = 400.0 / math.log(10.0)

# choix's LSR regularisation (transition rates initialised with alpha; at the fixed point this is
# the concave prior alpha·K·Σ_i log p_i with p = softmax(beta)). Used only when the comparison
# graph is not strongly connected; small enough to leave well-supported contrasts alone while
# keeping undefeated / winless configurations finite.
REGULARISATION_ALPHA = 1e-3

TIE_MODES = ("half", "drop")

# Convergence: choix's ILSR stops on the L1 change of successive iterates; 1e-12 keeps the point
# estimate well inside 1e-6 Elo of the exact solution.
_CHOIX_TOL = 1e-12
_CHOIX_MAX_ITER = 100_000
_NEWTON_MAX_ITER = 200
_NEWTON_TOL = 1e-11
_NEWTON_RIDGE = 1e-12


@dataclass(frozen=True)
class GraphDiagnostics:
    """Shape of the comparison graph (edge i → j when i beat j; a tie is an edge both ways)."""

    connected: bool
    undefeated: tuple[str, ...]
    winless: tuple[str, ...]
    never_compared: tuple[tuple[str, str], ...]
    components: tuple[tuple[str, ...], ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "connected": self.connected,
            "undefeated": list(self.undefeated),
            "winless": list(self.winless),
            "never_compared": [list(pair) for pair in self.never_compared],
            "components": [list(component) for component in self.components],
        }


@dataclass(frozen=True)
class Ratings:
    configurations: tuple[str, ...]
    beta: np.ndarray
    elo: np.ndarray
    regularisation: str
    diagnostics: GraphDiagnostics

    def as_dict(self) -> dict[str, Any]:
        return {
            "configurations": list(self.configurations),
            "beta": [float(b) for b in self.beta],
            "elo": [float(e) for e in self.elo],
            "regularisation": self.regularisation,
            "diagnostics": self.diagnostics.as_dict(),
        }


@dataclass(frozen=True)
class BootstrapElo:
    ratings: Ratings
    samples: np.ndarray  # resamples × K Elo
    ci_low: np.ndarray
    ci_high: np.ndarray
    rank_probabilities: np.ndarray  # K × K: [i, r] = P(configuration i has rank r + 1)
    resamples: int
    seed: int
    regularised_resamples: int = field(default=0)


# --------------------------------------------------------------------------------------------
# Counting


def _configurations(comparisons: pd.DataFrame, configurations) -> tuple[str, ...]:
    seen = pd.unique(pd.concat([comparisons["config_a"], comparisons["config_b"]], ignore_index=True))
    if configurations is None:
        return tuple(sorted(str(c) for c in seen))
    configurations = tuple(str(c) for c in configurations)
    if len(set(configurations)) != len(configurations):
        raise ValueError("configurations contain duplicates")
    missing = sorted(set(str(c) for c in seen) - set(configurations))
    if missing:
        raise ValueError(f"comparisons mention configurations not listed: {missing}")
    return configurations


def _codes(comparisons: pd.DataFrame, configurations: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer indices of A and B and the outcome column, validated."""
    outcome = comparisons["outcome"].astype(str).to_numpy()
    bad = sorted(set(outcome) - set(BATTLE_OUTCOMES))
    if bad:
        raise ValueError(f"unknown outcomes {bad}; expected one of {BATTLE_OUTCOMES}")
    index = {c: i for i, c in enumerate(configurations)}
    a = comparisons["config_a"].astype(str).map(index).to_numpy(dtype=np.int64)
    b = comparisons["config_b"].astype(str).map(index).to_numpy(dtype=np.int64)
    if np.any(a == b):
        raise ValueError("a comparison sets a configuration against itself")
    return a, b, outcome


def _vote_weights(outcome: np.ndarray, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Credit to the A side and to the B side of every vote."""
    if ties not in TIE_MODES:
        raise ValueError(f"ties must be one of {TIE_MODES}")
    tie = np.isin(outcome, list(TIE_OUTCOMES))
    tie_credit = 0.5 if ties == "half" else 0.0
    to_a = np.where(outcome == "a", 1.0, np.where(tie, tie_credit, 0.0))
    to_b = np.where(outcome == "b", 1.0, np.where(tie, tie_credit, 0.0))
    return to_a, to_b


def _win_matrix(a, b, to_a, to_b, k: int) -> np.ndarray:
    w = np.zeros((k, k))
    np.add.at(w, (a, b), to_a)
    np.add.at(w, (b, a), to_b)
    return w


def win_matrix(comparisons: pd.DataFrame, configurations, *, ties: str = "half") -> np.ndarray:
    """W[i, j] = wins of configuration i over j; each tie adds 0.5 to both W[i, j] and W[j, i]."""
    configurations = _configurations(comparisons, configurations)
    a, b, outcome = _codes(comparisons, configurations)
    to_a, to_b = _vote_weights(outcome, ties)
    return _win_matrix(a, b, to_a, to_b, len(configurations))


def record_table(comparisons: pd.DataFrame, configurations=None) -> pd.DataFrame:
    """Per configuration: wins, losses, ties (every kind: plain ties of imported battles too), ties_success,
    ties_failure, n."""
    configurations = _configurations(comparisons, configurations)
    a, b, outcome = _codes(comparisons, configurations)
    k = len(configurations)

    def count(mask_a, mask_b):
        return np.bincount(a[mask_a], minlength=k) + np.bincount(b[mask_b], minlength=k)

    is_a, is_b = outcome == "a", outcome == "b"
    success, failure, tie = outcome == "tie_success", outcome == "tie_failure", np.isin(outcome, list(TIE_OUTCOMES))
    table = pd.DataFrame(
        {
            "configuration": list(configurations),
            "wins": count(is_a, is_b),
            "losses": count(is_b, is_a),
            "ties_success": count(success, success),
            "ties_failure": count(failure, failure),
        }
    )
    table.insert(3, "ties", count(tie, tie))
    table["n"] = table["wins"] + table["losses"] + table["ties"]
    return table


# --------------------------------------------------------------------------------------------
# Graph


def graph_diagnostics(w: np.ndarray, configurations: tuple[str, ...]) -> GraphDiagnostics:
    k = len(configurations)
    beats = w > 0
    played = (w + w.T) > 0
    n_components, labels = connected_components(csr_matrix(beats.astype(np.int8)), directed=True, connection="strong")
    components = tuple(
        sorted(
            (tuple(configurations[i] for i in range(k) if labels[i] == c) for c in range(n_components)),
            key=lambda comp: configurations.index(comp[0]),
        )
    )
    # Undefeated: played, never lost; winless: played, never won (a tie is half a win and half a loss).
    has_played = played.any(axis=1)
    undefeated = tuple(configurations[i] for i in range(k) if has_played[i] and not beats[:, i].any())
    winless = tuple(configurations[i] for i in range(k) if has_played[i] and not beats[i, :].any())
    never = tuple((configurations[i], configurations[j]) for i in range(k) for j in range(i + 1, k) if not played[i, j])
    return GraphDiagnostics(
        connected=bool(n_components == 1 and k > 0),
        undefeated=undefeated,
        winless=winless,
        never_compared=never,
        components=components,
    )


def _regularisation_note(diagnostics: GraphDiagnostics, alpha: float) -> str:
    if diagnostics.connected:
        return "none"
    reasons = []
    if diagnostics.undefeated:
        reasons.append(", ".join(diagnostics.undefeated) + " undefeated")
    if diagnostics.winless:
        reasons.append(", ".join(diagnostics.winless) + " winless")
    if len(diagnostics.components) > 1:
        reasons.append(f"{len(diagnostics.components)} strong components")
    if diagnostics.never_compared:
        reasons.append(f"{len(diagnostics.never_compared)} pair(s) never compared")
    return f"choix alpha={alpha:g} (graph not strongly connected: {'; '.join(reasons)})"


def _strongly_connected(w: np.ndarray) -> np.ndarray:
    """Batched strong connectivity of R graphs (R × K × K win matrices) by boolean closure."""
    r, k, _ = w.shape
    reach = (w > 0) | np.eye(k, dtype=bool)[None]
    steps = max(1, math.ceil(math.log2(max(k, 2))))
    for _ in range(steps):
        reach = np.matmul(reach.astype(np.float32), reach.astype(np.float32)) > 0
    return reach.reshape(r, -1).all(axis=1)


# --------------------------------------------------------------------------------------------
# Fits


def elo_from_beta(beta) -> np.ndarray:
    """Elo = 1000 + (400 / ln 10) · (beta − mean beta); works on the last axis of a batch."""
    beta = np.asarray(beta, dtype=float)
    return ELO_BASE + ELO_SCALE * (beta - beta.mean(axis=-1, keepdims=True))


def fit_bradley_terry(comparisons: pd.DataFrame, *, configurations=None, ties: str = "half") -> Ratings:
    """Order-invariant Bradley–Terry fit (choix ILSR); ties count half a win to both sides."""
    configurations = _configurations(comparisons, configurations)
    w = win_matrix(comparisons, configurations, ties=ties)
    return _ratings_from_matrix(w, configurations)


def _ratings_from_matrix(w: np.ndarray, configurations: tuple[str, ...]) -> Ratings:
    import choix  # on use: it imports scipy.stats, about 1 s at every process start

    diagnostics = graph_diagnostics(w, configurations)
    alpha = 0.0 if diagnostics.connected else REGULARISATION_ALPHA
    beta = choix.ilsr_pairwise_dense(w, alpha=alpha, max_iter=_CHOIX_MAX_ITER, tol=_CHOIX_TOL)
    beta = beta - beta.mean()
    return Ratings(
        configurations=configurations,
        beta=beta,
        elo=elo_from_beta(beta),
        regularisation=_regularisation_note(diagnostics, alpha),
        diagnostics=diagnostics,
    )


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def _objective(beta: np.ndarray, w: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Batched log-likelihood Σ W_ij log σ(β_i − β_j) + alpha·K·Σ_i log softmax(β)_i."""
    k = beta.shape[-1]
    diff = beta[:, :, None] - beta[:, None, :]
    loglik = (w * _log_sigmoid(diff)).sum(axis=(1, 2))
    log_p = beta - np.logaddexp.reduce(beta, axis=1, keepdims=True)
    return loglik + alpha * k * log_p.sum(axis=1)


def _batched_fit(w: np.ndarray, alpha: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """Solve R Bradley–Terry fits at once (R × K × K win matrices, per-replicate alpha).

    Maximises the choix ILSR fixed-point objective (see ``_objective``): the gradient is
    g_i = Σ_j W_ij − N_ij σ(β_i − β_j) + alpha·K·(1 − K p_i), N = W + Wᵀ; the negative Hessian is
    the weighted Laplacian of N_ij σ_ij σ_ji plus alpha·K²·(diag p − p pᵀ). Both annihilate the
    ones vector, so the gauge is fixed by solving (M + 11ᵀ) δ = g, which keeps Σ β = 0.
    Steps are halved until the objective does not decrease (the problem is concave). ``start``
    (K,) warm-starts every replicate (the bootstrap passes the point estimate); the optimum does
    not depend on it.
    """
    r, k, _ = w.shape
    n = w + np.transpose(w, (0, 2, 1))
    wins = w.sum(axis=2)
    beta = np.zeros((r, k)) if start is None else np.repeat(np.asarray(start, float)[None], r, axis=0)
    ones = np.ones((k, k))
    eye = np.eye(k, dtype=bool)
    active = np.ones(r, dtype=bool)
    f_old = _objective(beta, w, alpha)
    for _ in range(_NEWTON_MAX_ITER):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        b, nn, a = beta[idx], n[idx], alpha[idx]
        sig = 1.0 / (1.0 + np.exp(-(b[:, :, None] - b[:, None, :])))
        p = np.exp(b - np.logaddexp.reduce(b, axis=1, keepdims=True))
        grad = wins[idx] - (nn * sig).sum(axis=2) + (a * k)[:, None] * (1.0 - k * p)
        off = nn * sig * np.transpose(sig, (0, 2, 1))
        lap = -off
        lap[:, eye] = off.sum(axis=2)
        prior = (a * k * k)[:, None, None] * (
            p[:, :, None] * np.where(eye, 1.0, 0.0)[None] - p[:, :, None] * p[:, None, :]
        )
        # A vanishing ridge keeps the system solvable when far-apart ratings underflow σ·(1−σ) and p to zero (a
        # bootstrap replicate of very few votes); it only damps the step, the fixed point (grad = 0) is unchanged.
        step = np.linalg.solve(lap + prior + ones[None] + _NEWTON_RIDGE * np.eye(k)[None], grad[:, :, None])[:, :, 0]
        # Backtracking: halve the step of any replicate whose objective would drop.
        t = np.ones(idx.size)
        f0 = f_old[idx]
        for _ in range(60):
            cand = b + t[:, None] * step
            f_new = _objective(cand, w[idx], a)
            worse = f_new < f0 - 1e-12 * (1.0 + np.abs(f0))
            if not worse.any():
                break
            t = np.where(worse, t / 2.0, t)
        beta[idx] = cand
        f_old[idx] = f_new
        moved = np.abs(t[:, None] * step).max(axis=1)
        active[idx] = moved > _NEWTON_TOL
    return beta - beta.mean(axis=1, keepdims=True)


def bootstrap_elo(
    comparisons: pd.DataFrame,
    *,
    configurations=None,
    resamples: int = ELO_BOOTSTRAP_RESAMPLES,
    seed: int = ELO_BOOTSTRAP_SEED,
    ties: str = "half",
) -> BootstrapElo:
    """Point fit plus a cluster bootstrap over source figures (task_id), percentile 95 % CIs."""
    configurations = _configurations(comparisons, configurations)
    ratings = fit_bradley_terry(comparisons, configurations=configurations, ties=ties)
    per_figure = figure_win_matrices(comparisons, configurations, ties=ties)
    weights = seeded_cluster_weights(per_figure.shape[0], resamples, seed)
    elo, regularised = _bootstrap_from_figures(per_figure, weights, start=ratings.beta)
    k = len(configurations)
    order = np.argsort(-elo, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(k)[None, :].repeat(resamples, axis=0), axis=1)
    rank_probabilities = np.stack([(ranks == r).mean(axis=0) for r in range(k)], axis=1)
    low, high = np.percentile(elo, [2.5, 97.5], axis=0)
    return BootstrapElo(
        ratings=ratings,
        samples=elo,
        ci_low=low,
        ci_high=high,
        rank_probabilities=rank_probabilities,
        resamples=resamples,
        seed=seed,
        regularised_resamples=int(regularised),
    )


def figure_win_matrices(comparisons: pd.DataFrame, configurations, *, ties: str = "half") -> np.ndarray:
    """F × K × K win matrices, one per source figure (task_id, in sorted order)."""
    configurations = _configurations(comparisons, configurations)
    a, b, outcome = _codes(comparisons, configurations)
    to_a, to_b = _vote_weights(outcome, ties)
    figure, _ = pd.factorize(comparisons["task_id"], sort=True)
    k = len(configurations)
    out = np.zeros((figure.max() + 1 if figure.size else 0, k, k))
    np.add.at(out, (figure, a, b), to_a)
    np.add.at(out, (figure, b, a), to_b)
    return out


def cluster_weights(n_clusters: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """resamples × n_clusters draw counts: each row resamples the clusters with replacement."""
    draws = rng.integers(0, n_clusters, size=(resamples, n_clusters), dtype=np.int32)
    offsets = (np.arange(resamples, dtype=np.int64) * n_clusters)[:, None]
    return np.bincount((draws + offsets).ravel(), minlength=resamples * n_clusters).reshape(resamples, n_clusters)


@functools.lru_cache(maxsize=3)
def seeded_cluster_weights(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """cluster_weights drawn by a generator fresh from `seed`, read-only. The agreement tables and the Elo bootstraps
    draw the same weights for the same figures, one after another (26 draws of 33-70 ms in one export of every table
    at paper scale, 6 of them distinct); the three sets kept hold at most 60 MB at 5,000 x 1,000."""
    weights = cluster_weights(n_clusters, resamples, np.random.default_rng(seed)).astype(np.int32)
    weights.flags.writeable = False
    return weights


def _bootstrap_from_figures(
    per_figure: np.ndarray, weights: np.ndarray, *, start: np.ndarray | None = None, chunk: int = 1000
) -> tuple[np.ndarray, int]:
    """Elo samples for each weight row; returns (samples, number of regularised replicates)."""
    f, k, _ = per_figure.shape
    flat = per_figure.reshape(f, k * k)
    out = np.empty((weights.shape[0], k))
    regularised = 0
    for lo in range(0, weights.shape[0], chunk):
        w = (weights[lo : lo + chunk].astype(float) @ flat).reshape(-1, k, k)
        connected = _strongly_connected(w)
        alpha = np.where(connected, 0.0, REGULARISATION_ALPHA)
        regularised += int((~connected).sum())
        out[lo : lo + chunk] = elo_from_beta(_batched_fit(w, alpha, start))
    return out, regularised
