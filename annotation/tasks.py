"""Celery tasks of the annotation app (thin: call a service; idempotent)."""

from celery import shared_task


@shared_task(name="annotation.leases_expire")
def leases_expire_task() -> int:
    """Return abandoned leases of every active study to the pool (item_next also does this lazily)."""
    from .models import Study
    from .services import leases_expire

    return sum(leases_expire(study=study) for study in Study.objects.filter(status=Study.Status.ACTIVE))
