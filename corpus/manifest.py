"""Parse and check one line of a corpus manifest (DESIGN 1, the ORBIT provenance record). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.readers import RowError, parse_json_object

__all__ = ["MANIFEST_FIELDS", "ManifestRow", "RowError", "parse_manifest_line", "parse_manifest_record"]

MANIFEST_FIELDS: tuple[str, ...] = (
    "task_id",
    "arxiv_id",
    "arxiv_version",
    "title",
    "authors",
    "abs_url",
    "pdf_url",
    "source_url",
    "license",
    "license_url",
    "caption",
    "label",
    "source_path",
    "sha256",
    "selection_score",
    "selection_evidence",
    "field",
    "image",
)
# Present in every row but allowed to be empty: not every figure has a label or a licence URL.
MAY_BE_EMPTY: frozenset[str] = frozenset({"license_url", "caption", "label"})
URL_FIELDS: tuple[str, ...] = ("abs_url", "pdf_url", "source_url", "license_url")

ARXIV_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")
VERSION_SUFFIX = re.compile(r"v(\d+)$")
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ManifestRow:
    values: dict
    arxiv_base_id: str
    image_path: Path


def arxiv_base_id(arxiv_id: str) -> str:
    return VERSION_SUFFIX.sub("", arxiv_id)


def parse_manifest_line(text: str, *, images_dir: Path, fields: frozenset[str]) -> ManifestRow:
    return parse_manifest_record(parse_json_object(text), images_dir=images_dir, fields=fields)


def parse_manifest_record(record: dict, *, images_dir: Path, fields: frozenset[str]) -> ManifestRow:
    for name in record:
        if name not in MANIFEST_FIELDS:
            raise RowError(name, "unknown field")
    for name in MANIFEST_FIELDS:
        if name not in record:
            raise RowError(name, "missing field")

    values = dict(record)
    for name in MANIFEST_FIELDS:
        if name in {"authors", "selection_score", "selection_evidence"}:
            continue
        if not isinstance(values[name], str):
            if name == "arxiv_version" and isinstance(values[name], int):
                values[name] = f"v{values[name]}"
            else:
                raise RowError(name, f"expected a string, got {type(values[name]).__name__}")
        values[name] = values[name].strip()
        if not values[name] and name not in MAY_BE_EMPTY:
            raise RowError(name, "must not be empty")

    authors = values["authors"]
    if not isinstance(authors, list) or not authors or not all(isinstance(a, str) and a.strip() for a in authors):
        raise RowError("authors", "expected a non-empty list of author names")
    score = values["selection_score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise RowError("selection_score", f"expected a number, got {type(score).__name__}")
    values["selection_score"] = float(score)
    if not ARXIV_ID.match(values["arxiv_id"]):
        raise RowError("arxiv_id", f"not an arXiv identifier: {values['arxiv_id']!r}")
    version = values["arxiv_version"]
    if not re.fullmatch(r"v?\d+", version):
        raise RowError("arxiv_version", f"expected a version such as v2, got {version!r}")
    values["arxiv_version"] = version if version.startswith("v") else f"v{version}"
    for name in URL_FIELDS:
        if values[name] and not values[name].startswith(("https://", "http://")):
            raise RowError(name, f"expected an http(s) URL, got {values[name]!r}")
    values["sha256"] = values["sha256"].lower()
    if not SHA256_HEX.match(values["sha256"]):
        raise RowError("sha256", "expected 64 hexadecimal digits")
    if values["field"] not in fields:
        raise RowError("field", f"undeclared field {values['field']!r} (declared: {', '.join(sorted(fields))})")

    root = images_dir.resolve()
    relative = Path(values["image"])
    if relative.is_absolute() or ".." in relative.parts:
        raise RowError("image", f"path escapes the image folder: {values['image']!r}")
    image_path = (root / relative).resolve()
    if not image_path.is_relative_to(root):
        raise RowError("image", f"path escapes the image folder: {values['image']!r}")
    if not image_path.is_file():
        raise RowError("image", f"image file not found: {values['image']!r}")
    return ManifestRow(values=values, arxiv_base_id=arxiv_base_id(values["arxiv_id"]), image_path=image_path)
