"""Structural audit of :mod:`scoring.stats`: per configuration over all its artifacts (gate failures
included), how often the deck is a flattened picture, capped or without connectors, the median counts
of text boxes, shapes and connectors, and — given judge scores — the shares with little semantic-
structure credit or a low final score, under one judge run (ReFigBench's: run 1) or each task's mean over runs.
Pure: no Django, DRF or Celery."""

from __future__ import annotations

import numpy as np
import pandas as pd

from corpus.protocol import FLATTEN_PICTURE_SHARE, PAPER_JUDGE_RUN, RUBRIC_MAXIMA
from scoring.stats_base import MEAN_RUN
from scoring.stats_scores import run_means

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
# Semantic-structure credit below half its maximum (REFERENCE 4, structural audit).
S_HALF_CREDIT = RUBRIC_MAXIMA["semantic_structure"] / 2


def run_label(run: int | str) -> str:
    """A judge run as tables write it: "1", "2", … or "mean" ("01" is run 1)."""
    text = str(run).strip()
    return MEAN_RUN if text == MEAN_RUN else str(int(text))


def judge_run_rows(scores: pd.DataFrame, run: int | str) -> pd.DataFrame:
    """The rows of judge run ``run``; for "mean", every run's (a table then averages each task over them)."""
    label = run_label(run)
    return scores if label == MEAN_RUN else scores[scores["run"].astype(str) == label]


def run_used_note(judge: str, run: int | str, runs: list) -> str:
    """What a table computed on one judge run says about it (the run chosen, or why its numbers are blank)."""
    label = run_label(run)
    listed = ", ".join(str(r) for r in sorted(runs)) or "none"
    if label != MEAN_RUN and label not in {str(r) for r in runs}:
        return f"Judge {judge} has no run {label} (its runs: {listed})."
    used = (
        f"each task's mean over judge {judge}'s runs ({listed})" if label == MEAN_RUN else f"judge {judge}, run {label}"
    )
    paper = f"ReFigBench uses run {PAPER_JUDGE_RUN}" if label != str(PAPER_JUDGE_RUN) else "as ReFigBench"
    return (
        f"Judge scores: {used} ({paper}, whose runs 2 and 3 are a reproducibility check); "
        "choose another with run=N, or run=mean for each task's mean over runs."
    )


def structural_audit(
    audits: pd.DataFrame,
    scores: pd.DataFrame | None = None,
    *,
    judge: str | None = None,
    run: int | str = PAPER_JUDGE_RUN,
) -> pd.DataFrame:
    """Per configuration over all its artifacts (gate failures included): share with any
    picture, share whose largest picture covers ≥ FLATTEN_PICTURE_SHARE of the canvas, number
    capped, share with no connector, median text boxes / shapes / connectors. With ``scores``:
    share with S < 15 and share with final score < 50 under ``judge`` (default: the first judge
    in sorted order) and judge run ``run`` (default: run 1, as ReFigBench's Tables 3 and 15;
    "mean": each task's mean over runs), over tasks with a record. The notes say which."""
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
    notes = ["No judge scores: the S < 15 and < 50 shares are blank."]
    if scores is not None and len(scores):
        chosen = judge if judge is not None else sorted(scores["judge"].unique())[0]
        of_judge = scores[scores["judge"] == chosen]
        notes = [run_used_note(chosen, run, list(of_judge["run"].dropna().unique()))]
        rows = judge_run_rows(of_judge, run)
        if rows.empty:
            notes.append("The S < 15 and < 50 shares are blank.")
        m = run_means(rows)
        m = m[m["score"].notna()]
        cb = m["configuration"]
        table["share_s_lt_15"] = (m["semantic_structure"] < S_HALF_CREDIT).groupby(cb).mean()
        table["share_final_lt_50"] = (m["score"] < 50).groupby(cb).mean()
    table.index.name = "configuration"
    result = table.reset_index()[AUDIT_COLUMNS]
    result.attrs["notes"] = notes
    return result
