from celery import shared_task

from . import services


@shared_task(name="bt_elo.leaderboard_refresh", acks_late=True, soft_time_limit=300)
def leaderboard_refresh(study: str | None) -> int:
    return len(services.leaderboard_refresh(study=study)["rows"])


@shared_task(name="bt_elo.adaptive_plan_refresh", acks_late=True, soft_time_limit=300)
def adaptive_plan_refresh(study_id: int) -> int:
    """Refit an adaptive study's plan off the request path; idempotent (the plan of the votes as they are now)."""
    from annotation import selectors as annotation_selectors

    study = annotation_selectors.study_by_id(study_id=study_id)
    if study is None:
        return 0
    return len(services.adaptive_plan_refresh(study=study).planned)
