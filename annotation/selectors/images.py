"""The bytes of the images annotators are shown: a pairwise lease's source figure and two slides, a gate-review or
rating lease's figure and slide, a calibration item's three. Stored bytes that carry pixels only are served as they
are, others are cleaned once (core.png) and cached; a slide without a rendering gets a placeholder drawn with PIL that
says why in plain words. A source figure is served from its metadata-free copy, which corpus.services makes on first
use for figures imported before such copies existed: the one write behind these reads, left here so that the image
views stay one call and every caller of lease_image gets the same bytes."""

from __future__ import annotations

import functools
import hashlib
import io

from django.core.cache import cache
from django.core.files.storage import default_storage
from PIL import Image, ImageDraw

from core.png import clean_png, png_is_plain
from corpus import services as corpus_services

from ..models import Lease

IMAGE_SIDES = ("source", "a", "b")  # a pairwise lease's images, and a calibration item's
ARTIFACT_IMAGE_SIDES = ("source", "a")  # a gate-review or rating lease's images


# What the annotator reads in place of a slide that has no rendering, by gate reason (never the file's name or detail).
PLACEHOLDER_TEXT = {
    "missing": ("No slide", "The agent produced no deck for this figure (the file is missing)."),
    "not_a_zip": ("No slide", "The deck failed: the file is not a PowerPoint file."),
    "corrupt": ("No slide", "The deck failed: the file is corrupt and cannot be opened."),
    "no_slides": ("No slide", "The deck failed: it has no slide."),
    "multiple_slides": ("No slide", "The deck failed: it has more than one slide."),
    "too_large": ("No slide", "The deck failed: the file is too large to open safely."),
    "audit_timeout": ("No slide", "The deck failed: reading it took too long."),
    "render_failed": ("No rendering", "The deck opened but could not be rendered to an image."),
    "render_timeout": ("No rendering", "The deck opened but rendering it took too long."),
}
PLACEHOLDER_DEFAULT = ("No rendering", "This slide has no rendering yet.")
PLACEHOLDER_SIZE = (1600, 900)  # a 16:9 slide, so the placeholder frames like the slides beside it


def _placeholder_font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


@functools.cache
def _placeholder_png(title: str, text: str) -> bytes:
    """Drawn once per text per process: the same bytes for every artifact without a rendering for the same reason."""
    image = Image.new("RGB", PLACEHOLDER_SIZE, (236, 238, 241))
    draw = ImageDraw.Draw(image)
    width, height = PLACEHOLDER_SIZE
    draw.rectangle((12, 12, width - 13, height - 13), outline=(150, 156, 164), width=6)
    big, small = _placeholder_font(110), _placeholder_font(52)
    draw.text((width / 2, height / 2 - 70), title, fill=(40, 44, 52), font=big, anchor="mm")
    words, lines = text.split(), [""]
    for word in words:  # wrap to the width
        trial = f"{lines[-1]} {word}".strip()
        if draw.textlength(trial, font=small) > width - 200 and lines[-1]:
            lines.append(word)
        else:
            lines[-1] = trial
    for i, line in enumerate(lines):
        draw.text((width / 2, height / 2 + 60 + i * 68), line, fill=(60, 64, 72), font=small, anchor="mm")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def lease_image(*, lease: Lease, side: str) -> bytes:
    """The bytes of one of the lease's images, as stored: renders are written with pixel chunks only, and corpus figures
    get a metadata-free copy at import, so serving is a read, not a re-encode. Bytes that are not plain (stored before
    that, or put there by hand) are cleaned once and the result cached."""
    item = lease.item
    if side == "source":
        name = corpus_services.figure_clean_image(figure=item.figure)
    else:
        a, b = (item.artifact_x, item.artifact_y) if lease.left_is_x else (item.artifact_y, item.artifact_x)
        artifact = a if side == "a" else b
        name = artifact.render_png.name
        if not name:
            return _placeholder_png(*PLACEHOLDER_TEXT.get(artifact.gate_reason, PLACEHOLDER_DEFAULT))
    return stored_png(name)


def stored_png(name: str) -> bytes:
    """A stored image as the annotator gets it: served as stored when it already carries pixels only (renderings and
    the clean copies of source figures are written that way), otherwise re-encoded once (clean_png) and cached."""
    with default_storage.open(name, "rb") as handle:
        data = handle.read()
    if png_is_plain(data):
        return data
    key = "annotation:png:" + hashlib.sha256(data).hexdigest()
    clean = cache.get(key)
    if clean is None:
        clean = clean_png(data)
        cache.set(key, clean, 3600)
    return clean


def artifact_lease_image(*, lease, side: str) -> bytes:
    artifact = lease.artifact
    if side == "source":
        return stored_png(artifact.figure.image.name)
    if not artifact.render_png.name:
        return _placeholder_png("No rendering: this deck could not be opened or rendered.")
    return stored_png(artifact.render_png.name)


def calibration_image(*, answer, side: str) -> bytes:
    item = answer.item
    if side == "source":
        return stored_png(item.figure.image.name)
    a, b = (item.artifact_x, item.artifact_y) if answer.left_is_x else (item.artifact_y, item.artifact_x)
    name = (a if side == "a" else b).render_png.name
    if not name:
        return _placeholder_png("No rendering: this deck could not be opened or rendered.")
    return stored_png(name)
