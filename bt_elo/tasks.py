from celery import shared_task

from . import services


@shared_task(name="bt_elo.leaderboard_refresh", acks_late=True, soft_time_limit=300)
def leaderboard_refresh(study: str | None) -> int:
    return len(services.leaderboard_refresh(study=study)["rows"])
