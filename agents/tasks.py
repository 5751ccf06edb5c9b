"""Render-queue tasks: thin, idempotent, given ids."""

from celery import shared_task

from . import render, render_holds, services
from .models import Artifact

# Below the broker's visibility timeout (config/settings.py), so a batch is never running when its message returns.
BATCH_SOFT_LIMIT = render_holds.render_batch_seconds(render.DEFAULT_BATCH_SIZE)


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
    soft_time_limit=BATCH_SOFT_LIMIT,
    time_limit=BATCH_SOFT_LIMIT + 60,
)
def audit_and_render(artifact_ids: list[int]) -> int:
    """Audit then render a batch in one LibreOffice start-up, holding the artifacts no other live batch holds."""
    with render_holds.artifacts_render_claim(artifact_ids=artifact_ids) as held:
        artifacts = services.artifacts_audit(artifacts=Artifact.objects.filter(pk__in=held).order_by("pk"))
        return services.artifacts_render(artifacts=artifacts)


@shared_task(name="agents.render_sweep", acks_late=True, soft_time_limit=120)
def render_sweep() -> int:
    """Beat, every minute: re-enqueue the artifacts of render batches whose worker died."""
    return render_holds.artifacts_render_sweep(enqueue=audit_and_render.delay)
