"""Writes of bt_elo: the cached live leaderboard."""

from __future__ import annotations

import time

from django.core.cache import cache

from . import selectors

LEADERBOARD_TTL_SECONDS = 24 * 3600
LEADERBOARD_STALE_SECONDS = 60
# How long a claimed refresh keeps others from enqueuing another: the task's soft time limit (bt_elo.tasks), after
# which a refresh lost with its worker may be claimed again.
LEADERBOARD_REFRESH_CLAIM_SECONDS = 300


def leaderboard_key(study: str | None) -> str:
    return f"bt_elo:leaderboard:{study or '__only__'}"


def leaderboard_refresh_claim_key(study: str | None) -> str:
    return f"{leaderboard_key(study)}:refreshing"


def leaderboard_refresh_claim(*, study: str | None) -> bool:
    """True for the one caller that should enqueue a refresh of `study`'s leaderboard; False while a refresh is
    already queued or running (cache.add is atomic in every cache backend: only one caller adds the key)."""
    return cache.add(leaderboard_refresh_claim_key(study), True, LEADERBOARD_REFRESH_CLAIM_SECONDS)


def leaderboard_refresh(*, study: str | None) -> dict:
    try:
        return _leaderboard_compute(study=study)
    finally:  # done or failed: the next stale read may enqueue again
        cache.delete(leaderboard_refresh_claim_key(study))


def _leaderboard_compute(*, study: str | None) -> dict:
    table = selectors.elo_table(study=study).sort_values("elo", ascending=False)
    payload = {
        "computed_at": time.time(),
        "rows": [
            {
                "configuration": r.configuration,
                "elo": round(float(r.elo), 1),
                "ci_low": round(float(r.ci_low), 1),
                "ci_high": round(float(r.ci_high), 1),
                "n": int(r.n),
            }
            for r in table.itertuples()
        ],
        "regularisation": table["regularisation"].iloc[0] if len(table) else "none",
    }
    cache.set(leaderboard_key(study), payload, LEADERBOARD_TTL_SECONDS)
    return payload
