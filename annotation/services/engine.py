"""The assignment engine: which item an annotator gets next. Portable ORM code, one path for both databases.

No study-wide lock: the neediest pair is chosen by the pure rules in annotation.assignment and claimed under a row
lock on the pair (FOR UPDATE SKIP LOCKED on PostgreSQL, so annotators asking at the same moment spread over the
neediest pairs instead of queueing on one; SQLite's IMMEDIATE transactions serialise writers anyway); an item is
claimed with a conditional update; one open lease per annotator is a database constraint.
"""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.utils import timezone

from corpus.protocol import ALLOCATION_ADAPTIVE

from .. import assignment, selectors
from ..errors import StudyUnavailable
from ..models import Item, Lease, Purpose, Study, StudyPair
from .allocation import pair_plan
from .counters import ClaimLost, CounterChanges
from .pool import GONE_LEASE_STATES, leases_expire, study_pool_recheck, study_pool_sync
from .transient import atomic_retrying

TOKEN_BYTES = 24
CLAIM_TRIES = 5
OVERLAP_WINDOW = 200
REPEAT_GAP = 5  # a swapped repeat comes back at least this many of the annotator's items after its first showing


@dataclass(frozen=True)
class Served:
    """An item handed to an annotator: their lease, and how many items they had submitted before it."""

    lease: Lease
    done: int


@dataclass
class _Mine:
    """The annotator's leases in the study (not expired or released), counted."""

    done: int = 0
    overlap_done: int = 0
    open: int = 0
    sides: assignment.SideCounts = field(default_factory=assignment.SideCounts)
    pair_sides: dict = field(default_factory=dict)


def item_next(*, study: Study, annotator, state: selectors.StudyState | None = None) -> Served | None:
    """The annotator's open lease, or a new one by the study's assignment rules; None when their session is done
    or nothing is left to compare. `state`: the study's state when the caller has just read it
    (selectors.study_for_annotator), so it is not read again."""
    state = state or selectors.study_state(study_id=study.pk, complete=False)
    study = state.study
    if study.status != Study.Status.ACTIVE:
        raise StudyUnavailable(f"this study is {study.status}; no new items are handed out")
    if not state.pool_current:
        study = atomic_retrying(lambda: study_pool_sync(study=study))
    elif state.artifacts_due:
        study, _ = atomic_retrying(lambda: study_pool_recheck(study=study))
    now = timezone.now()
    if state.leases_due:
        atomic_retrying(lambda: leases_expire(study=study, now=now))
    mine = _mine(study=study, annotator=annotator)
    if mine.open:
        existing = _open_lease(study=study, annotator=annotator)
        if existing is not None:
            return Served(lease=existing, done=mine.done)
    if mine.done >= study.quota_per_annotator:
        return None
    try:
        lease = _lease_new_retrying(study=study, annotator=annotator, mine=mine, now=now)
        if lease is None:
            # Nothing left in the pool as built: artifacts finished since it was last compared may add items.
            study, rebuilt = atomic_retrying(lambda: study_pool_recheck(study=study, always=True))
            if rebuilt:
                lease = _lease_new_retrying(study=study, annotator=annotator, mine=mine, now=now)
    except IntegrityError:
        # The same annotator asked twice at once (two tabs): one open lease per annotator; both get it.
        existing = _open_lease(study=study, annotator=annotator)
        if existing is None:
            raise
        return Served(lease=existing, done=mine.done)
    return Served(lease=lease, done=mine.done) if lease is not None else None


class PoolStale(Exception):
    """The item chosen has an artifact that no longer meets the pool's rules (a re-render made it pending, say)."""


def _lease_new_retrying(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    for _ in range(CLAIM_TRIES):
        try:
            return atomic_retrying(functools.partial(_lease_new, study=study, annotator=annotator, mine=mine, now=now))
        except ClaimLost:
            continue  # the item was taken after all (rolled back): choose again
        except PoolStale:
            study = atomic_retrying(functools.partial(study_pool_sync, study=study, force=True))
    return None


def _open_lease(*, study: Study, annotator) -> Lease | None:
    mine = Lease.objects.filter(study=study, annotator=annotator, state=Lease.State.OPEN)
    return selectors.leases_shown(mine).order_by("-created_at").first()


def _mine(*, study: Study, annotator) -> _Mine:
    rows = (
        Lease.objects.filter(study=study, annotator=annotator)
        .exclude(state__in=GONE_LEASE_STATES)
        .values_list("state", "config_x_id", "config_y_id", "left_is_x", "is_overlap")
        .annotate(n=Count("id"))
        .order_by()
    )
    mine, x_left, y_left, pair_sides = _Mine(), 0, 0, {}
    for state, x, y, left, overlap, n in rows:
        if state == Lease.State.SUBMITTED:
            mine.done += n
            mine.overlap_done += n if overlap else 0
        elif state == Lease.State.OPEN:
            mine.open += n
        x_left, y_left = x_left + (n if left else 0), y_left + (0 if left else n)
        counts = pair_sides.setdefault((x, y), [0, 0])
        counts[0 if left else 1] += n
    mine.sides = assignment.SideCounts(x_left=x_left, y_left=y_left)
    mine.pair_sides = {pair: assignment.SideCounts(x_left=a, y_left=b) for pair, (a, b) in pair_sides.items()}
    return mine


def _lease_new(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    lease = _quality_lease(study=study, annotator=annotator, mine=mine, now=now)
    if lease is not None:
        return lease
    tried_overlap = assignment.overlap_due(served=mine.done, overlap_served=mine.overlap_done, rate=study.overlap_rate)
    lease = _overlap_lease(study=study, annotator=annotator, mine=mine, now=now) if tried_overlap else None
    if lease is None:
        lease = _fresh_lease(study=study, annotator=annotator, mine=mine, now=now)
    if lease is None and not tried_overlap:
        lease = _overlap_lease(study=study, annotator=annotator, mine=mine, now=now)
    return lease


def _not_seen(study: Study, annotator) -> Q:
    """Items the annotator holds or held a (not expired / released) lease on are never served to them again.
    NOT IN, not NOT EXISTS: PostgreSQL hashes the annotator's items once, where the correlated form is planned as a
    nested loop whenever the statistics guess the annotator has one lease (every new annotator), a cost that grows
    with items x leases."""
    seen = Lease.objects.filter(study=study, annotator=annotator).exclude(state__in=GONE_LEASE_STATES)
    return ~Q(pk__in=seen.values("item_id"))


def servable_items(study: Study):
    """Items whose two artifacts have a final verdict (rendered, or failed with a reason: never pending), and pass the
    gate when the study wants that. The pool holds only such items (pool.study_pool_sync); this is for items outside
    it (overlap draws, whose votes may have been imported)."""
    items = Item.objects.filter(
        study=study, artifact_x__gate_passed__isnull=False, artifact_y__gate_passed__isnull=False
    )
    if not study.include_gate_failed:
        items = items.filter(artifact_x__gate_passed=True, artifact_y__gate_passed=True)
    return items


def _servable(study: Study, item: Item) -> bool:
    """servable_items' rules, for one item whose artifacts are loaded."""
    verdicts = (item.artifact_x.gate_passed, item.artifact_y.gate_passed)
    return None not in verdicts and (study.include_gate_failed or all(verdicts))


def _free_items(study: Study, annotator):
    """Pool items held by no live lease and never leased to this annotator."""
    return Item.objects.filter(study=study, in_pool=True, open_count=0, submitted_count=0).filter(
        _not_seen(study, annotator)
    )


def _pairs_in_serving_order(study: Study, annotator, *, with_free_item: bool = False) -> list[tuple]:
    """(pair row id, x, y) of the study's pairs in the order assignment.pairs_by_need defines: furthest below the
    study's target first (votes plus fresh items out), then a seeded order. `with_free_item`: only pairs that still
    have an item this annotator may get (a query over the whole pool: the fallback when the first pairs tried had
    none). Adaptive studies: _pairs_in_adaptive_order."""
    if study.allocation == ALLOCATION_ADAPTIVE:
        return _pairs_in_adaptive_order(study, annotator)
    pairs = StudyPair.objects.filter(study=study)
    if with_free_item:
        pairs = pairs.filter(
            Exists(
                _free_items(study, annotator).filter(
                    config_x_id=OuterRef("config_x_id"), config_y_id=OuterRef("config_y_id")
                )
            )
        )
    rows = {
        (x, y): (pk, votes + out)
        for pk, x, y, votes, out in pairs.values_list("pk", "config_x_id", "config_y_id", "votes", "open_fresh")
    }
    order = assignment.pairs_by_need(
        list(rows), {p: need for p, (_, need) in rows.items()}, target=study.target_per_pair, seed=study.seed
    )
    return [(rows[p][0], *p) for p in order]


def _pairs_in_adaptive_order(study: Study, annotator) -> list[tuple]:
    """Adaptive studies: assignment.pairs_adaptive over the pairs with a free item, every pair to the floor first,
    then the plan (allocation.pair_plan) made from the counted votes of all the study's pairs."""
    has_free = Exists(
        _free_items(study, annotator).filter(config_x_id=OuterRef("config_x_id"), config_y_id=OuterRef("config_y_id"))
    )
    rows = {
        (x, y): (pk, votes, out, free)
        for pk, x, y, votes, out, free in StudyPair.objects.filter(study=study)
        .annotate(free=has_free)
        .values_list("pk", "config_x_id", "config_y_id", "votes", "open_fresh", "free")
    }
    votes = {p: row[1] for p, row in rows.items()}
    plan = pair_plan(study=study, pair_votes=votes)
    order = assignment.pairs_adaptive(
        [p for p, row in rows.items() if row[3]],
        votes=votes,
        out={p: row[2] for p, row in rows.items()},
        floor=study.adaptive_floor,
        seed=study.seed,
        planned=plan.planned if plan else None,
        priority=plan.priority if plan else None,
    )
    return [(rows[p][0], *p) for p in order]


def _pick_in_pair(study: Study, annotator, x: int, y: int) -> Item | None:
    """The free item of the pair to serve, with its artifacts: the figure with the fewest live leases in the study
    first, then the pair's seeded order (assignment.figures_by_use; Item.rank is that seeded rank)."""
    first_free = (
        _free_items(study, annotator)
        .filter(config_x_id=x, config_y_id=y)
        .annotate(uses=F("study_figure__uses"))
        .order_by(*assignment.FIGURE_ORDER, "pk")
        .values("pk")[:1]
    )
    # Ordered without the artifacts (wide rows), which are joined to the one item chosen.
    return selectors.items_shown(Item.objects.filter(pk=Subquery(first_free))).first()


def _fresh_lease(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    """Lock the neediest pair nobody is claiming in right now, pick its item and claim it. Nearly always that pair has
    an item for this annotator; when it has none, ask which pairs do, in serving order, waiting at the end for the
    first one's lock when others hold them all."""
    # Adaptive studies have no single neediest pair in the database's order: they go straight to their plan's order.
    if study.allocation != ALLOCATION_ADAPTIVE:
        neediest = (
            StudyPair.objects.filter(study=study)
            .annotate(need=F("votes") + F("open_fresh"))
            .order_by(*assignment.PAIR_ORDER, "pk")
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", "config_x_id", "config_y_id", "x_left", "y_left")
            .first()
        )
        if neediest:
            pair_id, x, y, *sides = neediest
            lease = _claim(study, annotator, mine, now, x, y, assignment.SideCounts(*sides))
            if lease is not None:
                return lease
    candidates = _pairs_in_serving_order(study, annotator, with_free_item=True)
    return _claim_in_pairs(study, annotator, mine, now, candidates) if candidates else None


def _claim_in_pairs(study: Study, annotator, mine: _Mine, now: datetime, candidates: list) -> Lease | None:
    """Try the pairs in order, skipping those another annotator is claiming in, and end by waiting for the first one's
    lock. The lease, or None when no pair had an item."""
    for (pair_id, x, y), skip_locked in [(c, True) for c in candidates] + [(candidates[0], False)]:
        locked = (
            StudyPair.objects.select_for_update(skip_locked=skip_locked)
            .filter(pk=pair_id)
            .values_list("x_left", "y_left")
            .first()
        )
        if locked is None:
            continue
        lease = _claim(study, annotator, mine, now, x, y, assignment.SideCounts(*locked))
        if lease is not None:
            return lease
    return None


def _claim(study: Study, annotator, mine: _Mine, now: datetime, x: int, y: int, pair_sides: assignment.SideCounts):
    """In a pair whose row lock we hold: pick its item and claim it (every fresh claim holds its pair's lock, so the
    item is still free; the counter update checks it all the same, raising ClaimLost). The lease, or None (no item)."""
    item = _pick_in_pair(study, annotator, x, y)
    if item is None:
        return None
    if not _servable(study, item):
        raise PoolStale
    return _lease_open(
        study=study,
        item=item,
        annotator=annotator,
        left_is_x=_left_is_x(study=study, item=item, annotator=annotator, mine=mine, pair_sides=pair_sides),
        now=now,
        changes=CounterChanges(study.pk).claim(item.pk),
    )


def _overlap_lease(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    """An item another annotator has voted and this one has never seen, fewest votes first."""
    rows = list(
        servable_items(study)
        .filter(votes__gte=1, open_count=0)
        .filter(_not_seen(study, annotator))
        .order_by("votes", "rank", "pk")
        .values_list("pk", "votes", "figure_id", "config_x_id", "config_y_id")[:OVERLAP_WINDOW]
    )
    if not rows:
        return None
    fewest = rows[0][1]
    pk, _, _, x, y = min(
        (r for r in rows if r[1] == fewest),
        key=lambda r: assignment.seeded_rank(study.seed, "overlap", annotator.pk, r[0]),
    )
    # The pair's row lock first (the order every writer takes), then claim the item unless someone was quicker.
    pair = (
        StudyPair.objects.select_for_update()
        .filter(study=study, config_x_id=x, config_y_id=y)
        .values_list("x_left", "y_left")
        .first()
    )
    if not Item.objects.filter(pk=pk, open_count=0).update(open_count=F("open_count") + 1, is_overlap=True):
        return None
    changes = CounterChanges(study.pk)
    changes.item(pk)["open_count"] -= 1  # counted by the claim just above
    item = selectors.items_shown(Item.objects).get(pk=pk)
    pair_sides = assignment.SideCounts(*(pair or (0, 0)))
    return _lease_open(
        study=study,
        item=item,
        annotator=annotator,
        left_is_x=_left_is_x(study=study, item=item, annotator=annotator, mine=mine, pair_sides=pair_sides),
        now=now,
        changes=changes,
        is_overlap=True,
    )


def _left_is_x(*, study: Study, item: Item, annotator, mine: _Mine, pair_sides: assignment.SideCounts) -> bool:
    """The side configuration x is shown on, counterbalanced per annotator and pair (assignment.left_is_x)."""
    return assignment.left_is_x(
        annotator_pair=mine.pair_sides.get((item.config_x_id, item.config_y_id), assignment.SideCounts()),
        pair=pair_sides,
        annotator=mine.sides,
        seed=study.seed,
        key=(annotator.pk, item.pk),
    )


def _lease_open(
    *,
    study: Study,
    item: Item,
    annotator,
    left_is_x: bool,
    now: datetime,
    changes: CounterChanges,
    is_overlap: bool = False,
    purpose: str = Purpose.REGULAR,
) -> Lease:
    """Every lease of the engine is written here, then its counters (`changes`, holding the item's claim when it is
    claimed), in the caller's transaction: ClaimLost rolls both back."""
    x, y = item.config_x_id, item.config_y_id
    lease = Lease.objects.create(
        token=secrets.token_urlsafe(TOKEN_BYTES),
        study=study,
        item=item,
        config_x_id=x,
        config_y_id=y,
        annotator=annotator,
        left_is_x=left_is_x,
        is_overlap=is_overlap,
        purpose=purpose,
        created_at=now,
        served_at=now,
        expires_at=now + timedelta(seconds=study.lease_seconds),
    )
    changes.lease(
        item_id=item.pk, figure_id=item.figure_id, x=x, y=y, left_is_x=left_is_x, is_overlap=is_overlap, sign=1
    )
    changes.apply()
    return lease


# --- quality checks: attention items and swapped repeats (issue 15) -------------------------------------------------
def _quality_lease(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    """An attention item or a swapped repeat in place of the next item, when the study's rates say one is due (the
    same floor(rate·n) schedule as overlap items). The lease looks like any other: same payload, same images."""
    if study.attention_rate <= 0 and study.repeat_rate <= 0:
        return None
    served = dict(
        Lease.objects.filter(study=study, annotator=annotator)
        .exclude(state__in=GONE_LEASE_STATES)
        .values_list("purpose")
        .annotate(n=Count("id"))
        .order_by()
    )
    total = sum(served.values())
    if assignment.overlap_due(served=total, overlap_served=served.get(Purpose.ATTENTION, 0), rate=study.attention_rate):
        lease = _attention_lease(study=study, annotator=annotator, mine=mine, now=now)
        if lease is not None:
            return lease
    if assignment.overlap_due(served=total, overlap_served=served.get(Purpose.REPEAT, 0), rate=study.repeat_rate):
        return _repeat_lease(study=study, annotator=annotator, now=now)
    return None


def _attention_lease(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    """An attention item this annotator has not seen, in a seeded order per annotator; sides counterbalanced as usual.
    Many annotators may hold the same attention item at once (it is not claimed)."""
    ids = list(
        servable_items(study)
        .filter(purpose=Purpose.ATTENTION)
        .filter(_not_seen(study, annotator))
        .values_list("pk", flat=True)[:OVERLAP_WINDOW]
    )
    if not ids:
        return None
    pk = min(ids, key=lambda i: assignment.seeded_rank(study.seed, "attention", annotator.pk, i))
    item = selectors.items_shown(Item.objects).get(pk=pk)
    pair = StudyPair.objects.filter(study=study, config_x_id=item.config_x_id, config_y_id=item.config_y_id)
    pair_sides = assignment.SideCounts(*(pair.values_list("x_left", "y_left").first() or (0, 0)))
    return _lease_open(
        study=study,
        item=item,
        annotator=annotator,
        left_is_x=_left_is_x(study=study, item=item, annotator=annotator, mine=mine, pair_sides=pair_sides),
        now=now,
        changes=CounterChanges(study.pk),
        purpose=Purpose.ATTENTION,
    )


def _repeat_lease(*, study: Study, annotator, now: datetime) -> Lease | None:
    """One of the annotator's own regular items, voted at least REPEAT_GAP items ago and not repeated yet, shown again
    with the sides swapped (seeded choice)."""
    leases = list(
        Lease.objects.filter(study=study, annotator=annotator)
        .exclude(state__in=GONE_LEASE_STATES)
        .order_by("created_at", "pk")
        .values_list("item_id", "purpose", "state", "left_is_x")
    )
    repeated = {item for item, purpose, _, _ in leases if purpose == Purpose.REPEAT}
    eligible = [
        (item, left)
        for item, purpose, state, left in leases[: max(0, len(leases) - REPEAT_GAP + 1)]
        if purpose == Purpose.REGULAR and state == Lease.State.SUBMITTED and item not in repeated
    ]
    if not eligible:
        return None
    item_id, left = min(eligible, key=lambda e: assignment.seeded_rank(study.seed, "repeat", annotator.pk, e[0]))
    item = selectors.items_shown(Item.objects).get(pk=item_id)
    return _lease_open(
        study=study,
        item=item,
        annotator=annotator,
        left_is_x=not left,
        now=now,
        changes=CounterChanges(study.pk),
        purpose=Purpose.REPEAT,
    )
