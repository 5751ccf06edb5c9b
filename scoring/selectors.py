"""Every read of the scoring app, and the automated-score tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.db.models import Count, Max

from agents import selectors as agent_selectors
from core.cache import cached_analysis, cached_by_state
from core.errors import Invalid
from corpus.protocol import RUBRIC_AXES

from . import effort, pptbench, stability, stats
from .models import JudgeRecord, JudgeRun, PptbenchScore

SCORE_COLUMNS = [
    "artifact_id",
    "configuration",
    "model",
    "harness",
    "workflow",
    "reasoning_effort",
    "attributes",
    "effort_rank",
    "task_id",
    "field",
    "judge",
    "judge_family",
    "run",
    "gate_passed",
    "cap",
    "quality",
    "score",
    *RUBRIC_AXES,
]


def judge_run_list(*, judge: str | None = None) -> list[JudgeRun]:
    runs = JudgeRun.objects.order_by("family", "judge", "run")
    return list(runs.filter(judge=judge) if judge else runs)


def judge_run_summary() -> pd.DataFrame:
    rows = []
    for judge_run in judge_run_list():
        records = JudgeRecord.objects.filter(judge_run=judge_run)
        rows.append(
            {
                "judge": judge_run.judge,
                "family": judge_run.family,
                "run": judge_run.run,
                "status": judge_run.status,
                "rubric_version": judge_run.rubric_version,
                "ok": records.filter(status="ok").count(),
                "failed": records.filter(status="failed").count(),
                "cost_usd": float(sum(r or 0 for r in records.values_list("cost_usd", flat=True))),
            }
        )
    return pd.DataFrame(
        rows, columns=["judge", "family", "run", "status", "rubric_version", "ok", "failed", "cost_usd"]
    )


def artifact_frame() -> pd.DataFrame:
    return agent_selectors.artifact_scoring_frame()


# Built from 60,000 records at paper scale in about half a second, and read by a dozen tables: kept per state.
@cached_by_state(lambda **_: scores_state())
def scores_frame(*, judge: str | None = None) -> pd.DataFrame:
    """One row per (artifact, judge run): s = g·min(Q, c); NaN where a gate-passed artifact has no ok record."""
    artifacts = artifact_frame()
    runs = judge_run_list(judge=judge)
    if artifacts.empty or not runs:
        # No judge run yet: an empty frame whose numbers are numbers, so every table is empty rather than an error.
        numeric = ["cap", "quality", "score", *RUBRIC_AXES]
        return pd.DataFrame([], columns=SCORE_COLUMNS).astype({c: float for c in numeric if c in SCORE_COLUMNS})
    run_frame = pd.DataFrame(
        [(r.id, r.judge, r.family, r.run) for r in runs], columns=["judge_run_id", "judge", "judge_family", "run"]
    )
    records = pd.DataFrame(
        list(
            JudgeRecord.objects.filter(judge_run__in=runs, status=JudgeRecord.Status.OK).values_list(
                "artifact_id", "judge_run_id", "score", *RUBRIC_AXES
            )
        ),
        columns=["artifact_id", "judge_run_id", "quality", *RUBRIC_AXES],
    )
    frame = artifacts.merge(run_frame, how="cross").merge(records, on=["artifact_id", "judge_run_id"], how="left")
    failed = frame["gate_passed"].eq(False)
    frame.loc[failed, ["quality", *RUBRIC_AXES]] = np.nan
    frame.loc[failed, list(RUBRIC_AXES)] = 0.0
    frame["cap"] = frame["cap"].fillna(100).astype(float)
    gate = frame["gate_passed"].map({True: 1.0, False: 0.0})  # pending gate → NaN: not yet scoreable
    frame["score"] = stats.final_score(gate, frame["quality"], frame["cap"])
    frame.loc[failed, "score"] = 0.0
    frame["gate_passed"] = frame["gate_passed"].astype(object)
    return frame.sort_values(["position", "task_id", "judge", "run"])[SCORE_COLUMNS].reset_index(drop=True)


def _filter_run(frame: pd.DataFrame, run: str | None) -> pd.DataFrame:
    if run in (None, "") or "run" not in frame:
        return frame
    return frame[frame["run"].astype(str) == str(run)].reset_index(drop=True)


# The automated tables computed from scores_frame (bootstraps and group statistics, a few hundred ms each at paper
# scale), by name: each is computed once per state of the scores, like the frame itself.
def _structural_audit(scores: pd.DataFrame, judge: str | None) -> pd.DataFrame:
    audits = agent_selectors.artifact_audit_frame()  # the audits are part of scores_state (artifacts_state)
    return stats.structural_audit(audits, scores if not scores.empty else None, judge=judge)


SCORE_ANALYSES = {
    "config_scores": lambda scores, _: stats.config_scores(scores),
    "paired_effects": lambda scores, _: stats.paired_effects(scores),
    "harness_effects": lambda scores, _: stats.harness_effects(scores),
    "effort_sweep": lambda scores, _: effort.effort_sweep(scores),
    "domain_scores": lambda scores, _: stats.domain_scores(scores),
    "judge_runs": lambda scores, _: stats.judge_runs(scores),
    "judge_families": lambda scores, _: stats.judge_families(scores),
    "structural_audit": _structural_audit,
}


@cached_by_state(lambda **_: scores_state())
def score_analysis(*, name: str, judge: str | None = None) -> pd.DataFrame:
    """SCORE_ANALYSES[name] of the scores of `judge` (every judge: None)."""
    return SCORE_ANALYSES[name](scores_frame(judge=judge), judge)


def config_scores_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="config_scores", judge=judge), run)


def paired_effects_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="paired_effects", judge=judge), run)


def effort_sweep_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="effort_sweep", judge=judge), run)


def harness_effects_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="harness_effects", judge=judge), run)


def domain_scores_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="domain_scores", judge=judge), run)


def judge_runs_table(*, judge: str | None = None) -> pd.DataFrame:
    return score_analysis(name="judge_runs", judge=judge)


def judge_families_table() -> pd.DataFrame:
    try:
        return score_analysis(name="judge_families")
    except stats.NoJudgeScores as error:
        raise Invalid(str(error)) from None


def structural_audit_table(*, judge: str | None = None) -> pd.DataFrame:
    return score_analysis(name="structural_audit", judge=judge)


def final_scores_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(scores_frame(judge=judge).drop(columns=["artifact_id"]), run)


def pptbench_frame() -> pd.DataFrame:
    rows = PptbenchScore.objects.values_list(
        "task_id",
        "configuration__slug",
        "majority_gate",
        "gate_count",
        "layout_score",
        "text_score",
        "local_graphics_score",
        "total_score",
        "issue_count",
        "single_round_issue_count",
    )
    return pd.DataFrame(
        list(rows),
        columns=[
            "task_id",
            "candidate_id",
            "majority_gate",
            "gate_count",
            "layout_score",
            "text_score",
            "local_graphics_score",
            "total_score",
            "issue_count",
            "single_round_issue_count",
        ],
    )


def pptbench_leaderboard_table() -> pd.DataFrame:
    frame = pptbench_frame()
    if frame.empty:
        return pd.DataFrame([], columns=pptbench.LEADERBOARD_COLUMNS)
    return pptbench.leaderboard(frame)


def pptbench_gate_repeatability_table() -> pd.DataFrame:
    """Gate repeatability over PPTBench's three judge rounds (REFERENCE 8), from the imported scores.csv rows."""
    frame = pptbench_frame()
    if frame.empty:
        return pd.DataFrame([], columns=pptbench.GATE_REPEATABILITY_COLUMNS)
    return pptbench.gate_repeatability(frame)


def pptbench_gate_policies_table() -> pd.DataFrame:
    """Passing tasks and mean score per candidate under each gate policy (at least one / majority / unanimous)."""
    frame = pptbench_frame()
    if frame.empty:
        return pd.DataFrame([], columns=pptbench.GATE_POLICY_COLUMNS)
    return pptbench.gate_policies(frame)


# --- ranking stability (issue 16) -----------------------------------------------------------------
def pptbench_stability() -> stability.RankingStability | None:
    """PPTBench's task-resampling bootstrap (10,000 draws per sample size, seed 20260816) over the imported
    scores.csv; cached per input, so the three tables and the pages compute it once. None before any import."""
    frame = pptbench_frame()
    if frame.empty:
        return None
    long = stability.pptbench_long(frame)
    return cached_analysis("pptbench-stability", (long,), lambda: stability.ranking_stability(long))


def pptbench_stability_table() -> pd.DataFrame:
    result = pptbench_stability()
    return result.stability if result else pd.DataFrame([], columns=stability.STABILITY_COLUMNS)


def pptbench_stability_models_table() -> pd.DataFrame:
    result = pptbench_stability()
    return result.models if result else pd.DataFrame([], columns=stability.STABILITY_MODEL_COLUMNS)


def pptbench_stability_pairs_table() -> pd.DataFrame:
    result = pptbench_stability()
    return result.pairs if result else pd.DataFrame([], columns=stability.STABILITY_PAIR_COLUMNS)


STABILITY_GROUPS = ["judge", "run"]


def score_stability(*, judge: str | None = None, run: str | None = None) -> stability.RankingStability:
    """The same bootstrap over ReFigBench rubric scores, resampling source figures, per judge and run and over the
    mean of each judge's runs (run "mean"). Gate failures count 0 (as in every mean); a figure missing a score for
    any configuration in a judge run is left out of that run's analysis (``dropped_tasks``)."""
    scores = scores_frame(judge=judge)[["task_id", "configuration", "judge", "run", "score"]]
    per_run = scores.assign(run=scores["run"].astype(str))
    over_runs = scores.groupby(["task_id", "configuration", "judge"], as_index=False)["score"].mean()
    frame = pd.concat([per_run, over_runs.assign(run=stats.MEAN_RUN)], ignore_index=True)
    if run not in (None, ""):
        frame = frame[frame["run"] == str(run)]
    frame = frame.dropna(subset=["score"]).reset_index(drop=True)
    return cached_analysis(
        "score-stability",
        (frame,),
        lambda: stability.ranking_stability_by(frame, by=STABILITY_GROUPS, model_column="configuration"),
    )


def _stability_part(part: str, judge: str | None, run: str | None) -> pd.DataFrame:
    result = score_stability(judge=judge, run=run)
    table = getattr(result, part).copy()
    table.attrs["notes"] = list(result.skipped)  # judge runs a ranking cannot be drawn from, and why
    return table


def score_stability_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _stability_part("stability", judge, run)


def score_stability_models_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _stability_part("models", judge, run)


def score_stability_pairs_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _stability_part("pairs", judge, run)


def scores_state() -> tuple:
    """What scores_frame reads, as it is now, for caching analyses of judge scores: the judge runs, the records
    (count, newest id, last update) and the artifacts whose gate and cap enter the final score."""
    # Two statements: the newest update alone is read off its index; asked beside the count it costs a full scan.
    records = {
        **JudgeRecord.objects.aggregate(n=Count("id"), newest=Max("id")),
        **JudgeRecord.objects.aggregate(updated=Max("updated_at")),
    }
    runs = tuple(JudgeRun.objects.order_by("pk").values_list("pk", flat=True))
    return (runs, records["n"], records["newest"], records["updated"], agent_selectors.artifacts_state())
