"""``rubric-means``: each rubric axis's mean per configuration with its 95 % bootstrap CI over tasks, per judge and
run and on each task's mean over runs, in long form (one row per configuration, judge, run and axis) with the
configuration's model, harness, workflow and effort, so a figure can set direct beside specialized for each model and
harness. The resampling is config-scores' (seed 7, 5,000 resamples over tasks, every group seeing the same
resampled tasks). Pure: no Django, DRF or Celery."""

from __future__ import annotations

import pandas as pd

from corpus.protocol import RUBRIC_MAXIMA, SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED
from scoring.stats_base import AXES, _bootstrap_ci, _task_universe
from scoring.stats_scores import _run_order, _with_mean_runs

RUBRIC_MEANS_COLUMNS = [
    "configuration",
    "model",
    "harness",
    "workflow",
    "reasoning_effort",
    "judge",
    "run",
    "axis",
    "maximum",
    "n",
    "mean",
    "ci_low",
    "ci_high",
]


def rubric_means(
    scores: pd.DataFrame, *, resamples: int = SCORE_BOOTSTRAP_RESAMPLES, seed: int = SCORE_BOOTSTRAP_SEED
) -> pd.DataFrame:
    """Per (configuration, judge, run, axis): n (tasks with a value), the mean subscore and its percentile CI. A
    gate-failed artifact counts with every subscore 0 (as its final score does); a missing record is left out."""
    if scores.empty:
        return pd.DataFrame([], columns=RUBRIC_MEANS_COLUMNS)
    keys = ["configuration", "judge", "run"]
    both = _with_mean_runs(scores)
    universe = _task_universe(scores)
    design = [c for c in ("model", "harness", "workflow", "reasoning_effort") if c in both]
    parts = []
    for axis in AXES:
        present = both[both[axis].notna()]
        grouped = present.groupby(keys, sort=False, observed=True)[axis]
        table = pd.DataFrame({"n": grouped.size(), "mean": grouped.mean()}).reset_index()
        table = table.merge(_bootstrap_ci(present, keys, axis, universe, resamples, seed), on=keys, how="left")
        if design:
            table = table.merge(
                present.groupby(keys, sort=False, observed=True)[design].first().reset_index(), on=keys, how="left"
            )
        parts.append(table.assign(axis=axis, maximum=RUBRIC_MAXIMA[axis]))
    table = pd.concat(parts, ignore_index=True).reindex(columns=RUBRIC_MEANS_COLUMNS)
    table["n"] = table["n"].astype(int)
    # Stable: within a configuration, judge and run the axes stay in the rubric's order (T, S, L, E, V).
    return _run_order(table, keys)
