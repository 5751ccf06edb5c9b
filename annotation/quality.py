"""Agreement and quality statistics of the human studies (REFERENCE 5, 8, 9), over plain frames.

Pure: numpy, pandas and scipy only — no Django, DRF or Celery. The selectors read the database into the frames these
functions take; tests check them by hand and against scikit-learn, statsmodels and scipy.

- :func:`cohen_kappa`, :func:`fleiss_kappa`: chance-corrected agreement (two raters; many raters per subject).
- :func:`gate_review_agreement`: reviewer pairs on gate failure, plus Fleiss' κ over artifacts every reviewer saw.
- :func:`agreement_with_reference`: each reviewer against a reference label (the automated gate).
- :func:`rating_agreement`, :func:`rating_consistency`: human ratings against the judge's, the judge against itself.
- :func:`rating_table8`, :func:`rating_system_means`, :func:`rating_cross_judge`: PPTArena Table 8, per-system means,
  and the ranking check between judge families.
- :func:`stratified_sample`: a seeded sample whose strata keep the population's proportions (largest remainder).
- :func:`annotator_quality`: attention pass rate, swapped-repeat self-consistency and position bias per annotator.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

ALL_REVIEWERS = "all"  # reviewer_a of the gate-review-agreement row holding Fleiss' κ over every reviewer

GATE_AGREEMENT_COLUMNS = ["reviewer_a", "reviewer_b", "n", "agreement", "kappa"]
REFERENCE_AGREEMENT_COLUMNS = ["reviewer", "n", "agreement", "kappa"]
RATING_AGREEMENT_COLUMNS = ["axis", "judge", "n", "spearman", "pearson", "mean_abs_diff"]
RATING_CONSISTENCY_COLUMNS = ["axis", "judge", "n", "runs", "majority_agreement", "sd_pct", "modal_share_mean"]
RATING_TABLE8_COLUMNS = ["axis", "judge", "n_human", "spearman", "pearson", "n_runs", "majority_agreement", "sd_pct"]
RATING_SYSTEM_MEANS_COLUMNS = ["axis", "source", "category", "configuration", "n", "mean"]
RATING_CROSS_JUDGE_COLUMNS = ["axis", "family_a", "family_b", "systems", "kendall_tau", "p_value", "moved"]
OVERALL = "(all)"  # the category of a rating-system-means row over every category
HUMAN_SOURCE = "human"  # the source of human rows in rating-system-means (judge rows carry their judge family)
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
    from statsmodels.stats import inter_rater

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
    from scipy import stats  # on use: scipy.stats costs about 1 s at every process start

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


def has_majority(values) -> bool:
    """PPTArena's majority agreement for one example: more than half of its runs give the same rating."""
    _, counts = np.unique(np.asarray(values), return_counts=True)
    return bool(counts.max() * 2 > len(values))


def sd_percent(values) -> float:
    """PPTArena's spread for one example: the standard deviation of its discrete run scores (population SD, ddof = 0)
    as a percentage of the rating scale (RATING_MAX − RATING_MIN: a 0–5 scale divides by 5)."""
    return float(np.std(np.asarray(values, dtype=float), ddof=0)) / (RATING_MAX - RATING_MIN) * 100


def rating_consistency(ratings: pd.DataFrame) -> pd.DataFrame:
    """The `rating-consistency` table (PPTArena, REFERENCE 9): per axis and judge, over artifacts (examples) the
    judge rated in ≥ 2 runs:

    - majority_agreement: the SHARE OF EXAMPLES on which more than half of the runs give the same rating;
    - sd_pct: the mean over examples of the SD of the run scores (ddof = 0) as a percentage of the 0–5 scale;
    - modal_share_mean: a different, older statistic kept for comparison only — the mean share of runs equal to the
      example's modal rating (NOT the paper's majority agreement);
    - runs: the largest number of runs on any example (PPTArena: five)."""
    judged = ratings[ratings["rater_kind"] == "judge"]
    rows = []
    for (axis, judge), frame in judged.groupby(["axis", "rater"], sort=True):
        runs = frame.groupby("artifact")["rating"]
        counts = runs.count()
        repeated = counts[counts >= 2].index
        values = [runs.get_group(a).to_numpy() for a in repeated]
        rows.append(
            (
                axis,
                judge,
                len(values),
                int(counts.max()) if len(counts) else 0,
                float(np.mean([has_majority(v) for v in values])) if values else float("nan"),
                float(np.mean([sd_percent(v) for v in values])) if values else float("nan"),
                float(np.mean([_majority_share(v) for v in values])) if values else float("nan"),
            )
        )
    return pd.DataFrame(rows, columns=RATING_CONSISTENCY_COLUMNS)


def rating_table8(ratings: pd.DataFrame) -> pd.DataFrame:
    """PPTArena Table 8 (REFERENCE 10) per axis and judge: human–judge Spearman / Pearson (rating_agreement, over the
    artifacts both rated; n_human of them) and the judge's majority agreement and SD (%) over its repeated runs
    (rating_consistency; n_runs examples). A judge no human overlaps with keeps its consistency, correlations NaN."""
    agreement = rating_agreement(ratings).rename(columns={"n": "n_human"})
    consistency = rating_consistency(ratings).rename(columns={"n": "n_runs"})
    frame = consistency.merge(agreement, on=["axis", "judge"], how="outer")
    frame["n_human"] = frame["n_human"].fillna(0).astype(int)
    frame["n_runs"] = frame["n_runs"].fillna(0).astype(int)
    return frame[RATING_TABLE8_COLUMNS].sort_values(["axis", "judge"]).reset_index(drop=True)


def _judge_source(frame: pd.DataFrame) -> pd.Series:
    """A judge rating's family: its judge_family, else its rater (the judge model id)."""
    family = frame["judge_family"].fillna("").astype(str)
    return family.where(family != "", frame["rater"].astype(str))


def rating_system_means(ratings: pd.DataFrame) -> pd.DataFrame:
    """The `rating-system-means` table from one row per rating with its configuration, category and judge_family: per
    axis, source (HUMAN_SOURCE, or a judge family — the judge_family, else the judge's rater id) and category (OVERALL
    and each category), per configuration the mean over its artifacts of each artifact's mean rating (over raters and
    runs, so every artifact weighs the same) and n, the artifacts. Artifacts with an empty category count in OVERALL
    only."""
    frame = ratings.copy()
    frame["source"] = np.where(frame["rater_kind"] == "human", HUMAN_SOURCE, _judge_source(frame))
    keys = ["axis", "source", "configuration", "category", "artifact"]
    per_artifact = frame.groupby(keys, sort=True)["rating"].mean().reset_index()
    overall = per_artifact.assign(category=OVERALL)
    categorised = per_artifact[per_artifact["category"].fillna("") != ""]
    both = pd.concat([overall, categorised], ignore_index=True)
    table = both.groupby(["axis", "source", "category", "configuration"], sort=True)["rating"].agg(["count", "mean"])
    table = table.reset_index().rename(columns={"count": "n"})
    return table[RATING_SYSTEM_MEANS_COLUMNS]


def _ranks(means: pd.Series) -> pd.Series:
    """1 = the highest mean; ties share the smallest rank."""
    return means.rank(ascending=False, method="min").astype(int)


def rating_cross_judge(ratings: pd.DataFrame) -> pd.DataFrame:
    """The `rating-cross-judge` table: per axis and pair of judge families (judge_family, else the judge's rater id)
    that both rated every system (configuration) rated on that axis by any judge, Kendall τ (scipy's τ-b) between
    their system means (rating_system_means, OVERALL) with its p-value, and the systems whose rank moves as
    "system a→b" (rank under family_a → under family_b; 1 = best). A family missing a system takes part in no pair."""
    from scipy import stats  # on use: scipy.stats costs about 1 s at every process start

    judged = ratings[ratings["rater_kind"] == "judge"]
    means = rating_system_means(judged)
    means = means[means["category"] == OVERALL]
    rows = []
    for axis, frame in means.groupby("axis", sort=True):
        wide = frame.pivot(index="configuration", columns="source", values="mean")
        complete = [family for family in sorted(wide.columns) if wide[family].notna().all()]
        for first, second in itertools.combinations(complete, 2):
            a, b = wide[first], wide[second]
            if len(wide) >= 2 and a.nunique() > 1 and b.nunique() > 1:
                result = stats.kendalltau(a.to_numpy(), b.to_numpy())
                tau, p = float(result.statistic), float(result.pvalue)
            else:
                tau = p = float("nan")
            rank_a, rank_b = _ranks(a), _ranks(b)
            moved = [f"{s} {rank_a[s]}→{rank_b[s]}" for s in wide.index if rank_a[s] != rank_b[s]]
            rows.append((axis, first, second, len(wide), tau, p, "; ".join(moved)))
    return pd.DataFrame(rows, columns=RATING_CROSS_JUDGE_COLUMNS)


def stratum_sizes(population: Mapping[Hashable, int], size: int) -> dict:
    """How many of a sample of `size` each stratum gets so that the strata keep the population's proportions: each
    gets the floor of its quota size · n_s / N, and the seats left go to the largest remainders (ties: the larger
    stratum, then the stratum's name). 30 / 10 with a sample of 8: quotas 6 and 2."""
    total = sum(population.values())
    if not 1 <= size <= total:
        raise ValueError(f"a sample of {size} from a population of {total}")
    quotas = {stratum: size * n / total for stratum, n in population.items()}
    sizes = {stratum: int(q) for stratum, q in quotas.items()}
    left = size - sum(sizes.values())
    order = sorted(quotas, key=lambda s: (-(quotas[s] - sizes[s]), -population[s], str(s)))
    for stratum in order[:left]:
        sizes[stratum] += 1
    return sizes


def stratified_sample(strata: Mapping[Hashable, Hashable], size: int, *, seed: int) -> list:
    """A seeded sample of `size` of the keys of `strata` (key → its stratum) whose stratum counts keep the population's
    proportions (stratum_sizes, largest remainder); within a stratum the keys with the smallest seeded rank are drawn,
    so the same seed draws the same sample. Sorted keys."""
    by_stratum: dict = {}
    for key, stratum in strata.items():
        by_stratum.setdefault(stratum, []).append(key)
    sizes = stratum_sizes({s: len(keys) for s, keys in by_stratum.items()}, size)
    chosen = []
    for stratum, keys in by_stratum.items():
        ranked = sorted(keys, key=lambda k: hashlib.sha256(repr((seed, "stratified", k)).encode()).hexdigest())
        chosen += ranked[: sizes[stratum]]
    return sorted(chosen)


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
    "RATING_CROSS_JUDGE_COLUMNS",
    "RATING_SYSTEM_MEANS_COLUMNS",
    "RATING_TABLE8_COLUMNS",
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
    "rating_cross_judge",
    "rating_system_means",
    "rating_table8",
    "sd_percent",
    "has_majority",
    "stratified_sample",
    "stratum_sizes",
]
