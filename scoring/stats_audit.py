"""Structural audit of :mod:`scoring.stats`: per configuration over all its artifacts (gate failures
included), how often the deck is a flattened picture, capped or without connectors, the median counts
of text boxes, shapes and connectors, and — given judge scores — the shares with little semantic-
structure credit or a low final score. Pure: no Django, DRF or Celery."""

from __future__ import annotations

import numpy as np
import pandas as pd

from corpus.protocol import FLATTEN_PICTURE_SHARE, RUBRIC_MAXIMA
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
