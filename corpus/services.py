"""Every write to the corpus app: figure import, role users."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db.models import Q

from core.imports import ImportReport, Progress, RowError, import_batches
from core.png import clean_png, png_is_plain
from core.readers import read_jsonl
from core.storage import save_content_addressed

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
        save_content_addressed(name, ContentFile(data if png_is_plain(data) else clean_png(data)))
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


def _check_against_stored(task_id: str, stored: dict, values: dict, where: str) -> None:
    for name in MANIFEST_FIELDS:
        if name != "image" and stored[name] != values[name]:
            raise RowError(name, f"differs from the {where} of {task_id}; a re-import never changes a stored figure")


# The rows of one batch are written in one statement, then their image files are stored: a file is never written for
# a row the database refuses (import_batches writes a refused batch again row by row). At paper scale (1,000 figures)
# a row cost five statements (two lookups, savepoint, insert, release) when each had its own transaction.
FIGURE_BATCH = 500


@dataclass
class _FigureRow:
    """A validated manifest row: the Figure's field values, and the image file to store under values["image"]."""

    values: dict
    image_path: Path
    sha256: str


class _FigureValidator:
    """Validates manifest rows one by one against the stored corpus and the rows before them in the same file (which
    may not be written yet): one lookup per row, by task id or arXiv base id."""

    def __init__(self, *, images_dir: Path, fields: frozenset[str]):
        self.images_dir, self.fields = images_dir, fields
        self.earlier: dict[str, dict] = {}  # task id -> values of a row accepted earlier in this file
        self.earlier_base_ids: dict[str, str] = {}  # arXiv base id -> its task id, for those rows

    def __call__(self, record: dict, _line: int) -> _FigureRow | None:
        """What to write for the row, or None when it is stored already (identically); raises RowError."""
        row = parse_manifest_record(record, images_dir=self.images_dir, fields=self.fields)
        values, base_id = row.values, row.arxiv_base_id
        task_id = values["task_id"]
        if task_id in self.earlier:
            _check_against_stored(task_id, self.earlier[task_id], values, "row earlier in this file")
            return None
        compared = [name for name in MANIFEST_FIELDS if name != "image"]
        stored = list(
            Figure.objects.filter(Q(task_id=task_id) | Q(arxiv_base_id=base_id)).values("arxiv_base_id", *compared)
        )
        same = next((s for s in stored if s["task_id"] == task_id), None)
        if same is not None:
            _check_against_stored(task_id, same, values, "stored record")
            return None
        clash = stored[0]["task_id"] if stored else self.earlier_base_ids.get(base_id)
        if clash is not None:
            raise RowError("arxiv_id", f"duplicate arXiv base id {base_id} (already stored as {clash})")
        try:
            facts = read_image_facts(row.image_path, max_pixels=settings.REFIG["MAX_IMAGE_PIXELS"])
        except ImageRejected as error:
            raise RowError("image", str(error)) from error
        if facts.sha256 != values["sha256"]:
            raise RowError("sha256", f"mismatch: manifest says {values['sha256']}, file has {facts.sha256}")
        self.earlier[task_id], self.earlier_base_ids[base_id] = values, task_id
        figure = {k: v for k, v in values.items() if k != "image"} | {
            "arxiv_base_id": base_id,
            "manifest_image": values["image"],
            "image": _stored_image_name(facts.sha256, facts.format),
            "image_format": facts.format,
            "image_mode": facts.mode,
            "width": facts.width,
            "height": facts.height,
            "megapixels": facts.megapixels,
            "orientation": facts.orientation,
            "file_size": facts.file_size,
        }
        return _FigureRow(values=figure, image_path=row.image_path, sha256=facts.sha256)


def _figures_write(rows: list[_FigureRow]) -> None:
    """Insert the figures, then store each image and its metadata-free PNG (content-addressed: stored once)."""
    Figure.objects.bulk_create([Figure(**row.values) for row in rows])
    for row in rows:
        name = row.values["image"]
        if not default_storage.exists(name):
            with open(row.image_path, "rb") as handle:
                save_content_addressed(name, File(handle))
        _clean_image_store(row.sha256, row.image_path.read_bytes)


def corpus_import(
    *, manifest: Path, images_dir: Path, extra_fields: Iterable[str] = (), progress: Progress | None = None
) -> ImportReport:
    """Stream a JSON Lines manifest; bad rows are reported as FILE:LINE field: reason and skipped."""
    fields = frozenset(DEFAULT_FIELDS) | frozenset(extra_fields)
    return import_batches(
        rows=read_jsonl(manifest),
        validate=_FigureValidator(images_dir=images_dir, fields=fields),
        write=_figures_write,
        report=ImportReport(source=str(manifest)),
        progress=progress,
        batch_size=FIGURE_BATCH,
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
    save_content_addressed(name, ContentFile(buffer.getvalue()))
    return name
