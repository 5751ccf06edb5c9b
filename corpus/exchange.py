"""The corpus part of a whole-study export (core.study_exchange): manifest.jsonl (DESIGN contract 1) + images/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.core.files.storage import default_storage

from core.imports import ImportReport

from . import selectors, services
from .manifest import MANIFEST_FIELDS
from .models import DEFAULT_FIELDS

MANIFEST, IMAGES = "manifest.jsonl", "images"


def corpus_export(*, study: str, out_dir: Path) -> list[str]:
    """Every figure (the corpus tables cover the whole corpus), with its image."""
    images = out_dir / IMAGES
    count = 0
    with open(out_dir / MANIFEST, "w", encoding="utf-8") as manifest:
        for figure in selectors.figure_list().order_by("pk"):
            row = {name: getattr(figure, name) for name in MANIFEST_FIELDS if name != "image"}
            # Named by task id: manifest paths of different imports may coincide, task ids never do.
            row["image"] = figure.task_id + Path(figure.image.name).suffix
            target = images / row["image"]
            target.parent.mkdir(parents=True, exist_ok=True)
            with default_storage.open(figure.image.name, "rb") as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            manifest.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return [f"{count} figures -> {MANIFEST} + {IMAGES}/"]


def _manifest_fields(manifest: Path) -> set[str]:
    """The source fields the manifest names. Lines that are not a record are skipped: the importer reports them."""
    fields = set()
    if not manifest.is_file():
        return fields
    for line in manifest.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("field"), str):
            fields.add(record["field"])
    return fields


def corpus_load(*, in_dir: Path) -> list[ImportReport]:
    manifest = in_dir / MANIFEST
    fields = _manifest_fields(manifest)
    return [
        services.corpus_import(
            manifest=manifest, images_dir=in_dir / IMAGES, extra_fields=sorted(fields - set(DEFAULT_FIELDS))
        )
    ]
