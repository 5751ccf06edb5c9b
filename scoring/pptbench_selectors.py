"""Reads for PPTBench's analyses (issue 29): the imported issue summary, generation metrics, gate repeats, process and
domain rows, the tables built from them and the scores, and the check of a results folder against what the app
computes. Every table built from PPTBench's data carries its attribution (PPTBENCH_ATTRIBUTION) in its notes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from core.cache import cached_analysis
from corpus.protocol import (
    PPTBENCH_ATTRIBUTION,
    PPTBENCH_CI_RESAMPLES,
    PPTBENCH_CI_SEED,
    PPTBENCH_TOP_ISSUES,
)

from . import pptbench_tables as tables
from . import selectors
from .models import PptbenchGateRepeat, PptbenchGeneration, PptbenchIssueSummary, PptbenchProcess, PptbenchTaskDomain
from .pptbench_judge_selectors import pptbench_judge_run_choice

CI = f"95 % percentile bootstrap over tasks, {PPTBENCH_CI_RESAMPLES:,} resamples, seed {PPTBENCH_CI_SEED}"


def attributed(frame: pd.DataFrame, *notes: str) -> pd.DataFrame:
    """`frame` with `notes` and the attribution, after any notes it has (a copy: cached frames keep their own)."""
    frame = frame.copy()
    frame.attrs = {**frame.attrs, "notes": [*frame.attrs.get("notes", []), *notes, PPTBENCH_ATTRIBUTION]}
    return frame


def _values(model, fields: dict[str, str]) -> pd.DataFrame:
    rows = model.objects.order_by("pk").values_list(*fields.values())
    return pd.DataFrame(list(rows), columns=list(fields))


# ---------------------------------------------------------------------------------------------------------- frames
def issue_summary_frame() -> pd.DataFrame:
    names = ("dimension", "category", "issue_type", "severity", "case_count")
    names += ("mean_max_ratio", "total_penalty", "single_round_rate")
    return _values(PptbenchIssueSummary, {n: n for n in names})


def generation_frame() -> pd.DataFrame:
    names = ("task_count", "valid_artifacts", "invalid_artifacts", "failed_tasks", "total_tokens")
    names += ("average_tokens_per_task", "total_cost_usd", "average_cost_per_task_usd", "usage_status")
    return _values(PptbenchGeneration, {"candidate_id": "configuration__slug", **{n: n for n in names}})


def gate_repeats_frame() -> pd.DataFrame:
    fields = {"judge": "judge", "task_id": "task_id", "candidate_id": "configuration__slug"}
    return _values(PptbenchGateRepeat, {**fields, "repeat": "repeat", "gate": "gate"})


def process_frame() -> pd.DataFrame:
    fields = {"task_id": "task_id", "candidate_id": "configuration__slug"}
    return _values(PptbenchProcess, {**fields, "review_turns": "review_turns", "revision_turns": "revision_turns"})


def domains_frame() -> pd.DataFrame:
    return _values(PptbenchTaskDomain, {"task_id": "task_id", "domain": "domain"})


def _empty(columns: list[str], why: str) -> pd.DataFrame:
    return attributed(pd.DataFrame([], columns=columns), why)


# ---------------------------------------------------------------------------------------------------------- tables
def issue_penalties_table() -> pd.DataFrame:
    summary = issue_summary_frame()
    if summary.empty:
        return _empty(tables.ISSUE_COLUMNS, "no issue-summary.csv imported yet (import_pptbench_results)")
    return attributed(
        tables.issue_penalties(summary),
        f"the {PPTBENCH_TOP_ISSUES} issue types with the largest total penalty of {len(summary)} in the imported "
        "issue-summary.csv (every candidate and task); category ratio = mean largest affected fraction (3 decimals), "
        "penalty 1 decimal, single-round share in percent (1 decimal), as the paper prints them",
    )


def _scores(source: str | None) -> tuple[pd.DataFrame, list[str]]:
    """One source's scores.csv-shaped rows (published, or a PPTBench judge run of this app) and the notes closing its
    tables: which source, and PPTBench's attribution when the rows are its published ones."""
    frame = selectors.pptbench_frame(source=source)
    published = pptbench_judge_run_choice(source) is None
    return frame, [*frame.attrs.get("notes", []), *([PPTBENCH_ATTRIBUTION] if published else [])]


def _noted(table: pd.DataFrame, *notes: str) -> pd.DataFrame:
    table = table.copy()
    table.attrs = {**table.attrs, "notes": list(notes)}
    return table


def high_vs_highest_table(*, source: str | None = None) -> pd.DataFrame:
    scores, closing = _scores(source)
    about = (
        "families run at high and at a higher effort; N = tasks neither configuration gates; Δ detail = mean total "
        f"score at the highest effort − at high on those tasks ({CI}); Δp = pass-rate difference over every task, in "
        "points; rounded as printed (2 and 1 decimals)"
    )
    if scores.empty:
        return _noted(pd.DataFrame([], columns=tables.HIGH_VS_HIGHEST_COLUMNS), about, *closing)
    table = cached_analysis("pptbench-high-vs-highest", (scores,), lambda: tables.high_vs_highest(scores))
    return _noted(table, about, *closing)


def configuration_menus_table(*, source: str | None = None) -> pd.DataFrame:
    scores, closing = _scores(source)
    about = (
        "mean and median of the units' mean scores; a family's unit is the mean over its efforts, its highest effort "
        f"or its best effort (re-chosen in every resample); {CI}; 2 decimals as printed"
    )
    if scores.empty:
        return _noted(pd.DataFrame([], columns=tables.MENU_COLUMNS), about, *closing)
    table = cached_analysis("pptbench-menus", (scores,), lambda: tables.configuration_menus(scores))
    return _noted(table, about, *closing)


def gate_rounds_table(*, source: str | None = None) -> pd.DataFrame:
    scores, closing = _scores(source)
    about = "judge rounds (of three) in which a semantic or rendering gate fired, over every (task, candidate)"
    table = pd.DataFrame([], columns=tables.GATE_ROUNDS_COLUMNS) if scores.empty else tables.gate_rounds(scores)
    return _noted(table, about, *closing)


def effort_sweep_table(*, source: str | None = None) -> pd.DataFrame:
    scores, closing = _scores(source)
    about = (
        "per configuration in family and effort order (REFERENCE 10): mean over every task (gated as 0), gate-pass "
        "rate (not majority-gated) and the mean on the passed tasks"
    )
    table = pd.DataFrame([], columns=tables.SWEEP_COLUMNS) if scores.empty else tables.effort_sweep(scores)
    return _noted(table, about, *closing)


def outcomes_table(*, source: str | None = None) -> pd.DataFrame:
    scores, closing = _scores(source)
    about = [
        "shares of tasks per configuration; effort 'mean' rows average a family's efforts (each effort weighs the "
        "same); artifact failure = invalid artifacts + failed tasks from generation-metrics.csv, gate failure = the "
        "other majority-gated tasks"
    ]
    if scores.empty:
        return _noted(pd.DataFrame([], columns=tables.OUTCOME_COLUMNS), *about, *closing)
    # PPTBench's generation metrics describe its own candidates' artifacts, not those of a judge run of this app.
    generation = generation_frame() if pptbench_judge_run_choice(source) is None else pd.DataFrame()
    if generation.empty:
        about.append("no generation metrics for these rows: artifact failure unknown, counted in gate failure")
    return _noted(tables.outcomes(scores, generation), *about, *closing)


def generation_table() -> pd.DataFrame:
    generation = generation_frame()
    if generation.empty:
        return _empty(tables.GENERATION_COLUMNS, "no generation-metrics.csv imported yet (import_pptbench_results)")
    incomplete = generation.loc[generation["usage_status"] != "complete", "candidate_id"].tolist()
    notes = ["from the imported generation-metrics.csv; valid = valid artifacts / tasks"]
    if incomplete:
        notes.append(f"token and cost totals are not complete for {', '.join(incomplete)} (see usage_status)")
    return attributed(tables.generation_table(generation), *notes)


def judge_repeatability_table() -> pd.DataFrame:
    repeats = gate_repeats_frame()
    if repeats.empty:
        return _empty(
            tables.JUDGE_REPEAT_COLUMNS,
            "no per-judge gate repeats imported (import_pptbench_results --gate-repeats FILE: judge, task_id, "
            "candidate_id, repeat, gate)",
        )
    table, left_out = tables.judge_repeatability(repeats)
    return attributed(
        table,
        "per judge: the same judge round repeated on each (task, candidate); unanimous = every repeat agrees; "
        "Fleiss' κ with the repeats as raters, gate / no gate as the categories",
        *left_out,
    )


def process_correlations_table() -> pd.DataFrame:
    scores, process = selectors.pptbench_frame(), process_frame()
    if scores.empty or process.empty:
        return _empty(
            tables.CORRELATION_COLUMNS,
            "needs PPTBench scores and process rows (import_pptbench_results --process FILE: task_id, candidate_id, "
            "review_turns, revision_turns)",
        )
    return attributed(
        tables.process_correlations(scores, process),
        "across configurations: mean score (every task) against mean review / revision turns over the process rows",
        *scores.attrs.get("notes", []),
    )


def domain_results_table() -> pd.DataFrame:
    scores, domains = selectors.pptbench_frame(), domains_frame()
    if scores.empty or domains.empty:
        return _empty(
            tables.DOMAIN_COLUMNS,
            "needs PPTBench scores and task domains (import_pptbench_results --domains FILE: task_id, domain)",
        )
    return attributed(
        tables.domain_results(scores, domains),
        "per domain: mean and pass rate pooled over every configuration, and the best configuration's mean",
        *scores.attrs.get("notes", []),
    )


# The tables scoring.selectors already had for PPTBench's scores, with its attribution added to the published rows'.
def _attributed_source(table: pd.DataFrame, source: str | None) -> pd.DataFrame:
    return attributed(table) if pptbench_judge_run_choice(source) is None else table


def leaderboard_table(*, source: str | None = None) -> pd.DataFrame:
    return _attributed_source(selectors.pptbench_leaderboard_table(source=source), source)


def gate_repeatability_table(*, source: str | None = None) -> pd.DataFrame:
    return _attributed_source(selectors.pptbench_gate_repeatability_table(source=source), source)


def gate_policies_table(*, source: str | None = None) -> pd.DataFrame:
    return _attributed_source(selectors.pptbench_gate_policies_table(source=source), source)


def stability_table() -> pd.DataFrame:
    return attributed(selectors.pptbench_stability_table())


def stability_models_table() -> pd.DataFrame:
    return attributed(selectors.pptbench_stability_models_table())


def stability_pairs_table() -> pd.DataFrame:
    return attributed(selectors.pptbench_stability_pairs_table())


# ---------------------------------------------------------------------------------------------------------- checks
def published_check(folder: Path) -> list[tuple[str, bool, str]]:
    """(file, matches, sentence) for leaderboard.csv and bootstrap.json in `folder` against what the app computes
    from the imported scores; a file that is absent is said so (matches False)."""
    scores = selectors.pptbench_frame()
    results = []
    board = folder / "leaderboard.csv"
    if not board.is_file():
        results.append(("leaderboard.csv", False, "absent: nothing to compare"))
    else:
        problems = tables.leaderboard_differences(scores, pd.read_csv(board))
        sentence = (
            f"matches: {scores['candidate_id'].nunique()} candidates, every column within 1e-9"
            if not problems
            else f"does not match ({len(problems)} differences): " + "; ".join(problems[:10])
        )
        results.append(("leaderboard.csv", not problems, sentence))
    boot = folder / "bootstrap.json"
    if not boot.is_file():
        results.append(("bootstrap.json", False, "absent: nothing to compare"))
    else:
        try:
            published = json.loads(boot.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return [*results, ("bootstrap.json", False, f"cannot be read as JSON: {error}")]
        result = selectors.pptbench_stability()
        problems = ["no scores imported"] if result is None else tables.bootstrap_differences(result, published)
        sentence = (
            f"matches: every value of {len(result.stability)} sample sizes, {len(result.models)} model intervals and "
            f"{len(result.pairs)} adjacent pairs equal (seed {result.seed}, {result.iterations:,} draws)"
            if not problems
            else f"does not match: {'; '.join(problems)}"
        )
        results.append(("bootstrap.json", not problems, sentence))
    return results
