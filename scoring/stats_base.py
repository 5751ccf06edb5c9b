"""Shared pieces of the automated-score analyses in :mod:`scoring.stats`: the rubric axes, the
"mean" run label and the CI level, correlations with a quiet NaN when undefined, the final score
s = g·min(Q, c), the bootstrap primitives every table resamples with (one index draw per (seed,
resamples, N), group means computed at once as (C @ V) / (C @ M); the conventions are in
:mod:`scoring.stats`), and the error raised when a table needs judge scores that do not exist yet.
Pure: no Django, DRF or Celery."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from corpus.protocol import RUBRIC_AXES, SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED

AXES: tuple[str, ...] = tuple(RUBRIC_AXES)
MEAN_RUN = "mean"
CI_LEVEL = 0.95
_Q_LOW, _Q_HIGH = 100 * (1 - CI_LEVEL) / 2, 100 * (1 + CI_LEVEL) / 2

NO_JUDGE_SCORES = "no judge scores yet: run `manage.py judge` or `manage.py import_judge_records` first"


class NoJudgeScores(ValueError):
    """A table that needs judge scores asked before there are any."""


# scipy.stats' function of each kind, looked up on use: importing scipy.stats costs about 1 s at every process start.
_CORRELATIONS = {"pearson": "pearsonr", "spearman": "spearmanr", "kendall": "kendalltau"}


def correlation(kind: str, x, y) -> tuple[float, float]:
    """(statistic, p-value) of scipy.stats' Pearson r, Spearman ρ or Kendall τ-b between paired values. NaN, quietly,
    when it is undefined: fewer than two pairs, or a side that never varies (scipy would warn on every table)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan, np.nan
    from scipy import stats

    result = getattr(stats, _CORRELATIONS[kind])(x, y)
    return float(result.statistic), float(result.pvalue)


def final_score(gate_passed, quality, cap):
    """s = g · min(Q, c), vectorised. A gate failure is 0 even without a judge record; a passed
    artifact with a missing record (Q NaN) stays NaN. Returns a Series when given one."""
    g = np.asarray(gate_passed, dtype=bool)
    q = np.asarray(quality, dtype=float)
    c = np.asarray(cap, dtype=float)
    s = np.where(g, np.minimum(q, c), 0.0)
    if isinstance(quality, pd.Series):
        return pd.Series(s, index=quality.index, name="score")
    if isinstance(gate_passed, pd.Series):
        return pd.Series(s, index=gate_passed.index, name="score")
    return s if s.ndim else float(s)


@lru_cache(maxsize=64)
def bootstrap_indices(
    n: int, *, resamples: int = SCORE_BOOTSTRAP_RESAMPLES, seed: int = SCORE_BOOTSTRAP_SEED
) -> np.ndarray:
    """The (resamples × n) index matrix over the n sorted task ids of the input:
    ``np.random.default_rng(seed).integers(0, n, size=(resamples, n))``. Read-only, cached."""
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    idx.setflags(write=False)
    return idx


@lru_cache(maxsize=64)
def _bootstrap_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """counts[r, i] = how often task i is drawn in resample r (from :func:`bootstrap_indices`)."""
    idx = bootstrap_indices(n, resamples=resamples, seed=seed)
    counts = np.empty((resamples, n))
    for r in range(resamples):  # row by row stays in cache: ~3x faster than one flat bincount
        counts[r] = np.bincount(idx[r], minlength=n)
    counts.setflags(write=False)
    return counts


def _task_universe(scores: pd.DataFrame) -> pd.Index:
    """The tasks every bootstrap resamples: all task ids of the input, sorted."""
    return pd.Index(np.sort(scores["task_id"].unique()))


def _bootstrap_ci(
    frame: pd.DataFrame, keys: list[str], value: str, universe: pd.Index, resamples: int, seed: int
) -> pd.DataFrame:
    """Percentile CI of the group mean for every group of ``frame`` at once.

    One resample draws ``len(universe)`` tasks with replacement (:func:`bootstrap_indices`); a
    group's resample mean is the mean of its value over the drawn tasks it has a value for
    (multiplicity counted). Without missing values this is the ordinary bootstrap of the mean over
    tasks; all groups — and both sides of every pair — see the very same resampled tasks. Computed
    as (C @ V) / (C @ M) with C the resample × task multiplicity matrix, V the task × group values
    (0 where absent) and M the presence mask."""
    f = frame[frame[value].notna()]
    codes = f.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    key_rows = f[keys].iloc[np.unique(codes, return_index=True)[1]].reset_index(drop=True)
    rows = universe.get_indexer(f["task_id"])
    if (rows < 0).any():
        raise ValueError("task ids outside the bootstrap universe")
    n, g = len(universe), len(key_rows)
    if n == 0 or g == 0:
        return key_rows.assign(ci_low=np.full(g, np.nan), ci_high=np.full(g, np.nan))
    values = np.zeros((n, g))
    mask = np.zeros((n, g))
    values[rows, codes] = f[value].to_numpy(dtype=float)
    mask[rows, codes] = 1.0
    counts = _bootstrap_counts(n, resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (counts @ values) / (counts @ mask)
    lo, hi = np.nanpercentile(boot, [_Q_LOW, _Q_HIGH], axis=0)
    return key_rows.assign(ci_low=lo, ci_high=hi)
