"""The assignment rules of a comparison study, over plain data. Pure: no Django.

services.item_next gathers counts from the database and asks these functions what to serve.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass


def seeded_rank(seed: int, *key: Hashable) -> str:
    """A stable pseudo-random tie-breaker: the same (seed, key) always ranks the same."""
    return hashlib.sha256(repr((seed,) + tuple(key)).encode()).hexdigest()


Pair = tuple[int, int]


def figure_sample(task_ids: Iterable[str], size: int, *, seed: int) -> list[str]:
    """A seeded sample of `size` figures (all of them when there are fewer): the same seed draws the same figures,
    and a larger size draws a superset of a smaller one, so a pilot study grows into the full one."""
    if size < 1:
        raise ValueError("a figure sample needs at least one figure")
    return sorted(sorted(set(task_ids), key=lambda t: seeded_rank(seed, "sample", t))[:size])


# The serving order, as the fields a pair (or a pair's item) is sorted by; the engine hands these same names to the
# database (services/engine.py), so the order below is the order that runs.
# Pairs: their need (counted votes plus fresh items out; the target is the same for every pair, so the least covered
# pair is the one furthest below it, and past the target the least covered still comes first), then a seeded rank.
PAIR_ORDER: tuple[str, ...] = ("need", "rank")
# A pair's items: the figure with the fewest live leases in the study first, then the pair's seeded order of figures.
FIGURE_ORDER: tuple[str, ...] = ("uses", "rank")


def pairs_by_need(pairs: Sequence[Pair], counts: Mapping[Pair, int], *, target: int, seed: int) -> list[Pair]:
    """Pairs furthest below their target first (largest deficit); seeded order among equals (PAIR_ORDER).

    Pairs at or above target follow, least covered first, so a study past its targets keeps spreading.
    """
    keys = {p: {"need": counts.get(p, 0) - target, "rank": seeded_rank(seed, "pair", p)} for p in pairs}
    return sorted(pairs, key=lambda p: tuple(keys[p][name] for name in PAIR_ORDER))


def figures_by_use(candidates: Iterable[int], uses: Mapping[int, int], *, seed: int, pair: Pair) -> list[int]:
    """Candidate figures, fewest uses in the study first; ties broken by a seeded order per pair (FIGURE_ORDER)."""
    keys = {f: {"uses": uses.get(f, 0), "rank": seeded_rank(seed, "figure", pair, f)} for f in candidates}
    return sorted(keys, key=lambda f: tuple(keys[f][name] for name in FIGURE_ORDER))


@dataclass(frozen=True)
class SideCounts:
    """How often x was shown on the left (x_left) or on the right (y_left)."""

    x_left: int = 0
    y_left: int = 0

    @property
    def balance(self) -> int:
        return self.x_left - self.y_left


def left_is_x(*, annotator_pair: SideCounts, pair: SideCounts, annotator: SideCounts, seed: int, key: Hashable) -> bool:
    """Counterbalance sides: put x on the left when it has been there less often.

    First for this annotator and this pair, then for the pair over all annotators, then for this
    annotator over all pairs; only a perfect tie at every level falls to a seeded (not random) choice.
    """
    for counts in (annotator_pair, pair, annotator):
        if counts.balance != 0:
            return counts.balance < 0
    return int(seeded_rank(seed, "side", key)[-1], 16) % 2 == 0


def overlap_due(*, served: int, overlap_served: int, rate: float) -> bool:
    """Draw overlap items on purpose: the n-th item is an overlap item when floor(rate·n) says one is due."""
    if rate <= 0:
        return False
    return overlap_served < math.floor(rate * (served + 1) + 1e-9)


def pairs_adaptive(
    pairs: Sequence[Pair],
    *,
    votes: Mapping[Pair, int],
    out: Mapping[Pair, int],
    floor: int,
    seed: int,
    planned: Mapping[Pair, int] | None = None,
    priority: Mapping[Pair, float] | None = None,
) -> list[Pair]:
    """Serving order of an adaptive study.

    1. Pairs below the floor (votes plus fresh leases out), furthest below first: every pair gets its floor whatever
       the ratings say, so no pair is left sparse.
    2. The rest by the votes the plan still has for them once the leases already out are taken off (planned − out,
       most first: concurrent annotators spread over the plan instead of piling onto its top pair), then by
       priority, then least covered, then a seeded order. Without a plan this is "least covered first".
    """
    planned, priority = planned or {}, priority or {}

    def key(p: Pair):
        have = votes.get(p, 0) + out.get(p, 0)
        if have < floor:
            return (0, have - floor, 0.0, have, seeded_rank(seed, "pair", p))
        return (1, out.get(p, 0) - planned.get(p, 0), -priority.get(p, 0.0), have, seeded_rank(seed, "pair", p))

    return sorted(pairs, key=key)
