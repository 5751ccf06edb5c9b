"""Render holds, the writes that let a killed render worker's batch come back within minutes rather than after the
broker's visibility timeout: a batch holds its artifacts while it works (renewed by a thread), and a sweep sends the
artifacts whose hold lapsed again. Used by agents.tasks."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from . import render
from .models import Artifact

logger = logging.getLogger("agents")

# LibreOffice's first start with a fresh profile on a loaded machine, plus PDF rasterising and storing, with room.
RENDER_START_UP_SECONDS = 120


def render_batch_seconds(size: int) -> float:
    """The longest a live batch of `size` decks can take: start-up, the batch conversion, then every deck retried alone
    with its own timeout (agents/render.py). The render task's time limit; far below the broker's visibility timeout."""
    return RENDER_START_UP_SECONDS + (size + 1) * settings.REFIG["RENDER_TIMEOUT_SECONDS"]


def _holdable(now) -> Q:
    return Q(render_claimed_until__isnull=True) | Q(render_claimed_until__lt=now)


@contextlib.contextmanager
def artifacts_render_claim(*, artifact_ids: Sequence[int]) -> Iterator[list[int]]:
    """Hold, for one render batch, those of `artifact_ids` no live batch holds, and yield their ids. A thread renews
    the hold every quarter of RENDER_CLAIM_SECONDS while the batch works, and the hold is released when it ends. A killed
    worker stops renewing: its hold lapses and `artifacts_render_sweep` sends the artifacts again. Load the artifacts
    after claiming, so their saves keep the hold."""
    lifetime = timedelta(seconds=settings.REFIG["RENDER_CLAIM_SECONDS"])
    now = timezone.now()
    until = now + lifetime  # also this batch's mark: two batches never pick the same microsecond
    Artifact.objects.filter(_holdable(now), pk__in=artifact_ids).update(render_claimed_until=until)
    held = list(
        Artifact.objects.filter(pk__in=artifact_ids, render_claimed_until=until)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(lifetime.total_seconds() / 4):
                try:
                    Artifact.objects.filter(pk__in=held).update(render_claimed_until=timezone.now() + lifetime)
                except DatabaseError:  # a missed renewal risks one needless re-render, never a lost one
                    logger.warning("could not renew the render hold on %d artifacts", len(held), exc_info=True)
        finally:
            connection.close()  # this thread's own connection

    renewer = threading.Thread(target=renew, name="render-hold", daemon=True)
    renewer.start()
    try:
        yield held
    finally:
        stop.set()
        renewer.join()
        try:
            Artifact.objects.filter(pk__in=held, render_claimed_until__isnull=False).update(render_claimed_until=None)
        except DatabaseError:  # the hold then lapses by itself
            logger.warning("could not release the render hold on %d artifacts", len(held), exc_info=True)


def artifacts_render_sweep(*, enqueue: Callable[[list[int]], object]) -> int:
    """Send again, in render batches, the artifacts whose hold lapsed (their worker died mid-batch). Each batch is
    released and enqueued in one transaction: if the broker refuses it, the hold stays lapsed and the next sweep tries
    again. Returns how many artifacts were sent."""
    now = timezone.now()
    lapsed = list(Artifact.objects.filter(render_claimed_until__lt=now).order_by("pk").values_list("pk", flat=True))
    for batch in render.message_batches(lapsed):
        with transaction.atomic():
            Artifact.objects.filter(pk__in=batch, render_claimed_until__lt=now).update(render_claimed_until=None)
            enqueue(batch)
    if lapsed:
        logger.warning("render sweep: %d artifacts of dead render batches sent again", len(lapsed))
    return len(lapsed)
