"""Votes: submit, skip, undo (annotation/services/votes.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import selectors, services
from annotation.models import Comparison, Lease
from tests.annotation.data import annotator, next_lease, submit_vote

pytestmark = pytest.mark.django_db


from tests.annotation.helpers import make_study, vote


def test_submit_is_idempotent_and_refuses_foreign_and_expired_leases():
    study, *_ = make_study(min_dwell_ms=3000)
    one, two = annotator("ann-one"), annotator("ann-two")
    lease = next_lease(study=study, annotator=one)
    with pytest.raises(services.LeaseForeign, match="another annotator"):
        submit_vote(token=lease.token, annotator=two, outcome="a")
    with pytest.raises(services.VoteInvalid, match="reason is required"):
        submit_vote(token=lease.token, annotator=one, outcome="tie_success")
    with pytest.raises(services.VoteInvalid, match="outcome must be"):
        submit_vote(token=lease.token, annotator=one, outcome="x")
    first = submit_vote(token=lease.token, annotator=one, outcome="a", dwell_ms=1000)
    second = submit_vote(token=lease.token, annotator=one, outcome="b", dwell_ms=9000)
    assert first.pk == second.pk and Comparison.objects.count() == 1
    assert first.counted is False  # below the minimum dwell: stored, not counted
    expiring = next_lease(study=study, annotator=one)
    Lease.objects.filter(pk=expiring.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(services.LeaseClosed, match="time ran out"):
        submit_vote(token=expiring.token, annotator=one, outcome="a", dwell_ms=5000)
    with pytest.raises(services.LeaseNotFound):
        submit_vote(token="nope", annotator=one, outcome="a")
    # the expired lease returns to the pool: the next call expires it and hands out a fresh lease
    fresh = next_lease(study=study, annotator=one)
    assert fresh.pk != expiring.pk and Lease.objects.get(pk=expiring.pk).state == "expired"


def test_undo_supersedes_and_keeps_both_records():
    study, *_ = make_study()
    user = annotator()
    lease, original = vote(study, user, outcome="a")
    pending = next_lease(study=study, annotator=user)
    reopened = services.comparison_undo(study=study, annotator=user)
    assert reopened.pk == lease.pk and reopened.state == "open"
    assert Lease.objects.get(pk=pending.pk).state == "released"
    assert next_lease(study=study, annotator=user).pk == lease.pk
    withdrawal = Comparison.objects.get(supersedes=original)
    assert withdrawal.withdrawn and Comparison.objects.get(pk=original.pk).superseded
    assert selectors.comparisons_frame(study="pilot").empty
    revised = submit_vote(
        token=lease.token, annotator=user, outcome="tie_failure", reason="both miss arrows", dwell_ms=4000
    )
    assert revised.supersedes_id == withdrawal.pk and Comparison.objects.count() == 3
    frame = selectors.comparisons_frame(study="pilot")
    assert list(frame["outcome"]) == ["tie_failure"]
    with pytest.raises(services.LeaseClosed, match="no vote to undo"):
        services.comparison_undo(study=study, annotator=annotator("ann-two"))


def test_skip_releases_the_item_and_paused_studies_hand_out_nothing():
    study, *_ = make_study()
    user = annotator()
    lease = next_lease(study=study, annotator=user)
    with pytest.raises(services.VoteInvalid):
        services.lease_skip(token=lease.token, annotator=user, reason=" ")
    services.lease_skip(token=lease.token, annotator=user, reason="image unreadable")
    assert Lease.objects.get(pk=lease.pk).state == "skipped"
    assert next_lease(study=study, annotator=user).item_id != lease.item_id
    services.study_status_set(study=study, status="paused")
    with pytest.raises(services.StudyUnavailable, match="paused"):
        next_lease(study=study, annotator=annotator("ann-two"))


def test_dwell_is_bounded_by_the_time_the_item_was_out():
    study, *_ = make_study(min_dwell_ms=60_000)
    user = annotator()
    lease = next_lease(study=study, annotator=user)
    # a client claiming a long look right after the item was served: stored, bounded, not counted
    instant = submit_vote(token=lease.token, annotator=user, outcome="a", dwell_ms=10**9, decision_ms=10**9)
    assert not instant.counted and instant.dwell_ms < 60_000 and instant.decision_ms < 60_000
    second = next_lease(study=study, annotator=user)
    Lease.objects.filter(pk=second.pk).update(served_at=timezone.now() - timedelta(seconds=90))
    patient = submit_vote(token=second.token, annotator=user, outcome="b", dwell_ms=61_000)
    assert patient.counted and patient.dwell_ms == 61_000
