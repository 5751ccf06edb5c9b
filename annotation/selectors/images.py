"""The bytes of the images annotators are shown: a pairwise lease's source figure and two slides, a gate-review or
rating lease's figure and slide, a calibration item's three (and, for coordinators, an adjudicated item's three). Stored bytes that carry pixels only are served as they
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
ADJUDICATION_IMAGE_SIDES = ("source", "x", "y")  # an adjudicated item's, in the item's own terms (coordinators only)


# What the annotator reads in place of a slide that has no rendering, by gate reason (never the file's name or detail).
PLACEHOLDER_TEXT = {
    "missing": ("No rendering", "The deck failed the gate: the agent produced no file for this figure."),
    "not_a_zip": ("No rendering", "The deck failed the gate: the file is not a PowerPoint file."),
    "corrupt": ("No rendering", "The deck failed the gate: corrupt file, it cannot be opened."),
    "no_slides": ("No rendering", "The deck failed the gate: it has no slide."),
    "multiple_slides": ("No rendering", "The deck failed the gate: it has more than one slide."),
    "too_large": ("No rendering", "The deck failed the gate: the file is too large to open safely."),
    "audit_timeout": ("No rendering", "The deck failed the gate: reading it took too long."),
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
        return source_png(item.figure)
    a, b = (item.artifact_x, item.artifact_y) if lease.left_is_x else (item.artifact_y, item.artifact_x)
    return slide_png(a if side == "a" else b)


def source_png(figure) -> bytes:
    """A source figure as every screen shows it: its metadata-free copy."""
    return stored_png(corpus_services.figure_clean_image(figure=figure))


def slide_png(artifact) -> bytes:
    """An artifact's slide as every screen shows it: its rendering, or the placeholder saying in plain words why there
    is none (by gate reason only: never the file's name, the gate's detail or anything naming the artifact)."""
    if not artifact.render_png.name:
        return _placeholder_png(*PLACEHOLDER_TEXT.get(artifact.gate_reason, PLACEHOLDER_DEFAULT))
    return stored_png(artifact.render_png.name)


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
    """A gate-review or rating lease's images: the source figure, and the slide as "a"."""
    artifact = lease.artifact
    return source_png(artifact.figure) if side == "source" else slide_png(artifact)


def calibration_image(*, answer, side: str) -> bytes:
    """A calibration item's images, A and B in the sides this annotator was shown."""
    item = answer.item
    if side == "source":
        return source_png(item.figure)
    a, b = (item.artifact_x, item.artifact_y) if answer.left_is_x else (item.artifact_y, item.artifact_x)
    return slide_png(a if side == "a" else b)


def adjudication_image(*, item, side: str) -> bytes:
    """An adjudicated item's images for the coordinator: the source and the item's own sides x and y."""
    if side == "source":
        return source_png(item.figure)
    return slide_png(item.artifact_x if side == "x" else item.artifact_y)
