"""What is left of a study and when it will be done, over plain data. Pure: no Django.

selectors.dashboard gathers the counts from the database; these functions say how many votes are still needed, how
long they take at the last day's pace, which annotators are behind and how many items wait for their renderings.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

PACE_WINDOW_HOURS = 24  # the pace is the votes of the last day
HOURS_UNTIL_DAYS = 48  # from two days on, the time left is given in days


def votes_still_needed(votes: Iterable[int], *, target: int) -> int:
    """Σ max(0, target − votes) over the units of a study (its pairs; its annotators, for a study whose every annotator
    judges every artifact): votes past the target of one unit never make up for another's shortfall."""
    return sum(max(0, target - n) for n in votes)


@dataclass(frozen=True)
class Finish:
    """The time to finish at the last day's pace: `hours` is 0 when nothing is left, None when there is no pace."""

    needed: int
    votes_last_day: int
    hours: float | None

    @property
    def text(self) -> str:
        if self.needed <= 0:
            return "target reached"
        if self.hours is None:
            return "no votes in the last day"
        if self.hours < HOURS_UNTIL_DAYS:
            hours = math.ceil(self.hours)
            return f"{hours} hour{'' if hours == 1 else 's'} left at the last day's pace"
        return f"{self.hours / 24:.1f} days left at the last day's pace"


def time_to_finish(*, needed: int, votes_last_day: int, window_hours: float = PACE_WINDOW_HOURS) -> Finish:
    """`needed` votes at the pace of `votes_last_day` votes per `window_hours`."""
    if needed <= 0:
        return Finish(needed=0, votes_last_day=votes_last_day, hours=0.0)
    if votes_last_day <= 0:
        return Finish(needed=needed, votes_last_day=0, hours=None)
    return Finish(needed=needed, votes_last_day=votes_last_day, hours=needed * window_hours / votes_last_day)


def annotators_behind(done: Mapping[str, int]) -> list[str]:
    """The annotators with fewer votes than the median of the study's annotators, fewest first (then by name); none
    when there are fewer than two annotators to compare."""
    if len(done) < 2:
        return []
    middle = statistics.median(done.values())
    return sorted((name for name, n in done.items() if n < middle), key=lambda name: (done[name], name))


def items_waiting(
    pairs: Sequence[tuple[int, int]], present: Mapping[int, set[int]], final: Mapping[int, set[int]]
) -> int:
    """A pairwise study's items waiting for their renderings: per pair (x, y), the figures where both configurations
    have an artifact (`present`: configuration → figures) but not both a final verdict (`final`, a subset of it)."""
    empty: set[int] = set()
    return sum(
        len(present.get(x, empty) & present.get(y, empty)) - len(final.get(x, empty) & final.get(y, empty))
        for x, y in pairs
    )
