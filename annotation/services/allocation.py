"""Where an adaptive study's next votes should go: a plan supplied by the app that fits the ratings.

The ratings (Bradley–Terry Elo and its bootstrap) live in bt_elo, which reads this app, so this app cannot import
them; bt_elo registers its planner here when it loads (bt_elo.apps). Without a planner (or before any vote) an
adaptive study serves every pair up to its floor, fewest votes first, which is the start of any adaptive plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..assignment import Pair


@dataclass(frozen=True)
class PairPlan:
    """The next votes of a study: per (config_x id, config_y id), the votes planned for the next batch and the
    pair's priority (higher first among pairs with as many planned votes still to hand out)."""

    planned: Mapping[Pair, int]
    priority: Mapping[Pair, float]


# (study, votes per pair) -> PairPlan (empty when there is nothing to fit yet).
PairPlanner = Callable[..., "PairPlan | None"]
_planners: list[PairPlanner] = []


def register_pair_planner(planner: PairPlanner) -> None:
    """Install the planner adaptive studies use (the last registered wins; registering again is harmless)."""
    _planners[:] = [planner]


def pair_plan(*, study, pair_votes: Mapping[Pair, int]) -> PairPlan | None:
    return _planners[0](study=study, pair_votes=pair_votes) if _planners else None
