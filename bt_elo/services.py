"""Writes of bt_elo: the cached live leaderboard."""

from __future__ import annotations

import time

from django.core.cache import cache

from . import selectors

LEADERBOARD_TTL_SECONDS = 24 * 3600
LEADERBOARD_STALE_SECONDS = 60


def leaderboard_key(study: str | None) -> str:
    return f"bt_elo:leaderboard:{study or '__only__'}"


def leaderboard_refresh(*, study: str | None) -> dict:
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
