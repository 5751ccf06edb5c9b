"""Render holds and the sweep, without a worker: who may render what, and what a sweep sends again."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from agents import render, render_holds
from agents.models import Artifact
from agents.tasks import BATCH_SOFT_LIMIT
from tests.factories import configuration_create, figure_create

pytestmark = pytest.mark.django_db(transaction=True)


def artifacts(n: int) -> list[int]:
    configuration = configuration_create("m1", model="m1")
    return [
        Artifact.objects.create(configuration=configuration, figure=figure_create(f"t{i}", index=i)).pk
        for i in range(n)
    ]


def holds(ids):
    return dict(Artifact.objects.filter(pk__in=ids).values_list("pk", "render_claimed_until"))


def test_a_batch_holds_only_what_no_live_batch_holds_and_releases_it_at_the_end():
    ids = artifacts(4)
    lapsed = timezone.now() - timedelta(seconds=5)
    Artifact.objects.filter(pk=ids[3]).update(render_claimed_until=lapsed)  # its batch died
    with render_holds.artifacts_render_claim(artifact_ids=ids[:2]) as first:
        assert first == ids[:2]
        with render_holds.artifacts_render_claim(artifact_ids=ids) as second:
            assert second == ids[2:]  # the two held by the live batch are skipped, the lapsed one is taken over
            assert all(until > timezone.now() for until in holds(ids).values())
        assert holds(ids[2:]) == {ids[2]: None, ids[3]: None}
    assert set(holds(ids).values()) == {None}


def test_a_live_batch_renews_its_hold(settings):
    settings.REFIG = {**settings.REFIG, "RENDER_CLAIM_SECONDS": 0.8}
    ids = artifacts(2)
    with render_holds.artifacts_render_claim(artifact_ids=ids):
        first = holds(ids)
        time.sleep(1.6)  # twice the lifetime: without renewal the hold would have lapsed
        later = holds(ids)
        assert all(later[pk] > first[pk] and later[pk] > timezone.now() for pk in ids)
        with render_holds.artifacts_render_claim(artifact_ids=ids) as other:
            assert other == []


def test_the_sweep_sends_lapsed_holds_again_in_render_batches_and_only_once():
    ids = artifacts(25)
    now = timezone.now()
    Artifact.objects.filter(pk__in=ids[:23]).update(render_claimed_until=now - timedelta(seconds=1))
    Artifact.objects.filter(pk__in=ids[23:]).update(render_claimed_until=now + timedelta(minutes=5))  # live batch
    sent: list[list[int]] = []
    assert render_holds.artifacts_render_sweep(enqueue=sent.append) == 23
    assert sent == [ids[:20], ids[20:23]]
    assert set(holds(ids[:23]).values()) == {None}
    assert render_holds.artifacts_render_sweep(enqueue=sent.append) == 0  # released: not sent twice while queued
    assert len(sent) == 2


def test_a_sweep_the_broker_refuses_leaves_the_hold_lapsed_for_the_next_sweep():
    ids = artifacts(3)
    lapsed = timezone.now() - timedelta(seconds=1)
    Artifact.objects.filter(pk__in=ids).update(render_claimed_until=lapsed)

    def refuse(batch):
        raise ConnectionError("broker down")

    with pytest.raises(ConnectionError):
        render_holds.artifacts_render_sweep(enqueue=refuse)
    assert set(holds(ids).values()) == {lapsed}
    sent = []
    assert render_holds.artifacts_render_sweep(enqueue=sent.append) == 3 and sent == [ids]


def test_the_render_task_time_limit_covers_a_full_batch_and_stays_below_the_visibility_timeout(settings):
    timeout = settings.REFIG["RENDER_TIMEOUT_SECONDS"]
    # A full batch: one batch conversion plus each deck retried alone, each with its own timeout, plus start-up;
    # the hard limit ends it well before the broker would hand its message to another worker.
    assert BATCH_SOFT_LIMIT >= (render.DEFAULT_BATCH_SIZE + 1) * timeout
    assert BATCH_SOFT_LIMIT + 60 < settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] / 2
    assert settings.CELERY_BEAT_SCHEDULE["agents-render-sweep"]["task"] == "agents.render_sweep"
