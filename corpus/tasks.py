from celery import shared_task

from . import services
from .models import Figure


@shared_task(name="corpus.figure_thumbnail", acks_late=True)
def figure_thumbnail(figure_id: int) -> str:
    """Make the corpus browser's thumbnail ahead of the first page view (idempotent)."""
    return services.figure_thumbnail_ensure(figure=Figure.objects.get(pk=figure_id))
