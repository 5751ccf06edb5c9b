"""Every write of the annotation app: studies, leases (the assignment engine), votes, imports."""
from __future__ import annotations

import csv
import itertools
import json
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from pathlib import Path
from typing import Iterable, Iterator

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.models import Artifact, Configuration
from corpus.models import Figure
from corpus.protocol import OUTCOMES, TIE_OUTCOMES

from . import assignment
from .models import Comparison, Item, Lease, Study

TOKEN_BYTES = 24
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


@transaction.atomic
def study_create(*, name: str, configurations: Iterable[str], figures: Iterable[str] | None = None,
                 annotators: Iterable | None = None, **settings) -> Study:
    """Create a study from configuration slugs (and optionally figure task ids; none = the whole corpus)."""
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
    study = Study.objects.create(name=name, **settings)
    study.configurations.set(found)
    if figures is not None:
        task_ids = list(figures)
        chosen = list(Figure.objects.filter(task_id__in=task_ids))
        missing = sorted(set(task_ids) - {f.task_id for f in chosen})
        if missing:
            raise ValueError(f"unknown figures: {', '.join(missing[:10])}")
        study.figures.set(chosen)
    if annotators is not None:
        study.annotators.set(list(annotators))
    return study


def study_status_set(*, study: Study, status: str) -> Study:
    if status not in Study.Status.values:
        raise ValueError(f"status must be one of {', '.join(Study.Status.values)}")
    study.status = status
    study.save(update_fields=["status"])
    if status == Study.Status.CLOSED:
        Lease.objects.filter(study=study, state=Lease.State.OPEN).update(state=Lease.State.RELEASED, closed_at=timezone.now())
    return study


def study_annotators_set(*, study: Study, users: Iterable) -> Study:
    study.annotators.set(list(users))
    return study


# --- the assignment engine --------------------------------------------------------------------
def _token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def study_pairs(study: Study) -> list[tuple[int, int]]:
    ids = list(study.configurations.order_by("position", "slug").values_list("pk", flat=True))
    return list(itertools.combinations(ids, 2))


def leases_expire(*, study: Study, now: datetime | None = None) -> int:
    """Abandoned leases return to the pool once their time is up."""
    now = now or timezone.now()
    return Lease.objects.filter(study=study, state=Lease.State.OPEN, expires_at__lte=now).update(state=Lease.State.EXPIRED, closed_at=now)


def _current_votes(study: Study):
    return Comparison.objects.filter(study=study, superseded=False, withdrawn=False)


def _lease_create(*, study: Study, item: Item, annotator, left_is_x: bool, is_overlap: bool, now: datetime) -> Lease:
    return Lease.objects.create(token=_token(), study=study, item=item, annotator=annotator, left_is_x=left_is_x, is_overlap=is_overlap,
                                expires_at=now + timedelta(seconds=study.lease_seconds))


def item_next(*, study: Study, annotator) -> Lease | None:
    """The annotator's open lease, or a new one by the study's assignment rules; None when their session is done
    or nothing is left to compare."""
    with transaction.atomic():
        # One assignment at a time per study: on PostgreSQL a row lock, on SQLite the IMMEDIATE transaction.
        study = Study.objects.select_for_update().get(pk=study.pk)
        if study.status != Study.Status.ACTIVE:
            raise StudyUnavailable(f"this study is {study.status}; no new items are handed out")
        now = timezone.now()
        leases_expire(study=study, now=now)
        existing = Lease.objects.filter(study=study, annotator=annotator, state=Lease.State.OPEN).select_related("item").order_by("-created_at").first()
        if existing is not None:
            return existing
        mine = list(Lease.objects.filter(study=study, annotator=annotator).exclude(state__in=[Lease.State.EXPIRED, Lease.State.RELEASED])
                    .values_list("item_id", "item__figure_id", "item__config_x_id", "item__config_y_id", "left_is_x", "is_overlap", "state"))
        done = sum(1 for row in mine if row[6] == Lease.State.SUBMITTED)
        if done >= study.quota_per_annotator:
            return None
        seen = {(f, x, y) for _, f, x, y, *_ in mine}
        served = [row for row in mine if row[6] == Lease.State.SUBMITTED]
        if assignment.overlap_due(served=len(served), overlap_served=sum(1 for r in served if r[5]), rate=study.overlap_rate):
            lease = _overlap_lease(study=study, annotator=annotator, mine=mine, now=now)
            if lease is not None:
                return lease
        lease = _fresh_lease(study=study, annotator=annotator, mine=mine, seen=seen, now=now)
        if lease is None:
            lease = _overlap_lease(study=study, annotator=annotator, mine=mine, now=now)
        return lease


def _side(*, study: Study, annotator, mine, x: int, y: int, key) -> bool:
    def counts(rows) -> assignment.SideCounts:
        rows = list(rows)
        return assignment.SideCounts(x_left=sum(1 for r in rows if r), y_left=sum(1 for r in rows if not r))

    pair_rows = dict(
        ((row["left_is_x"]), row["n"]) for row in Lease.objects.filter(study=study, state__in=LIVE_LEASE_STATES, item__config_x_id=x, item__config_y_id=y)
        .values("left_is_x").annotate(n=Count("id"))
    )
    return assignment.left_is_x(
        annotator_pair=counts(r[4] for r in mine if (r[2], r[3]) == (x, y)),
        pair=assignment.SideCounts(x_left=pair_rows.get(True, 0), y_left=pair_rows.get(False, 0)),
        annotator=counts(r[4] for r in mine),
        seed=study.seed,
        key=key,
    )


def _eligible_artifacts(study: Study):
    artifacts = Artifact.objects.all()
    if not study.include_gate_failed:
        artifacts = artifacts.filter(gate_passed=True)
    if study.figures.exists():
        artifacts = artifacts.filter(figure__in=study.figures.all())
    return artifacts


def _fresh_lease(*, study: Study, annotator, mine, seen, now) -> Lease | None:
    pairs = study_pairs(study)
    counts: dict[tuple[int, int], int] = {}
    votes = _current_votes(study).filter(counted=True).values_list("item__config_x_id", "item__config_y_id").annotate(n=Count("id"))
    for x, y, n in votes:
        counts[(x, y)] = counts.get((x, y), 0) + n
    in_flight = Lease.objects.filter(study=study, state=Lease.State.OPEN, is_overlap=False).values_list("item__config_x_id", "item__config_y_id").annotate(n=Count("id"))
    for x, y, n in in_flight:
        counts[(x, y)] = counts.get((x, y), 0) + n
    uses = dict(Lease.objects.filter(study=study, state__in=LIVE_LEASE_STATES).values_list("item__figure_id").annotate(n=Count("id")))
    eligible = _eligible_artifacts(study)
    for x, y in assignment.pairs_by_need(pairs, counts, target=study.target_per_pair, seed=study.seed):
        by_config: dict[int, dict[int, int]] = {x: {}, y: {}}
        for configuration_id, figure_id, pk in eligible.filter(configuration_id__in=(x, y)).values_list("configuration_id", "figure_id", "pk"):
            by_config[configuration_id][figure_id] = pk
        taken = set(Item.objects.filter(study=study, config_x_id=x, config_y_id=y, leases__state__in=LIVE_LEASE_STATES).values_list("figure_id", flat=True))
        candidates = [f for f in by_config[x].keys() & by_config[y].keys() if f not in taken and (f, x, y) not in seen]
        if not candidates:
            continue
        figure_id = assignment.figures_by_use(candidates, uses, seed=study.seed, pair=(x, y))[0]
        item, _ = Item.objects.get_or_create(
            study=study, figure_id=figure_id, config_x_id=x, config_y_id=y,
            defaults={"artifact_x_id": by_config[x][figure_id], "artifact_y_id": by_config[y][figure_id]},
        )
        left = _side(study=study, annotator=annotator, mine=mine, x=x, y=y, key=(annotator.pk, item.pk))
        return _lease_create(study=study, item=item, annotator=annotator, left_is_x=left, is_overlap=False, now=now)
    return None


def _overlap_lease(*, study: Study, annotator, mine, now) -> Lease | None:
    """An item another annotator has voted and this one has never seen, fewest votes first."""
    my_items = {r[0] for r in mine}
    current = Q(comparisons__superseded=False, comparisons__withdrawn=False, comparisons__counted=True)
    candidates = (
        Item.objects.filter(study=study)
        .exclude(pk__in=my_items)
        .exclude(leases__state=Lease.State.OPEN)
        .annotate(votes=Count("comparisons", filter=current, distinct=True))
        .filter(votes__gte=1)
        .order_by("votes")
        .values_list("pk", "votes", "config_x_id", "config_y_id")[:500]
    )
    rows = list(candidates)
    if not rows:
        return None
    fewest = rows[0][1]
    pk, _, x, y = min((r for r in rows if r[1] == fewest), key=lambda r: assignment.seeded_rank(study.seed, "overlap", annotator.pk, r[0]))
    item = Item.objects.get(pk=pk)
    if not item.is_overlap:
        item.is_overlap = True
        item.save(update_fields=["is_overlap"])
    left = _side(study=study, annotator=annotator, mine=mine, x=x, y=y, key=(annotator.pk, item.pk))
    return _lease_create(study=study, item=item, annotator=annotator, left_is_x=left, is_overlap=True, now=now)


# --- votes ------------------------------------------------------------------------------------
def _lease_locked(*, token: str, annotator) -> Lease:
    lease = Lease.objects.select_for_update().filter(token=token).first()
    if lease is None:
        raise LeaseNotFound("no such item: the link is unknown")
    if lease.annotator_id != annotator.pk:
        raise LeaseForeign("this item was handed to another annotator; you can only vote on your own items")
    return lease


def _chain_head(lease: Lease) -> Comparison | None:
    return Comparison.objects.filter(lease=lease, superseded=False).order_by("-pk").first()


def comparison_submit(*, token: str, annotator, outcome: str, reason: str = "", dwell_ms: int | None = None,
                      decision_ms: int | None = None) -> Comparison:
    """Store a vote on one of the annotator's open leases. Idempotent: a second submit returns the first vote."""
    reason = (reason or "").strip()
    with transaction.atomic():
        lease = _lease_locked(token=token, annotator=annotator)
        head = _chain_head(lease)
        if lease.state == Lease.State.SUBMITTED and head is not None and not head.withdrawn:
            return head
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
        a, b = (item.artifact_x, item.artifact_y) if lease.left_is_x else (item.artifact_y, item.artifact_x)
        vote = Comparison.objects.create(
            comparison_id=uuid.uuid4().hex, study=study, item=item, lease=lease, annotator=annotator, annotator_name=annotator.get_username(),
            artifact_a=a, artifact_b=b, left_config_id=a.configuration_id, outcome=outcome, reason=reason[:4000],
            dwell_ms=dwell_ms, decision_ms=decision_ms, counted=dwell_ms is not None and dwell_ms >= study.min_dwell_ms,
            supersedes=head, created_at=now,
        )
        if head is not None:
            Comparison.objects.filter(pk=head.pk).update(superseded=True)
        lease.state, lease.closed_at = Lease.State.SUBMITTED, now
        lease.save(update_fields=["state", "closed_at"])
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
        lease.state, lease.skip_reason, lease.closed_at = Lease.State.SKIPPED, reason[:2000], timezone.now()
        lease.save(update_fields=["state", "skip_reason", "closed_at"])
        return lease


def comparison_undo(*, study: Study, annotator) -> Lease:
    """Withdraw the annotator's last vote (a superseding withdrawal record; both kept) and reopen its item."""
    with transaction.atomic():
        last = (Comparison.objects.select_for_update().filter(study=study, annotator=annotator, lease__isnull=False, superseded=False, withdrawn=False)
                .order_by("-created_at", "-pk").first())
        if last is None:
            raise LeaseClosed("there is no vote to undo")
        lease = Lease.objects.select_for_update().get(pk=last.lease_id)
        now = timezone.now()
        Lease.objects.filter(study=study, annotator=annotator, state=Lease.State.OPEN).exclude(pk=lease.pk).update(state=Lease.State.RELEASED, closed_at=now)
        Comparison.objects.create(
            comparison_id=uuid.uuid4().hex, study=study, item=last.item, lease=lease, annotator=annotator, annotator_name=last.annotator_name,
            artifact_a=last.artifact_a, artifact_b=last.artifact_b, left_config=last.left_config, outcome=last.outcome, reason=last.reason,
            dwell_ms=last.dwell_ms, decision_ms=last.decision_ms, counted=False, withdrawn=True, supersedes=last, created_at=now,
        )
        Comparison.objects.filter(pk=last.pk).update(superseded=True)
        lease.state, lease.closed_at, lease.expires_at = Lease.State.OPEN, None, now + timedelta(seconds=study.lease_seconds)
        lease.save(update_fields=["state", "closed_at", "expires_at"])
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

    def summary(self) -> str:
        total = self.created + self.unchanged + len(self.rejected)
        return f"{total} rows: {self.created} imported, {self.unchanged} already stored, {len(self.rejected)} rejected"


def _battle_rows(path: Path) -> Iterator[tuple[int, dict | None, str]]:
    """(line number, row or None, error) for a CSV (header on line 1) or a JSON Lines file."""
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                yield reader.line_num, row, ""
        return
    with path.open(encoding="utf-8") as handle:
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
    row = {k: ("" if v is None else str(v).strip()) for k, v in row.items()}
    for name in REQUIRED_COLUMNS:
        if not row.get(name):
            raise RowError(name, "missing or empty")
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
        parsed = parse_datetime(row["created_at"])
        if parsed is None:
            raise RowError("created_at", f"not an ISO 8601 date-time: {row['created_at']!r}")
        created_at = parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, dt_timezone.utc)
    dwell = None
    if row.get("dwell_ms"):
        try:
            dwell = int(float(row["dwell_ms"]))
        except ValueError:
            raise RowError("dwell_ms", f"not a number: {row['dwell_ms']!r}") from None
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
    return True


def comparisons_import(*, path: Path, progress=None) -> ComparisonImportReport:
    report = ComparisonImportReport()
    for number, row, error in _battle_rows(path):
        if error:
            report.rejected.append(f"{path}:{number} {error}")
        else:
            try:
                if comparison_import_row(row=row, report=report):
                    report.created += 1
                else:
                    report.unchanged += 1
            except RowError as problem:
                report.rejected.append(f"{path}:{number} {problem.field}: {problem.reason}")
        if progress is not None:
            progress(1)
    return report
