"""The materialised assignment pool: Item rows and the StudyPair / StudyFigure counters, built and rebuilt.

Every (pair, figure) with both artifacts is materialised once as an Item (in_pool, seeded rank); per-pair, per-figure
and per-item counters are kept by the services in the transaction of the lease or vote they count (counters.py), so
the engine reads a few rows instead of recounting the study. study_pool_sync rebuilds all of it from the leases and
votes; it runs when the study is created and whenever what the pool was built from changed (configurations, their
order, figures, artifacts, seed: selectors.study_state), and must be called (force=True) after writing leases or votes
of a study without these services (bulk loads).
"""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents import selectors as agent_selectors
from core.bulk_write import insert_rows, statistics_refresh

from .. import assignment, selectors
from ..models import Comparison, Item, Lease, Purpose, Study, StudyFigure, StudyPair
from .counters import CounterChanges

LIVE_LEASE_STATES = (Lease.State.OPEN, Lease.State.SUBMITTED)
GONE_LEASE_STATES = (Lease.State.EXPIRED, Lease.State.RELEASED)
BATCH = 2000
# The item columns the engine's picks filter, join and order on: the ones the planner's statistics must know.
ITEM_PLANNED_FIELDS = ("study", "figure", "config_x", "config_y", "in_pool", "open_count", "submitted_count", "votes")


def study_pairs(study: Study) -> list[tuple[int, int]]:
    ids = list(study.configurations.order_by("position", "slug").values_list("pk", flat=True))
    return list(itertools.combinations(ids, 2))


def study_lock(study: Study) -> None:
    """Stop the study's writers while the pool is rebuilt (or the status changes): every writer takes a row lock on
    the study first (study_share), so this waits for them and they wait for it. SQLite's IMMEDIATE transactions
    serialise writers anyway."""
    list(Study.objects.select_for_update().filter(pk=study.pk).values_list("pk"))


def study_share(study: Study) -> None:
    """Writers that change counters without going through a pair row lock (skip, expiry, release) wait for a rebuild.
    FOR NO KEY UPDATE on PostgreSQL: it conflicts with study_lock's FOR UPDATE but not with the key-share lock every
    insert of a lease or vote takes on its study, so votes and next-item requests never wait for it."""
    list(Study.objects.select_for_update(no_key=True).filter(pk=study.pk).values_list("pk"))


def current_votes(study: Study):
    return Comparison.objects.filter(study=study, superseded=False, withdrawn=False)


def _count(queryset):
    return Coalesce(selectors.scalar_subquery(queryset, "COUNT", "id"), 0)


def study_pool_sync(*, study: Study, force: bool = False) -> Study:
    """Materialise the study's pool and rebuild every counter from its leases and votes (idempotent)."""
    with transaction.atomic():
        study_lock(study)
        state = selectors.study_state(study_id=study.pk)
        fresh = state.study
        if not force and state.pool_current:
            return fresh
        seed = fresh.seed
        pairs = study_pairs(fresh)
        figure_ids = list(fresh.figures.values_list("pk", flat=True)) or None
        by_config: dict[int, dict[int, int]] = {}
        # Only artifacts with a final verdict (and passing the gate when the study wants that) enter the pool: an
        # annotator never sees an artifact still waiting for its rendering.
        for configuration_id, figure_id, pk in agent_selectors.artifact_keys(
            configuration_ids={c for p in pairs for c in p},
            figure_ids=figure_ids,
            final_only=True,
            passed_only=not fresh.include_gate_failed,
        ):
            by_config.setdefault(configuration_id, {})[figure_id] = pk
        existing = {
            (f, x, y): (pk, rank, in_pool)
            # Attention and calibration items share (figure, pair) with a pool item but never join the pool.
            for f, x, y, pk, rank, in_pool in Item.objects.filter(study=fresh, purpose=Purpose.REGULAR).values_list(
                "figure_id", "config_x_id", "config_y_id", "pk", "rank", "in_pool"
            )
        }
        new, changed, pooled = [], [], set()
        for x, y in pairs:
            xs, ys = by_config.get(x, {}), by_config.get(y, {})
            for f in xs.keys() & ys.keys():
                key, rank = (f, x, y), assignment.seeded_rank(seed, "figure", (x, y), f)
                pooled.add(key)
                if key not in existing:
                    new.append((f, x, y, xs[f], ys[f], rank))
                elif existing[key][1:] != (rank, True):
                    changed.append(Item(pk=existing[key][0], rank=rank, in_pool=True))
        _items_insert(study=fresh, rows=new)
        Item.objects.bulk_update(changed, ["rank", "in_pool"], batch_size=1000)
        dropped = [pk for key, (pk, _, in_pool) in existing.items() if in_pool and key not in pooled]
        for start in range(0, len(dropped), 1000):
            Item.objects.filter(pk__in=dropped[start : start + 1000]).update(in_pool=False)

        item_leases = Lease.objects.filter(item_id=OuterRef("pk"))
        # Only items with a count, or rows to count, are rewritten: in a new study that is none of the 45,000.
        touched = (
            Q(open_count__gt=0)
            | Q(submitted_count__gt=0)
            | Q(votes__gt=0)
            | Exists(item_leases)
            | Exists(Comparison.objects.filter(item_id=OuterRef("pk")))
        )
        Item.objects.filter(touched, study=fresh).update(
            open_count=_count(item_leases.filter(state=Lease.State.OPEN)),
            submitted_count=_count(item_leases.filter(state=Lease.State.SUBMITTED)),
            votes=_count(
                Comparison.objects.filter(item_id=OuterRef("pk"), superseded=False, withdrawn=False, counted=True)
            ),
        )
        _figures_rebuild(fresh)
        _pairs_rebuild(fresh, pairs, seed)
        if new:
            # The next item's pick reads these per study; with stale estimates the planner scans instead of joining.
            # Items: only the columns the engine filters and joins on (a wide table).
            statistics_refresh(StudyFigure)
            statistics_refresh(StudyPair)
            statistics_refresh(Item, *ITEM_PLANNED_FIELDS)
        checked = timezone.now()
        Study.objects.filter(pk=fresh.pk).update(pool_signature=state.signature, pool_checked_at=checked)
        for built in (fresh, study):
            built.pool_signature, built.pool_checked_at = state.signature, checked
        return fresh


def study_pool_recheck(*, study: Study, always: bool = False) -> tuple[Study, bool]:
    """Compare the study's artifacts with those its pool was built from (verdicts change as renders finish) and
    rebuild it when they differ: (the study, whether it was rebuilt). On the next-item path one request per
    selectors.POOL_ARTIFACTS_RECHECK does it (a conditional update claims the look), unless `always` (nothing was left
    to serve: look now)."""
    if not always and not Study.objects.filter(pk=study.pk, pool_checked_at=study.pool_checked_at).update(
        pool_checked_at=timezone.now()
    ):
        return study, False
    if selectors.study_state(study_id=study.pk).pool_current:
        return study, False
    return study_pool_sync(study=study), True


ITEM_COLUMNS = ("figure_id", "config_x_id", "config_y_id", "artifact_x_id", "artifact_y_id", "rank")


def _items_insert(*, study: Study, rows: list[tuple]) -> None:
    """Insert pooled items, one tuple of ITEM_COLUMNS values per item: a paper-scale pool is 45,000 rows, written as
    plain values (core.bulk_write), every other column taking its model default (created_at: now, prepared once)."""
    insert_rows(Item, (dict(zip(ITEM_COLUMNS, row), study_id=study.pk, in_pool=True) for row in rows))


def _figures_rebuild(study: Study) -> None:
    figure_ids = set(Item.objects.filter(study=study).values_list("figure_id", flat=True).distinct())
    have = set(StudyFigure.objects.filter(study=study).values_list("figure_id", flat=True))
    StudyFigure.objects.bulk_create(
        [StudyFigure(study=study, figure_id=f) for f in figure_ids - have], batch_size=BATCH
    )
    StudyFigure.objects.filter(study=study).exclude(figure_id__in=figure_ids).delete()
    StudyFigure.objects.filter(study=study).update(uses=0)
    live = Lease.objects.filter(study=study, state__in=LIVE_LEASE_STATES)
    uses = Counter(dict(live.values_list("item__figure_id").annotate(n=Count("id")).order_by()))
    by_count: dict[int, list] = {}
    for figure_id, n in uses.items():
        by_count.setdefault(n, []).append(figure_id)
    for n, ids in by_count.items():
        StudyFigure.objects.filter(study=study, figure_id__in=ids).update(uses=n)


def _pairs_rebuild(study: Study, pairs: list[tuple[int, int]], seed: int) -> None:
    wanted = set(pairs)
    StudyPair.objects.filter(study=study).exclude(
        pk__in=[p.pk for p in StudyPair.objects.filter(study=study) if (p.config_x_id, p.config_y_id) in wanted]
    ).delete()
    rows = {(p.config_x_id, p.config_y_id): p for p in StudyPair.objects.filter(study=study)}
    StudyPair.objects.bulk_create(
        [StudyPair(study=study, config_x_id=x, config_y_id=y) for x, y in pairs if (x, y) not in rows]
    )
    rows = {(p.config_x_id, p.config_y_id): p for p in StudyPair.objects.filter(study=study)}
    for (x, y), row in rows.items():
        row.rank, row.votes, row.open_fresh, row.x_left, row.y_left = (
            assignment.seeded_rank(seed, "pair", (x, y)),
            0,
            0,
            0,
            0,
        )

    def pair_row(x: int, y: int) -> tuple[StudyPair | None, bool]:
        """The pair's counter row, and whether (x, y) is in its order: items built before the configurations were
        reordered keep their old x / y order, and still count for their pair."""
        return (rows[(x, y)], False) if (x, y) in rows else (rows.get((y, x)), True)

    for x, y, n in (
        current_votes(study)
        .filter(counted=True)
        .values_list("item__config_x_id", "item__config_y_id")
        .annotate(n=Count("id"))
        .order_by()
    ):
        row, _ = pair_row(x, y)
        if row is not None:
            row.votes += n
    for x, y, n in (
        Lease.objects.filter(study=study, state=Lease.State.OPEN, is_overlap=False)
        .values_list("item__config_x_id", "item__config_y_id")
        .annotate(n=Count("id"))
        .order_by()
    ):
        row, _ = pair_row(x, y)
        if row is not None:
            row.open_fresh += n
    live = Lease.objects.filter(study=study, state__in=LIVE_LEASE_STATES)
    for x, y, left, n in (
        live.values_list("item__config_x_id", "item__config_y_id", "left_is_x").annotate(n=Count("id")).order_by()
    ):
        row, swapped = pair_row(x, y)
        if row is not None:
            side = "x_left" if left != swapped else "y_left"
            setattr(row, side, getattr(row, side) + n)
    StudyPair.objects.bulk_update(list(rows.values()), ["rank", "votes", "open_fresh", "x_left", "y_left"])


def leases_close(*, study: Study, leases, state: str, now: datetime, skip_locked: bool = False) -> int:
    """Close open leases (expired, skipped, released): their items go back to the pool; counters follow."""
    rows = list(
        leases.filter(state=Lease.State.OPEN)
        .select_for_update(of=("self",), skip_locked=skip_locked)
        .order_by("pk")
        .values_list(
            "pk", "item_id", "item__figure_id", "item__config_x_id", "item__config_y_id", "left_is_x", "is_overlap"
        )
    )
    if not rows:
        return 0
    Lease.objects.filter(pk__in=[r[0] for r in rows]).update(state=state, closed_at=now)
    changes = CounterChanges(study.pk)
    for _, item_id, figure_id, x, y, left, overlap in rows:
        changes.lease(item_id=item_id, figure_id=figure_id, x=x, y=y, left_is_x=left, is_overlap=overlap, sign=-1)
    changes.apply()
    return len(rows)


def leases_expire(*, study: Study, now: datetime | None = None) -> int:
    """Abandoned leases return to the pool once their time is up."""
    now = now or timezone.now()
    due = Lease.objects.filter(study=study, state=Lease.State.OPEN, expires_at__lte=now)
    if not due.exists():
        return 0
    with transaction.atomic():
        study_share(study)
        return leases_close(study=study, leases=due, state=Lease.State.EXPIRED, now=now, skip_locked=True)
