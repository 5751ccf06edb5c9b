"""A Celery task executed by a real worker process over the real broker (not eager)."""
import io

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from corpus.models import Figure
from corpus.tasks import figure_thumbnail
from tests.celery_worker import celery_worker, send_and_wait
from tests.corpus.images import make_corpus_images, manifest_row, sha256_of, write_manifest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_thumbnail_task_runs_in_a_real_worker(tmp_path, settings):
    images = tmp_path / "images"
    make_corpus_images(images)
    row = manifest_row("t0001", "2301.00001", "photo.jpg", sha256_of(images / "photo.jpg"))
    call_command("import_corpus", manifest=write_manifest(tmp_path / "m.jsonl", [row]), images=images, no_progress=True, stdout=io.StringIO())
    figure = Figure.objects.get()
    thumb = f"corpus/thumbs/{figure.sha256}.png"
    assert not default_storage.exists(thumb)
    with celery_worker(queues="default", media_root=settings.MEDIA_ROOT) as worker:
        finished = send_and_wait(figure_thumbnail, figure.pk, done=lambda: default_storage.exists(thumb))
        if not finished:
            worker.terminate()
            pytest.fail("worker did not run the task:\n" + worker.stdout.read().decode(errors="replace")[-3000:])
    from PIL import Image

    with default_storage.open(thumb, "rb") as handle, Image.open(handle) as image:
        assert max(image.size) == 320 and image.size == (320, 240)
