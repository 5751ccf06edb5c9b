"""Reads of the PPTBench judge: which per-task rows a PPTBench table reads (its ``source``), the stored rounds, and the
detail-policy sensitivity table (PPTBench Table 13) computed from stored findings."""

from __future__ import annotations

import pandas as pd

from core.errors import Invalid

from .models import PptbenchJudgeRound, PptbenchJudgeRun
from .pptbench import GATE_POLICIES
from .pptbench_policy import (
    DETAIL_POLICIES,
    SENSITIVITY_COLUMNS,
    Round,
    detail_sensitivity,
    parse_finding,
    protocol,
    score_task,
)
from .pptbench_policy import policy_scores as _policy_scores

PUBLISHED_SOURCE = "published"
PUBLISHED_NOTE = "Source: PPTBench's published scores.csv as imported (PPTBench (Wang et al., 2026), CC BY 4.0)."


def pptbench_judge_run_choice(source: str | None) -> PptbenchJudgeRun | None:
    """``source`` names what a PPTBench table reads: "published" (or nothing) for the imported scores.csv rows, or
    "<judge>/<run>" for a PPTBench judge run of this app (the judge id may itself hold slashes)."""
    if source in (None, "", PUBLISHED_SOURCE):
        return None
    judge, _, run = str(source).rpartition("/")
    if not judge or not run.isdigit():
        raise Invalid(f"source must be '{PUBLISHED_SOURCE}' or '<judge>/<run>' (a PPTBench judge run), not {source!r}")
    judge_run = PptbenchJudgeRun.objects.filter(judge=judge, run=int(run)).first()
    if judge_run is None:
        known = [f"{r.judge}/{r.run}" for r in PptbenchJudgeRun.objects.all()]
        raise Invalid(f"no PPTBench judge run {source!r} (known: {', '.join(known) or 'none yet'})")
    return judge_run


def pptbench_source(source: str | None) -> tuple[dict, str]:
    """(a filter of PptbenchScore rows, the note saying which source a table read)."""
    judge_run = pptbench_judge_run_choice(source)
    if judge_run is None:
        return {"judge_run__isnull": True}, PUBLISHED_NOTE
    note = (
        f"Source: this app's PPTBench judge, {judge_run.judge} run {judge_run.run} ({judge_run.protocol_version}: "
        "PPTBench's gates, taxonomy and penalty rules with this project's own prompts); tasks are this corpus's."
    )
    return {"judge_run": judge_run}, note


def judged_tasks(judge_run: PptbenchJudgeRun) -> list[tuple[str, str, list[Round]]]:
    """(configuration slug, task id, rounds in order) for every artifact whose rounds are all stored ok."""
    by_artifact: dict[int, list] = {}
    for r in PptbenchJudgeRound.objects.filter(judge_run=judge_run, status=PptbenchJudgeRound.Status.OK).select_related(
        "artifact__configuration", "artifact__figure"
    ):
        by_artifact.setdefault(r.artifact_id, []).append(r)
    tasks = []
    for stored in by_artifact.values():
        if len(stored) != protocol().rounds:
            continue
        stored.sort(key=lambda r: r.round)
        artifact = stored[0].artifact
        rounds = [Round(gate=r.gate, findings=tuple(parse_finding(f) for f in r.findings)) for r in stored]
        tasks.append((artifact.configuration.slug, artifact.figure.task_id, rounds))
    return sorted(tasks, key=lambda t: (t[0], t[1]))


GATE_VOTE_COLUMNS = ["candidate_id", "task_id", "policy", "passing", "total_score"]


def pptbench_gate_votes_frame(*, source: str | None = None) -> pd.DataFrame:
    """Per task and gate vote (at least one / majority / unanimous passing round, scoring.pptbench.GATE_POLICIES) the
    total score from one judge run's stored rounds: what Table 12's "at least one pass" mean needs and scores.csv
    cannot give (a task passing in one round alone is scored from that round's findings)."""
    judge_run = _only_run(source)
    rows = [
        (candidate, task_id, policy, not score.majority_gate, score.total_score)
        for candidate, task_id, rounds in judged_tasks(judge_run)
        for policy, needed in GATE_POLICIES.items()
        for score in (score_task(rounds, passes_needed=needed),)
    ]
    frame = pd.DataFrame(rows, columns=GATE_VOTE_COLUMNS)
    frame.attrs["notes"] = [pptbench_source(f"{judge_run.judge}/{judge_run.run}")[1]]
    return frame


def _only_run(source: str | None) -> PptbenchJudgeRun:
    if source in (None, ""):
        runs = list(PptbenchJudgeRun.objects.all()[:2])
        if len(runs) == 1:
            return runs[0]
        if not runs:
            raise Invalid("no PPTBench judge run yet: the sensitivity needs stored findings (manage.py judge_pptbench)")
        raise Invalid("several PPTBench judge runs: choose one with source=<judge>/<run>")
    judge_run = pptbench_judge_run_choice(source)
    if judge_run is None:
        raise Invalid("PPTBench's published scores.csv holds no findings: choose a judge run, source=<judge>/<run>")
    return judge_run


def pptbench_detail_sensitivity_table(*, source: str | None = None) -> pd.DataFrame:
    """Table 13: each detail-policy variant against the published policy, from one judge run's stored findings."""
    judge_run = _only_run(source)
    tasks = judged_tasks(judge_run)
    frame = (
        detail_sensitivity(_policy_scores(tasks, DETAIL_POLICIES))
        if tasks
        else pd.DataFrame([], columns=SENSITIVITY_COLUMNS)
    )
    _, note = pptbench_source(f"{judge_run.judge}/{judge_run.run}")
    frame.attrs["notes"] = [
        note,
        "Variants: two_round_support keeps issues reported in at least two rounds; unit_multiplier costs each issue "
        "its severity base whatever its affected fraction; equal_weights rescales each dimension to a third of 100; "
        "max_per_category keeps the largest penalty of each category. Gated tasks score 0 under every variant.",
        "kendall_tau: Kendall's τ-b of the configuration means with the published policy's; median_change and "
        "max_change: absolute change of a configuration's mean score (points); reversed_pairs: configuration pairs "
        "ordered the other way, out of pairs.",
        f"Tasks: the {len(tasks)} artifacts whose {protocol().rounds} rounds are all stored ok.",
    ]
    return frame


__all__ = [
    "GATE_VOTE_COLUMNS",
    "PUBLISHED_SOURCE",
    "pptbench_gate_votes_frame",
    "judged_tasks",
    "pptbench_detail_sensitivity_table",
    "pptbench_judge_run_choice",
    "pptbench_source",
]
