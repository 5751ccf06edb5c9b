"""Every write to the corpus app: figure import, role users."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from core.imports import ImportReport, Progress, RowError, import_rows
from core.png import clean_png, png_is_plain
from core.readers import read_jsonl

from .image_facts import ImageRejected, read_image_facts
from .manifest import MANIFEST_FIELDS, parse_manifest_record
from .models import DEFAULT_FIELDS, Figure
from .protocol import THUMBNAIL_LONG_EDGE


def _stored_image_name(sha256: str, image_format: str) -> str:
    # Content-addressed: the source file name never travels further than the manifest.
    extension = {"PNG": "png", "JPEG": "jpg"}[image_format]
    return f"corpus/{sha256[:2]}/{sha256}.{extension}"


def clean_image_name(sha256: str) -> str:
    """Storage name of the metadata-free PNG of the image with this SHA-256, the bytes annotators are served."""
    return f"corpus/clean/{sha256[:2]}/{sha256}.png"


def _clean_image_store(sha256: str, read: Callable[[], bytes]) -> str:
    """Re-encode the image once to a PNG carrying pixels only (no EXIF, ICC, text, or the author's metadata) and store
    it beside the original, keyed by the original's SHA-256, so serving it is a plain read. A PNG that carries pixel
    chunks only is stored as it is."""
    name = clean_image_name(sha256)
    if not default_storage.exists(name):
        data = read()
        saved = default_storage.save(name, ContentFile(data if png_is_plain(data) else clean_png(data)))
        assert saved == name, f"storage renamed {name} to {saved}"
    return name


def figure_clean_image(*, figure: Figure) -> str:
    """Storage name of the figure's metadata-free PNG; made on first use for figures imported before it existed."""
    name = clean_image_name(figure.sha256)
    if default_storage.exists(name):
        return name

    def read() -> bytes:
        with figure.image.open("rb") as handle:
            return handle.read()

    return _clean_image_store(figure.sha256, read)


def _check_against_stored(existing: Figure, values: dict) -> None:
    for name in MANIFEST_FIELDS:
        if name == "image":
            continue
        if getattr(existing, name) != values[name]:
            raise RowError(
                name, f"differs from the stored record of {existing.task_id}; a re-import never changes a stored figure"
            )


def figure_import_row(*, record: dict, images_dir: Path, fields: frozenset[str]) -> bool:
    """Import one manifest record. Returns True if created, False if already stored identically; raises RowError."""
    row = parse_manifest_record(record, images_dir=images_dir, fields=fields)
    values = row.values
    existing = Figure.objects.filter(task_id=values["task_id"]).first()
    if existing is not None:
        _check_against_stored(existing, values)
        return False
    clash = Figure.objects.filter(arxiv_base_id=row.arxiv_base_id).values_list("task_id", flat=True).first()
    if clash is not None:
        raise RowError("arxiv_id", f"duplicate arXiv base id {row.arxiv_base_id} (already stored as {clash})")
    try:
        facts = read_image_facts(row.image_path, max_pixels=settings.REFIG["MAX_IMAGE_PIXELS"])
    except ImageRejected as error:
        raise RowError("image", str(error)) from error
    if facts.sha256 != values["sha256"]:
        raise RowError("sha256", f"mismatch: manifest says {values['sha256']}, file has {facts.sha256}")

    name = _stored_image_name(facts.sha256, facts.format)
    wrote_file = False
    if not default_storage.exists(name):
        with open(row.image_path, "rb") as handle:
            saved = default_storage.save(name, File(handle))
        wrote_file = True
        assert saved == name, f"storage renamed {name} to {saved}"
    clean_name = _clean_image_store(facts.sha256, row.image_path.read_bytes)
    try:
        with transaction.atomic():
            Figure.objects.create(
                **{k: v for k, v in values.items() if k != "image"},
                arxiv_base_id=row.arxiv_base_id,
                manifest_image=values["image"],
                image=name,
                image_format=facts.format,
                image_mode=facts.mode,
                width=facts.width,
                height=facts.height,
                megapixels=facts.megapixels,
                orientation=facts.orientation,
                file_size=facts.file_size,
            )
    except Exception:
        if wrote_file and not Figure.objects.filter(image=name).exists():
            default_storage.delete(name)
            default_storage.delete(clean_name)
        raise
    return True


def corpus_import(
    *, manifest: Path, images_dir: Path, extra_fields: Iterable[str] = (), progress: Progress | None = None
) -> ImportReport:
    """Stream a JSON Lines manifest; bad rows are reported as FILE:LINE field: reason and skipped."""
    fields = frozenset(DEFAULT_FIELDS) | frozenset(extra_fields)
    report = ImportReport(source=str(manifest))
    return import_rows(
        rows=read_jsonl(manifest),
        store=lambda record, _line: figure_import_row(record=record, images_dir=images_dir, fields=fields),
        report=report,
        progress=progress,
    )


def figure_thumbnail_ensure(*, figure: Figure) -> str:
    """Storage name of the figure's thumbnail, made on first use (decoding a large PNG is not free)."""
    from PIL import Image

    name = f"corpus/thumbs/{figure.sha256}.png"
    if default_storage.exists(name):
        return name
    with figure.image.open("rb") as handle, Image.open(handle) as image:
        image.draft("RGB", (THUMBNAIL_LONG_EDGE, THUMBNAIL_LONG_EDGE))
        image.thumbnail((THUMBNAIL_LONG_EDGE, THUMBNAIL_LONG_EDGE))
        if image.mode not in ("RGB", "RGBA", "L", "LA"):
            image = image.convert("RGB")
        import io

        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
    default_storage.save(name, ContentFile(buffer.getvalue()))
    return name
