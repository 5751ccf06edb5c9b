"""Human votes beside judge scores: Elo tables, judge–human agreement, human–human agreement.

The only place that reads both annotation and scoring (DESIGN: bt_elo joins them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from annotation import selectors as annotation_selectors
from core.cache import cached_by_state
from core.errors import AppError, Invalid
from corpus.protocol import (
    AGREEMENT_BOOTSTRAP_RESAMPLES,
    AGREEMENT_BOOTSTRAP_SEED,
    ELO_BOOTSTRAP_RESAMPLES,
    ELO_BOOTSTRAP_SEED,
)
from scoring import selectors as scoring_selectors
from scoring import stats as scoring_stats

from . import agreement, bradley_terry

ELO_COLUMNS = [
    "configuration",
    "elo",
    "ci_low",
    "ci_high",
    "wins",
    "losses",
    "ties",
    "ties_success",
    "ties_failure",
    "n",
]
MEAN_RUN = "mean"


def study_comparisons(*, study: str | None = None) -> pd.DataFrame:
    return annotation_selectors.comparisons_frame(study=study)


def study_configurations(comparisons: pd.DataFrame, *, study: str | None = None) -> list[str]:
    """The study's configurations in declaration order (those never compared included)."""
    try:
        resolved = annotation_selectors.study_resolve(study=study)
        slugs = [c.slug for c in resolved.configurations.order_by("position", "slug")]
    except AppError:
        slugs = []
    seen = set(slugs)
    for column in ("config_a", "config_b"):
        for slug in comparisons[column].unique() if len(comparisons) else []:
            if slug not in seen:
                slugs.append(slug)
                seen.add(slug)
    return slugs


def _votes_state(*, study: str | None = None, **_) -> tuple:
    return annotation_selectors.comparisons_state(study=study)


def _votes_and_scores_state(*, study: str | None = None, **_) -> tuple:
    return (annotation_selectors.comparisons_state(study=study), scoring_selectors.scores_state())


@cached_by_state(_votes_state)  # 2,000 refits: computed once per state of the votes (every Elo table, the leaderboard)
def elo_bootstrap(
    *, study: str | None = None, resamples: int = ELO_BOOTSTRAP_RESAMPLES, seed: int = ELO_BOOTSTRAP_SEED
):
    comparisons = study_comparisons(study=study)
    configurations = study_configurations(comparisons, study=study)
    if comparisons.empty or len(configurations) < 2:
        return comparisons, configurations, None
    result = bradley_terry.bootstrap_elo(comparisons, configurations=configurations, resamples=resamples, seed=seed)
    return comparisons, configurations, result


def automated_means(*, judge: str | None = None) -> pd.DataFrame:
    """Configuration means per (judge, run) and over runs, from the config-scores table."""
    table = scoring_stats.config_scores(scoring_selectors.scores_frame(judge=judge), resamples=1)
    return table[["configuration", "judge", "run", "mean"]]


def elo_table(*, study: str | None = None, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    """Table 16: Elo with 95 % cluster-bootstrap CI and the vote record, plus r / ρ to automated means."""
    comparisons, configurations, result = elo_bootstrap(study=study)
    if result is None:
        return pd.DataFrame([], columns=ELO_COLUMNS)
    record = bradley_terry.record_table(comparisons, configurations).set_index("configuration")
    frame = pd.DataFrame(
        {
            "configuration": list(result.ratings.configurations),
            "elo": result.ratings.elo,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
        }
    )
    frame = frame.join(record[["wins", "losses", "ties", "ties_success", "ties_failure", "n"]], on="configuration")
    frame["regularisation"] = result.ratings.regularisation
    means = automated_means(judge=judge)
    if run not in (None, ""):
        means = means[means["run"].astype(str) == str(run)]
    for (judge_id, run_id), group in means.groupby(["judge", means["run"].astype(str)], sort=True):
        joined = frame.merge(group[["configuration", "mean"]], on="configuration", how="inner").dropna()
        suffix = f"{judge_id}__run_{run_id}"
        frame[f"automated_mean__{suffix}"] = frame["configuration"].map(
            dict(zip(group["configuration"], group["mean"]))
        )
        if len(joined) >= 3:
            frame[f"pearson_r__{suffix}"] = sps.pearsonr(joined["mean"], joined["elo"]).statistic
            frame[f"spearman_rho__{suffix}"] = sps.spearmanr(joined["mean"], joined["elo"]).statistic
    return frame


def rank_probability_table(*, study: str | None = None) -> pd.DataFrame:
    _, _, result = elo_bootstrap(study=study)
    if result is None:
        return pd.DataFrame([], columns=["configuration"])
    k = len(result.ratings.configurations)
    frame = pd.DataFrame(result.rank_probabilities, columns=[f"rank_{r + 1}" for r in range(k)])
    frame.insert(0, "configuration", list(result.ratings.configurations))
    return frame


def win_rate_table(*, study: str | None = None) -> pd.DataFrame:
    """Row configuration's wins (+½ per tie) over column's, and the votes behind each cell."""
    comparisons = study_comparisons(study=study)
    configurations = study_configurations(comparisons, study=study)
    rows = []
    if comparisons.empty:
        return pd.DataFrame([], columns=["config_row", "config_col", "wins", "votes", "win_rate"])
    w = bradley_terry.win_matrix(comparisons, configurations)
    for i, a in enumerate(configurations):
        for j, b in enumerate(configurations):
            if i != j:
                votes = w[i, j] + w[j, i]
                rows.append(
                    {
                        "config_row": a,
                        "config_col": b,
                        "wins": w[i, j],
                        "votes": votes,
                        "win_rate": w[i, j] / votes if votes else np.nan,
                    }
                )
    return pd.DataFrame(rows)


@cached_by_state(_votes_and_scores_state)  # the join every agreement table starts from
def judged_comparisons(*, study: str | None = None, judge: str | None = None) -> pd.DataFrame:
    """Each vote with the judge margin (score of the artifact shown as A minus B) per run and over runs."""
    comparisons = study_comparisons(study=study)
    scores = scoring_selectors.scores_frame(judge=judge)
    columns = ["comparison_id", "task_id", "outcome", "matchup", "judge", "run", "margin"]
    if comparisons.empty or scores.empty:
        return pd.DataFrame([], columns=columns)
    per_run = scores[["artifact_id", "judge", "run", "score"]].copy()
    per_run["run"] = per_run["run"].astype(str)
    over_runs = scores.groupby(["artifact_id", "judge"], as_index=False)["score"].mean()
    over_runs["run"] = MEAN_RUN
    score_table = pd.concat([per_run, over_runs], ignore_index=True)
    a = comparisons[["comparison_id", "task_id", "outcome", "matchup", "artifact_a_id", "artifact_b_id"]]
    joined = a.merge(
        score_table.rename(columns={"artifact_id": "artifact_a_id", "score": "score_a"}), on="artifact_a_id"
    )
    joined = joined.merge(
        score_table.rename(columns={"artifact_id": "artifact_b_id", "score": "score_b"}),
        on=["artifact_b_id", "judge", "run"],
    )
    joined["margin"] = joined["score_a"] - joined["score_b"]
    return joined.dropna(subset=["margin"])[columns]


def _per_judge_run(frame: pd.DataFrame, compute) -> pd.DataFrame:
    parts = []
    for (judge_id, run_id), group in frame.groupby(["judge", "run"], sort=True):
        table = compute(group, run_id)
        table.insert(0, "run", run_id)
        table.insert(0, "judge", judge_id)
        parts.append(table)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame([], columns=["judge", "run"])


@cached_by_state(_votes_and_scores_state)  # 5,000 resamples per judge and run: once per state of votes and scores
def agreement_margin_table(
    *, study: str | None = None, judge: str | None = None, run: str | None = None
) -> pd.DataFrame:
    """Tables 6, 17, 19: direction agreement overall and per |margin| bucket, cluster-bootstrap CIs."""
    frame = judged_comparisons(study=study, judge=judge)
    if run not in (None, ""):
        frame = frame[frame["run"] == str(run)]
    return _per_judge_run(
        frame,
        lambda g, r: agreement.direction_agreement(
            g,
            mode="mean" if r == MEAN_RUN else "single",
            resamples=AGREEMENT_BOOTSTRAP_RESAMPLES,
            seed=AGREEMENT_BOOTSTRAP_SEED,
        ),
    )


def agreement_3class_table(
    *, study: str | None = None, judge: str | None = None, run: str | None = None
) -> pd.DataFrame:
    frame = judged_comparisons(study=study, judge=judge)
    if run not in (None, ""):
        frame = frame[frame["run"] == str(run)]
    return _per_judge_run(frame, lambda g, r: agreement.three_class_agreement(g))


def agreement_matchup_table(
    *, study: str | None = None, judge: str | None = None, run: str | None = None
) -> pd.DataFrame:
    frame = judged_comparisons(study=study, judge=judge)
    if run not in (None, ""):
        frame = frame[frame["run"] == str(run)]
    return _per_judge_run(
        frame, lambda g, r: agreement.matchup_agreement(g, mode="mean" if r == MEAN_RUN else "single")
    )


def iaa_table(*, study: str | None = None) -> pd.DataFrame:
    """Human–human agreement on overlap items (three classes after aligning sides)."""
    labels = annotation_selectors.overlap_labels_frame(study=study)
    return agreement.inter_annotator_agreement(labels)


def _elo_series(study: str | None) -> pd.Series | None:
    try:
        table = elo_table(study=study)
    except AppError:
        return None
    return table.set_index("configuration")["elo"] if len(table) else None


@cached_by_state(_votes_and_scores_state)
def weight_sensitivity_tables(*, study: str | None = None, judge: str | None = None):
    scores = scoring_selectors.scores_frame(judge=judge)
    try:
        return scoring_stats.weight_sensitivity(scores, elo=_elo_series(study), judge=judge)
    except scoring_stats.NoJudgeScores as error:
        raise Invalid(str(error)) from None


def weight_sensitivity_table(*, study: str | None = None, judge: str | None = None) -> pd.DataFrame:
    return weight_sensitivity_tables(study=study, judge=judge).variants


def weight_sensitivity_effects_table(*, study: str | None = None, judge: str | None = None) -> pd.DataFrame:
    return weight_sensitivity_tables(study=study, judge=judge).effects
