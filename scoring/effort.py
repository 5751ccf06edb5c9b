"""Effort sweeps: a family of configurations equal in every attribute but the reasoning effort, its efforts in order
(agents.configurations.EFFORT_ORDER or the configuration file's own), each with its mean final score, gate-pass rate,
mean on passed artifacts, and the paired change from the effort below it. Pure: plain pandas in, a table out."""

from __future__ import annotations

import numpy as np
import pandas as pd

from agents.configurations import DESIGN_FIELDS
from corpus.protocol import SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED

MEAN_RUN = "mean"
FAMILY_FIELDS: list[str] = [c for c in DESIGN_FIELDS if c != "reasoning_effort"]
EFFORT_SWEEP_COLUMNS = [
    *FAMILY_FIELDS,
    "reasoning_effort",
    "configuration",
    "judge",
    "run",
    "n",
    "mean",
    "gate_pass_rate",
    "mean_on_passed",
    "n_paired",
    "delta_previous",
    "ci_low",
    "ci_high",
]


def _paired_change(diffs: np.ndarray, resamples: int, seed: int) -> tuple[float, float, float]:
    """Mean of the task-by-task differences with a 95 % percentile bootstrap interval over tasks."""
    if len(diffs) == 0:
        return np.nan, np.nan, np.nan
    draws = np.random.default_rng(seed).integers(0, len(diffs), size=(resamples, len(diffs)))
    means = diffs[draws].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diffs.mean()), float(low), float(high)


def _with_run_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Each judge run, and the mean over a judge's runs per artifact (run "mean")."""
    per_run = scores.assign(run=scores["run"].astype(object))
    keys = ["configuration", "task_id", "judge"]
    means = scores.groupby(keys, sort=False, dropna=False).agg(
        score=("score", "mean"), **{c: (c, "first") for c in scores.columns if c not in (*keys, "score", "run")}
    )
    return pd.concat([per_run, means.reset_index().assign(run=MEAN_RUN)], ignore_index=True)


def effort_sweep(
    scores: pd.DataFrame, *, resamples: int = SCORE_BOOTSTRAP_RESAMPLES, seed: int = SCORE_BOOTSTRAP_SEED
) -> pd.DataFrame:
    """One row per (family, effort, judge, run) for every family run at two or more efforts. ``scores`` has one row
    per (artifact, judge run): configuration, the design fields, effort_rank, task_id, judge, run, gate_passed, score
    (NaN when not judged). ``delta_previous`` is the mean over tasks scored at both efforts of s(effort) − s(the
    effort below), with its bootstrap interval (``n_paired`` tasks); the lowest effort has none."""
    notes = [
        "Efforts of one family (configurations equal in every attribute but the reasoning effort), lowest first; "
        "delta_previous pairs each effort with the one below it task by task."
    ]
    if scores.empty or scores["judge"].dropna().empty:
        table = pd.DataFrame(columns=EFFORT_SWEEP_COLUMNS)
        table.attrs["notes"] = [*notes, "No judge scores yet."]
        return table
    frame = _with_run_means(scores[scores["judge"].notna()])
    designs = frame.drop_duplicates("configuration")
    twins = designs.duplicated([*FAMILY_FIELDS, "reasoning_effort"], keep=False)
    if twins.any():
        left_out = ", ".join(sorted(map(str, designs.loc[twins, "configuration"])))
        notes.append(f"Identical in every attribute, so not placed in a sweep: {left_out}.")
        frame = frame[~frame["configuration"].isin(designs.loc[twins, "configuration"])]
    rows = []
    single = 0
    for family, members in frame.groupby(FAMILY_FIELDS, sort=True, dropna=False):
        efforts = members.drop_duplicates("configuration").sort_values(["effort_rank", "reasoning_effort"])
        if len(efforts) < 2:
            single += 1
            continue
        for (judge, run), block in members.groupby(["judge", members["run"].astype(str)], sort=True):
            previous = None
            for _, effort in efforts.iterrows():
                own = block[block["configuration"] == effort["configuration"]].set_index("task_id")
                scored = own["score"].dropna()
                passed = own["gate_passed"].eq(True)
                row = {
                    **dict(zip(FAMILY_FIELDS, family, strict=True)),
                    "reasoning_effort": effort["reasoning_effort"],
                    "configuration": effort["configuration"],
                    "judge": judge,
                    "run": run if run == MEAN_RUN else int(float(run)),
                    "n": len(scored),
                    "mean": float(scored.mean()) if len(scored) else np.nan,
                    "gate_pass_rate": float(passed.mean()) if len(own) else np.nan,
                    "mean_on_passed": float(own.loc[passed, "score"].mean()) if passed.any() else np.nan,
                    "n_paired": 0,
                    "delta_previous": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                }
                if previous is not None:
                    both = pd.concat([scored.rename("now"), previous.rename("before")], axis=1, join="inner").dropna()
                    diffs = (both["now"] - both["before"]).to_numpy(float)
                    row["n_paired"] = len(diffs)
                    row["delta_previous"], row["ci_low"], row["ci_high"] = _paired_change(diffs, resamples, seed)
                rows.append(row)
                previous = scored
    if single:
        notes.append(f"{single} famil{'y' if single == 1 else 'ies'} run at one effort only: no sweep to show.")
    table = pd.DataFrame(rows, columns=EFFORT_SWEEP_COLUMNS)
    table.attrs["notes"] = notes
    return table
