"""Votes: submit, skip, undo. A vote is never edited in place: a revision or an undo is a new record superseding it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from corpus.protocol import OUTCOMES, TIE_OUTCOMES

from .. import selectors
from ..errors import LeaseClosed, LeaseForeign, LeaseNotFound, StudyUnavailable, VoteInvalid
from ..models import Comparison, Lease, Purpose, Study
from .counters import CounterChanges
from .pool import leases_close, study_share
from .transient import atomic_retrying

MAX_DWELL_MS = 2**31  # a PositiveIntegerField's range on every database; 24 days is more than any dwell


@dataclass(frozen=True)
class Vote:
    """A stored vote; `repeated`: the same submit arrived again and the first vote is returned."""

    comparison: Comparison
    repeated: bool = False

    @property
    def dwell_reached(self) -> bool:
        """What the annotator is told: whether the vote was slow enough to count. Never whether it is an attention or
        repeat item (those never count, and saying so would unblind them)."""
        dwell = self.comparison.dwell_ms
        return dwell is not None and dwell >= self.comparison.study.min_dwell_ms


def _lease_locked(*, token: str, annotator) -> Lease:
    lease = selectors.leases_shown(Lease.objects.select_for_update(of=("self",)).filter(token=token)).first()
    if lease is None:
        raise LeaseNotFound("no such item: the link is unknown")
    if lease.annotator_id != annotator.pk:
        raise LeaseForeign("this item was handed to another annotator; you can only vote on your own items")
    lease.annotator = annotator
    return lease


def provenance(artifact) -> dict[str, str]:
    """What the annotator saw of an artifact, fixed at the moment of the vote: a later re-render never changes it."""
    return {"render": artifact.render_sha256 or "", "audit": selectors.audit_digest(artifact.audit_summary)}


def _comparison_submit(
    *,
    token: str,
    annotator,
    outcome: str,
    reason: str = "",
    dwell_ms: int | None = None,
    decision_ms: int | None = None,
) -> Vote:
    reason = (reason or "").strip()
    lease = _lease_locked(token=token, annotator=annotator)
    study = lease.study
    # Read after the lock (a statement started before it would not see a racing submit's vote). An open lease has
    # votes only when an undo reopened it.
    head = None
    if lease.state != Lease.State.OPEN or lease.reopened:
        head = (
            Comparison.objects.filter(lease=lease, superseded=False)
            .order_by("-pk")
            .values_list("pk", "withdrawn")
            .first()
        )
    head_id = head[0] if head else None
    if lease.state == Lease.State.SUBMITTED and head is not None and not head[1]:
        return Vote(comparison=Comparison.objects.select_related("study").get(pk=head_id), repeated=True)
    if lease.state != Lease.State.OPEN:
        raise LeaseClosed(f"this item was {lease.state}; it can no longer take a vote — ask for the next item")
    now = timezone.now()
    if lease.expires_at <= now:
        raise LeaseClosed(
            "this item's time ran out and it went back to the pool; your vote was not stored — ask for the next item"
        )
    if study.status == Study.Status.CLOSED:
        raise StudyUnavailable("this study is closed; votes are no longer taken")
    if outcome not in OUTCOMES:
        raise VoteInvalid(f"outcome must be one of {', '.join(OUTCOMES)}")
    if not reason and (outcome in TIE_OUTCOMES or study.require_reason_decisive):
        raise VoteInvalid("a short reason is required for this vote")
    item = lease.item
    if item.artifact_x.gate_passed is None or item.artifact_y.gate_passed is None:
        raise LeaseClosed("this item is waiting for a rendering; it cannot take a vote yet")
    if lease.left_is_x:
        a, b, left = item.artifact_x, item.artifact_y, item.config_x_id
    else:
        a, b, left = item.artifact_y, item.artifact_x, item.config_y_id
    if dwell_ms is not None:
        # The browser reports the dwell; it cannot have lasted longer than the item has been out.
        served_ms = int((now - (lease.served_at or lease.created_at)).total_seconds() * 1000)
        dwell_ms = max(0, min(dwell_ms, served_ms))
        if decision_ms is not None:
            decision_ms = max(0, min(decision_ms, served_ms))
    # Only regular items count towards Elo, coverage and agreement; attention items and swapped repeats are
    # quality checks (annotation.quality).
    counted = dwell_ms is not None and dwell_ms >= study.min_dwell_ms and lease.purpose == Purpose.REGULAR
    seen_a, seen_b = provenance(a), provenance(b)
    vote = Comparison(
        comparison_id=uuid.uuid4().hex,
        study=study,
        item=item,
        lease=lease,
        annotator=annotator,
        annotator_name=annotator.get_username(),
        artifact_a=a,
        artifact_b=b,
        left_config_id=left,
        outcome=outcome,
        reason=reason[:4000],
        dwell_ms=dwell_ms,
        decision_ms=decision_ms,
        counted=counted,
        purpose=lease.purpose,
        supersedes_id=head_id,
        created_at=now,
        render_sha256_a=seen_a["render"],
        render_sha256_b=seen_b["render"],
        audit_sha256_a=seen_a["audit"],
        audit_sha256_b=seen_b["audit"],
    )
    vote.save(force_insert=True)
    lease.state, lease.closed_at = Lease.State.SUBMITTED, now
    lease.save(update_fields=["state", "closed_at"])
    if head_id is not None:
        Comparison.objects.filter(pk=head_id).update(superseded=True)
    CounterChanges(study.pk).vote(
        item_id=item.pk,
        x=item.config_x_id,
        y=item.config_y_id,
        is_overlap=lease.is_overlap,
        counted=counted,
        sign=1,
    ).apply()
    return Vote(comparison=vote)


def _lease_skip(*, token: str, annotator, reason: str) -> Lease:
    reason = (reason or "").strip()
    lease = _lease_locked(token=token, annotator=annotator)
    if lease.state == Lease.State.SKIPPED:
        return lease
    if lease.state != Lease.State.OPEN:
        raise LeaseClosed(f"this item was {lease.state}; it cannot be skipped")
    if not reason:
        raise VoteInvalid("say briefly why you skip this item")
    study_share(lease.study)
    lease.state, lease.skip_reason, lease.closed_at = Lease.State.SKIPPED, reason[:2000], timezone.now()
    lease.save(update_fields=["state", "skip_reason", "closed_at"])
    item = lease.item
    CounterChanges(lease.study_id).lease(
        item_id=item.pk,
        figure_id=item.figure_id,
        x=item.config_x_id,
        y=item.config_y_id,
        left_is_x=lease.left_is_x,
        is_overlap=lease.is_overlap,
        sign=-1,
    ).apply()
    return lease


def _comparison_undo(*, study: Study, annotator) -> Lease:
    if study.status == Study.Status.CLOSED:
        raise StudyUnavailable("this study is closed; votes can no longer be changed")
    last = (
        Comparison.objects.select_for_update()
        .filter(study=study, annotator=annotator, lease__isnull=False, superseded=False, withdrawn=False)
        .order_by("-created_at", "-pk")
        .first()
    )
    if last is None:
        raise LeaseClosed("there is no vote to undo")
    lease = selectors.leases_shown(Lease.objects.select_for_update(of=("self",))).get(pk=last.lease_id)
    now = timezone.now()
    leases_close(
        study=study,
        leases=Lease.objects.filter(study=study, annotator=annotator).exclude(pk=lease.pk),
        state=Lease.State.RELEASED,
        now=now,
    )
    Comparison.objects.create(
        comparison_id=uuid.uuid4().hex,
        study=study,
        item_id=last.item_id,
        lease=lease,
        annotator=annotator,
        annotator_name=last.annotator_name,
        artifact_a_id=last.artifact_a_id,
        artifact_b_id=last.artifact_b_id,
        left_config_id=last.left_config_id,
        outcome=last.outcome,
        reason=last.reason,
        dwell_ms=last.dwell_ms,
        decision_ms=last.decision_ms,
        counted=False,
        purpose=last.purpose,
        withdrawn=True,
        supersedes=last,
        created_at=now,
        render_sha256_a=last.render_sha256_a,
        render_sha256_b=last.render_sha256_b,
        audit_sha256_a=last.audit_sha256_a,
        audit_sha256_b=last.audit_sha256_b,
    )
    Comparison.objects.filter(pk=last.pk).update(superseded=True)
    was_submitted = lease.state == Lease.State.SUBMITTED
    lease.state, lease.closed_at, lease.expires_at = (
        Lease.State.OPEN,
        None,
        now + timedelta(seconds=study.lease_seconds),
    )
    lease.reopened, lease.served_at = True, now
    lease.save(update_fields=["state", "closed_at", "expires_at", "reopened", "served_at"])
    item = lease.item
    changes = CounterChanges(study.pk)
    if was_submitted:
        changes.vote(
            item_id=item.pk,
            x=item.config_x_id,
            y=item.config_y_id,
            is_overlap=lease.is_overlap,
            counted=last.counted,
            sign=-1,
        )
    elif last.counted:  # a vote on a lease that was not "submitted" (not made by these services): only the vote goes
        changes.item(item.pk)["votes"] -= 1
        changes.pair(item.config_x_id, item.config_y_id)["votes"] -= 1
    changes.apply()
    lease.study, lease.annotator = study, annotator
    return lease


# Each runs in its own transaction, run again when the database chose it as a deadlock victim (services.transient).
def comparison_submit(**kwargs) -> Vote:
    """Store a vote on one of the annotator's open leases. Idempotent: a second submit returns the first vote."""
    return atomic_retrying(lambda: _comparison_submit(**kwargs))


def lease_skip(**kwargs) -> Lease:
    return atomic_retrying(lambda: _lease_skip(**kwargs))


def comparison_undo(**kwargs) -> Lease:
    """Withdraw the annotator's last vote (a superseding withdrawal record; both kept) and reopen its item."""
    return atomic_retrying(lambda: _comparison_undo(**kwargs))
