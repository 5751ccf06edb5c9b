"""Automated-score analyses (REFERENCE 4): the tables built from judge scores.

Pure: numpy / pandas / scipy only — no Django, DRF or Celery. Every function takes the long
"scores" frame (one row per configuration × task × judge × run) and returns a DataFrame whose
leading columns are the export contract (DESIGN "Exports"); extra columns may follow.

Input columns: ``configuration, model, harness, workflow, task_id, field, judge, judge_family,
run, gate_passed, cap, quality, score, text, semantic_structure, layout, editability,
visual_detail``. ``score`` is s = g·min(Q, c), NaN when the judge record is missing.

Conventions shared by every table
---------------------------------
* Gate failures score 0 and stay in every denominator (they are ordinary rows with score 0).
* A missing judge record (score NaN) is *excluded* from its group's mean, never counted as 0;
  the number excluded is reported (``missing`` / ``unpaired`` columns).
* ``run`` is the run number, or the string ``"mean"`` for the row computed on the per-task mean
  over runs (a task's mean over the runs that have a record; a task with no record in any run is
  missing).
* Bootstrap (seed and resamples from corpus.protocol, REFERENCE 4): the tasks resampled are all
  task ids of the input frame, sorted (N of them). The index matrix is drawn once:
  ``np.random.default_rng(seed).integers(0, N, size=(resamples, N))`` (:func:`bootstrap_indices`),
  so it depends only on (seed, resamples, N), and every group of every table — and both sides of
  each paired comparison — is resampled with the very same draws. A group's resample mean is the
  mean of its values over the drawn tasks it has a value for (multiplicity counted; tasks with a
  missing record drop out of that resample's mean, like they drop out of the point estimate);
  with no missing records this is exactly ``values[idx].mean(axis=1)``. It is computed for all
  groups at once as ``(C @ V) / (C @ M)`` (C: resample × task draw counts; V: task × group values,
  0 where absent; M: presence mask). The CI is the 2.5 / 97.5 percentile (numpy "linear") of the
  resample means; a resample that drew none of a group's tasks has no mean and is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats as sps

from agents.configurations import DESIGN_FIELDS
from corpus.protocol import (
    FLATTEN_PICTURE_SHARE,
    RUBRIC_AXES,
    RUBRIC_MAXIMA,
    SCORE_BOOTSTRAP_RESAMPLES,
    SCORE_BOOTSTRAP_SEED,
)

AXES: tuple[str, ...] = tuple(RUBRIC_AXES)
DELTA_AXES: tuple[str, ...] = tuple(f"d_{a}" for a in AXES)
MEAN_RUN = "mean"
CI_LEVEL = 0.95
_Q_LOW, _Q_HIGH = 100 * (1 - CI_LEVEL) / 2, 100 * (1 + CI_LEVEL) / 2
# Two scores closer than this are a tie (exact for integer rubric points; absorbs float noise
# in means over runs).
TIE_TOLERANCE = 1e-9

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
PAIRED_COLUMNS = [
    "model",
    "harness",
    "judge",
    "run",
    "n",
    "delta",
    "ci_low",
    "ci_high",
    "wins",
    "ties",
    "losses",
    *DELTA_AXES,
]
HARNESS_COLUMNS = [
    "model",
    "workflow",
    "harness_a",
    "harness_b",
    "judge",
    "run",
    "n",
    "delta",
    "ci_low",
    "ci_high",
    "wins",
    "ties",
    "losses",
]
DOMAIN_COLUMNS = ["field", "judge", "run", "tasks", "pooled_mean", "best_configuration", "best_mean"]
AUDIT_COLUMNS = [
    "configuration",
    "n",
    "share_any_picture",
    "share_largest_ge_85",
    "capped",
    "share_no_connector",
    "median_text_boxes",
    "median_shapes",
    "median_connectors",
    "share_s_lt_15",
    "share_final_lt_50",
]
SENSITIVITY_COLUMNS = [
    "variant",
    *(f"w_{a}" for a in AXES),
    "spearman_default",
    "pearson_elo",
]
SENSITIVITY_EFFECT_COLUMNS = [
    "variant",
    "model",
    "harness",
    "delta",
    "ci_low",
    "ci_high",
    "ci_contains_zero",
    "sign_change_w_editability",
]
# Semantic-structure credit below half its maximum (REFERENCE 4, structural audit).
S_HALF_CREDIT = RUBRIC_MAXIMA["semantic_structure"] / 2


# --------------------------------------------------------------------------------------------
# Final score and bootstrap primitives
# --------------------------------------------------------------------------------------------


_CORRELATIONS = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}


def correlation(kind: str, x, y) -> tuple[float, float]:
    """(statistic, p-value) of scipy.stats' Pearson r, Spearman ρ or Kendall τ-b between paired values. NaN, quietly,
    when it is undefined: fewer than two pairs, or a side that never varies (scipy would warn on every table)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan, np.nan
    result = _CORRELATIONS[kind](x, y)
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
# paired-effects and harness effects
# --------------------------------------------------------------------------------------------


def _design_columns(frame: pd.DataFrame, varied: str) -> list[str]:
    """The design attributes a paired comparison holds equal: every one the frame has except the one it varies."""
    return [c for c in DESIGN_FIELDS if c != varied and c in frame.columns]


def _twins(part: pd.DataFrame, design: list[str]) -> set[str]:
    """Configurations of ``part`` identical to another one in every design attribute: no pairing can tell them apart."""
    designs = part.drop_duplicates("configuration")
    return {str(c) for c in designs.loc[designs.duplicated(design, keep=False), "configuration"]}


def _pair(both: pd.DataFrame, side: str, a: str, b: str) -> tuple[pd.DataFrame, list[str]]:
    """Join side a and side b task by task among configurations equal in every other design attribute (+ judge,
    run); diff = b − a. Configurations identical in every attribute cannot be told apart, so they pair with nothing:
    their slugs come back as the second value, for the table's note."""
    group = _design_columns(both, side)
    cols = ["score", *AXES]
    on = [*group, "judge", "run", "task_id"]
    sides = []
    ambiguous: set[str] = set()
    for value in (a, b):
        part = both[both[side] == value][[*on, *cols, "configuration"]]
        twins = _twins(part, group)
        ambiguous |= twins
        sides.append(part[~part["configuration"].astype(str).isin(twins)])
    merged = sides[0].merge(sides[1], on=on, how="outer", suffixes=("_a", "_b"))
    # Only comparisons where both sides exist at all (a workflow run in one harness only is no pair).
    gkeys = [merged[k] for k in on[:-1]]
    has_a = merged["configuration_a"].notna().groupby(gkeys, sort=False, observed=True).transform("any")
    has_b = merged["configuration_b"].notna().groupby(gkeys, sort=False, observed=True).transform("any")
    merged = merged[has_a & has_b].copy()
    merged["diff"] = merged["score_b"] - merged["score_a"]
    for ax in AXES:
        merged[f"d_{ax}"] = merged[f"{ax}_b"] - merged[f"{ax}_a"]
    return merged, sorted(ambiguous)


def _pairing_notes(
    scores: pd.DataFrame, side: str, a: str, b: str, merged: pd.DataFrame, twins: list[str]
) -> list[str]:
    """What a paired table compares, over which configurations, and what it leaves out."""
    held = ", ".join(c.replace("_", " ") for c in _design_columns(scores, side))
    notes = [f"{side} effect {b} − {a}, pairing configurations equal in {held} and differing only in {side}."]
    paired = set(merged["configuration_a"].dropna()) | set(merged["configuration_b"].dropna())
    candidates = set(scores.loc[scores[side].isin([a, b]), "configuration"].dropna())
    if not paired:
        notes.append(f"No two configurations differ only in {side} ({a} against {b}): this design has no such effect.")
    elif candidates - paired:
        notes.append(f"Without a counterpart, not in this table: {', '.join(sorted(map(str, candidates - paired)))}.")
    if twins:
        notes.append(f"Identical in every attribute, so not pairable: {', '.join(twins)}.")
    return notes


def _summarise_pairs(
    merged: pd.DataFrame, keys: list[str], universe: pd.Index, resamples: int, seed: int
) -> pd.DataFrame:
    paired_ok = merged["diff"].notna()
    unpaired = (~paired_ok).groupby([merged[k] for k in keys], sort=False).sum()
    present = merged[paired_ok]
    d = present["diff"]
    by = [present[k] for k in keys]
    table = pd.DataFrame(
        {
            "n": d.groupby(by, sort=False).size(),
            "delta": d.groupby(by, sort=False).mean(),
            "wins": (d > TIE_TOLERANCE).groupby(by, sort=False).sum(),
            "ties": (d.abs() <= TIE_TOLERANCE).groupby(by, sort=False).sum(),
            "losses": (d < -TIE_TOLERANCE).groupby(by, sort=False).sum(),
        }
    )
    table = table.join(present.groupby(keys, sort=False)[list(DELTA_AXES)].mean())
    table = table.reindex(unpaired.index)
    for c in ("n", "wins", "ties", "losses"):
        table[c] = table[c].fillna(0).astype(int)
    table["unpaired"] = unpaired.astype(int)
    table = table.reset_index()
    cis = _bootstrap_ci(present, keys, "diff", universe, resamples, seed)
    return table.merge(cis, on=keys, how="left")


def paired_effects(
    scores: pd.DataFrame,
    *,
    direct: str = "direct",
    specialized: str = "specialized",
    resamples: int = SCORE_BOOTSTRAP_RESAMPLES,
    seed: int = SCORE_BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Workflow effect per (model, harness, judge, run): Δ = mean over tasks of
    s(specialized) − s(direct) on tasks with a record on both sides (``unpaired`` counts the
    others), paired-bootstrap CI (one index draw applied to both sides = to the differences),
    wins / ties / losses from the specialized side, per-subscore mean deltas ``d_<axis>``."""
    both = _with_mean_runs(scores)
    merged, twins = _pair(both, "workflow", direct, specialized)
    design = _design_columns(both, "workflow")
    keys = [*design, "judge", "run"]
    table = _summarise_pairs(merged, keys, _task_universe(scores), resamples, seed)
    extra = [c for c in design if c not in PAIRED_COLUMNS]
    table = _run_order(table[[*PAIRED_COLUMNS, *extra, "unpaired"]], keys)
    table.attrs["notes"] = _pairing_notes(scores, "workflow", direct, specialized, merged, twins)
    return table


def harness_effects(
    scores: pd.DataFrame,
    *,
    harnesses: Sequence[str] | None = None,
    resamples: int = SCORE_BOOTSTRAP_RESAMPLES,
    seed: int = SCORE_BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Harness effect for every model run in two (or more) harnesses, within each workflow:
    Δ = s(harness_b) − s(harness_a), paired over tasks like :func:`paired_effects`. Harness
    order is ``harnesses`` if given, else alphabetical; every ordered pair a before b."""
    both = _with_mean_runs(scores)
    order = list(harnesses) if harnesses is not None else sorted(both["harness"].dropna().unique())
    rank = {h: i for i, h in enumerate(order)}
    design = _design_columns(both, "harness")
    extra = [c for c in design if c not in HARNESS_COLUMNS]
    held = ", ".join(c.replace("_", " ") for c in design)
    notes = [f"harness effect harness_b − harness_a, pairing configurations equal in {held}."]
    parts = []
    for _model, sub in both.groupby("model", sort=True, observed=True):
        present = sorted((h for h in sub["harness"].unique() if h in rank), key=rank.get)
        for i, ha in enumerate(present):
            for hb in present[i + 1 :]:
                merged, twins = _pair(sub, "harness", ha, hb)
                if twins:
                    notes.append(f"Identical in every attribute, so not pairable: {', '.join(twins)}.")
                if merged.empty:
                    continue
                merged["harness_a"], merged["harness_b"] = ha, hb
                parts.append(merged)
    if not parts:
        table = pd.DataFrame(columns=[*HARNESS_COLUMNS, *extra, "unpaired"])
        table.attrs["notes"] = [*notes, "No model was run in two harnesses with everything else equal."]
        return table
    keys = [*design, "harness_a", "harness_b", "judge", "run"]
    table = _summarise_pairs(pd.concat(parts, ignore_index=True), keys, _task_universe(scores), resamples, seed)
    table = _run_order(table[[*HARNESS_COLUMNS, *extra, "unpaired"]], keys)
    table.attrs["notes"] = notes
    return table


# --------------------------------------------------------------------------------------------
# domain scores, structural audit
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


def structural_audit(
    audits: pd.DataFrame, scores: pd.DataFrame | None = None, *, judge: str | None = None
) -> pd.DataFrame:
    """Per configuration over all its artifacts (gate failures included): share with any
    picture, share whose largest picture covers ≥ FLATTEN_PICTURE_SHARE of the canvas, number
    capped, share with no connector, median text boxes / shapes / connectors. With ``scores``:
    share with S < 15 and share with final score < 50, on each task's mean over runs under
    ``judge`` (default: the first judge in sorted order), over tasks with a record."""
    a = audits.copy()
    by = a["configuration"]
    table = pd.DataFrame(
        {
            "n": by.groupby(by, sort=True).size(),
            "share_any_picture": (a["pictures"].fillna(0) > 0).groupby(by, sort=True).mean(),
            "share_largest_ge_85": (a["largest_picture_ratio"].fillna(0) >= FLATTEN_PICTURE_SHARE)
            .groupby(by, sort=True)
            .mean(),
            "capped": a["capped"].fillna(False).astype(bool).groupby(by, sort=True).sum().astype(int),
            "share_no_connector": (a["connectors"].fillna(0) == 0).groupby(by, sort=True).mean(),
            "median_text_boxes": a.groupby("configuration", sort=True)["text_boxes"].median(),
            "median_shapes": a.groupby("configuration", sort=True)["shapes"].median(),
            "median_connectors": a.groupby("configuration", sort=True)["connectors"].median(),
        }
    )
    table["share_s_lt_15"] = np.nan
    table["share_final_lt_50"] = np.nan
    if scores is not None and len(scores):
        chosen = judge if judge is not None else sorted(scores["judge"].unique())[0]
        m = run_means(scores[scores["judge"] == chosen])
        m = m[m["score"].notna()]
        cb = m["configuration"]
        table["share_s_lt_15"] = (m["semantic_structure"] < S_HALF_CREDIT).groupby(cb).mean()
        table["share_final_lt_50"] = (m["score"] < 50).groupby(cb).mean()
    table.index.name = "configuration"
    return table.reset_index()[AUDIT_COLUMNS]


# --------------------------------------------------------------------------------------------
# judge robustness
# --------------------------------------------------------------------------------------------


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


NO_JUDGE_SCORES = "no judge scores yet: run `manage.py judge` or `manage.py import_judge_records` first"


class NoJudgeScores(ValueError):
    """A table that needs judge scores asked before there are any."""


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


# --------------------------------------------------------------------------------------------
# Rubric-weight sensitivity (REFERENCE 4, Table 21)
# --------------------------------------------------------------------------------------------

DEFAULT_WEIGHTS: dict[str, float] = {a: float(RUBRIC_MAXIMA[a]) for a in AXES}
EDITABILITY_SWEEP: tuple[int, ...] = tuple(range(0, 41, 5))
# Named variants beside the sweep (this app's choice; each sums to 100).
NAMED_WEIGHT_VARIANTS: dict[str, dict[str, float]] = {
    "default": DEFAULT_WEIGHTS,
    "equal": {a: 20.0 for a in AXES},
    "no-editability": {
        "text": 100 * 20 / 75,
        "semantic_structure": 100 * 30 / 75,
        "layout": 100 * 15 / 75,
        "editability": 0.0,
        "visual_detail": 100 * 10 / 75,
    },
    "structure-heavy": {
        "text": 15.0,
        "semantic_structure": 45.0,
        "layout": 10.0,
        "editability": 20.0,
        "visual_detail": 10.0,
    },
    "text-heavy": {"text": 35.0, "semantic_structure": 25.0, "layout": 12.5, "editability": 20.0, "visual_detail": 7.5},
}


def editability_weights(w_e: float) -> dict[str, float]:
    """Editability weight w_e; the remaining 100 − w_e split in the default proportions
    T20 : S30 : L15 : V10."""
    rest = {a: RUBRIC_MAXIMA[a] for a in AXES if a != "editability"}
    total = sum(rest.values())
    w = {a: (100.0 - w_e) * v / total for a, v in rest.items()}
    w["editability"] = float(w_e)
    return {a: w[a] for a in AXES}


def weight_variants() -> dict[str, dict[str, float]]:
    variants = {f"editability={e}": editability_weights(e) for e in EDITABILITY_SWEEP}
    variants.update(NAMED_WEIGHT_VARIANTS)
    return variants


def rescore(frame: pd.DataFrame, weights: Mapping[str, float]) -> np.ndarray:
    """s' = g · min(Σ_a w_a · sub_a / max_a, c) row by row (NaN stays NaN)."""
    q = sum(float(weights[a]) * frame[a].to_numpy(dtype=float) / RUBRIC_MAXIMA[a] for a in AXES)
    return final_score(frame["gate_passed"].to_numpy(), q, frame["cap"].to_numpy())


def sign_change_editability(d_axes: Mapping[str, float]) -> float:
    """Editability weight e ∈ [0, 100] at which a paired delta changes sign along the sweep.

    Ignoring the cap's min, s' is linear in the weights, so along w_E = e, w_a = (100 − e)·max_a/75
    (a ≠ E) the paired delta is Δ(e) = (100 − e)/75 · Σ_{a≠E} D_a + e/25 · D_E, with D_a the mean
    subscore delta in rubric points. Δ(e) = A + B·e with A = (100/75)·Σ_{a≠E} D_a and
    B = D_E/25 − Σ_{a≠E} D_a/75, so e* = −A/B; NaN when B = 0 or e* ∉ [0, 100]. Artifacts whose
    rescored Q exceeds their cap (50) break linearity; :func:`weight_sensitivity` reports how many
    paired tasks are capped (``capped_tasks``) so the reader can judge."""
    rest = sum(float(d_axes[a]) for a in AXES if a != "editability")
    d_e = float(d_axes["editability"])
    total = sum(RUBRIC_MAXIMA[a] for a in AXES if a != "editability")
    a_ = 100.0 * rest / total
    b_ = d_e / RUBRIC_MAXIMA["editability"] - rest / total
    if b_ == 0 or not np.isfinite(b_):
        return float("nan")
    e = -a_ / b_
    return float(e) if 0.0 <= e <= 100.0 else float("nan")


@dataclass(frozen=True)
class WeightSensitivity:
    """Two export tables: ``variants`` (weight-sensitivity) and ``effects``
    (weight-sensitivity-effects)."""

    variants: pd.DataFrame
    effects: pd.DataFrame


def weight_sensitivity(
    scores: pd.DataFrame,
    *,
    elo: pd.Series | None = None,
    judge: str | None = None,
    variants: Mapping[str, Mapping[str, float]] | None = None,
    direct: str = "direct",
    specialized: str = "specialized",
    resamples: int = SCORE_BOOTSTRAP_RESAMPLES,
    seed: int = SCORE_BOOTSTRAP_SEED,
) -> WeightSensitivity:
    """Rescore under alternative weight vectors (default: the editability sweep 0…40 step 5 plus
    :data:`NAMED_WEIGHT_VARIANTS`). Scores are rescored per record, then averaged per task over
    runs under ``judge`` (default: first judge in sorted order). Per variant: Spearman ρ of the
    configuration means to the default weights' means, Pearson r to ``elo`` (Series
    configuration → Elo) if given; every workflow paired effect with its bootstrap CI, a
    ``ci_contains_zero`` marker and :func:`sign_change_editability` (the same for every variant:
    it is a property of the effect)."""
    if scores["judge"].dropna().empty:
        raise NoJudgeScores(NO_JUDGE_SCORES)
    chosen = judge if judge is not None else sorted(scores["judge"].dropna().unique())[0]
    base = scores[scores["judge"] == chosen]
    universe = _task_universe(scores)
    variants = dict(variants) if variants is not None else weight_variants()
    design = _design_columns(base, "workflow")
    keep = ["configuration", *design, "workflow", "task_id", "gate_passed", "cap", *AXES]
    work = base[keep].copy()
    for name, w in variants.items():
        if abs(sum(w.values()) - 100.0) > 1e-6:
            raise ValueError(f"weights of variant {name!r} sum to {sum(w.values())}, not 100")
        work[f"s::{name}"] = rescore(base, w)
    work["s::__default"] = rescore(base, DEFAULT_WEIGHTS)
    work["q::__default"] = sum(base[a].to_numpy(float) for a in AXES)
    score_cols = [c for c in work.columns if c.startswith(("s::", "q::"))]
    per_task = (
        work.groupby(["configuration", "task_id"], sort=True)
        .agg(
            {
                **{c: "mean" for c in [*score_cols, *AXES]},
                **{c: "first" for c in [*design, "workflow", "cap"]},
            }
        )
        .reset_index()
    )
    cfg_means = per_task.groupby("configuration", sort=True)[score_cols].mean()

    var_rows = []
    for name, w in variants.items():
        col = f"s::{name}"
        rho = correlation("spearman", cfg_means[col], cfg_means["s::__default"])[0]
        r_elo = np.nan
        if elo is not None:
            joined = pd.concat([cfg_means[col], elo.rename("elo")], axis=1, join="inner").dropna()
            r_elo = correlation("pearson", joined[col], joined["elo"])[0]
        var_rows.append(
            {
                "variant": name,
                **{f"w_{a}": float(w[a]) for a in AXES},
                "spearman_default": float(rho),
                "pearson_elo": float(r_elo),
            }
        )
    variant_table = pd.DataFrame(var_rows, columns=SENSITIVITY_COLUMNS)

    on = [*design, "task_id"]
    vcols = [f"s::{n}" for n in variants]
    # Each side keyed by its design and task; configurations identical in every attribute pair with nothing.
    sides = [per_task[per_task["workflow"] == value] for value in (direct, specialized)]
    left, right = (side[~side["configuration"].isin(_twins(side, design))].set_index(on) for side in sides)
    idx = left.index.intersection(right.index)
    idx = idx[left.loc[idx, "s::__default"].notna().to_numpy() & right.loc[idx, "s::__default"].notna().to_numpy()]
    diffs = (right.loc[idx, [*vcols, *AXES]] - left.loc[idx, [*vcols, *AXES]]).reset_index()
    capped = (left.loc[idx, "q::__default"] > left.loc[idx, "cap"]).to_numpy() | (
        right.loc[idx, "q::__default"] > right.loc[idx, "cap"]
    ).to_numpy()
    diffs["_capped"] = capped
    diffs = diffs.sort_values(on, kind="stable")
    eff_rows = []
    for design_values, block in diffs.groupby(design, sort=True):
        described = dict(zip(design, design_values, strict=True))
        d_axes = block[list(AXES)].mean()
        cross = sign_change_editability(d_axes)
        long = block.melt(id_vars=["task_id"], value_vars=vcols, var_name="_v", value_name="_d")
        cis = _bootstrap_ci(long, ["_v"], "_d", universe, resamples, seed).set_index("_v")
        for name in variants:
            col = f"s::{name}"
            low, high = cis.loc[col, "ci_low"], cis.loc[col, "ci_high"]
            eff_rows.append(
                {
                    "variant": name,
                    **described,
                    "delta": float(block[col].mean()),
                    "ci_low": low,
                    "ci_high": high,
                    "ci_contains_zero": bool(low <= 0 <= high),
                    "sign_change_w_editability": cross,
                    "n": len(block),
                    "capped_tasks": int(block["_capped"].sum()),
                }
            )
    extra = [c for c in design if c not in SENSITIVITY_EFFECT_COLUMNS]
    effects = pd.DataFrame(eff_rows, columns=[*SENSITIVITY_EFFECT_COLUMNS, "n", "capped_tasks", *extra])
    return WeightSensitivity(variants=variant_table, effects=effects)


__all__: Iterable[str] = [
    "final_score",
    "bootstrap_indices",
    "run_means",
    "config_scores",
    "paired_effects",
    "harness_effects",
    "domain_scores",
    "structural_audit",
    "icc_2_1",
    "judge_runs",
    "judge_families",
    "editability_weights",
    "weight_variants",
    "rescore",
    "sign_change_editability",
    "weight_sensitivity",
    "WeightSensitivity",
    "DEFAULT_WEIGHTS",
    "NAMED_WEIGHT_VARIANTS",
    "EDITABILITY_SWEEP",
]
