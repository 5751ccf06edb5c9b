"""Agreement and quality statistics of the human studies (REFERENCE 5, 8, 9), over plain frames.

Pure: numpy, pandas and scipy only — no Django, DRF or Celery. The selectors read the database into the frames these
functions take; tests check them by hand and against scikit-learn, statsmodels and scipy.

- :func:`cohen_kappa`, :func:`fleiss_kappa`: chance-corrected agreement (two raters; many raters per subject).
- :func:`gate_review_agreement`: reviewer pairs on gate failure, plus Fleiss' κ over artifacts every reviewer saw.
- :func:`agreement_with_reference`: each reviewer against a reference label (the automated gate).
- :func:`rating_agreement`, :func:`rating_consistency`: human ratings against the judge's, the judge against itself.
- :func:`annotator_quality`: attention pass rate, swapped-repeat self-consistency and position bias per annotator.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats import inter_rater

ALL_REVIEWERS = "all"  # reviewer_a of the gate-review-agreement row holding Fleiss' κ over every reviewer

GATE_AGREEMENT_COLUMNS = ["reviewer_a", "reviewer_b", "n", "agreement", "kappa"]
REFERENCE_AGREEMENT_COLUMNS = ["reviewer", "n", "agreement", "kappa"]
RATING_AGREEMENT_COLUMNS = ["axis", "judge", "n", "spearman", "pearson", "mean_abs_diff"]
RATING_CONSISTENCY_COLUMNS = ["axis", "judge", "n", "majority_agreement", "mean_sd"]
ANNOTATOR_QUALITY_COLUMNS = [
    "annotator",
    "votes",
    "attention_items",
    "attention_passed",
    "pass_rate",
    "swapped_repeats",
    "self_consistent",
    "position_left_share",
    "excluded",
]

RATING_MIN, RATING_MAX = 0, 5  # PPTArena's ordinal scale
DEFAULT_RATING_AXES = ("instruction_following", "visual_quality")  # PPTArena's two axes

# Purposes of an item / vote in a pairwise study (stored on Item, Lease and Comparison).
REGULAR, ATTENTION, REPEAT, CALIBRATION = "regular", "attention", "repeat", "calibration"


def cohen_kappa(a: Sequence, b: Sequence) -> float:
    """Cohen's κ of two raters' labels on the same subjects: (p_o − p_e) / (1 − p_e), with p_e from the two raters'
    own marginals. NaN with no subjects, or when chance agreement is already 1 (both always used one same label)."""
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if len(a) != len(b):
        raise ValueError("the two raters must label the same subjects")
    if len(a) == 0:
        return float("nan")
    observed = float(np.mean(a == b))
    labels = set(a) | set(b)
    expected = sum(float(np.mean(a == label)) * float(np.mean(b == label)) for label in labels)
    if expected >= 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(counts) -> float:
    """Fleiss' κ from an (subjects × categories) matrix of how many raters put each subject in each category; every
    subject must have the same number of raters (≥ 2). statsmodels' implementation (as bt_elo.agreement uses), guarded:
    NaN with no subjects or when every rating falls in one category (statsmodels would divide by zero)."""
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return float("nan")
    raters = table.sum(axis=1)
    if raters.min() != raters.max() or raters[0] < 2:
        raise ValueError("Fleiss' κ needs the same number (≥ 2) of raters for every subject")
    if np.count_nonzero(table.sum(axis=0)) < 2:
        return float("nan")
    return float(inter_rater.fleiss_kappa(table, method="fleiss"))


def _binary_counts(wide: pd.DataFrame) -> np.ndarray:
    """(subjects × 2) counts of True / False from a subjects × raters boolean frame without gaps."""
    positives = wide.sum(axis=1).to_numpy(float)
    return np.column_stack([positives, wide.shape[1] - positives])


def gate_review_agreement(reviews: pd.DataFrame) -> pd.DataFrame:
    """The `gate-review-agreement` table from one row per (artifact, reviewer, gate_fail): for each pair of reviewers
    the artifacts both reviewed, their raw agreement and Cohen's κ with gate failure as the positive class; then a row
    reviewer_a = "all" with Fleiss' κ (and the share of unanimous artifacts as agreement) over the artifacts every
    reviewer saw (reviewer_b empty). Needs two reviewers; NaN where κ is undefined."""
    wide = reviews.pivot_table(index="artifact", columns="reviewer", values="gate_fail", aggfunc="last")
    reviewers = sorted(wide.columns)
    rows = []
    for first, second in itertools.combinations(reviewers, 2):
        both = wide[[first, second]].dropna()
        a, b = both[first].astype(bool).to_numpy(), both[second].astype(bool).to_numpy()
        agreement = float(np.mean(a == b)) if len(both) else float("nan")
        rows.append((first, second, len(both), agreement, cohen_kappa(a, b)))
    if len(reviewers) >= 2:
        everyone = wide[reviewers].dropna().astype(bool)
        unanimous = everyone.nunique(axis=1) == 1
        rows.append(
            (
                ALL_REVIEWERS,
                "",
                len(everyone),
                float(unanimous.mean()) if len(everyone) else float("nan"),
                fleiss_kappa(_binary_counts(everyone)) if len(everyone) else float("nan"),
            )
        )
    return pd.DataFrame(rows, columns=GATE_AGREEMENT_COLUMNS)


def agreement_with_reference(reviews: pd.DataFrame, reference: pd.Series) -> pd.DataFrame:
    """Each reviewer against a reference label per artifact (e.g. the automated gate: failure = True): over the
    artifacts the reviewer saw and the reference has, the raw agreement and Cohen's κ (failure positive)."""
    reference = reference.dropna().astype(bool)
    rows = []
    for reviewer, own in reviews.groupby("reviewer", sort=True):
        own = own.drop_duplicates("artifact", keep="last").set_index("artifact")["gate_fail"].astype(bool)
        shared = own.index.intersection(reference.index)
        a, b = own.loc[shared].to_numpy(), reference.loc[shared].to_numpy()
        agreement = float(np.mean(a == b)) if len(shared) else float("nan")
        rows.append((reviewer, len(shared), agreement, cohen_kappa(a, b)))
    return pd.DataFrame(rows, columns=REFERENCE_AGREEMENT_COLUMNS)


def _correlation(function, x: np.ndarray, y: np.ndarray) -> float:
    """A correlation, NaN when undefined (fewer than 3 points, or a constant side)."""
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(function(x, y)[0])


def rating_agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """The `rating-agreement` table from one row per rating (artifact, axis, rater, rater_kind, run, rating): per axis
    and judge (a rater of kind "judge"), over the artifacts both humans and that judge rated, the human mean rating per
    artifact against the judge's mean over its runs: Spearman ρ, Pearson r and the mean absolute difference."""
    human = ratings[ratings["rater_kind"] == "human"].groupby(["axis", "artifact"])["rating"].mean()
    judges = ratings[ratings["rater_kind"] == "judge"].groupby(["axis", "rater", "artifact"])["rating"].mean()
    rows = []
    for (axis, judge), per_artifact in judges.groupby(level=["axis", "rater"], sort=True):
        judge_means = per_artifact.droplevel(["axis", "rater"])
        if axis not in human.index.get_level_values("axis"):
            continue
        human_means = human.loc[axis]
        shared = judge_means.index.intersection(human_means.index)
        h, j = human_means.loc[shared].to_numpy(float), judge_means.loc[shared].to_numpy(float)
        rows.append(
            (
                axis,
                judge,
                len(shared),
                _correlation(stats.spearmanr, h, j),
                _correlation(stats.pearsonr, h, j),
                float(np.mean(np.abs(h - j))) if len(shared) else float("nan"),
            )
        )
    return pd.DataFrame(rows, columns=RATING_AGREEMENT_COLUMNS)


def _majority_share(values: np.ndarray) -> float:
    """The share of runs that gave the most frequent rating (which mode, when several, does not change the share)."""
    _, counts = np.unique(values, return_counts=True)
    return counts.max() / len(values)


def rating_consistency(ratings: pd.DataFrame) -> pd.DataFrame:
    """The `rating-consistency` table: per axis and judge, over artifacts the judge rated in ≥ 2 runs, the mean share
    of runs agreeing with the artifact's majority (modal) rating and the mean per-artifact standard deviation across
    runs (ddof = 1, as the judge-runs table of the rubric judge)."""
    judged = ratings[ratings["rater_kind"] == "judge"]
    rows = []
    for (axis, judge), frame in judged.groupby(["axis", "rater"], sort=True):
        runs = frame.groupby("artifact")["rating"]
        repeated = runs.count() >= 2
        majority = runs.agg(lambda s: _majority_share(s.to_numpy()))[repeated]
        sd = runs.std(ddof=1)[repeated]
        rows.append(
            (
                axis,
                judge,
                int(repeated.sum()),
                float(majority.mean()) if len(majority) else float("nan"),
                float(sd.mean()) if len(sd) else float("nan"),
            )
        )
    return pd.DataFrame(rows, columns=RATING_CONSISTENCY_COLUMNS)


def annotator_quality(votes: pd.DataFrame, excluded: Sequence[str] = ()) -> pd.DataFrame:
    """The `annotator-quality` table from one row per current vote: annotator, item (id), purpose (regular | attention
    | repeat), label (the outcome relative to the item's configurations: "x", "y", "tie_success", "tie_failure"),
    left_is_x (which configuration was shown on the left), expected (an attention item's known label, else empty).

    votes = regular votes; attention_items / attention_passed = attention votes and those matching the known label;
    swapped_repeats = repeat votes whose first (regular) vote on the item exists, self_consistent = the share of them
    with the same label as the first; position_left_share = the share of decisive votes (any purpose) for the left
    side; excluded = the coordinator excluded the annotator's votes."""
    excluded = set(excluded)
    rows = []
    for annotator, own in votes.groupby("annotator", sort=True):
        regular = own[own["purpose"] == REGULAR]
        attention = own[own["purpose"] == ATTENTION]
        passed = int((attention["label"] == attention["expected"]).sum())
        first = regular.drop_duplicates("item", keep="first").set_index("item")["label"]
        repeats = own[(own["purpose"] == REPEAT) & own["item"].isin(first.index)]
        same = (repeats["label"].to_numpy() == first.loc[repeats["item"]].to_numpy()) if len(repeats) else []
        decisive = own[own["label"].isin(["x", "y"])]
        left = (decisive["label"] == "x") == decisive["left_is_x"].astype(bool)
        rows.append(
            (
                annotator,
                len(regular),
                len(attention),
                passed,
                passed / len(attention) if len(attention) else float("nan"),
                len(repeats),
                float(np.mean(same)) if len(repeats) else float("nan"),
                float(left.mean()) if len(decisive) else float("nan"),
                annotator in excluded,
            )
        )
    return pd.DataFrame(rows, columns=ANNOTATOR_QUALITY_COLUMNS)


def gate_fail_value(text: str) -> bool:
    """A gate_fail cell: true / false (also 1 / 0, yes / no), case-insensitive; ValueError otherwise."""
    value = str(text).strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise ValueError(f"gate_fail must be true or false, not {text!r}")


__all__ = [
    "ALL_REVIEWERS",
    "ANNOTATOR_QUALITY_COLUMNS",
    "ATTENTION",
    "CALIBRATION",
    "DEFAULT_RATING_AXES",
    "RATING_MAX",
    "RATING_MIN",
    "GATE_AGREEMENT_COLUMNS",
    "RATING_AGREEMENT_COLUMNS",
    "RATING_CONSISTENCY_COLUMNS",
    "REFERENCE_AGREEMENT_COLUMNS",
    "REGULAR",
    "REPEAT",
    "agreement_with_reference",
    "annotator_quality",
    "cohen_kappa",
    "fleiss_kappa",
    "gate_fail_value",
    "gate_review_agreement",
    "rating_agreement",
    "rating_consistency",
]
