"""A Celery task executed by a real worker process over the real broker (not eager), on the default queue."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import Lease
from annotation.tasks import leases_expire_task
from tests.annotation.data import SLUGS, annotator, build_corpus
from tests.celery_worker import celery_worker, send_and_wait

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_leases_expire_task_runs_in_a_real_worker(settings):
    build_corpus(figures=2)
    study = services.study_create(name="worker", configurations=SLUGS, min_dwell_ms=0)
    user = annotator()
    study.annotators.add(user)
    lease = services.item_next(study=study, annotator=user).lease
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    def expired() -> bool:
        return Lease.objects.get(pk=lease.pk).state == Lease.State.EXPIRED

    with celery_worker(queues="default", media_root=settings.MEDIA_ROOT) as worker:
        if not send_and_wait(leases_expire_task, done=expired):
            worker.terminate()
            pytest.fail("worker did not run the task:\n" + worker.stdout.read().decode(errors="replace")[-3000:])
