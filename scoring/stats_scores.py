"""Score tables of :mod:`scoring.stats`: the per-run and mean-over-runs views of the long scores
frame (:func:`run_means`, and the helpers that stack both views and order result rows numbered runs
first), ``config-scores`` (per configuration, judge and run: n, mean with bootstrap CI, quartiles,
shares, subscore means, missing records) and ``domain-scores`` (per field: pooled mean and the best
configuration). Pure: no Django, DRF or Celery."""

from __future__ import annotations

import pandas as pd

from agents.configurations import DESIGN_FIELDS
from corpus.protocol import SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED
from scoring.stats_base import AXES, MEAN_RUN, _bootstrap_ci, _task_universe

CONFIG_SCORES_COLUMNS = [
    "configuration",
    "judge",
    "run",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "p25",
    "p50",
    "p75",
    "share_ge_80",
    "share_lt_50",
    *AXES,
    "missing",
]
DOMAIN_COLUMNS = ["field", "judge", "run", "tasks", "pooled_mean", "best_configuration", "best_mean"]


# --------------------------------------------------------------------------------------------
# Per-run and mean-over-runs views
# --------------------------------------------------------------------------------------------

_ATTRS = [*DESIGN_FIELDS, "effort_rank", "field", "judge_family", "gate_passed", "cap"]


def run_means(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (configuration, judge, task): score, quality and subscores averaged over the
    runs that have a record (NaN if none), run = "mean"; descriptive columns carried over."""
    value_cols = [c for c in ["score", "quality", *AXES] if c in scores.columns]
    keys = ["configuration", "judge", "task_id"]
    grouped = scores.groupby(keys, sort=False)
    out = grouped[value_cols].mean()
    attrs = [c for c in _ATTRS if c in scores.columns]
    if attrs:
        out = out.join(grouped[attrs].first())
    out = out.reset_index()
    out["run"] = MEAN_RUN
    return out


_KEY_COLUMNS = ["configuration", *DESIGN_FIELDS, "task_id", "field", "judge", "judge_family"]


def _with_mean_runs(scores: pd.DataFrame) -> pd.DataFrame:
    per_run = scores.copy()
    per_run["run"] = per_run["run"].astype(object)
    both = pd.concat([per_run, run_means(scores)], ignore_index=True)
    # Factorise the grouping keys once (the tables group by them many times); results are
    # turned back into plain values by _plain.
    for c in [*_KEY_COLUMNS, "run"]:
        if c in both.columns:
            both[c] = both[c].astype("category")
    return both


def _plain(table: pd.DataFrame) -> pd.DataFrame:
    for c in table.columns:
        if isinstance(table[c].dtype, pd.CategoricalDtype):
            table[c] = table[c].astype(object) if c == "run" else table[c].astype(table[c].cat.categories.dtype)
    return table


def _run_order(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Sort result rows by keys with numbered runs first, then "mean"."""
    frame = _plain(frame.copy())
    frame["_r"] = frame["run"].map(lambda r: (1, 0) if r == MEAN_RUN else (0, int(r)))
    frame = frame.sort_values([*[k for k in keys if k != "run"], "_r"], kind="stable")
    return frame.drop(columns="_r").reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# config-scores
# --------------------------------------------------------------------------------------------


def config_scores(
    scores: pd.DataFrame, *, resamples: int = SCORE_BOOTSTRAP_RESAMPLES, seed: int = SCORE_BOOTSTRAP_SEED
) -> pd.DataFrame:
    """Per (configuration, judge, run) and per (configuration, judge) on the mean over runs:
    n (tasks with a record), mean with 95 % bootstrap CI over tasks, P25/P50/P75, share ≥ 80,
    share < 50, subscore means, and ``missing`` (records absent, excluded from the mean)."""
    keys = ["configuration", "judge", "run"]
    both = _with_mean_runs(scores)
    missing = both["score"].isna().groupby([both[k] for k in keys], sort=False).sum()
    present = both[both["score"].notna()]
    g = present.groupby(keys, sort=False)
    s = g["score"]
    table = pd.DataFrame(
        {
            "n": s.size(),
            "mean": s.mean(),
            "p25": s.quantile(0.25),
            "p50": s.quantile(0.50),
            "p75": s.quantile(0.75),
            "share_ge_80": (present["score"] >= 80).groupby([present[k] for k in keys], sort=False).mean(),
            "share_lt_50": (present["score"] < 50).groupby([present[k] for k in keys], sort=False).mean(),
        }
    )
    table = table.join(g[list(AXES)].mean())
    table = table.reindex(missing.index)
    table["missing"] = missing.astype(int)
    table["n"] = table["n"].fillna(0).astype(int)
    table = table.reset_index()

    cis = _bootstrap_ci(present, keys, "score", _task_universe(scores), resamples, seed)
    table = table.merge(cis, on=keys, how="left")
    return _run_order(table[CONFIG_SCORES_COLUMNS], keys)


# --------------------------------------------------------------------------------------------
# domain-scores
# --------------------------------------------------------------------------------------------


def domain_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (field, judge, run): tasks in the field, pooled mean over all configurations' scored
    artifacts, and the best configuration's mean (ties: first in configuration order)."""
    both = _with_mean_runs(scores)
    keys = ["field", "judge", "run"]
    tasks = both.groupby(keys, sort=False)["task_id"].nunique().rename("tasks")
    present = both[both["score"].notna()]
    pooled = present.groupby(keys, sort=False)["score"].mean().rename("pooled_mean")
    per_config = present.groupby([*keys, "configuration"], sort=True)["score"].mean().reset_index()
    per_config = per_config.sort_values(
        [*keys, "score", "configuration"], ascending=[True] * len(keys) + [False, True], kind="stable"
    )
    best = per_config.drop_duplicates(keys).set_index(keys)
    best = best.rename(columns={"configuration": "best_configuration", "score": "best_mean"})
    table = pd.concat([tasks, pooled, best], axis=1).reset_index()
    table["tasks"] = table["tasks"].astype(int)
    return _run_order(table[DOMAIN_COLUMNS], keys)
