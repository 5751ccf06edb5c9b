"""A render worker killed mid-batch (SIGKILL of its process group) loses nothing: after a restart the batch's hold
lapses, agents.render_sweep (run by the worker's embedded beat) sends the artifacts again, and every artifact is
rendered exactly once — counted by a wrapper around the real LibreOffice that logs every deck it is asked to convert.

Real services: Redis (CELERY_BROKER_URL), a real Celery worker process, real LibreOffice renders."""

import os
import shutil
import signal
import threading
import time

import pytest
from django.utils import timezone

from agents import services
from agents.models import Artifact
from agents.tasks import audit_and_render
from tests.agents.decks import one_slide_deck
from tests.celery_worker import BROKER_URL, celery_worker, send_over_broker
from tests.factories import figure_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.libreoffice]

CLAIM_SECONDS, SWEEP_SECONDS = 4, 2
RECOVERY_BOUND_SECONDS = 150  # hold lapse + a sweep + worker start-up + 14 real renders on a shared 2-core machine
CONFIGURATION = """[[configurations]]
slug = "m1"
model = "m1"
harness = "codex"
workflow = "direct"
reasoning_effort = "high"
label = "M1"
"""


def _drain(worker, sink: list[bytes]) -> threading.Thread:
    if os.environ.get("REFIG_FAULT_LOG"):
        sink = _Tee(sink, open(os.environ["REFIG_FAULT_LOG"], "ab"))
    """Read the worker's output as it comes, so a full pipe never blocks it (and the log is there on failure)."""
    thread = threading.Thread(target=lambda: sink.extend(iter(worker.stdout.readline, b"")), daemon=True)
    thread.start()
    return thread


class _Tee(list):
    def __init__(self, sink, handle):
        self.sink, self.handle = sink, handle

    def extend(self, lines):
        for line in lines:
            self.sink.append(line)
            self.handle.write(line)
            self.handle.flush()


def _conversions(log) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _send(ids: list[int]) -> None:
    send_over_broker(audit_and_render, ids, broker_url=BROKER_URL)


def test_a_render_worker_killed_mid_batch_has_every_artifact_rendered_exactly_once(tmp_path, settings):
    soffice = shutil.which(settings.REFIG["SOFFICE_BINARY"]) or shutil.which("soffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    root = tmp_path / "runs"
    for index in range(14):
        figure_create(f"t{index}", index=index)
        # distinct decks (distinct sha256), so no artifact borrows another's rendering
        one_slide_deck(root / "m1" / f"t{index}" / "output.pptx", title=f"Deck {index}", boxes=2 + index % 3)
    (tmp_path / "configurations.toml").write_text(CONFIGURATION)
    services.artifacts_import(run_root=root, configurations_file=tmp_path / "configurations.toml")
    ids = list(Artifact.objects.order_by("pk").values_list("pk", flat=True))
    first, second = ids[:10], ids[10:]

    log = tmp_path / "soffice.log"
    wrapper = tmp_path / "soffice-counting"
    wrapper.write_text(
        f'#!/bin/sh\nfor a in "$@"; do case "$a" in *.pptx) echo "$a" >> {log} ;; esac; done\nexec {soffice} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {
        "REFIG_SOFFICE": str(wrapper),
        "REFIG_RENDER_CLAIM_SECONDS": str(CLAIM_SECONDS),
        "REFIG_RENDER_SWEEP_SECONDS": str(SWEEP_SECONDS),
    }
    beat = ("--beat", "--schedule", str(tmp_path / "beat-schedule"))
    output: list[bytes] = []

    with celery_worker(queues="render", media_root=settings.MEDIA_ROOT, extra_env=env, args=beat) as worker:
        _drain(worker, output)
        _send(first)
        _send(second)
        deadline = time.monotonic() + 40
        while _conversions(log) == 0:  # LibreOffice has the first batch: the worker is mid-batch
            assert time.monotonic() < deadline and worker.poll() is None, b"".join(output).decode()[:5000]
            time.sleep(0.1)
        assert Artifact.objects.filter(pk__in=first, render_claimed_until__isnull=False).count() == len(first)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(10)
        killed_at = time.monotonic()
    rendered_before_kill = Artifact.objects.filter(pk__in=ids, rendered_at__isnull=False).count()
    assert rendered_before_kill == 0, "the kill came too late to be mid-batch"
    conversions_before_restart = _conversions(log)

    # The killed batch's message stays unacknowledged in the broker (for its 4 h visibility timeout); the restarted
    # worker takes the second batch from the queue, and the sweep sends the first again once its hold lapses.
    with celery_worker(
        queues="render", media_root=settings.MEDIA_ROOT, extra_env=env, args=beat, purge=False
    ) as worker:
        _drain(worker, output)
        deadline = killed_at + RECOVERY_BOUND_SECONDS
        while Artifact.objects.filter(pk__in=ids, render_ok__isnull=True).exists():
            assert time.monotonic() < deadline, "not recovered in time:\n" + b"".join(output).decode()[-4000:]
            time.sleep(0.25)
        recovered_s = time.monotonic() - killed_at
        stamps = dict(Artifact.objects.filter(pk__in=ids).values_list("pk", "rendered_at"))
        # Two more sweeps and the old message's eventual redelivery (sent again here) must change nothing.
        _send(first)
        time.sleep(3 * SWEEP_SECONDS + 2)
        assert dict(Artifact.objects.filter(pk__in=ids).values_list("pk", "rendered_at")) == stamps
    conversions_after_restart = _conversions(log) - conversions_before_restart
    print(
        f"\nkilled render worker: {len(first)} artifacts in flight, all {len(ids)} rendered {recovered_s:.1f} s after"
        f" the kill (hold {CLAIM_SECONDS} s, sweep every {SWEEP_SECONDS} s); LibreOffice conversions after the restart:"
        f" {conversions_after_restart}"
    )
    assert conversions_after_restart == len(ids)  # each deck converted once: none twice, none skipped
    done = Artifact.objects.filter(pk__in=ids)
    assert all(a.render_ok and a.gate_passed and a.render_sha256 for a in done)
    assert not done.filter(render_claimed_until__isnull=False).exists()  # every hold released
    assert all(stamps[pk] <= timezone.now() for pk in ids)
