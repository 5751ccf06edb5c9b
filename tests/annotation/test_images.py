"""Lease images are served as stored: prepared once (renders written plain, corpus figures cleaned at import)."""

import io

import pytest
from django.core.files.storage import default_storage
from PIL import Image, PngImagePlugin

from annotation import selectors, services
from annotation.models import Lease
from core.png import png_is_plain
from corpus.services import clean_image_name
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease

pytestmark = pytest.mark.django_db


@pytest.fixture
def lease():
    build_corpus(figures=2, failed=(("cfg-alpha-direct", 0), ("cfg-alpha-direct", 1)))
    study = services.study_create(name="pilot", configurations=SLUGS[:2], overlap_rate=0)  # one pair, one side failed
    return next_lease(study=study, annotator=annotator())


def test_plain_renders_are_served_byte_for_byte_without_pillow(lease, monkeypatch):
    item = lease.item
    a, b = (item.artifact_x, item.artifact_y) if lease.left_is_x else (item.artifact_y, item.artifact_x)
    stored = {
        side: default_storage.open(art.render_png.name, "rb").read()
        for side, art in (("a", a), ("b", b))
        if art.render_png
    }

    def no_decoding(*args, **kwargs):
        raise AssertionError("an image was decoded while serving")

    monkeypatch.setattr(Image, "open", no_decoding)
    assert len(stored) == 1
    for side, artifact in (("a", a), ("b", b)):
        served = selectors.lease_image(lease=lease, side=side)
        if artifact.render_png:
            assert png_is_plain(stored[side]) and served == stored[side]
        else:  # the gate-failed artifact: the same placeholder bytes, drawn once
            assert served is selectors.lease_image(lease=lease, side=side) and png_is_plain(served)
    # the factory's figures were stored without the import's clean copy: it is made on first use, then read
    monkeypatch.undo()
    source = selectors.lease_image(lease=lease, side="source")
    assert default_storage.exists(clean_image_name(item.figure.sha256)) and png_is_plain(source)
    monkeypatch.setattr(Image, "open", no_decoding)
    assert selectors.lease_image(lease=lease, side="source") == source


def test_bytes_with_metadata_are_cleaned_before_serving(lease):
    info = PngImagePlugin.PngInfo()
    info.add_text("Title", "cfg-bravo-direct")
    buffer = io.BytesIO()
    Image.new("RGB", (30, 20), (4, 5, 6)).save(buffer, format="PNG", pnginfo=info)
    name = default_storage.save("renders/tagged-by-hand.png", io.BytesIO(buffer.getvalue()))
    for artifact in (lease.item.artifact_x, lease.item.artifact_y):
        artifact.render_png = name
        artifact.save()
    fresh = Lease.objects.select_related("item__artifact_x", "item__artifact_y").get(pk=lease.pk)
    served = selectors.lease_image(lease=fresh, side="a")
    assert png_is_plain(served) and b"cfg-bravo-direct" not in served
    assert Image.open(io.BytesIO(served)).tobytes() == Image.new("RGB", (30, 20), (4, 5, 6)).tobytes()
