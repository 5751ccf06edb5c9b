"""Human votes beside judge scores: Elo tables, judge–human agreement, human–human agreement.

The only place that reads both annotation and scoring (DESIGN: bt_elo joins them).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from django.core.cache import cache

from annotation import selectors as annotation_selectors
from annotation.services.allocation import PairPlan
from core.cache import cached_analysis, cached_by_state
from core.errors import AppError, Invalid
from corpus.protocol import (
    AGREEMENT_BOOTSTRAP_RESAMPLES,
    AGREEMENT_BOOTSTRAP_SEED,
    ELO_BOOTSTRAP_RESAMPLES,
    ELO_BOOTSTRAP_SEED,
    PAPER_JUDGE_RUN,
)
from scoring import selectors as scoring_selectors
from scoring import stats as scoring_stats

from . import agreement, bradley_terry, stability

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


def study_configurations(comparisons: pd.DataFrame, *, study: str | None = None) -> list[str]:
    """The study's configurations in declaration order (those never compared included)."""
    try:
        resolved = annotation_selectors.study_resolve(study=study)
        # Imported systems by their names as given (annotation_selectors.configuration_name), as their votes name them.
        slugs = [
            annotation_selectors.configuration_name(c) for c in resolved.configurations.order_by("position", "slug")
        ]
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


@cached_by_state(_votes_state)  # read by a dozen tables: the study's votes once per state of them
def study_comparisons(*, study: str | None = None) -> pd.DataFrame:
    return annotation_selectors.comparisons_frame(study=study)


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


@dataclass(frozen=True)
class StudyElo:
    """The one Elo computation of a study (protocol resamples and seed) behind the elo table, the results pages and
    the live leaderboard: the same votes give the same numbers everywhere."""

    study: str
    votes: int
    newest_vote: int
    exclusions: tuple[int, ...]
    computed_at: float
    comparisons: pd.DataFrame
    configurations: list[str]
    result: object  # bradley_terry.BootstrapElo, or None without votes

    @property
    def key(self) -> tuple[str, int, int, tuple[int, ...]]:
        return self.study, self.votes, self.newest_vote, self.exclusions


STUDY_ELO_CACHE_SECONDS = 24 * 3600


def _study_elo_key(signature: tuple[str, int, int, tuple[int, ...]]) -> str:
    name, votes, newest, exclusions = signature
    excluded = hashlib.sha256(repr(exclusions).encode()).hexdigest()[:16]
    return f"bt_elo:study_elo:v2:{hashlib.sha256(name.encode()).hexdigest()[:16]}:{votes}:{newest}:{excluded}"


def study_elo(*, study: str | None = None, cached_only: bool = False) -> StudyElo | None:
    """`elo_bootstrap` for the study, cached per (study, counted votes, newest vote id, exclusions): any new,
    withdrawn, superseded or excluded vote changes the key, so a cached result is never stale. `cached_only`: None rather than compute."""
    signature = annotation_selectors.votes_signature(study=study)
    key = _study_elo_key(signature)
    found = cache.get(key)
    if found is None and not cached_only:
        comparisons, configurations, result = elo_bootstrap(study=signature[0])
        found = StudyElo(*signature, time.time(), comparisons, configurations, result)
        cache.set(key, found, STUDY_ELO_CACHE_SECONDS)
    return found


# Below this many counted votes for any configuration, or with a comparison graph that is not strongly connected,
# the leaderboard says the ranking is not yet meaningful instead of showing the (regularised, extreme) numbers.
LEADERBOARD_MIN_VOTES_PER_CONFIGURATION = 5


def leaderboard(elo: StudyElo) -> dict:
    """The live leaderboard from the study's one Elo computation: the elo table's numbers, 'as of' when they were
    computed, with the votes behind them, and whether they can be read as a ranking yet."""
    payload = {
        "study": elo.study,
        "votes": elo.votes,
        "as_of": datetime.fromtimestamp(elo.computed_at, tz=UTC).isoformat(timespec="seconds"),
        "rows": [],
    }
    if elo.result is None:
        return {**payload, "status": "insufficient", "detail": "No counted votes yet."}
    result = elo.result
    record = bradley_terry.record_table(elo.comparisons, elo.configurations).set_index("configuration")
    rows = []
    for i, configuration in enumerate(result.ratings.configurations):
        rows.append(
            {
                "configuration": configuration,
                "elo": float(result.ratings.elo[i]),
                "ci_low": float(result.ci_low[i]),
                "ci_high": float(result.ci_high[i]),
                "n": int(record.loc[configuration, "n"]),
            }
        )
    rows.sort(key=lambda r: -r["elo"])
    payload["rows"] = rows
    sparse = [r["configuration"] for r in rows if r["n"] < LEADERBOARD_MIN_VOTES_PER_CONFIGURATION]
    if sparse:
        detail = (
            f"Too few votes to rank: {len(sparse)} of {len(rows)} configurations have fewer than "
            f"{LEADERBOARD_MIN_VOTES_PER_CONFIGURATION} counted votes."
        )
        return {**payload, "status": "insufficient", "detail": detail}
    if not result.ratings.diagnostics.connected:
        detail = (
            "Not rankable yet: the comparison graph is not connected (some configurations never lost or never won "
            "against the others), so their Elo would be arbitrary."
        )
        return {**payload, "status": "insufficient", "detail": detail}
    return {**payload, "status": "ok"}


def automated_means(*, judge: str | None = None) -> pd.DataFrame:
    """Configuration means per (judge, run) and over runs, from the config-scores table."""
    table = scoring_stats.config_scores(scoring_selectors.scores_frame(judge=judge), resamples=1)
    return table[["configuration", "judge", "run", "mean"]]


def elo_table(*, study: str | None = None, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    """Table 16: Elo with 95 % cluster-bootstrap CI and the vote record, plus r / ρ to automated means."""
    elo = study_elo(study=study)
    comparisons, configurations, result = elo.comparisons, elo.configurations, elo.result
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
            frame[f"pearson_r__{suffix}"] = scoring_stats.correlation("pearson", joined["mean"], joined["elo"])[0]
            frame[f"spearman_rho__{suffix}"] = scoring_stats.correlation("spearman", joined["mean"], joined["elo"])[0]
    resolved = annotation_selectors.study_resolve(study=elo.study)
    frame.attrs["notes"] = [*frame.attrs.get("notes", []), *annotation_selectors.renderer_notes(study=resolved)]
    return frame


def rank_probability_table(*, study: str | None = None) -> pd.DataFrame:
    result = study_elo(study=study).result
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


@cached_by_state(_votes_and_scores_state)  # Cohen's kappa per judge and run
def agreement_3class_table(
    *, study: str | None = None, judge: str | None = None, run: str | None = None
) -> pd.DataFrame:
    frame = judged_comparisons(study=study, judge=judge)
    if run not in (None, ""):
        frame = frame[frame["run"] == str(run)]
    return _per_judge_run(frame, lambda g, r: agreement.three_class_agreement(g))


@cached_by_state(_votes_and_scores_state)  # a cluster bootstrap per matchup, judge and run
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
def weight_sensitivity_tables(*, study: str | None = None, judge: str | None = None, run: str):
    scores = scoring_selectors.scores_frame(judge=judge)
    try:
        return scoring_stats.weight_sensitivity(scores, elo=_elo_series(study), judge=judge, run=run)
    except scoring_stats.NoJudgeScores as error:
        raise Invalid(str(error)) from None


def _weight_run(run: str | None) -> str:
    """Table 21 is computed on judge run 1 (the paper's) unless another run, or "mean", is chosen."""
    return scoring_selectors.judge_run_choice(run, default=PAPER_JUDGE_RUN)


def weight_sensitivity_table(
    *, study: str | None = None, judge: str | None = None, run: str | None = None
) -> pd.DataFrame:
    return weight_sensitivity_tables(study=study, judge=judge, run=_weight_run(run)).variants


def weight_sensitivity_effects_table(
    *, study: str | None = None, judge: str | None = None, run: str | None = None
) -> pd.DataFrame:
    return weight_sensitivity_tables(study=study, judge=judge, run=_weight_run(run)).effects


# --- ranking stability, adaptive allocation, study planning (issue 16) ------------------------------
# Resamples behind an adaptive study's next-pair plan: enough for the covariance of K Elo values, small enough that
# a refit after a vote stays well under a second; cached per vote counts, so most next-item calls reuse it.
ADAPTIVE_RESAMPLES = 200


def _study_inputs(study: str | None) -> tuple[pd.DataFrame, list[str]]:
    comparisons = study_comparisons(study=study)
    columns = ["task_id", "config_a", "config_b", "outcome"]
    return comparisons[columns].reset_index(drop=True), study_configurations(comparisons, study=study)


def elo_stability_table(*, study: str | None = None) -> pd.DataFrame:
    """Elo rank stability when only a fraction (10 %…100 %) of the study's source figures had been annotated: each
    fraction resamples that many figures with all their counted votes, 2,000 refits, seed 20260720."""
    comparisons, configurations = _study_inputs(study)
    if comparisons.empty or len(configurations) < 2:
        return pd.DataFrame([], columns=stability.ELO_STABILITY_COLUMNS)
    return cached_analysis(
        "elo-stability",
        (comparisons, configurations),
        lambda: stability.elo_stability(comparisons, configurations=configurations),
    )


def elo_adjacent_table(*, study: str | None = None) -> pd.DataFrame:
    """Neighbours in the Elo order: gap, 95 % cluster-bootstrap difference interval, rank-flip probability, and the
    further votes on the pair projected to separate them (Fisher information at the current effect)."""
    comparisons, configurations = _study_inputs(study)
    if comparisons.empty or len(configurations) < 2:
        return pd.DataFrame([], columns=stability.ELO_ADJACENT_COLUMNS)
    return cached_analysis(
        "elo-adjacent",
        (comparisons, configurations),
        lambda: stability.elo_adjacent(comparisons, configurations=configurations),
    )


def stability_panel(*, study: str | None = None) -> dict:
    """The dashboard's stability panel: elo-adjacent rows and whether the study's stopping rule is met (every
    adjacent pair's rank-flip probability below the coordinator's threshold)."""
    resolved = annotation_selectors.study_resolve(study=study)
    table = elo_adjacent_table(study=resolved.name)
    threshold = resolved.stop_when_flip_below
    worst = float(table["rank_flip_probability"].max()) if len(table) else None
    finite = table.replace([np.inf, -np.inf], np.nan).astype(object)
    return {
        "study": resolved.name,
        "threshold": threshold,
        "max_flip_probability": worst,
        "stopping_rule_met": worst is not None and worst < threshold,
        "columns": list(table.columns),
        "rows": finite.where(finite.notna(), None).to_dict(orient="records"),  # inf votes (gap 0) as null
    }


NO_PLAN = PairPlan(planned={}, priority={})


def adaptive_plan_key(study_id: int, pair_votes: dict[tuple[int, int], int] | None = None) -> str:
    """Cache key of a study's plan: for exactly these votes per pair, or (None) the latest plan made for any votes."""
    if pair_votes is None:
        return f"bt_elo:adaptive-plan:{study_id}:latest"
    digest = hashlib.sha256(repr(sorted(pair_votes.items())).encode()).hexdigest()[:32]
    return f"bt_elo:adaptive-plan:{study_id}:{digest}"


def adaptive_plan_cached(*, study, pair_votes: dict[tuple[int, int], int]) -> tuple[PairPlan | None, bool]:
    """What the next-item request may use without fitting anything: (the plan, whether it was made for exactly these
    votes). The latest plan stands in while a fresher one is computed (the order is a heuristic: a plan a few votes
    old still sends votes where the ranking was least settled); None before the first plan."""
    fresh = cache.get(adaptive_plan_key(study.pk, pair_votes))
    if fresh is not None:
        return fresh, True
    return cache.get(adaptive_plan_key(study.pk)), False


def adaptive_plan_compute(*, study, pair_votes: dict[tuple[int, int], int]) -> PairPlan:
    """The next votes of an adaptive study (bt_elo.stability.next_pairs_adaptive over a batch of one vote per pair),
    from its counted votes: Elo and 200 cluster-bootstrap draws. Run by the analysis task, never inside a request; an
    empty plan (least covered first) before any vote."""
    comparisons, configurations = _study_inputs(study.name)
    ids = {c.slug: c.pk for c in annotation_selectors.study_configurations(study)}
    configurations = [slug for slug in configurations if slug in ids]
    if comparisons.empty or len(configurations) < 2:
        return NO_PLAN
    index = {ids[slug]: n for n, slug in enumerate(configurations)}
    counts = np.zeros((len(configurations), len(configurations)), dtype=np.int64)
    for (x, y), n in pair_votes.items():
        if x in index and y in index:
            counts[index[x], index[y]] = counts[index[y], index[x]] = n
    try:
        boot = bradley_terry.bootstrap_elo(
            comparisons, configurations=configurations, resamples=ADAPTIVE_RESAMPLES, seed=ELO_BOOTSTRAP_SEED
        )
    except np.linalg.LinAlgError:
        # A few votes forming a perfect order (no cycle) can leave a bootstrap refit singular: serve least covered
        # first until the votes say more.
        return NO_PLAN
    table = stability.next_pairs_adaptive(
        configurations=configurations,
        pair_votes=counts,
        floor=study.adaptive_floor,
        elo=boot.ratings.elo,
        elo_draws=boot.samples,
        batch=len(pair_votes),
    )
    keys = {frozenset(pair): pair for pair in pair_votes}
    planned, priority = {}, {}
    for row in table.itertuples():
        pair = keys.get(frozenset((ids[row.upper], ids[row.lower])))
        if pair is not None:
            planned[pair], priority[pair] = int(row.next_votes), float(row.priority)
    return PairPlan(planned=planned, priority=priority)


# Bounds that keep a planner request within a few seconds (the command takes any values).
PLAN_LIMITS = {
    "configurations": (2, 30),
    "figures": (1, 100_000),
    "strength_spread": (0.0, 2000.0),
    "tie_rate": (0.0, 0.95),
    "cluster_sd": (0.0, 1000.0),
    "simulations": (2, 200),
}
PLAN_MAX_BUDGETS = 8
PLAN_MAX_BUDGET = 50_000


def study_plan_parameters(**raw) -> dict:
    """Planner parameters from a request or a form (strings or numbers), checked against PLAN_LIMITS; missing ones
    take plan_study's defaults. `budgets` is a list or a comma-separated string of vote counts."""
    parameters = {}
    for name, (low, high) in PLAN_LIMITS.items():
        value = raw.get(name)
        if value in (None, ""):
            continue
        kind = int if isinstance(low, int) else float
        try:
            number = kind(value)
        except (TypeError, ValueError):
            raise Invalid(f"{name}: expected a number, got {value!r}") from None
        if not low <= number <= high:
            raise Invalid(f"{name}: must lie between {low} and {high}, got {value}")
        parameters[name] = number
    budgets = raw.get("budgets")
    if budgets not in (None, ""):
        items = budgets.replace(";", ",").split(",") if isinstance(budgets, str) else list(budgets)
        try:
            values = sorted({int(str(b).strip()) for b in items if str(b).strip()})
        except ValueError:
            raise Invalid(f"budgets: expected vote counts separated by commas, got {budgets!r}") from None
        if not values or len(values) > PLAN_MAX_BUDGETS or values[0] < 1 or values[-1] > PLAN_MAX_BUDGET:
            raise Invalid(f"budgets: 1 to {PLAN_MAX_BUDGETS} vote counts between 1 and {PLAN_MAX_BUDGET}")
        parameters["budgets"] = tuple(values)
    allocation = raw.get("allocation")
    if allocation not in (None, ""):
        if allocation not in stability.ALLOCATIONS:
            raise Invalid(f"allocation: one of {', '.join(stability.ALLOCATIONS)}, got {allocation!r}")
        parameters["allocation"] = allocation
    return parameters


def study_plan(**raw) -> stability.StudyPlan:
    """bt_elo.stability.plan_study for the given parameters, cached per parameters (the page's table and plot share
    one simulation)."""
    parameters = study_plan_parameters(**raw)
    return cached_analysis("study-plan", (sorted(parameters.items()),), lambda: stability.plan_study(**parameters))


def study_plan_table(**raw) -> pd.DataFrame:
    """Expected precision and order recovery per vote budget from simulated studies (see plan_study)."""
    return study_plan(**raw).summary


def study_plan_swaps_table(**raw) -> pd.DataFrame:
    return study_plan(**raw).swaps
