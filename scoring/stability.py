"""Ranking stability of a leaderboard under task resampling (issue 16).

Pure: numpy / pandas / stdlib only — no Django, DRF or Celery.

The procedure is PPTBench's (``scripts/vlm_judge/bootstrap_ranking_stability.py`` in
Einsia/PPTBench at d64c09f, whose output is ``results/bootstrap.json``), re-implemented with the
same random stream, summation order, tie rule and quantile method so that it reproduces that file
value for value:

* Models and tasks are sorted as strings; the score matrix is models × tasks. Only tasks scored
  for every model are used (PPTBench intersects the task sets the same way).
* One ``np.random.default_rng(seed)`` serves every sample size in the order given. For each of
  ``iterations`` draws, ``rng.integers(0, n_tasks, size=sample_size)`` task indices are drawn with
  replacement. (Drawing them as one ``(iterations, sample_size)`` block yields the very same
  integers: numpy's bounded draws consume the generator draw by draw.)
* A draw's model means are ``matrix[:, indices].mean(axis=1)`` (numpy's pairwise sum along the
  task axis, then one division — the order matters for the last bit).
* Orders are ``argsort(-means, kind="stable")``: equal means rank by model name.
* Kendall τ to the full-data order is (concordant − discordant) / (concordant + discordant) over
  all model pairs; top-k "exact set" means the same k models in any order.
* Intervals are numpy's default ("linear") quantiles 0.025 / 0.975 of the draw means; the τ band
  is the 0.05 / 0.95 quantile. A pair is significant when its difference interval excludes 0; its
  flip probability is the share of draws in which the lower model's mean is strictly higher.
* Nothing is rounded: every value is the float numpy computes.

The same function serves ReFigBench rubric scores: pass the long frame of one judge and run (the
task is the source figure), or use :func:`ranking_stability_by` to run it per judge and run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpus.protocol import (
    STABILITY_CI_QUANTILES,
    STABILITY_ITERATIONS,
    STABILITY_SAMPLE_SIZES,
    STABILITY_SEED,
    STABILITY_TAU_QUANTILES,
    STABILITY_TOP_MEMBERSHIP,
    STABILITY_TOP_SETS,
)

STABILITY_COLUMNS = [
    "sample_size",
    "kendall_tau_mean",
    "kendall_tau_p05",
    "kendall_tau_p95",
    "top1_exact_probability",
    "top2_exact_set_probability",
    "top3_exact_set_probability",
    "top5_exact_set_probability",
    "mean_model_ci_width",
    "max_model_ci_width",
]
STABILITY_MODEL_COLUMNS = ["sample_size", "model", "mean", "ci_low", "ci_high", "ci_width", "top3_probability"]
STABILITY_PAIR_COLUMNS = [
    "sample_size",
    "upper_model",
    "lower_model",
    "full_gap",
    "difference_ci_low",
    "difference_ci_high",
    "significant_95pct",
    "rank_flip_probability",
]

# Draws summed in blocks: their running totals (2,000 x 10 models, 160 kB) stay in the CPU's cache across the tasks
# (tests/benchmarks/test_scoring_bench.py).
_DRAW_BLOCK = 2_000


class UnusableDesign(ValueError):
    """Scores a ranking cannot be drawn from (fewer than two models, no task scored for every model): a fact about the
    design to state beside the table, not a fault."""


@dataclass(frozen=True)
class RankingStability:
    """The three tables (``pptbench-stability``, ``-models``, ``-pairs``) plus the full ranking."""

    stability: pd.DataFrame
    models: pd.DataFrame
    pairs: pd.DataFrame
    full_ranking: pd.DataFrame  # rank, model, mean_score
    task_count: int
    dropped_tasks: int
    iterations: int
    seed: int
    skipped: tuple[str, ...] = ()  # the groups left out, each with why


@dataclass(frozen=True)
class DrawSummary:
    """Rows summarising one sample size: one stability row, K model rows, K − 1 adjacent pairs."""

    stability: dict
    models: list[dict]
    pairs: list[dict]


# --------------------------------------------------------------------------------------------
# Input


def pptbench_long(scores: pd.DataFrame, *, score_column: str = "total_score") -> pd.DataFrame:
    """PPTBench ``scores.csv`` as the long (task_id, model, score) frame; ``total_score`` is the
    column PPTBench's bootstrap uses. The scores must be the floats Python's ``float()`` parses
    (pandas 3's default CSV parser gives them; on pandas 2 pass ``float_precision="round_trip"``)."""
    return pd.DataFrame({"task_id": scores["task_id"], "model": scores["candidate_id"], "score": scores[score_column]})


def score_matrix(
    scores: pd.DataFrame, *, task_column: str = "task_id", model_column: str = "model", score_column: str = "score"
) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray, int]:
    """(models, tasks, models × tasks matrix, tasks dropped) from a long frame.

    Names are compared as strings and sorted with Python's ``sorted``. A task lacking a score
    (absent or NaN) for any model is dropped, as PPTBench does; duplicates are an error.
    """
    frame = pd.DataFrame(
        {
            "task": scores[task_column].astype(str),
            "model": scores[model_column].astype(str),
            "score": pd.to_numeric(scores[score_column], errors="raise").astype(float),
        }
    )
    if frame.duplicated(["task", "model"]).any():
        raise ValueError("duplicate score for a (task, model) pair")
    frame = frame.dropna(subset=["score"])
    models = tuple(sorted(frame["model"].unique()))
    if len(models) < 2:
        raise UnusableDesign(f"fewer than two configurations have scores ({', '.join(models) or 'none'})")
    all_tasks = set(scores[task_column].astype(str))
    wide = frame.pivot(index="model", columns="task", values="score")
    complete = wide.columns[wide.notna().all(axis=0)]
    tasks = tuple(sorted(complete))
    if not tasks:
        raise UnusableDesign("no figure is scored for every configuration")
    matrix = np.ascontiguousarray(wide.loc[list(models), list(tasks)].to_numpy(dtype=float))
    return models, tasks, matrix, len(all_tasks) - len(tasks)


# --------------------------------------------------------------------------------------------
# Summaries shared with bt_elo.stability


def ranks_of(orders: np.ndarray) -> np.ndarray:
    """Position of every model in each order (rows of ``orders`` list model indices best first)."""
    positions = np.empty_like(orders)
    np.put_along_axis(positions, orders, np.arange(orders.shape[1])[None, :].repeat(orders.shape[0], axis=0), axis=1)
    return positions


def kendall_tau_to_reference(reference_order: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """Kendall τ of every row of ``orders`` (model indices, best first) to ``reference_order``.

    (concordant − discordant) / max(1, concordant + discordant) over all model pairs, counted in
    integers so the float is the correctly rounded quotient.
    """
    k = orders.shape[1]
    reference_positions = ranks_of(np.asarray(reference_order)[None, :])[0]
    positions = ranks_of(orders)
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    ref_sign = np.sign(reference_positions[:, None] - reference_positions[None, :])[upper]
    out = np.empty(orders.shape[0])
    for lo in range(0, orders.shape[0], 2000):  # bounds the rows × K × K sign cube
        p = positions[lo : lo + 2000]
        same = (p[:, :, None] - p[:, None, :])[:, upper] * ref_sign[None, :]
        concordant = (same > 0).sum(axis=1)
        discordant = (same < 0).sum(axis=1)
        out[lo : lo + 2000] = (concordant - discordant) / np.maximum(1, concordant + discordant)
    return out


def summarise_draws(
    *,
    models: Sequence[str],
    full_values: np.ndarray,
    draws: np.ndarray,
    sample_size: int,
) -> DrawSummary:
    """Stability rows from per-draw model values (draws × K; higher is better) and the full-data values.

    Used for task-resampled score means here and for figure-resampled Elo in bt_elo.stability.
    """
    iterations, k = draws.shape
    full_order = np.argsort(-full_values, kind="stable")
    orders = np.argsort(-draws, axis=1, kind="stable")
    taus = kendall_tau_to_reference(full_order, orders)

    stability = {"sample_size": int(sample_size)}
    stability["kendall_tau_mean"] = float(taus.mean())
    stability["kendall_tau_p05"] = float(np.quantile(taus, STABILITY_TAU_QUANTILES[0]))
    stability["kendall_tau_p95"] = float(np.quantile(taus, STABILITY_TAU_QUANTILES[1]))
    stability["top1_exact_probability"] = float(np.count_nonzero(orders[:, 0] == full_order[0]) / iterations)
    for size in STABILITY_TOP_SETS:
        # Same set of k models in any order: the drawn top k all belong to the full top k.
        in_full_top = np.isin(orders[:, :size], full_order[:size]).all(axis=1)
        stability[f"top{size}_exact_set_probability"] = float(np.count_nonzero(in_full_top) / iterations)

    low, high = np.quantile(draws, STABILITY_CI_QUANTILES, axis=0)
    widths = high - low
    top_counts = np.bincount(orders[:, :STABILITY_TOP_MEMBERSHIP].ravel(), minlength=k)
    model_rows = [
        {
            "sample_size": int(sample_size),
            "model": models[i],
            "mean": float(full_values[i]),
            "ci_low": float(low[i]),
            "ci_high": float(high[i]),
            "ci_width": float(widths[i]),
            "top3_probability": float(top_counts[i] / iterations),
        }
        for i in range(k)
    ]
    stability["mean_model_ci_width"] = float(np.mean(widths))  # in model order, like PPTBench
    stability["max_model_ci_width"] = float(np.max(widths))

    upper, lower = full_order[:-1], full_order[1:]
    differences = draws[:, upper] - draws[:, lower]
    d_low, d_high = np.quantile(differences, STABILITY_CI_QUANTILES, axis=0)
    flips = np.count_nonzero(differences < 0, axis=0)
    pair_rows = [
        {
            "sample_size": int(sample_size),
            "upper_model": models[u],
            "lower_model": models[v],
            "full_gap": float(full_values[u] - full_values[v]),
            "difference_ci_low": float(d_low[n]),
            "difference_ci_high": float(d_high[n]),
            "significant_95pct": bool(d_low[n] > 0 or d_high[n] < 0),
            "rank_flip_probability": float(flips[n] / iterations),
        }
        for n, (u, v) in enumerate(zip(upper, lower))
    ]
    return DrawSummary(stability=stability, models=model_rows, pairs=pair_rows)


# --------------------------------------------------------------------------------------------
# Task-resampling bootstrap


def resampled_means(matrix: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """draws × models means of ``matrix`` (models × tasks) over each row of task ``indices``.

    Summed one drawn task at a time, left to right, for a block of draws at once: the order numpy's reduction
    takes in PPTBench's per-draw ``matrix[:, idx].mean(axis=1)``, whose reduced axis is not the contiguous one, so
    the means are PPTBench's to the last bit (its published bootstrap.json is reproduced exactly)."""
    by_task = np.ascontiguousarray(matrix.T, dtype=float)
    draws, size = indices.shape
    out = np.empty((draws, matrix.shape[0]))
    for lo in range(0, draws, _DRAW_BLOCK):
        block = np.ascontiguousarray(indices[lo : lo + _DRAW_BLOCK].T)  # size × block: one drawn task per row
        total = np.zeros((block.shape[1], matrix.shape[0]))
        row = np.empty_like(total)
        for tasks in block:
            np.take(by_task, tasks, axis=0, out=row)
            total += row
        out[lo : lo + _DRAW_BLOCK] = total / size
    return out


def ranking_stability(
    scores: pd.DataFrame,
    *,
    sample_sizes: Sequence[int] = STABILITY_SAMPLE_SIZES,
    iterations: int = STABILITY_ITERATIONS,
    seed: int = STABILITY_SEED,
    task_column: str = "task_id",
    model_column: str = "model",
    score_column: str = "score",
) -> RankingStability:
    """Task-resampling bootstrap of the leaderboard's stability at each sample size (see module doc)."""
    if iterations < 1:
        raise ValueError("iterations must be positive")
    if any(int(size) < 1 for size in sample_sizes):
        raise ValueError("sample sizes must be positive")
    models, tasks, matrix, dropped = score_matrix(
        scores, task_column=task_column, model_column=model_column, score_column=score_column
    )
    full_means = matrix.mean(axis=1)
    rng = np.random.default_rng(seed)
    stability, model_rows, pair_rows = [], [], []
    for size in sample_sizes:
        indices = rng.integers(0, len(tasks), size=(iterations, int(size)))
        summary = summarise_draws(
            models=models, full_values=full_means, draws=resampled_means(matrix, indices), sample_size=int(size)
        )
        stability.append(summary.stability)
        model_rows.extend(summary.models)
        pair_rows.extend(summary.pairs)
    full_order = np.argsort(-full_means, kind="stable")
    full_ranking = pd.DataFrame(
        {
            "rank": np.arange(1, len(models) + 1),
            "model": [models[i] for i in full_order],
            "mean_score": full_means[full_order],
        }
    )
    return RankingStability(
        stability=pd.DataFrame(stability, columns=STABILITY_COLUMNS),
        models=pd.DataFrame(model_rows, columns=STABILITY_MODEL_COLUMNS),
        pairs=pd.DataFrame(pair_rows, columns=STABILITY_PAIR_COLUMNS),
        full_ranking=full_ranking,
        task_count=len(tasks),
        dropped_tasks=dropped,
        iterations=iterations,
        seed=seed,
    )


def ranking_stability_by(
    scores: pd.DataFrame,
    *,
    by: Sequence[str] = ("judge", "run"),
    sample_sizes: Sequence[int] = STABILITY_SAMPLE_SIZES,
    iterations: int = STABILITY_ITERATIONS,
    seed: int = STABILITY_SEED,
    task_column: str = "task_id",
    model_column: str = "configuration",
    score_column: str = "score",
    workers: int | None = None,
) -> RankingStability:
    """:func:`ranking_stability` per group (ReFigBench: per judge and run, resampling figures).

    Every group starts from the same seed, so a group's rows do not depend on which other groups
    are present. The group keys lead every table; ``full_ranking`` carries them too. ``workers``:
    groups computed at once (default: one per core); the results do not depend on it.
    """
    by = list(by)
    parts: dict[str, list[pd.DataFrame]] = {"stability": [], "models": [], "pairs": [], "full_ranking": []}
    task_count, dropped = 0, 0
    groups = [(k if isinstance(k, tuple) else (k,), g) for k, g in scores.groupby(by, sort=True, dropna=False)]

    def one(group: pd.DataFrame) -> RankingStability | str:
        try:
            return ranking_stability(
                group,
                sample_sizes=sample_sizes,
                iterations=iterations,
                seed=seed,
                task_column=task_column,
                model_column=model_column,
                score_column=score_column,
            )
        except UnusableDesign as reason:
            return str(reason)

    # The groups are independent and numpy's gathers and sums release the GIL, so they run a thread per core; each
    # result is the one a lone call gives, collected in group order.
    with ThreadPoolExecutor(max_workers=max(1, min(len(groups), workers or os.cpu_count() or 1))) as pool:
        results = list(pool.map(one, (group for _, group in groups)))
    skipped = []
    for (keys, _), result in zip(groups, results):
        if isinstance(result, str):
            described = ", ".join(f"{column} {value}" for column, value in zip(by, keys))
            skipped.append(f"{described}: left out, {result}")
            continue
        for name, tables in parts.items():
            table = getattr(result, name).copy()
            for position, (column, value) in enumerate(zip(by, keys)):
                table.insert(position, column, value)
            tables.append(table)
        task_count = max(task_count, result.task_count)
        dropped += result.dropped_tasks
    columns = {
        "stability": by + STABILITY_COLUMNS,
        "models": by + STABILITY_MODEL_COLUMNS,
        "pairs": by + STABILITY_PAIR_COLUMNS,
        "full_ranking": by + ["rank", "model", "mean_score"],
    }
    tables = {
        name: pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns[name])
        for name, frames in parts.items()
    }
    return RankingStability(
        **tables,
        task_count=task_count,
        dropped_tasks=dropped,
        iterations=iterations,
        seed=seed,
        skipped=tuple(skipped),
    )
