"""Judge–human agreement (REFERENCE 7: Tables 6, 17, 19; Appendix K).

Pure: numpy, pandas, scikit-learn and statsmodels only — no Django, DRF or Celery.

Input is a frame of human comparisons joined with judge scores: ``task_id`` (source figure, the
bootstrap cluster), ``outcome`` in ``OUTCOMES``, ``margin`` (judge score of the artifact shown as A
minus that of B — one judge run, or the mean of runs) and optionally ``matchup``
("within" / "across").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bt_elo.bradley_terry import seeded_cluster_weights
from corpus.protocol import (
    AGREEMENT_BOOTSTRAP_RESAMPLES,
    AGREEMENT_BOOTSTRAP_SEED,
    MARGIN_BUCKETS,
    OUTCOMES,
    THREE_CLASS_TIE_THRESHOLDS,
    TIE_OUTCOMES,
)

MODES = ("single", "mean")
MATCHUPS = ("within", "across")
IAA_LABELS = ("left", "right", "tie")


def _bucket_label(low: float, high: float) -> str:
    return f"[{low:g},{'inf' if np.isinf(high) else f'{high:g}'})"


BUCKET_LABELS: tuple[str, ...] = tuple(_bucket_label(lo, hi) for lo, hi in MARGIN_BUCKETS)


def margin_bucket(abs_margin: float) -> str:
    """The |margin| stratum, half-open on the right: exactly 2 goes to "[2,5)"."""
    value = float(abs_margin)
    if not value >= 0:  # also rejects NaN
        raise ValueError(f"abs_margin must be a non-negative number, got {abs_margin!r}")
    for (low, high), label in zip(MARGIN_BUCKETS, BUCKET_LABELS):
        if low <= value < high:
            return label
    raise ValueError(f"abs_margin {abs_margin!r} falls outside every bucket")


def _bucket_index(abs_margin: np.ndarray) -> np.ndarray:
    edges = np.array([low for low, _ in MARGIN_BUCKETS][1:])
    return np.searchsorted(edges, abs_margin, side="right")


def _check(frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks columns {missing}")
    bad = sorted(set(frame["outcome"].astype(str)) - set(OUTCOMES))
    if bad:
        raise ValueError(f"unknown outcomes {bad}; expected one of {OUTCOMES}")
    if frame["margin"].isna().any():
        raise ValueError("margin has missing values")


def direction_agreement(
    frame: pd.DataFrame,
    *,
    mode: str = "single",
    resamples: int = AGREEMENT_BOOTSTRAP_RESAMPLES,
    seed: int = AGREEMENT_BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Share of decisive human votes (a/b) whose judge margin has the matching sign.

    Rows: "all", then the four |margin| buckets. ``single``: a zero margin counts as not agreeing.
    ``mean``: votes whose (mean) margin is exactly zero are left out and counted in ``excluded``.
    95 % percentile CI from a cluster bootstrap over task_id (one draw of figure weights serves
    every row): ratio of weighted per-figure agreeing counts to weighted per-figure vote counts.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    _check(frame, ("task_id", "outcome", "margin"))
    decisive = frame[frame["outcome"].isin(["a", "b"])]
    margin = decisive["margin"].to_numpy(dtype=float)
    bucket = _bucket_index(np.abs(margin))
    zero = margin == 0
    excluded = np.zeros(1 + len(MARGIN_BUCKETS), dtype=int)
    if mode == "mean":
        excluded[0] = int(zero.sum())
        excluded[1:] = np.bincount(bucket[zero], minlength=len(MARGIN_BUCKETS))
        keep = ~zero
        decisive, margin, bucket = decisive[keep], margin[keep], bucket[keep]
    human_a = (decisive["outcome"] == "a").to_numpy()
    agree = np.where(human_a, margin > 0, margin < 0).astype(float)

    # Per figure × row (all + buckets): agreeing votes and votes.
    figure, _ = pd.factorize(decisive["task_id"], sort=True)
    n_fig = int(figure.max()) + 1 if figure.size else 0
    rows = 1 + len(MARGIN_BUCKETS)
    agree_fig = np.zeros((n_fig, rows))
    count_fig = np.zeros((n_fig, rows))
    np.add.at(agree_fig, (figure, 0), agree)
    np.add.at(count_fig, (figure, 0), 1.0)
    np.add.at(agree_fig, (figure, 1 + bucket), agree)
    np.add.at(count_fig, (figure, 1 + bucket), 1.0)

    n = count_fig.sum(axis=0)
    hits = agree_fig.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = np.where(n > 0, hits / np.where(n > 0, n, 1), np.nan)
    low, high = _cluster_ratio_ci(agree_fig, count_fig, resamples=resamples, seed=seed)
    return pd.DataFrame(
        {
            "bucket": ["all", *BUCKET_LABELS],
            "n": n.astype(int),
            "agreement": point,
            "ci_low": low,
            "ci_high": high,
            "excluded": excluded,
        }
    )


def _cluster_ratio_ci(numerator: np.ndarray, denominator: np.ndarray, *, resamples: int, seed: int):
    """Percentile 2.5/97.5 of Σ w·num / Σ w·den over cluster-bootstrap weights (F × columns)."""
    columns = numerator.shape[1]
    if numerator.shape[0] == 0 or resamples <= 0:
        return np.full(columns, np.nan), np.full(columns, np.nan)
    weights = seeded_cluster_weights(numerator.shape[0], resamples, seed).astype(float)
    num = weights @ numerator
    den = weights @ denominator
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    low = np.full(columns, np.nan)
    high = np.full(columns, np.nan)
    for c in range(columns):
        values = ratio[:, c][~np.isnan(ratio[:, c])]
        if values.size:
            low[c], high[c] = np.percentile(values, [2.5, 97.5])
    return low, high


def three_class_agreement(
    frame: pd.DataFrame, *, thresholds: tuple[float, ...] = THREE_CLASS_TIE_THRESHOLDS
) -> pd.DataFrame:
    """Three-way (A / B / tie) agreement and Cohen's κ over all votes.

    The judge declares a tie when |margin| <= threshold; a human tie is either tie type.
    """
    _check(frame, ("outcome", "margin"))
    outcome = frame["outcome"].astype(str).to_numpy()
    human = np.where(np.isin(outcome, list(TIE_OUTCOMES)), "tie", outcome)
    margin = frame["margin"].to_numpy(dtype=float)
    rows = []
    for threshold in thresholds:
        judge = np.where(np.abs(margin) <= threshold, "tie", np.where(margin > 0, "a", "b"))
        n = len(human)
        agreement = float((human == judge).mean()) if n else np.nan
        kappa = _cohen(human, judge, labels=["a", "b", "tie"])
        rows.append({"threshold": threshold, "n": n, "agreement": agreement, "kappa": kappa})
    return pd.DataFrame(rows, columns=["threshold", "n", "agreement", "kappa"])


def _cohen(first, second, *, labels) -> float:
    """Cohen's κ (scikit-learn); NaN when undefined (no items, or chance agreement of 1)."""
    from sklearn.metrics import cohen_kappa_score  # on use: not at every process start

    first, second = np.asarray(first), np.asarray(second)
    if first.size == 0 or (len(set(first)) == 1 and set(first) == set(second)):
        return np.nan
    return float(cohen_kappa_score(first, second, labels=list(labels)))


def matchup_agreement(
    frame: pd.DataFrame,
    *,
    mode: str = "single",
    resamples: int = AGREEMENT_BOOTSTRAP_RESAMPLES,
    seed: int = AGREEMENT_BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Direction agreement (the "all" row of ``direction_agreement``) per matchup kind."""
    if "matchup" not in frame.columns:
        raise ValueError("frame lacks the matchup column")
    present = list(pd.unique(frame["matchup"].astype(str)))
    order = [m for m in MATCHUPS if m in present] + sorted(m for m in present if m not in MATCHUPS)
    rows = []
    for matchup in order:
        subset = frame[frame["matchup"].astype(str) == matchup]
        overall = direction_agreement(subset, mode=mode, resamples=resamples, seed=seed).iloc[0]
        rows.append(
            {
                "matchup": matchup,
                "n": int(overall["n"]),
                "agreement": overall["agreement"],
                "ci_low": overall["ci_low"],
                "ci_high": overall["ci_high"],
            }
        )
    return pd.DataFrame(rows, columns=["matchup", "n", "agreement", "ci_low", "ci_high"])


IAA_COLUMNS = ["raters", "items", "annotators", "raw_agreement", "kappa", "kappa_type"]


def inter_annotator_agreement(labels: pd.DataFrame) -> pd.DataFrame:
    """Human–human agreement on items with more than one rating (REFERENCE 5, 7).

    Input: ``item_id``, ``annotator``, ``label`` in {"left", "right", "tie"}, already aligned to a
    common side. Items rated once are ignored. Rows: ``raters`` = "all" (every item with >= 2
    ratings), 2 (items with exactly two ratings) and "3+" (items with three or more), each only
    when it has items; ``items`` and ``annotators`` (distinct people) count what the row covers.

    * ``raw_agreement``: agreeing rater pairs / rater pairs, pooled over items
      (an item with m ratings contributes m(m−1)/2 pairs, Σ_c n_c(n_c−1)/2 of them agreeing).
    * ``kappa`` and ``kappa_type``: Cohen's κ ("cohen", scikit-learn) when exactly two people rated
      every item of the row, rater 1 being one person and rater 2 the other (κ is symmetric in the
      two, so names do not matter). Otherwise Fleiss' κ ("fleiss"), which treats raters as
      exchangeable and so does not depend on who rated what or on their names: statsmodels when
      every item has the same number of ratings, else Fleiss' formula generalised to varying rater
      counts (mean of per-item pair agreement against pooled category shares), which reduces to
      statsmodels' value when the counts are equal.
    """
    missing = [c for c in ("item_id", "annotator", "label") if c not in labels.columns]
    if missing:
        raise ValueError(f"labels lack columns {missing}")
    bad = sorted(set(labels["label"].astype(str)) - set(IAA_LABELS))
    if bad:
        raise ValueError(f"unknown labels {bad}; expected one of {IAA_LABELS}")
    if labels.duplicated(["item_id", "annotator"]).any():
        raise ValueError("an annotator rated the same item twice")

    table = pd.crosstab(labels["item_id"], labels["label"]).reindex(columns=list(IAA_LABELS), fill_value=0)
    m = table.sum(axis=1)
    table = table[m >= 2]
    m = m[m >= 2]

    rows = []
    groups = [("all", m.index), (2, m.index[m == 2]), ("3+", m.index[m >= 3])]
    for raters, items in groups:
        if len(items) == 0:
            continue
        counts = table.loc[items].to_numpy(dtype=float)
        pairs = counts.sum(axis=1) * (counts.sum(axis=1) - 1) / 2
        agreeing = (counts * (counts - 1) / 2).sum(axis=1)
        raw = float(agreeing.sum() / pairs.sum())
        rated = labels[labels["item_id"].isin(items)]
        people = rated["annotator"].nunique()
        # Two people and every item has >= 2 ratings with no repeats: each item was rated by both of them.
        if people == 2:
            kappa, kind = _two_rater_cohen(rated), "cohen"
        else:
            kappa, kind = _fleiss(counts), "fleiss"
        rows.append(
            {
                "raters": raters,
                "items": len(items),
                "annotators": people,
                "raw_agreement": raw,
                "kappa": kappa,
                "kappa_type": kind,
            }
        )
    return pd.DataFrame(rows, columns=IAA_COLUMNS)


def _two_rater_cohen(labels: pd.DataFrame) -> float:
    """Cohen's κ between the two people who rated every item: one column per person."""
    wide = labels.pivot(index="item_id", columns="annotator", values="label")
    first, second = wide.columns
    return _cohen(wide[first].to_numpy(), wide[second].to_numpy(), labels=list(IAA_LABELS))


def _fleiss(counts: np.ndarray) -> float:
    from statsmodels.stats.inter_rater import fleiss_kappa

    m = counts.sum(axis=1)
    if np.all(m == m[0]):
        with np.errstate(invalid="ignore", divide="ignore"):
            return float(fleiss_kappa(counts, method="fleiss"))
    p_item = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
    p_cat = counts.sum(axis=0) / counts.sum()
    expected = float((p_cat**2).sum())
    if expected == 1.0:
        return np.nan
    return float((p_item.mean() - expected) / (1 - expected))
