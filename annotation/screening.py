"""Corpus screening over plain frames: each candidate figure's status by majority of the screeners' decisions, and the
agreement between screeners on the figures two of them decided (how both papers screened their corpora).

Pure: numpy, pandas and scikit-learn only — no Django, DRF or Celery. annotation.selectors.screening reads the
decisions into the frames these functions take.

- :func:`majority_status`: accepted when accepts outnumber rejects, rejected when rejects outnumber accepts, undecided
  on a tie (no decision yet is a tie of 0 against 0).
- :func:`screening_summary`: one row per candidate with its accepts, rejects and status.
- :func:`screening_agreement`: per pair of screeners, the figures both decided, raw agreement and Cohen's κ.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

ACCEPTED, REJECTED, UNDECIDED = "accepted", "rejected", "undecided"
ACCEPT, REJECT = "accept", "reject"  # a decision as the screen, the API and the decisions table name it

DECISION_COLUMNS = ["task_id", "annotator", "accepted"]  # the frames these functions take (accepted: bool)
SUMMARY_COLUMNS = ["task_id", "accepts", "rejects", "status"]
AGREEMENT_COLUMNS = ["annotator_a", "annotator_b", "n", "agreement", "kappa"]

MAJORITY_RULE = (
    "status by majority of the screeners' decisions on the figure: accepted when accepts outnumber rejects, rejected "
    "when rejects outnumber accepts, undecided on a tie (a figure nobody decided yet is a tie of 0 to 0); skips are "
    "not decisions"
)


def majority_status(accepts: int, rejects: int) -> str:
    if accepts > rejects:
        return ACCEPTED
    if rejects > accepts:
        return REJECTED
    return UNDECIDED


def screening_summary(decisions: pd.DataFrame, candidates: Sequence[str]) -> pd.DataFrame:
    """One row per candidate task id (in the order given): its accepts, rejects and majority status. Decisions on
    figures that are not candidates (any more) are left out."""
    accepted = decisions["accepted"].astype(bool)
    accepts = decisions[accepted].groupby("task_id").size()
    rejects = decisions[~accepted].groupby("task_id").size()
    rows = []
    for task_id in candidates:
        a, r = int(accepts.get(task_id, 0)), int(rejects.get(task_id, 0))
        rows.append((task_id, a, r, majority_status(a, r)))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def decisions_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's κ of two screeners' decisions on the same figures (scikit-learn); NaN with no figures, or when chance
    agreement is already 1 (both gave one and the same decision throughout)."""
    from sklearn.metrics import cohen_kappa_score  # on use: not at every process start

    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if a.size == 0 or len(set(a.tolist()) | set(b.tolist())) < 2:
        return float("nan")
    return float(cohen_kappa_score(a, b, labels=[True, False]))


def screening_agreement(decisions: pd.DataFrame) -> pd.DataFrame:
    """For each pair of screeners who decided at least one same figure: how many figures both decided, the share on
    which they gave the same decision, and Cohen's κ (decisions_kappa)."""
    wide = decisions.pivot_table(index="task_id", columns="annotator", values="accepted", aggfunc="last")
    rows = []
    for first, second in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[first, second]].dropna()
        if both.empty:
            continue
        a, b = both[first].astype(bool).to_numpy(), both[second].astype(bool).to_numpy()
        rows.append((first, second, len(both), float(np.mean(a == b)), decisions_kappa(a, b)))
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
