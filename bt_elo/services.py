"""Writes of bt_elo: the cached Elo behind the live leaderboard, and the cached plans of adaptive studies."""

from __future__ import annotations

from django.core.cache import cache
from django.db import transaction

from annotation.services.allocation import PairPlan

from . import selectors

# A refresh asked for while one is queued or running is not queued again (the lock lapses after this long).
LEADERBOARD_REFRESH_LOCK_SECONDS = 300
ADAPTIVE_PLAN_LOCK_SECONDS = 120
ADAPTIVE_PLAN_SECONDS = 7 * 24 * 3600


def leaderboard_refresh_claim(*, study: str) -> bool:
    """True for the one caller that should queue a refresh of the study's Elo; False while another is pending."""
    return cache.add(f"bt_elo:leaderboard-refresh:{study}", 1, LEADERBOARD_REFRESH_LOCK_SECONDS)


def leaderboard_refresh(*, study: str | None) -> dict:
    """Compute (or find) the study's Elo for its current votes; the leaderboard payload."""
    elo = selectors.study_elo(study=study)
    cache.delete(f"bt_elo:leaderboard-refresh:{elo.study}")
    return selectors.leaderboard(elo)


def adaptive_pair_plan(*, study, pair_votes: dict[tuple[int, int], int]) -> PairPlan:
    """The planner adaptive studies call from the next-item request (annotation.services.allocation): it never fits.
    It serves the plan made for these votes, or the latest one while one refresh is queued on the analysis queue
    after the request's transaction commits (stale-while-revalidate); least covered first before any plan."""
    plan, fresh = selectors.adaptive_plan_cached(study=study, pair_votes=pair_votes)
    if not fresh and cache.add(f"bt_elo:adaptive-plan-refresh:{study.pk}", 1, ADAPTIVE_PLAN_LOCK_SECONDS):
        from . import tasks  # tasks import this module

        transaction.on_commit(lambda: tasks.adaptive_plan_refresh.delay(study.pk))
    return plan if plan is not None else selectors.NO_PLAN


def adaptive_plan_refresh(*, study) -> PairPlan:
    """Fit the study's plan for its current votes per pair and keep it as the plan for those votes and the latest."""
    from annotation import selectors as annotation_selectors

    pair_votes = annotation_selectors.pair_votes(study=study)
    plan = selectors.adaptive_plan_compute(study=study, pair_votes=pair_votes)
    cache.set(selectors.adaptive_plan_key(study.pk, pair_votes), plan, ADAPTIVE_PLAN_SECONDS)
    cache.set(selectors.adaptive_plan_key(study.pk), plan, ADAPTIVE_PLAN_SECONDS)
    cache.delete(f"bt_elo:adaptive-plan-refresh:{study.pk}")
    return plan
