"""Judge-queue tasks: thin, idempotent (an ok record is never judged again, a claimed one is not called twice)."""

from celery import shared_task

from agents import selectors as agent_selectors

from . import pptbench_judge_services, services
from .judge_client import JudgeSettings
from .models import JudgeRun, PptbenchJudgeRun


@shared_task(
    name="scoring.judge_artifact",
    acks_late=True,
    soft_time_limit=services.JUDGE_SOFT_TIME_LIMIT,
    time_limit=services.JUDGE_TIME_LIMIT,
)
def judge_artifact(artifact_id: int, judge_run_id: int, settings: dict, rubric_version: str) -> str:
    record = services.judge_artifact(
        artifact=agent_selectors.artifact_for_judging(pk=artifact_id),
        judge_run=JudgeRun.objects.get(pk=judge_run_id),
        settings=JudgeSettings(**settings),
        rubric_version=rubric_version,
    )
    return "paused" if record is None else record.status


@shared_task(
    name="scoring.judge_pptbench_artifact",
    acks_late=True,
    soft_time_limit=services.JUDGE_SOFT_TIME_LIMIT,
    time_limit=services.JUDGE_TIME_LIMIT,
)
def judge_pptbench_artifact(artifact_id: int, judge_run_id: int, settings: dict) -> bool:
    """One artifact's missing PPTBench rounds (its rounds go out together); True once its scores.csv row exists."""
    counts = pptbench_judge_services.pptbench_judge_artifacts(
        artifacts=list(agent_selectors.artifact_list().filter(pk=artifact_id)),
        judge_run=PptbenchJudgeRun.objects.get(pk=judge_run_id),
        settings=JudgeSettings(**settings),
    )
    return counts.scored == 1
