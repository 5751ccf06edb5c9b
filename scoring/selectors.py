"""Every read of the scoring app, and the automated-score tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.db.models import Count, Max

from agents import selectors as agent_selectors
from agents.configurations import DESIGN_FIELDS
from core.cache import cached_analysis, cached_by_state
from core.errors import Invalid
from corpus.protocol import PAPER_JUDGE_RUN, RUBRIC_AXES

from . import effort, pptbench, stability, stats, stats_rubric
from .models import JudgeRecord, JudgeRun, PptbenchScore
from .pptbench_judge_selectors import pptbench_source
from .stats_audit import run_label

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


def judge_run_choice(run: str | int | None, *, default: str | int | None = None) -> str | None:
    """A judge run as tables write it ("1", "2", ..., "mean"), `default` when none is given; Invalid otherwise."""
    chosen = default if run in (None, "") else run
    try:
        return None if chosen is None else run_label(chosen)
    except ValueError:
        raise Invalid(f"run must be a judge run number (1, 2, ...) or 'mean', not {run!r}") from None


def run_notes(run: str | None) -> list[str]:
    """What a table with a row per judge run says about the run chosen (export notes, pages); without a choice its
    `run` column says it, row by row."""
    if run is None:
        return []
    what = "each task's mean over its runs (run 'mean')" if run == stats.MEAN_RUN else f"run {run}"
    return [f"Judge runs: {what} only."]


def _filter_run(frame: pd.DataFrame, run: str | None) -> pd.DataFrame:
    """The rows of judge run `run` (every run: None), noting which (a new frame: the cached one stays as it is)."""
    run = judge_run_choice(run)
    if run is None or "run" not in frame:
        return frame
    notes = [*frame.attrs.get("notes", []), *run_notes(run)]
    frame = frame[frame["run"].astype(str) == run].reset_index(drop=True)
    frame.attrs = {**frame.attrs, "notes": notes}
    return frame


# The automated tables computed from scores_frame (bootstraps and group statistics, a few hundred ms each at paper
# scale), by name: each is computed once per state of the scores, like the frame itself.
def _structural_audit(scores: pd.DataFrame, judge: str | None, run: str = str(PAPER_JUDGE_RUN)) -> pd.DataFrame:
    audits = agent_selectors.artifact_audit_frame()  # the audits are part of scores_state (artifacts_state)
    return stats.structural_audit(audits, scores if not scores.empty else None, judge=judge, run=run)


def _judge_families(scores: pd.DataFrame, _judge: str | None, run: str = stats.MEAN_RUN) -> pd.DataFrame:
    table = stats.judge_families(scores if run == stats.MEAN_RUN else scores[scores["run"].astype(str) == run])
    table.attrs["notes"] = [
        "Each judge's configuration means over each task's mean over its runs (run 'mean')."
        if run == stats.MEAN_RUN
        else f"Each judge's configuration means in its run {run} only."
    ]
    return table


SCORE_ANALYSES = {
    "config_scores": lambda scores, _: stats.config_scores(scores),
    "paired_effects": lambda scores, _: stats.paired_effects(scores),
    "harness_effects": lambda scores, _: stats.harness_effects(scores),
    "effort_sweep": lambda scores, _: effort.effort_sweep(scores),
    "domain_scores": lambda scores, _: stats.domain_scores(scores),
    "judge_runs": lambda scores, _: stats.judge_runs(scores),
    "rubric_means": lambda scores, _: stats_rubric.rubric_means(scores),
    "judge_families": _judge_families,
    "structural_audit": _structural_audit,
}


@cached_by_state(lambda **_: scores_state())
def score_analysis(*, name: str, judge: str | None = None, **options) -> pd.DataFrame:
    """SCORE_ANALYSES[name] of the scores of `judge` (every judge: None); `options` (a run) for those that take one."""
    return SCORE_ANALYSES[name](scores_frame(judge=judge), judge, **options)


def config_scores_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="config_scores", judge=judge), run)


def paired_effects_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="paired_effects", judge=judge), run)


def rubric_means_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    table = _filter_run(score_analysis(name="rubric_means", judge=judge), run)
    earlier = list(table.attrs.get("notes", []))
    table = table.copy()  # the cached frame keeps its own notes
    notes = "each rubric axis's mean over tasks per configuration with its 95% bootstrap CI (seed 7, 5,000 resamples "
    notes += "over tasks); gate failures count with every subscore 0, tasks without a judge record are left out"
    table.attrs = {**table.attrs, "notes": [notes, *earlier]}
    return table


WORKFLOW_ECONOMICS_COLUMNS = [
    "model",
    "harness",
    "judge",
    "run",
    "median_turns_direct",
    "median_turns_specialized",
    "mean_cost_direct",
    "mean_cost_specialized",
    "delta",
    "ci_low",
    "ci_high",
    "n",
    "cost_upper_bound",
    "configuration_direct",
    "configuration_specialized",
]


def workflow_economics_table(
    *, judge: str | None = None, run: str | None = None, price_input=None, price_output=None
) -> pd.DataFrame:
    """Table 4 per model and harness (configurations equal in every attribute but the workflow): median turns and
    mean cost per costed artifact, direct → specialized (the economics table's median_turns and cost_mean_usd), beside
    the paired score effect Δ of paired-effects for the judge and run chosen (every judge and run by default)."""
    economics = agent_selectors.economics_frame(price_input=price_input, price_output=price_output)
    configurations = agent_selectors.configuration_frame()
    design = [c for c in DESIGN_FIELDS if c != "workflow"]
    # Configurations identical in every attribute cannot be told apart: they pair with nothing (as in paired-effects).
    sides = [
        configurations[configurations["workflow"] == workflow].drop_duplicates(design, keep=False)[[*design, "slug"]]
        for workflow in ("direct", "specialized")
    ]
    pairs = sides[0].merge(sides[1], on=design, suffixes=("_direct", "_specialized"))
    by_slug = economics.set_index("configuration")
    for workflow in ("direct", "specialized"):
        slugs = pairs.pop(f"slug_{workflow}")
        pairs[f"configuration_{workflow}"] = slugs
        pairs[f"median_turns_{workflow}"] = slugs.map(by_slug["median_turns"]).astype(float)
        pairs[f"mean_cost_{workflow}"] = slugs.map(by_slug["cost_mean_usd"]).astype(float)
    upper = [pairs[f"configuration_{w}"].map(by_slug["cost_upper_bound"]) for w in ("direct", "specialized")]
    pairs["cost_upper_bound"] = (upper[0].eq(True) | upper[1].eq(True)).astype(bool)
    effects = paired_effects_table(judge=judge, run=run)
    on = [c for c in design if c in effects.columns]
    table = pairs.merge(effects[[*on, "judge", "run", "n", "delta", "ci_low", "ci_high"]], on=on, how="left")
    table = table[[*WORKFLOW_ECONOMICS_COLUMNS, *(c for c in design if c not in WORKFLOW_ECONOMICS_COLUMNS)]]
    table.attrs["notes"] = [
        "Direct → specialized per model and harness, pairing configurations equal in every attribute but the "
        "workflow; turns are medians over recovered logs, costs means per costed artifact (see economics); delta is "
        "paired-effects' specialized − direct score effect.",
        *economics.attrs.get("notes", []),
        *effects.attrs.get("notes", []),
    ]
    return table


def effort_sweep_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="effort_sweep", judge=judge), run)


def harness_effects_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="harness_effects", judge=judge), run)


def domain_scores_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    return _filter_run(score_analysis(name="domain_scores", judge=judge), run)


def judge_runs_table(*, judge: str | None = None) -> pd.DataFrame:
    return score_analysis(name="judge_runs", judge=judge)


def judge_families_table(*, run: str | None = None) -> pd.DataFrame:
    """Table 20; each task's mean over runs by default, or one run of every judge (run=N)."""
    try:
        return score_analysis(name="judge_families", run=judge_run_choice(run, default=stats.MEAN_RUN))
    except stats.NoJudgeScores as error:
        raise Invalid(str(error)) from None


def structural_audit_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    """Tables 3 and 15 under judge run 1 by default (the paper's), or the run chosen (a number or "mean")."""
    return score_analysis(name="structural_audit", judge=judge, run=judge_run_choice(run, default=PAPER_JUDGE_RUN))


def final_scores_table(*, judge: str | None = None, run: str | None = None) -> pd.DataFrame:
    if judge_run_choice(run) == stats.MEAN_RUN:
        raise Invalid("final-scores has a row per artifact and judge run, and no run 'mean': choose a run number")
    frame = _filter_run(scores_frame(judge=judge), run)
    return frame.drop(columns=["artifact_id"])


def pptbench_frame(*, source: str | None = None) -> pd.DataFrame:
    """scores.csv-shaped rows of one source: PPTBench's published rows as imported (the default, "published"), or a
    PPTBench judge run of this app ("<judge>/<run>"); frame.attrs["notes"] says which."""
    where, note = pptbench_source(source)
    # scores.csv's candidate_id is the configuration's slug; every other column is the model field of the same name.
    fields = ["configuration__slug" if c == "candidate_id" else c for c in pptbench.SCORES_COLUMNS]
    rows = PptbenchScore.objects.filter(**where).values_list(*fields)
    frame = pd.DataFrame(list(rows), columns=list(pptbench.SCORES_COLUMNS))
    frame.attrs["notes"] = [note]
    return frame


def _pptbench_table(source: str | None, compute, columns: list[str]) -> pd.DataFrame:
    """A PPTBench table over one source's rows (pptbench_frame), noting which."""
    frame = pptbench_frame(source=source)
    table = pd.DataFrame([], columns=columns) if frame.empty else compute(frame)
    table.attrs["notes"] = frame.attrs["notes"]
    return table


def pptbench_leaderboard_table(*, source: str | None = None) -> pd.DataFrame:
    return _pptbench_table(source, pptbench.leaderboard, pptbench.LEADERBOARD_COLUMNS)


def pptbench_gate_repeatability_table(*, source: str | None = None) -> pd.DataFrame:
    """Gate repeatability over PPTBench's three judge rounds (REFERENCE 8), from the imported scores.csv rows."""
    return _pptbench_table(source, pptbench.gate_repeatability, pptbench.GATE_REPEATABILITY_COLUMNS)


def pptbench_gate_policies_table(*, source: str | None = None) -> pd.DataFrame:
    """Passing tasks and mean score per candidate under each gate policy (at least one / majority / unanimous)."""
    return _pptbench_table(source, pptbench.gate_policies, pptbench.GATE_POLICY_COLUMNS)


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
    run = judge_run_choice(run)
    if run is not None:
        frame = frame[frame["run"] == run]
    frame = frame.dropna(subset=["score"]).reset_index(drop=True)
    return cached_analysis(
        "score-stability",
        (frame,),
        lambda: stability.ranking_stability_by(frame, by=STABILITY_GROUPS, model_column="configuration"),
    )


def _stability_part(part: str, judge: str | None, run: str | None) -> pd.DataFrame:
    result = score_stability(judge=judge, run=run)
    table = getattr(result, part).copy()
    # The runs shown, then the judge runs a ranking cannot be drawn from, and why.
    table.attrs["notes"] = [*run_notes(judge_run_choice(run)), *result.skipped]
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


def judge_record_rows(*, artifact_ids: list[int]):
    """Every judge record of these artifacts as it would be released: the DESIGN 3 shape plus status, source, the raw
    reply, the prompt hash and any error, so a released score can be recomputed. Streamed."""
    records = (
        JudgeRecord.objects.filter(artifact_id__in=artifact_ids)
        .select_related("artifact__configuration", "artifact__figure", "judge_run")
        .order_by("judge_run__judge", "judge_run__run", "pk")
    )
    for r in records.iterator():
        yield {
            "task_id": r.artifact.figure.task_id,
            "configuration": r.artifact.configuration.slug,
            "judge": r.judge_run.judge,
            "judge_family": r.judge_run.family,
            "run": r.judge_run.run,
            "rubric_version": r.rubric_version,
            "status": r.status,
            "source": r.source,
            "subscores": {axis: getattr(r, axis) for axis in RUBRIC_AXES},
            "score": r.score,
            "major_errors": r.major_errors,
            "minor_errors": r.minor_errors,
            "editability_assessment": r.editability_assessment,
            "reason": r.reason,
            "raw_reply": r.raw_reply,
            "prompt_hash": r.prompt_hash,
            "error": r.error,
        }
