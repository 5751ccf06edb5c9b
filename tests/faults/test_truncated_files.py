"""A worker killed mid-write leaves a truncated file under its content address; the next run must rewrite it."""

import hashlib

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from agents import services
from agents.models import Artifact
from tests.agents.test_import_and_audit import import_run, run_root  # noqa: F401 - fixture

pytestmark = [pytest.mark.django_db, pytest.mark.libreoffice]


def test_a_truncated_stored_render_is_rewritten_not_reused(run_root):  # noqa: F811
    import_run(run_root)
    artifact = services.artifact_audit(
        artifact=Artifact.objects.get(configuration__slug="m1-direct", figure__task_id="t0")
    )
    services.artifacts_render(artifacts=[artifact])
    artifact.refresh_from_db()
    name = artifact.render_png.name
    whole = default_storage.open(name, "rb").read()
    assert hashlib.sha256(whole).hexdigest() == artifact.render_sha256

    # what a SIGKILL halfway through the write leaves: the right name, half the bytes
    default_storage.delete(name)
    default_storage.save(name, ContentFile(whole[: len(whole) // 2]))
    services.artifacts_render(artifacts=[artifact], force=True)
    artifact.refresh_from_db()
    assert artifact.render_png.name == name
    assert default_storage.open(name, "rb").read() == whole
    # no second copy under another name (storage renames a clash instead of overwriting)
    assert default_storage.listdir(name.rsplit("/", 1)[0])[1] == [name.rsplit("/", 1)[1]]

    # an intact stored file is reused as is (same bytes, not written again)
    before = default_storage.get_modified_time(name)
    services.artifacts_render(artifacts=[artifact], force=True)
    assert default_storage.get_modified_time(name) == before
