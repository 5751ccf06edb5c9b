"""The one place the pool's denormalised counters change (Item, StudyPair, StudyFigure).

Every service that opens, closes, submits or withdraws collects its counter changes in a `CounterChanges` and applies
them in the transaction of the lease or vote they count, after writing that lease or vote. Changes go out as `F()`
updates clamped at zero with `Greatest`, one statement after another: pairs then items then figures, each in key
order, so every writer takes its row locks in one order, on both databases.
"""

from __future__ import annotations

from collections import Counter

from django.db.models import F, Value
from django.db.models.functions import Greatest

from ..models import Item, StudyFigure, StudyPair

BULK_CHUNK = 500  # ids per `IN (...)`: far below SQLite's 32,766 host parameters and PostgreSQL's 65,535


class ClaimLost(Exception):
    """An item claimed in these changes was taken by another transaction first."""


class CounterChanges:
    """The counter changes of one transaction in one study."""

    def __init__(self, study_id: int):
        self.study_id = study_id
        self.pairs: dict[tuple[int, int], Counter] = {}
        self.items: dict[int, Counter] = {}
        self.figures: Counter = Counter()
        self.claimed: set[int] = set()

    def pair(self, x: int, y: int) -> Counter:
        return self.pairs.setdefault((x, y), Counter())

    def item(self, pk: int) -> Counter:
        return self.items.setdefault(pk, Counter())

    def claim(self, item_id: int):
        """The item must still be free (no open lease, no submitted one) when the changes are applied: ClaimLost
        otherwise, and the caller's transaction is rolled back."""
        self.claimed.add(item_id)
        return self

    def lease(self, *, item_id: int, figure_id: int, x: int, y: int, left_is_x: bool, is_overlap: bool, sign: int):
        """A lease opened (+1) or an open lease closed (-1: expired, skipped, released)."""
        self.item(item_id)["open_count"] += sign
        self.figures[figure_id] += sign
        pair = self.pair(x, y)
        pair["x_left" if left_is_x else "y_left"] += sign
        if not is_overlap:
            pair["open_fresh"] += sign
        return self

    def vote(self, *, item_id: int, x: int, y: int, is_overlap: bool, counted: bool, sign: int):
        """An open lease submitted (+1), or a submitted lease's vote withdrawn and the lease reopened (-1)."""
        item, pair = self.item(item_id), self.pair(x, y)
        item["open_count"] -= sign
        item["submitted_count"] += sign
        item["votes"] += sign * int(counted)
        pair["votes"] += sign * int(counted)
        if not is_overlap:
            pair["open_fresh"] -= sign
        return self

    def imported_vote(self, *, item_id: int, x: int, y: int):
        """A vote stored without a lease (import): it counts, no lease was open."""
        self.item(item_id)["votes"] += 1
        self.pair(x, y)["votes"] += 1
        return self

    def new_item_values(self, key) -> dict:
        """The counters of an item not written yet, recorded under a key of the caller's (its item id unknown), taken
        out of the changes: a new item is written with them as its values, its counters starting at zero."""
        return dict(self.items.pop(key, Counter()))

    def items_identified(self, ids: dict) -> None:
        """Items recorded under keys of the caller's, now known by their ids."""
        self.items = {ids[key]: counted for key, counted in self.items.items()}

    def apply(self) -> None:
        """The changes as UPDATEs, pairs then items then figures, each in key order. ClaimLost when a claimed item was
        no longer free (its conditional update changed no row)."""
        self._pairs_update()
        for pk, changes in sorted(self.items.items()):
            claimed = pk in self.claimed
            # A claim updates the item only while it is free: no open lease, no submitted one.
            rows = Item.objects.filter(pk=pk, **({"open_count": 0, "submitted_count": 0} if claimed else {}))
            if (changed := _changed(changes)) and not rows.update(**_clamped(changed)) and claimed:
                raise ClaimLost
        for figure_id, n in sorted(self.figures.items()):
            if n:
                StudyFigure.objects.filter(study_id=self.study_id, figure_id=figure_id).update(**_clamped({"uses": n}))

    def apply_in_bulk(self) -> None:
        """apply() for bulk loads that hold study_lock: items (and figures) with the same changes share one UPDATE
        ... WHERE pk IN, so a batch of a thousand imported votes costs a few statements instead of a thousand. Only
        under study_lock, which keeps every other writer of the study out: these rows are not locked in key order."""
        self._pairs_update()
        groups: dict[tuple, list[int]] = {}
        for pk, changes in self.items.items():
            if key := tuple(sorted((name, n) for name, n in changes.items() if n)):
                groups.setdefault(key, []).append(pk)
        for key, pks in sorted(groups.items()):
            for start in range(0, len(pks), BULK_CHUNK):
                Item.objects.filter(pk__in=sorted(pks)[start : start + BULK_CHUNK]).update(**_clamped(dict(key)))
        by_use: dict[int, list[int]] = {}
        for figure_id, n in self.figures.items():
            if n:
                by_use.setdefault(n, []).append(figure_id)
        for n, ids in sorted(by_use.items()):
            for start in range(0, len(ids), BULK_CHUNK):
                StudyFigure.objects.filter(
                    study_id=self.study_id, figure_id__in=sorted(ids)[start : start + BULK_CHUNK]
                ).update(**_clamped({"uses": n}))

    def _pairs_update(self) -> None:
        for (x, y), changes in sorted(self.pairs.items()):
            if changed := _changed(changes):
                StudyPair.objects.filter(study_id=self.study_id, config_x_id=x, config_y_id=y).update(
                    **_clamped(changed)
                )


def _changed(changes: Counter) -> dict[str, int]:
    return {name: n for name, n in sorted(changes.items()) if n}


def _clamped(deltas: dict[str, int]) -> dict:
    return {name: Greatest(F(name) + n, Value(0)) for name, n in deltas.items()}
