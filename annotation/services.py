"""Every write of the annotation app: studies, leases (the assignment engine), votes, imports."""
from __future__ import annotations

import csv
import itertools
import json
import secrets
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from pathlib import Path
from typing import Iterable, Iterator

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.models import Artifact, Configuration
from corpus.models import Figure
from corpus.roles import ANNOTATOR
from corpus.services import Invitation, user_invite
from corpus.protocol import OUTCOMES, TIE_OUTCOMES

from . import assignment, selectors
from .models import Comparison, Item, Lease, Study, StudyFigure, StudyPair

TOKEN_BYTES = 24
MAX_DWELL_MS = 2**31  # a PositiveIntegerField's range on every database; 24 days is more than any dwell
LIVE_LEASE_STATES = (Lease.State.OPEN, Lease.State.SUBMITTED)


# --- errors the API turns into HTTP answers ---------------------------------------------------
class AnnotationError(Exception):
    status = 400

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class LeaseNotFound(AnnotationError):
    status = 404


class LeaseForeign(AnnotationError):
    status = 403


class LeaseClosed(AnnotationError):
    status = 409


class StudyUnavailable(AnnotationError):
    status = 409


class VoteInvalid(AnnotationError):
    status = 400


# --- studies ----------------------------------------------------------------------------------
STUDY_SETTINGS = ("description", "target_per_pair", "overlap_rate", "seed", "include_gate_failed", "require_reason_decisive",
                  "min_dwell_ms", "lease_seconds", "quota_per_annotator")


def study_figures_choose(*, task_ids: Iterable[str] | None = None, fields: Iterable[str] | None = None,
                         sample: int | None = None, seed: int = 0) -> list[str] | None:
    """The task ids a study compares: the listed ones (or the whole corpus), within the given source fields, then a
    seeded sample of `sample` of them. None when nothing narrows the corpus (the study then follows the corpus)."""
    task_ids = [t for t in (task_ids or []) if t]
    fields = [f for f in (fields or []) if f]
    if not task_ids and not fields and not sample:
        return None
    figures = Figure.objects.all()
    if task_ids:
        known = set(figures.filter(task_id__in=task_ids).values_list("task_id", flat=True))
        missing = [t for t in dict.fromkeys(task_ids) if t not in known]
        if missing:
            raise ValueError(f"unknown figures: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}")
        figures = figures.filter(task_id__in=task_ids)
    if fields:
        declared = set(Figure.objects.values_list("field", flat=True).distinct())
        unknown = sorted(set(fields) - declared)
        if unknown:
            raise ValueError(f"no figures in field(s): {', '.join(unknown)}")
        figures = figures.filter(field__in=fields)
    chosen = list(figures.values_list("task_id", flat=True))
    if not chosen:
        raise ValueError("no figure matches this selection")
    return assignment.figure_sample(chosen, sample, seed=seed) if sample else sorted(chosen)


@transaction.atomic
def study_create(*, name: str, configurations: Iterable[str], figures: Iterable[str] | None = None,
                 figure_fields: Iterable[str] | None = None, figure_sample: int | None = None,
                 annotators: Iterable | None = None, **settings) -> Study:
    """Create a study from configuration slugs; its figures are the whole corpus unless task ids, source fields or a
    seeded sample size narrow them (study_figures_choose)."""
    unknown = set(settings) - set(STUDY_SETTINGS)
    if unknown:
        raise ValueError(f"unknown study settings: {', '.join(sorted(unknown))}")
    slugs = list(dict.fromkeys(configurations))
    found = list(Configuration.objects.filter(slug__in=slugs))
    missing = sorted(set(slugs) - {c.slug for c in found})
    if missing:
        raise ValueError(f"unknown configurations: {', '.join(missing)}")
    if len(found) < 2:
        raise ValueError("a study needs at least two configurations")
    if not 0 <= settings.get("overlap_rate", 0) <= 1:
        raise ValueError("overlap_rate must lie in [0, 1]")
    if Study.objects.filter(name=name).exists():
        raise ValueError(f"a study named {name!r} exists already")
    task_ids = study_figures_choose(task_ids=figures, fields=figure_fields, sample=figure_sample, seed=settings.get("seed", 0))
    study = Study.objects.create(name=name, **settings)
    study.configurations.set(found)
    if task_ids is not None:
        study.figures.set(list(Figure.objects.filter(task_id__in=task_ids)))
    if annotators is not None:
        study.annotators.set(list(annotators))
    return study_pool_sync(study=study)


def study_status_set(*, study: Study, status: str) -> Study:
    if status not in Study.Status.values:
        raise ValueError(f"status must be one of {', '.join(Study.Status.values)}")
    with transaction.atomic():
        _study_lock(study)
        study.status = status
        study.save(update_fields=["status"])
        if status == Study.Status.CLOSED:
            _leases_close(study=study, leases=Lease.objects.filter(study=study, state=Lease.State.OPEN), state=Lease.State.RELEASED,
                          now=timezone.now())
    return study


def study_annotators_set(*, study: Study, users: Iterable) -> Study:
    """Assign exactly these annotators. Someone taken off the study loses their open item at once (it goes back to
    the pool), so they can neither vote on it nor fetch its images any more."""
    users = list(users)
    with transaction.atomic():
        _study_share(study)
        study.annotators.set(users)
        removed = Lease.objects.filter(study=study, state=Lease.State.OPEN).exclude(annotator__in=users)
        _leases_close(study=study, leases=removed, state=Lease.State.RELEASED, now=timezone.now())
    return study


def annotator_invite(*, study: Study, username: str, email: str = "") -> Invitation:
    """Invite someone to annotate this study: an annotator account (new, or an existing one gaining the role) assigned
    to the study, with a one-time link to choose a password when the account has none yet."""
    invitation = user_invite(username=username, role=ANNOTATOR, email=email)
    study.annotators.add(invitation.user)
    return invitation


# --- the assignment pool ----------------------------------------------------------------------
# Every (pair, figure) with both artifacts is materialised once as an Item (in_pool, seeded rank); per-pair and per-figure
# counters (StudyPair, StudyFigure) and per-item counters are kept by the services in the transaction of the lease or
# vote they count. item_next then reads a few rows instead of recounting the study. study_pool_sync rebuilds all of it
# from the leases and votes; it runs when the study is created and whenever what the pool was built from changed
# (configurations, figures, artifacts, seed: see selectors.study_with_pool_signature), and must be called (force=True)
# after writing leases or votes of a study without these services (bulk loads).
GONE_LEASE_STATES = (Lease.State.EXPIRED, Lease.State.RELEASED)


def _token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def study_pairs(study: Study) -> list[tuple[int, int]]:
    ids = list(study.configurations.order_by("position", "slug").values_list("pk", flat=True))
    return list(itertools.combinations(ids, 2))


_scalar = selectors.scalar_subquery


def _signature(study: Study) -> str:
    return study.pool_signature_now


def _study_lock(study: Study) -> None:
    """Stop the study's writers while the pool is rebuilt (or the status changes). On PostgreSQL FOR UPDATE conflicts
    with the KEY SHARE lock every insert of a lease or vote takes on its study, and with _study_share; on SQLite the
    IMMEDIATE transaction serialises anyway."""
    list(Study.objects.select_for_update().filter(pk=study.pk).values_list("pk"))


def _study_share(study: Study) -> None:
    """Writers that insert no lease or vote (skip, expiry) wait for a pool rebuild like those that do."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {Study._meta.db_table} WHERE id = %s FOR KEY SHARE", [study.pk])


class _Deltas:
    """The counter changes of one transaction, written pairs, then items, then figures, each in key order (one lock order
    for every writer). On PostgreSQL a few changes go out as one statement (data-modifying CTEs): their rows are locked by
    this transaction already (the pair, the lease's item) or seldom wanted by another, so their order is moot there."""

    def __init__(self):
        self.pairs: dict[tuple[int, int], Counter] = {}
        self.items: dict[int, Counter] = {}
        self.figures: Counter = Counter()

    def _pair(self, x: int, y: int) -> Counter:
        return self.pairs.setdefault((x, y), Counter())

    def _item(self, pk: int) -> Counter:
        return self.items.setdefault(pk, Counter())

    def lease(self, *, item_id: int, figure_id: int, x: int, y: int, left_is_x: bool, is_overlap: bool, sign: int) -> "_Deltas":
        """A lease opened (+1) or an open lease closed (-1: expired, skipped, released)."""
        self._item(item_id)["open_count"] += sign
        self.figures[figure_id] += sign
        pair = self._pair(x, y)
        pair["x_left" if left_is_x else "y_left"] += sign
        if not is_overlap:
            pair["open_fresh"] += sign
        return self

    def vote(self, *, item_id: int, x: int, y: int, is_overlap: bool, counted: bool, sign: int) -> "_Deltas":
        """An open lease submitted (+1), or a submitted lease's vote withdrawn and the lease reopened (-1)."""
        item, pair = self._item(item_id), self._pair(x, y)
        item["open_count"] -= sign
        item["submitted_count"] += sign
        item["votes"] += sign * int(counted)
        pair["votes"] += sign * int(counted)
        if not is_overlap:
            pair["open_fresh"] -= sign
        return self

    def apply(self, study: Study, *, before: list | None = None, select: tuple | None = None):
        """Write the changes, after the statements `before` ((sql, params), e.g. the lease or vote they belong to).
        On PostgreSQL everything goes out as one statement (data-modifying CTEs s0, s1, ... RETURNING id) whose main
        query is `select` (which may read them), and its first row is returned; elsewhere statement by statement, None."""
        statements = list(before or []) + self.statements(study)
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql" and (select is not None or 1 < len(statements) <= 5):
                if select is None:
                    *statements, select = statements
                ctes = ", ".join(f"s{i} AS ({sql} RETURNING id)" for i, (sql, _) in enumerate(statements))
                cursor.execute(f"WITH {ctes} {select[0]}" if ctes else select[0], [p for _, params in statements for p in params] + list(select[1]))
                return cursor.fetchone() if cursor.description else None
            for sql, params in statements:
                cursor.execute(sql, params)
        return None

    def statements(self, study: Study) -> list[tuple[str, list]]:
        greatest = "GREATEST" if connection.vendor == "postgresql" else "MAX"

        def assignments(changes: Counter) -> tuple[str, list]:
            names = sorted(k for k, n in changes.items() if n)
            return ", ".join(f"{k} = {greatest}({k} + %s, 0)" for k in names), [changes[k] for k in names]

        statements = []
        for (x, y), changes in sorted(self.pairs.items()):
            sql, params = assignments(changes)
            if sql:
                statements.append((f"UPDATE {StudyPair._meta.db_table} SET {sql} WHERE study_id = %s AND config_x_id = %s AND config_y_id = %s",
                                   params + [study.pk, x, y]))
        for pk, changes in sorted(self.items.items()):
            sql, params = assignments(changes)
            if sql:
                statements.append((f"UPDATE {Item._meta.db_table} SET {sql} WHERE id = %s", params + [pk]))
        for figure_id, n in sorted(self.figures.items()):
            if n:
                statements.append((f"UPDATE {StudyFigure._meta.db_table} SET uses = {greatest}(uses + %s, 0) WHERE study_id = %s AND figure_id = %s",
                                   [n, study.pk, figure_id]))
        return statements


def study_pool_sync(*, study: Study, force: bool = False) -> Study:
    """Materialise the study's pool and rebuild every counter from its leases and votes (idempotent)."""
    with transaction.atomic():
        _study_lock(study)
        fresh = selectors.study_with_pool_signature().get(pk=study.pk)
        signature = _signature(fresh)
        if not force and signature == fresh.pool_signature:
            return fresh
        seed = fresh.seed
        pairs = study_pairs(fresh)
        artifacts = Artifact.objects.filter(configuration_id__in={c for p in pairs for c in p})
        if fresh.figures.exists():
            artifacts = artifacts.filter(figure__studies=fresh)
        by_config: dict[int, dict[int, int]] = {}
        for configuration_id, figure_id, pk in artifacts.values_list("configuration_id", "figure_id", "pk"):
            by_config.setdefault(configuration_id, {})[figure_id] = pk
        existing = {(f, x, y): (pk, rank, in_pool) for f, x, y, pk, rank, in_pool in
                    Item.objects.filter(study=fresh).values_list("figure_id", "config_x_id", "config_y_id", "pk", "rank", "in_pool")}
        new, changed, pooled = [], [], set()
        for x, y in pairs:
            xs, ys = by_config.get(x, {}), by_config.get(y, {})
            for f in xs.keys() & ys.keys():
                key, rank = (f, x, y), assignment.seeded_rank(seed, "figure", (x, y), f)
                pooled.add(key)
                if key not in existing:
                    new.append(Item(study=fresh, figure_id=f, config_x_id=x, config_y_id=y, artifact_x_id=xs[f], artifact_y_id=ys[f],
                                    rank=rank, in_pool=True))
                elif existing[key][1:] != (rank, True):
                    changed.append(Item(pk=existing[key][0], rank=rank, in_pool=True))
        Item.objects.bulk_create(new, batch_size=2000)
        Item.objects.bulk_update(changed, ["rank", "in_pool"], batch_size=1000)
        dropped = [pk for key, (pk, _, in_pool) in existing.items() if in_pool and key not in pooled]
        for start in range(0, len(dropped), 1000):
            Item.objects.filter(pk__in=dropped[start:start + 1000]).update(in_pool=False)

        def count(queryset):
            return Coalesce(_scalar(queryset, "COUNT", "id"), 0)

        item_leases = Lease.objects.filter(item_id=OuterRef("pk"))
        Item.objects.filter(study=fresh).update(
            open_count=count(item_leases.filter(state=Lease.State.OPEN)), submitted_count=count(item_leases.filter(state=Lease.State.SUBMITTED)),
            votes=count(Comparison.objects.filter(item_id=OuterRef("pk"), superseded=False, withdrawn=False, counted=True)),
        )
        live = Lease.objects.filter(study=fresh, state__in=LIVE_LEASE_STATES)
        figure_ids = set(Item.objects.filter(study=fresh).values_list("figure_id", flat=True).distinct())
        have = set(StudyFigure.objects.filter(study=fresh).values_list("figure_id", flat=True))
        StudyFigure.objects.bulk_create([StudyFigure(study=fresh, figure_id=f) for f in figure_ids - have], batch_size=2000)
        StudyFigure.objects.filter(study=fresh).exclude(figure_id__in=figure_ids).delete()
        StudyFigure.objects.filter(study=fresh).update(uses=0)
        uses = Counter(dict(live.values_list("item__figure_id").annotate(n=Count("id")).order_by()))
        for n, ids in _by_count(uses).items():
            StudyFigure.objects.filter(study=fresh, figure_id__in=ids).update(uses=n)

        StudyPair.objects.filter(study=fresh).exclude(pk__in=[p.pk for p in StudyPair.objects.filter(study=fresh)
                                                                if (p.config_x_id, p.config_y_id) in set(pairs)]).delete()
        rows = {(p.config_x_id, p.config_y_id): p for p in StudyPair.objects.filter(study=fresh)}
        StudyPair.objects.bulk_create([StudyPair(study=fresh, config_x_id=x, config_y_id=y) for x, y in pairs if (x, y) not in rows])
        rows = {(p.config_x_id, p.config_y_id): p for p in StudyPair.objects.filter(study=fresh)}
        for (x, y), row in rows.items():
            row.rank, row.votes, row.open_fresh, row.x_left, row.y_left = assignment.seeded_rank(seed, "pair", (x, y)), 0, 0, 0, 0
        def pair_row(x: int, y: int) -> tuple[StudyPair | None, bool]:
            """The pair's counter row, and whether (x, y) is in its order: items built before the configurations were
            reordered keep their old x / y order, and still count for their pair."""
            return (rows[(x, y)], False) if (x, y) in rows else (rows.get((y, x)), True)

        for x, y, n in (_current_votes(fresh).filter(counted=True).values_list("item__config_x_id", "item__config_y_id")
                        .annotate(n=Count("id")).order_by()):
            row, _ = pair_row(x, y)
            if row is not None:
                row.votes += n
        for x, y, n in (Lease.objects.filter(study=fresh, state=Lease.State.OPEN, is_overlap=False)
                        .values_list("item__config_x_id", "item__config_y_id").annotate(n=Count("id")).order_by()):
            row, _ = pair_row(x, y)
            if row is not None:
                row.open_fresh += n
        for x, y, left, n in live.values_list("item__config_x_id", "item__config_y_id", "left_is_x").annotate(n=Count("id")).order_by():
            row, swapped = pair_row(x, y)
            if row is not None:
                side = "x_left" if left != swapped else "y_left"
                setattr(row, side, getattr(row, side) + n)
        StudyPair.objects.bulk_update(list(rows.values()), ["rank", "votes", "open_fresh", "x_left", "y_left"])
        Study.objects.filter(pk=fresh.pk).update(pool_signature=signature)
        if len(new) > 1000 and connection.vendor == "postgresql":
            # Thousands of rows just appeared: give the planner their statistics now rather than at autovacuum's leisure.
            with connection.cursor() as cursor:
                cursor.execute(f"ANALYZE {Item._meta.db_table}, {StudyFigure._meta.db_table}, {StudyPair._meta.db_table}")
        fresh.pool_signature = signature
        study.pool_signature = signature
        return fresh


def _by_count(counter: Counter) -> dict[int, list]:
    groups: dict[int, list] = {}
    for key, n in counter.items():
        groups.setdefault(n, []).append(key)
    return groups


def _leases_close(*, study: Study, leases, state: str, now: datetime, skip_locked: bool = False) -> int:
    """Close open leases (expired, skipped, released): their items go back to the pool; counters follow."""
    rows = list(leases.filter(state=Lease.State.OPEN).select_for_update(of=("self",), skip_locked=skip_locked).order_by("pk")
                .values_list("pk", "item_id", "item__figure_id", "item__config_x_id", "item__config_y_id", "left_is_x", "is_overlap"))
    if not rows:
        return 0
    Lease.objects.filter(pk__in=[r[0] for r in rows]).update(state=state, closed_at=now)
    deltas = _Deltas()
    for _, item_id, figure_id, x, y, left, overlap in rows:
        deltas.lease(item_id=item_id, figure_id=figure_id, x=x, y=y, left_is_x=left, is_overlap=overlap, sign=-1)
    deltas.apply(study)
    return len(rows)


def leases_expire(*, study: Study, now: datetime | None = None) -> int:
    """Abandoned leases return to the pool once their time is up."""
    now = now or timezone.now()
    due = Lease.objects.filter(study=study, state=Lease.State.OPEN, expires_at__lte=now)
    if not due.exists():
        return 0
    with transaction.atomic():
        _study_share(study)
        return _leases_close(study=study, leases=due, state=Lease.State.EXPIRED, now=now, skip_locked=True)


def _current_votes(study: Study):
    return Comparison.objects.filter(study=study, superseded=False, withdrawn=False)


# --- the assignment engine --------------------------------------------------------------------
# No study-wide lock: the pair counters are read and claimed under a row lock on the pair (FOR UPDATE SKIP LOCKED on
# PostgreSQL, so that annotators asking at the same moment spread over the neediest pairs instead of queueing on one);
# an item is free while no live lease holds it; one open lease per annotator is a database constraint.
def _open_lease(*, study: Study, annotator) -> Lease | None:
    lease = (Lease.objects.filter(study=study, annotator=annotator, state=Lease.State.OPEN)
             .select_related("item", "item__artifact_x", "item__artifact_y").order_by("-created_at").first())
    if lease is not None:
        lease.study, lease.annotator = study, annotator
    return lease


def item_next(*, study: Study, annotator, fresh: bool = False) -> Lease | None:
    """The annotator's open lease, or a new one by the study's assignment rules; None when their session is done
    or nothing is left to compare. fresh: `study` was just read by selectors.study_for_annotator (status and pool
    signature current), so it is not read again."""
    if not fresh or not hasattr(study, "pool_signature_now"):
        study = selectors.study_with_pool_signature().get(pk=study.pk)
    if study.status != Study.Status.ACTIVE:
        raise StudyUnavailable(f"this study is {study.status}; no new items are handed out")
    if _signature(study) != study.pool_signature:
        study = study_pool_sync(study=study)
    now = timezone.now()
    mine = _mine(study=study, annotator=annotator, now=now)
    if mine.due:
        leases_expire(study=study, now=now)
        mine = _mine(study=study, annotator=annotator, now=now)
    if mine.open:
        existing = _open_lease(study=study, annotator=annotator)
        if existing is not None:
            return existing
    if mine.done >= study.quota_per_annotator:
        return None
    try:
        with transaction.atomic():
            lease = _lease_new(study=study, annotator=annotator, mine=mine, now=now)
    except IntegrityError:
        # The same annotator asked twice at once (two tabs): one open lease per annotator; both get it.
        existing = _open_lease(study=study, annotator=annotator)
        if existing is None:
            raise
        return existing
    if lease is not None:
        lease.item = Item.objects.select_related("artifact_x", "artifact_y").get(pk=lease.item_id)
        lease.progress_done = mine.done  # the payload's "k of N" without counting again
    return lease


@dataclass
class _Mine:
    """The annotator's leases in the study (not expired or released), counted; and how many of the study's open leases
    are past their time."""

    done: int = 0
    overlap_done: int = 0
    open: int = 0
    due: int = 0
    sides: assignment.SideCounts = field(default_factory=assignment.SideCounts)
    pair_sides: dict = field(default_factory=dict)


def _mine(*, study: Study, annotator, now: datetime) -> _Mine:
    leases, items = Lease._meta.db_table, Item._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT l.state, i.config_x_id, i.config_y_id, l.left_is_x, l.is_overlap, COUNT(*) FROM {leases} l "
            f"JOIN {items} i ON i.id = l.item_id WHERE l.study_id = %s AND l.annotator_id = %s AND l.state NOT IN (%s, %s) "
            f"GROUP BY l.state, i.config_x_id, i.config_y_id, l.left_is_x, l.is_overlap "
            f"UNION ALL SELECT 'due', NULL, NULL, NULL, NULL, COUNT(*) FROM {leases} WHERE study_id = %s AND state = %s AND expires_at <= %s",
            [study.pk, annotator.pk, *GONE_LEASE_STATES, study.pk, Lease.State.OPEN, now])
        rows = cursor.fetchall()
    mine, x_left, y_left, pair_sides = _Mine(), 0, 0, {}
    for state, x, y, left, overlap, n in rows:
        if state == "due":
            mine.due = n
            continue
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
    tried_overlap = assignment.overlap_due(served=mine.done, overlap_served=mine.overlap_done, rate=study.overlap_rate)
    lease = _overlap_lease(study=study, annotator=annotator, mine=mine, now=now) if tried_overlap else None
    if lease is None:
        lease = _fresh_lease(study=study, annotator=annotator, mine=mine, now=now)
    if lease is None and not tried_overlap:
        lease = _overlap_lease(study=study, annotator=annotator, mine=mine, now=now)
    return lease


def _not_seen(annotator):
    """Items the annotator holds or held a (not expired / released) lease on are never served to them again."""
    return ~Exists(Lease.objects.filter(item_id=OuterRef("pk"), annotator=annotator).exclude(state__in=GONE_LEASE_STATES))


def _lease_open(*, study: Study, item_id: int, figure_id: int, x: int, y: int, annotator, mine: _Mine, pair_sides: assignment.SideCounts,
                is_overlap: bool, now: datetime, deltas: _Deltas) -> Lease:
    left = assignment.left_is_x(annotator_pair=mine.pair_sides.get((x, y), assignment.SideCounts()), pair=pair_sides,
                                annotator=mine.sides, seed=study.seed, key=(annotator.pk, item_id))
    lease = Lease(token=_token(), study=study, item_id=item_id, annotator=annotator, left_is_x=left, is_overlap=is_overlap, created_at=now,
                  served_at=now, expires_at=now + timedelta(seconds=study.lease_seconds))
    deltas.lease(item_id=item_id, figure_id=figure_id, x=x, y=y, left_is_x=left, is_overlap=is_overlap, sign=1)
    if connection.vendor != "postgresql":
        lease.save(force_insert=True)
        deltas.apply(study)
        return lease
    # The lease and its counters in one statement.
    columns = ("token", "study_id", "item_id", "annotator_id", "left_is_x", "is_overlap", "reopened", "state", "skip_reason", "created_at",
               "served_at", "expires_at")
    values = [lease.token, study.pk, item_id, annotator.pk, left, is_overlap, False, Lease.State.OPEN, "", now, now, lease.expires_at]
    insert = (f"INSERT INTO {Lease._meta.db_table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})", values)
    (lease.pk,) = deltas.apply(study, before=[insert], select=("SELECT id FROM s0", []))
    lease._state.adding, lease._state.db = False, connection.alias
    return lease


def _free_sql(study: Study, annotator, alias: str) -> tuple[str, list]:
    """SQL condition: item `alias` is in the pool, held by no live lease, never leased to this annotator (and its
    artifacts pass the gate when the study wants that)."""
    sql = (f"{alias}.in_pool AND {alias}.open_count = 0 AND {alias}.submitted_count = 0 AND NOT EXISTS (SELECT 1 FROM "
           f"{Lease._meta.db_table} seen WHERE seen.item_id = {alias}.id AND seen.annotator_id = %s AND seen.state NOT IN (%s, %s))")
    params = [annotator.pk, *GONE_LEASE_STATES]
    if not study.include_gate_failed:
        artifacts = Artifact._meta.db_table
        sql += (f" AND EXISTS (SELECT 1 FROM {artifacts} ax WHERE ax.id = {alias}.artifact_x_id AND ax.gate_passed)"
                f" AND EXISTS (SELECT 1 FROM {artifacts} ay WHERE ay.id = {alias}.artifact_y_id AND ay.gate_passed)")
    return sql, params


PAIR_COLUMNS = "p.config_x_id, p.config_y_id, p.x_left, p.y_left"
PAIR_ORDER = "p.votes + p.open_fresh, p.rank, p.id"  # furthest below target first (assignment.pairs_by_need), then seeded


def _fresh_pick(*, study: Study, annotator) -> tuple | None:
    """(item id, figure id, x, y, x_left, y_left) of the free item to lease, its pair locked: the neediest pair that has
    a free item this annotator has not seen; in it, the figure with the fewest live leases in the study, then the
    seeded order of the pair (assignment.figures_by_use)."""
    postgres = connection.vendor == "postgresql"
    pairs, items, figures = StudyPair._meta.db_table, Item._meta.db_table, StudyFigure._meta.db_table
    free, free_params = _free_sql(study, annotator, "i")
    order = "COALESCE(f.uses, 0), i.rank, i.id"
    pick = (f"SELECT i.id, i.figure_id FROM {items} i LEFT JOIN {figures} f ON f.study_id = i.study_id AND f.figure_id = i.figure_id "
            f"WHERE i.study_id = %s AND i.config_x_id = %s AND i.config_y_id = %s AND {free} ORDER BY {order} LIMIT 1")
    with connection.cursor() as cursor:
        # Nearly always: the neediest pair nobody is claiming in right now has a free item: one statement.
        cursor.execute(
            f"WITH p AS {'MATERIALIZED ' if postgres else ''}(SELECT * FROM {pairs} p WHERE p.study_id = %s ORDER BY {PAIR_ORDER} LIMIT 1"
            f"{' FOR UPDATE SKIP LOCKED' if postgres else ''}) "
            f"SELECT i.id, i.figure_id, {PAIR_COLUMNS} FROM p JOIN {items} i ON i.study_id = p.study_id AND i.config_x_id = p.config_x_id "
            f"AND i.config_y_id = p.config_y_id LEFT JOIN {figures} f ON f.study_id = i.study_id AND f.figure_id = i.figure_id "
            f"WHERE {free} ORDER BY {order} LIMIT 1", [study.pk, *free_params])
        row = cursor.fetchone()
        if row is not None:
            return row
        # Otherwise the neediest pair that has one, skipping pairs being claimed in; failing that, wait for them.
        free_p, free_p_params = _free_sql(study, annotator, "j")
        has_free = (f"EXISTS (SELECT 1 FROM {items} j WHERE j.study_id = p.study_id AND j.config_x_id = p.config_x_id "
                    f"AND j.config_y_id = p.config_y_id AND {free_p})")
        for lock, tries in ((" FOR UPDATE SKIP LOCKED", 1), (" FOR UPDATE", 3)) if postgres else (("", 1),):
            for _ in range(tries):
                cursor.execute(f"SELECT {PAIR_COLUMNS} FROM {pairs} p WHERE p.study_id = %s AND {has_free} ORDER BY {PAIR_ORDER} LIMIT 1{lock}",
                               [study.pk, *free_p_params])
                pair = cursor.fetchone()
                if pair is None:
                    break
                cursor.execute(pick, [study.pk, pair[0], pair[1], *free_params])
                row = cursor.fetchone()
                if row is not None:
                    return (*row, *pair)
    return None


CLAIM_TRIES = 5


def _fresh_lease(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    # The pick reads the items as of its statement's start; a lease committed by another annotator between that start
    # and our lock on the pair would still look free. So the item is claimed with a conditional UPDATE, which PostgreSQL
    # re-checks against the newest row version; when someone was quicker, pick again (now after the lock: fresh).
    for _ in range(CLAIM_TRIES):
        picked = _fresh_pick(study=study, annotator=annotator)
        if picked is None:
            return None
        item_id, figure_id, x, y, x_left, y_left = picked
        if Item.objects.filter(pk=item_id, open_count=0, submitted_count=0).update(open_count=F("open_count") + 1):
            deltas = _Deltas()
            deltas.items[item_id] = Counter(open_count=-1)  # counted by the claim just above
            return _lease_open(study=study, item_id=item_id, figure_id=figure_id, x=x, y=y, annotator=annotator, mine=mine, is_overlap=False,
                               now=now, pair_sides=assignment.SideCounts(x_left=x_left, y_left=y_left), deltas=deltas)
    return None


OVERLAP_WINDOW = 200


def _overlap_lease(*, study: Study, annotator, mine: _Mine, now: datetime) -> Lease | None:
    """An item another annotator has voted and this one has never seen, fewest votes first."""
    rows = list(Item.objects.filter(study=study, votes__gte=1, open_count=0).filter(_not_seen(annotator))
                .order_by("votes", "rank", "pk").values_list("pk", "votes", "figure_id", "config_x_id", "config_y_id")[:OVERLAP_WINDOW])
    if not rows:
        return None
    fewest = rows[0][1]
    pk, _, figure_id, x, y = min((r for r in rows if r[1] == fewest), key=lambda r: assignment.seeded_rank(study.seed, "overlap", annotator.pk, r[0]))
    # The pair's row lock first (the order every writer takes), then claim the item unless someone was quicker.
    pair = StudyPair.objects.select_for_update().filter(study=study, config_x_id=x, config_y_id=y).values_list("x_left", "y_left").first()
    if not Item.objects.filter(pk=pk, open_count=0).update(open_count=F("open_count") + 1, is_overlap=True):
        return None
    deltas = _Deltas()
    deltas.items[pk] = Counter(open_count=-1)  # counted by the claim just above
    return _lease_open(study=study, item_id=pk, figure_id=figure_id, x=x, y=y, annotator=annotator, mine=mine, is_overlap=True, now=now,
                       pair_sides=assignment.SideCounts(*(pair or (0, 0))), deltas=deltas)


# --- votes ------------------------------------------------------------------------------------
def _lease_locked(*, token: str, annotator) -> Lease:
    lease = Lease.objects.select_for_update(of=("self",)).select_related("study", "item").filter(token=token).first()
    if lease is None:
        raise LeaseNotFound("no such item: the link is unknown")
    if lease.annotator_id != annotator.pk:
        raise LeaseForeign("this item was handed to another annotator; you can only vote on your own items")
    lease.annotator = annotator
    return lease


def comparison_submit(*, token: str, annotator, outcome: str, reason: str = "", dwell_ms: int | None = None,
                      decision_ms: int | None = None) -> Comparison:
    """Store a vote on one of the annotator's open leases. Idempotent: a second submit returns the first vote."""
    reason = (reason or "").strip()
    with transaction.atomic():
        lease = _lease_locked(token=token, annotator=annotator)
        # Read after the lock (a statement started before it would not see a racing submit's vote). An open lease has
        # votes only when an undo reopened it.
        head = None
        if lease.state != Lease.State.OPEN or lease.reopened:
            head = Comparison.objects.filter(lease=lease, superseded=False).order_by("-pk").values_list("pk", "withdrawn").first()
        head_id = head[0] if head else None
        if lease.state == Lease.State.SUBMITTED and head is not None and not head[1]:
            return Comparison.objects.select_related("study").get(pk=head_id)
        if lease.state != Lease.State.OPEN:
            raise LeaseClosed(f"this item was {lease.state}; it can no longer take a vote — ask for the next item")
        now = timezone.now()
        if lease.expires_at <= now:
            raise LeaseClosed("this item's time ran out and it went back to the pool; your vote was not stored — ask for the next item")
        study = lease.study
        if study.status == Study.Status.CLOSED:
            raise StudyUnavailable("this study is closed; votes are no longer taken")
        if outcome not in OUTCOMES:
            raise VoteInvalid(f"outcome must be one of {', '.join(OUTCOMES)}")
        if not reason and (outcome in TIE_OUTCOMES or study.require_reason_decisive):
            raise VoteInvalid("a short reason is required for this vote")
        item = lease.item
        if lease.left_is_x:
            a, b, left = item.artifact_x_id, item.artifact_y_id, item.config_x_id
        else:
            a, b, left = item.artifact_y_id, item.artifact_x_id, item.config_y_id
        if dwell_ms is not None:
            # The browser reports the dwell; it cannot have lasted longer than the item has been out.
            served_ms = int((now - (lease.served_at or lease.created_at)).total_seconds() * 1000)
            dwell_ms = max(0, min(dwell_ms, served_ms))
            if decision_ms is not None:
                decision_ms = max(0, min(decision_ms, served_ms))
        counted = dwell_ms is not None and dwell_ms >= study.min_dwell_ms
        vote = Comparison.objects.create(
            comparison_id=uuid.uuid4().hex, study=study, item=item, lease=lease, annotator=annotator, annotator_name=annotator.get_username(),
            artifact_a_id=a, artifact_b_id=b, left_config_id=left, outcome=outcome, reason=reason[:4000],
            dwell_ms=dwell_ms, decision_ms=decision_ms, counted=counted, supersedes_id=head_id, created_at=now,
        )
        lease.state, lease.closed_at = Lease.State.SUBMITTED, now
        before = [(f"UPDATE {Lease._meta.db_table} SET state = %s, closed_at = %s WHERE id = %s", [lease.state, now, lease.pk])]
        if head_id is not None:
            before.append((f"UPDATE {Comparison._meta.db_table} SET superseded = %s WHERE id = %s", [True, head_id]))
        progress = (f"SELECT COUNT(*) FROM {Comparison._meta.db_table} WHERE study_id = %s AND annotator_id = %s AND lease_id IS NOT NULL "
                    f"AND NOT superseded AND NOT withdrawn", [study.pk, annotator.pk])
        # Lease, superseded head, counters and the annotator's progress: one statement on PostgreSQL.
        row = _Deltas().vote(item_id=item.pk, x=item.config_x_id, y=item.config_y_id, is_overlap=lease.is_overlap, counted=counted,
                             sign=1).apply(study, before=before, select=progress)
        if row is not None:
            vote.progress_done = row[0]
        return vote


def lease_skip(*, token: str, annotator, reason: str) -> Lease:
    reason = (reason or "").strip()
    with transaction.atomic():
        lease = _lease_locked(token=token, annotator=annotator)
        if lease.state == Lease.State.SKIPPED:
            return lease
        if lease.state != Lease.State.OPEN:
            raise LeaseClosed(f"this item was {lease.state}; it cannot be skipped")
        if not reason:
            raise VoteInvalid("say briefly why you skip this item")
        _study_share(lease.study)
        lease.state, lease.skip_reason, lease.closed_at = Lease.State.SKIPPED, reason[:2000], timezone.now()
        lease.save(update_fields=["state", "skip_reason", "closed_at"])
        item = lease.item
        _Deltas().lease(item_id=item.pk, figure_id=item.figure_id, x=item.config_x_id, y=item.config_y_id, left_is_x=lease.left_is_x,
                        is_overlap=lease.is_overlap, sign=-1).apply(lease.study)
        return lease


def comparison_undo(*, study: Study, annotator) -> Lease:
    """Withdraw the annotator's last vote (a superseding withdrawal record; both kept) and reopen its item."""
    if study.status == Study.Status.CLOSED:
        raise StudyUnavailable("this study is closed; votes can no longer be changed")
    with transaction.atomic():
        last = (Comparison.objects.select_for_update().filter(study=study, annotator=annotator, lease__isnull=False, superseded=False, withdrawn=False)
                .order_by("-created_at", "-pk").first())
        if last is None:
            raise LeaseClosed("there is no vote to undo")
        lease = Lease.objects.select_for_update(of=("self",)).select_related("item").get(pk=last.lease_id)
        now = timezone.now()
        _leases_close(study=study, leases=Lease.objects.filter(study=study, annotator=annotator).exclude(pk=lease.pk), state=Lease.State.RELEASED, now=now)
        Comparison.objects.create(
            comparison_id=uuid.uuid4().hex, study=study, item_id=last.item_id, lease=lease, annotator=annotator, annotator_name=last.annotator_name,
            artifact_a_id=last.artifact_a_id, artifact_b_id=last.artifact_b_id, left_config_id=last.left_config_id, outcome=last.outcome,
            reason=last.reason, dwell_ms=last.dwell_ms, decision_ms=last.decision_ms, counted=False, withdrawn=True, supersedes=last, created_at=now,
        )
        Comparison.objects.filter(pk=last.pk).update(superseded=True)
        was_submitted = lease.state == Lease.State.SUBMITTED
        lease.state, lease.closed_at, lease.expires_at = Lease.State.OPEN, None, now + timedelta(seconds=study.lease_seconds)
        lease.reopened, lease.served_at = True, now
        lease.save(update_fields=["state", "closed_at", "expires_at", "reopened", "served_at"])
        item = lease.item
        deltas = _Deltas()
        if was_submitted:
            deltas.vote(item_id=item.pk, x=item.config_x_id, y=item.config_y_id, is_overlap=lease.is_overlap, counted=last.counted, sign=-1)
        elif last.counted:  # a vote on a lease that was not "submitted" (not made by these services): only the vote goes
            deltas._item(item.pk)["votes"] -= 1
            deltas._pair(item.config_x_id, item.config_y_id)["votes"] -= 1
        deltas.apply(study)
        lease.study, lease.annotator = study, annotator
        return lease


# --- import in the battle-row contract (DESIGN 5) ----------------------------------------------
BATTLE_COLUMNS = ("comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "left_config", "outcome", "reason",
                  "created_at", "dwell_ms", "render_sha256_a", "render_sha256_b", "audit_sha256_a", "audit_sha256_b")
REQUIRED_COLUMNS = ("comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "outcome")


class RowError(ValueError):
    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


@dataclass
class ComparisonImportReport:
    created: int = 0
    unchanged: int = 0
    studies_created: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    # FILE:LINE notes on rows that were stored: e.g. a vote made on another rendering than the stored one.
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        total = self.created + self.unchanged + len(self.rejected)
        noted = f", {len(self.warnings)} warnings" if self.warnings else ""
        return f"{total} rows: {self.created} imported, {self.unchanged} already stored, {len(self.rejected)} rejected{noted}"


def _battle_rows(path: Path) -> Iterator[tuple[int, dict | None, str]]:
    """(line number, row or None, error) for a CSV (header on line 1), a JSON Lines file, or the JSON document
    `export --format json` writes ({"columns": [...], "rows": [...]}, for a file named *.json)."""
    if path.suffix.lower() == ".csv":
        # utf-8-sig: spreadsheet programs put a byte-order mark before the header
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                yield 1, None, f"header: missing column(s) {', '.join(missing)}"
                return
            for row in reader:
                yield reader.line_num, row, ""
        return
    if path.suffix.lower() == ".json":
        text = path.read_text(encoding="utf-8-sig")
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = None  # JSON Lines under a .json name
        if isinstance(document, dict) and "rows" in document:
            yield from _json_document_rows(document, text)
            return
    with path.open(encoding="utf-8-sig") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as error:
                yield number, None, f"line: not JSON ({error.msg})"
                continue
            if not isinstance(row, dict):
                yield number, None, "line: expected a JSON object"
                continue
            yield number, row, ""


def _json_document_rows(document: dict, text: str) -> Iterator[tuple[int, dict | None, str]]:
    columns, rows = document.get("columns"), document["rows"]
    if not isinstance(rows, list):
        yield 1, None, "rows: expected a list"
        return
    offset = max(text.find('"rows"'), 0)
    for row in rows:
        if isinstance(row, list) and isinstance(columns, list):
            row = dict(zip(columns, row))
        # The line the row starts on, for FILE:LINE messages: its first key, searched forward from the previous row.
        if isinstance(row, dict) and row:
            found = text.find(json.dumps(next(iter(row))), offset)
            offset = found + 1 if found >= 0 else offset
        else:
            offset = text.find("\n", offset) + 1 or offset
        line = text.count("\n", 0, offset) + 1
        if not isinstance(row, dict):
            yield line, None, "row: expected a JSON object (or a list matching columns)"
            continue
        yield line, row, ""


def _study_for_import(name: str, configurations: list[Configuration], report: ComparisonImportReport) -> Study:
    study = Study.objects.filter(name=name).first()
    if study is None:
        study = Study.objects.create(name=name, description="created by import_comparisons")
        report.studies_created.append(name)
    have = set(study.configurations.values_list("pk", flat=True))
    missing = [c for c in configurations if c.pk not in have]
    if missing:
        study.configurations.add(*missing)
    return study


def comparison_import_row(*, row: dict, report: ComparisonImportReport) -> bool:
    """Store one battle row; True if created, False if its comparison_id is stored already. Raises RowError."""
    row = {k: ("" if v is None else str(v).strip()) for k, v in row.items() if k is not None}
    for name in REQUIRED_COLUMNS:
        if not row.get(name):
            raise RowError(name, "missing or empty")
    try:
        validate_slug(row["study"])
    except ValidationError:
        raise RowError("study", f"{row['study']!r} is not a study name (letters, digits, - and _ only)") from None
    if len(row["study"]) > Study._meta.get_field("name").max_length:
        raise RowError("study", "longer than 80 characters")
    if Comparison.objects.filter(comparison_id=row["comparison_id"]).exists():
        return False
    if row["outcome"] not in OUTCOMES:
        raise RowError("outcome", f"{row['outcome']!r} is not one of {', '.join(OUTCOMES)}")
    figure = Figure.objects.filter(task_id=row["task_id"]).first()
    if figure is None:
        raise RowError("task_id", f"unknown figure {row['task_id']!r}")
    configs = {}
    for name in ("config_a", "config_b"):
        configs[name] = Configuration.objects.filter(slug=row[name]).first()
        if configs[name] is None:
            raise RowError(name, f"unknown configuration {row[name]!r}")
    if configs["config_a"] == configs["config_b"]:
        raise RowError("config_b", "a configuration cannot be compared with itself")
    left = row.get("left_config") or row["config_a"]
    if left != row["config_a"]:
        raise RowError("left_config", f"must equal config_a (the configuration shown on the left), got {left!r}")
    artifacts = {a.configuration_id: a for a in Artifact.objects.filter(figure=figure, configuration__in=configs.values())}
    for name, configuration in configs.items():
        if configuration.pk not in artifacts:
            raise RowError(name, f"no artifact of {configuration.slug} for figure {figure.task_id}")
    created_at = timezone.now()
    if row.get("created_at"):
        try:
            parsed = parse_datetime(row["created_at"])
        except ValueError:  # well formed but impossible, e.g. month 13
            parsed = None
        if parsed is None:
            raise RowError("created_at", f"not an ISO 8601 date-time: {row['created_at']!r}")
        created_at = parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, dt_timezone.utc)
    dwell = None
    if row.get("dwell_ms"):
        try:
            dwell = int(float(row["dwell_ms"]))
        except (ValueError, OverflowError):
            raise RowError("dwell_ms", f"not a number: {row['dwell_ms']!r}") from None
        if not 0 <= dwell < MAX_DWELL_MS:
            raise RowError("dwell_ms", f"{dwell} is not a duration in milliseconds (0 to {MAX_DWELL_MS - 1})")
    for side, config_field in (("a", "config_a"), ("b", "config_b")):
        artifact = artifacts[configs[config_field].pk]
        stored = {"render": artifact.render_sha256, "audit": selectors.audit_digest(artifact.audit_summary)}
        for kind in ("render", "audit"):
            given = row.get(f"{kind}_sha256_{side}", "")
            if given and given != stored[kind]:
                report.warnings.append(f"{kind}_sha256_{side}: differs from the stored {kind} of this artifact "
                                       f"(the vote was made on another {kind}; imported and linked anyway)")
    a, b = configs["config_a"], configs["config_b"]
    with transaction.atomic():
        study = _study_for_import(row["study"], [a, b], report)
        x, y = sorted((a, b), key=lambda c: (c.position, c.slug))
        item, _ = Item.objects.get_or_create(study=study, figure=figure, config_x=x, config_y=y,
                                             defaults={"artifact_x": artifacts[x.pk], "artifact_y": artifacts[y.pk]})
        User = get_user_model()
        user = User.objects.filter(username=row["annotator"]).first()
        Comparison.objects.create(
            comparison_id=row["comparison_id"], study=study, item=item, annotator=user, annotator_name=row["annotator"],
            artifact_a=artifacts[a.pk], artifact_b=artifacts[b.pk], left_config=a, outcome=row["outcome"], reason=row.get("reason", ""),
            dwell_ms=dwell, counted=True, imported=True, created_at=created_at,
        )
        Item.objects.filter(pk=item.pk).update(votes=F("votes") + 1)
        StudyPair.objects.filter(study=study, config_x=x, config_y=y).update(votes=F("votes") + 1)
    return True


def comparisons_import(*, path: Path, progress=None) -> ComparisonImportReport:
    report = ComparisonImportReport()
    for number, row, error in _battle_rows(path):
        if error:
            report.rejected.append(f"{path}:{number} {error}")
        else:
            noted = len(report.warnings)
            try:
                if comparison_import_row(row=row, report=report):
                    report.created += 1
                else:
                    report.unchanged += 1
            except RowError as problem:
                report.rejected.append(f"{path}:{number} {problem.field}: {problem.reason}")
                del report.warnings[noted:]
            except (IntegrityError, DataError) as error:  # what the database refused, e.g. a value out of range
                report.rejected.append(f"{path}:{number} row: refused by the database ({str(error).splitlines()[0]})")
                del report.warnings[noted:]
            report.warnings[noted:] = [f"{path}:{number} {w}" for w in report.warnings[noted:]]
        if progress is not None:
            progress(1)
    return report
