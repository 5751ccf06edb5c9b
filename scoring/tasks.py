"""Judge-queue tasks: thin, idempotent (an ok record is never judged again, a claimed one is not called twice)."""

from celery import shared_task

from agents import selectors as agent_selectors

from . import services
from .judge_client import JudgeSettings
from .models import JudgeRun


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
