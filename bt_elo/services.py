"""Writes of bt_elo: the cached Elo behind the live leaderboard."""

from __future__ import annotations

from django.core.cache import cache

from . import selectors

# A refresh asked for while one is queued or running is not queued again (the lock lapses after this long).
LEADERBOARD_REFRESH_LOCK_SECONDS = 300


def leaderboard_refresh_claim(*, study: str) -> bool:
    """True for the one caller that should queue a refresh of the study's Elo; False while another is pending."""
    return cache.add(f"bt_elo:leaderboard-refresh:{study}", 1, LEADERBOARD_REFRESH_LOCK_SECONDS)


def leaderboard_refresh(*, study: str | None) -> dict:
    """Compute (or find) the study's Elo for its current votes; the leaderboard payload."""
    elo = selectors.study_elo(study=study)
    cache.delete(f"bt_elo:leaderboard-refresh:{elo.study}")
    return selectors.leaderboard(elo)
