"""The render queue: a real Celery worker over the broker audits and renders with LibreOffice."""

import pytest

from agents.models import Artifact
from agents.tasks import audit_and_render
from tests.agents.test_import_and_audit import import_run, run_root  # noqa: F401 - fixture
from tests.celery_worker import celery_worker, send_and_wait

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.libreoffice]


def test_audit_and_render_task_on_the_render_queue(run_root, settings):  # noqa: F811
    import_run(run_root)
    targets = list(Artifact.objects.exclude(pptx="").order_by("pk").values_list("pk", flat=True))
    assert len(targets) == 4

    def finished():
        return all(a.gate_passed is not None for a in Artifact.objects.filter(pk__in=targets))

    with celery_worker(queues="render", media_root=settings.MEDIA_ROOT) as worker:
        if not send_and_wait(audit_and_render, targets, done=finished, timeout=180):
            worker.terminate()
            pytest.fail("render worker did not finish:\n" + worker.stdout.read().decode(errors="replace")[-3000:])
    good = Artifact.objects.get(configuration__slug="m1-direct", figure__task_id="t0")
    assert good.gate_passed and good.render_ok and good.render_sha256
    assert Artifact.objects.get(configuration__slug="m1-direct", figure__task_id="t1").gate_reason == "multiple_slides"
