"""Judge agreement of :mod:`scoring.stats`: ICC(2,1) for stacks of complete rating matrices,
``judge-runs`` (per configuration and judge: each run's mean, the per-task spread across runs and the
runs' ICC) and ``judge-families`` (configuration means under each judge family with their rank
agreement). Pure: no Django, DRF or Celery."""

from __future__ import annotations

import numpy as np
import pandas as pd

from scoring.stats_base import NO_JUDGE_SCORES, NoJudgeScores, correlation


def icc_2_1(ratings: np.ndarray) -> np.ndarray:
    """ICC(2,1) (Shrout & Fleiss; two-way random, absolute agreement, single rater) from ANOVA
    mean squares, for a stack of complete (targets × raters) matrices: shape (..., n, k).
    ICC = (MSR − MSE) / (MSR + (k−1)·MSE + k·(MSC − MSE)/n)."""
    x = np.asarray(ratings, dtype=float)
    n, k = x.shape[-2], x.shape[-1]
    grand = x.mean(axis=(-2, -1), keepdims=True)
    rows = x.mean(axis=-1, keepdims=True)
    cols = x.mean(axis=-2, keepdims=True)
    ss_r = k * ((rows - grand) ** 2).sum(axis=(-2, -1))
    ss_c = n * ((cols - grand) ** 2).sum(axis=(-2, -1))
    ss_e = ((x - rows - cols + grand) ** 2).sum(axis=(-2, -1))
    msr = ss_r / (n - 1)
    msc = ss_c / (k - 1)
    mse = ss_e / ((n - 1) * (k - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)


def judge_runs(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (configuration, judge): number of runs, each run's mean (``run_1`` … ``run_k``, over
    that run's records), mean over runs (mean of the per-task means), mean over tasks of the
    per-task SD across runs (ddof=1, tasks with ≥ 2 records), and ICC(2,1) with tasks as targets
    and runs as raters on tasks scored in every run (``icc_tasks``)."""
    keys = ["configuration", "judge"]
    present = scores[scores["score"].notna()]
    wide = present.pivot_table(index=[*keys, "task_id"], columns="run", values="score", aggfunc="mean")
    runs_all = sorted(wide.columns)
    run_means_ = wide.groupby(level=keys, sort=True).mean()
    run_means_.columns = [f"run_{r}" for r in run_means_.columns]
    table = pd.DataFrame(
        {
            "runs": present.groupby(keys, sort=True)["run"].nunique(),
            "mean_over_runs": wide.mean(axis=1).groupby(level=keys, sort=True).mean(),
            "mean_task_sd": wide.std(axis=1, ddof=1).groupby(level=keys, sort=True).mean(),
        }
    )
    table = table.join(run_means_)
    # ICC: complete tasks over the runs this (configuration, judge) has; vectorised per shape.
    icc = pd.Series(np.nan, index=table.index)
    icc_n = pd.Series(0, index=table.index)
    shapes: dict[tuple[int, tuple], list[tuple[tuple, np.ndarray]]] = {}
    for key, block in wide.groupby(level=keys, sort=True):
        block = block.dropna(axis=1, how="all").dropna(axis=0, how="any")
        icc_n[key] = len(block)
        if len(block) >= 2 and block.shape[1] >= 2:
            shapes.setdefault(block.shape, []).append((key, block.to_numpy()))
    for _, members in shapes.items():
        values = icc_2_1(np.stack([m for _, m in members]))
        for (key, _), v in zip(members, values):
            icc[key] = v
    table["icc_2_1"] = icc
    table["icc_tasks"] = icc_n.astype(int)
    cols = ["runs", *[f"run_{r}" for r in runs_all], "mean_over_runs", "mean_task_sd", "icc_2_1", "icc_tasks"]
    return table.reset_index()[[*keys, *cols]]


def judge_families(scores: pd.DataFrame) -> pd.DataFrame:
    """Configuration means (each task's mean over runs, then over tasks) under each judge family,
    one column per family (in sorted order), one row per configuration. The rank agreement of
    every other family with the first is added as columns repeated on every row:
    ``spearman_rho``, ``spearman_p``, ``kendall_tau``, ``kendall_p`` (scipy.stats, tau-b) when
    there are exactly two families; with more, the same names suffixed ``__<family>``."""
    m = scores[scores["score"].notna()].groupby(["configuration", "judge_family", "task_id"], sort=True)["score"].mean()
    wide = m.groupby(level=["configuration", "judge_family"]).mean().unstack("judge_family")
    families = sorted(wide.columns)
    if not families:
        raise NoJudgeScores(NO_JUDGE_SCORES)
    wide = wide[families]
    wide.columns.name = None
    out = wide.reset_index()
    first = families[0]
    for fam in families[1:]:
        pair = wide[[first, fam]].dropna()
        rho, rho_p = correlation("spearman", pair[first], pair[fam])
        tau, tau_p = correlation("kendall", pair[first], pair[fam])
        suffix = "" if len(families) == 2 else f"__{fam}"
        out[f"spearman_rho{suffix}"] = float(rho)
        out[f"spearman_p{suffix}"] = float(rho_p)
        out[f"kendall_tau{suffix}"] = float(tau)
        out[f"kendall_p{suffix}"] = float(tau_p)
    return out
