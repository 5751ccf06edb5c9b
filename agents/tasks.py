"""Render-queue tasks: thin, idempotent, given ids."""

from celery import shared_task

from . import services
from .models import Artifact


@shared_task(
    name="agents.audit_artifact",
    acks_late=True,
    autoretry_for=(OSError,),
    max_retries=2,
    soft_time_limit=120,
    time_limit=180,
)
def audit_artifact(artifact_id: int) -> bool | None:
    return services.artifact_audit(artifact=Artifact.objects.get(pk=artifact_id)).audit_passed


@shared_task(
    name="agents.audit_and_render",
    acks_late=True,
    autoretry_for=(OSError,),
    max_retries=2,
    soft_time_limit=1800,
    time_limit=1900,
)
def audit_and_render(artifact_ids: list[int]) -> int:
    """Audit then render a batch in one LibreOffice start-up."""
    artifacts = [
        services.artifact_audit(artifact=a) for a in Artifact.objects.filter(pk__in=artifact_ids).order_by("pk")
    ]
    return services.artifacts_render(artifacts=artifacts)
