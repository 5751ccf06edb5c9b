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
    """Check every field of the record and report every problem of the row at once ("field: reason; field: reason"),
    so a manifest is fixed in one pass rather than one error per run."""
    problems: dict[str, str] = {}
    for name in record:
        if name not in MANIFEST_FIELDS:
            problems[name] = "unknown field"
    for name in MANIFEST_FIELDS:
        if name not in record:
            problems[name] = "missing field"

    values = dict(record)
    for name in MANIFEST_FIELDS:
        if name in {"authors", "selection_score", "selection_evidence"} or name in problems:
            continue
        if not isinstance(values[name], str):
            if name == "arxiv_version" and isinstance(values[name], int):
                values[name] = f"v{values[name]}"
            else:
                problems[name] = f"expected a string, got {type(values[name]).__name__}"
                continue
        values[name] = values[name].strip()
        if not values[name] and name not in MAY_BE_EMPTY:
            problems[name] = "must not be empty"

    def check(name: str, ok, reason) -> None:
        """Record `reason` (a text, or a callable giving it) for `name` unless the field already failed or `ok()`."""
        if name not in problems and not ok():
            problems[name] = reason() if callable(reason) else reason

    authors = values.get("authors")
    check(
        "authors",
        lambda: isinstance(authors, list) and authors and all(isinstance(a, str) and a.strip() for a in authors),
        "expected a non-empty list of author names",
    )
    score = values.get("selection_score")
    check(
        "selection_score",
        lambda: not isinstance(score, bool) and isinstance(score, int | float),
        lambda: f"expected a number, got {type(score).__name__}",
    )
    check(
        "arxiv_id",
        lambda: ARXIV_ID.match(values["arxiv_id"]),
        lambda: f"not an arXiv identifier: {values['arxiv_id']!r}",
    )
    check(
        "arxiv_version",
        lambda: re.fullmatch(r"v?\d+", values["arxiv_version"]),
        lambda: f"expected a version such as v2, got {values['arxiv_version']!r}",
    )
    for name in URL_FIELDS:
        check(
            name,
            lambda name=name: not values[name] or values[name].startswith(("https://", "http://")),
            lambda name=name: f"expected an http(s) URL, got {values[name]!r}",
        )
    check("sha256", lambda: SHA256_HEX.match(values["sha256"].lower()), "expected 64 hexadecimal digits")
    check(
        "field",
        lambda: values["field"] in fields,
        lambda: f"undeclared field {values['field']!r} (declared: {', '.join(sorted(fields))})",
    )
    image_path = None
    if "image" not in problems:
        root = images_dir.resolve()
        relative = Path(values["image"])
        image_path = (root / relative).resolve()
        if relative.is_absolute() or ".." in relative.parts or not image_path.is_relative_to(root):
            problems["image"] = f"path escapes the image folder: {values['image']!r}"
        elif not image_path.is_file():
            problems["image"] = f"image file not found: {values['image']!r}"
    if problems:
        first, *others = problems.items()
        raise RowError(first[0], "; ".join([first[1], *(f"{name}: {reason}" for name, reason in others)]))

    values["selection_score"] = float(score)
    version = values["arxiv_version"]
    values["arxiv_version"] = version if version.startswith("v") else f"v{version}"
    values["sha256"] = values["sha256"].lower()
    return ManifestRow(values=values, arxiv_base_id=arxiv_base_id(values["arxiv_id"]), image_path=image_path)
