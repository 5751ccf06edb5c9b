"""A study's release as the web app serves it: a zip in the media storage (`releases/<study>/<study>-release-<n>.zip`),
so every web server, on whatever host, serves the same release (the object store when there are several hosts)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from django.core.files import File
from django.core.files.storage import default_storage
from django.utils.text import slugify

from .release import release_build, release_zip

FOLDER = "releases"


def _numbers(stem: str) -> list[int]:
    pattern = re.compile(rf"^{re.escape(stem)}-release-(\d+)\.zip$")
    try:
        files = default_storage.listdir(f"{FOLDER}/{stem}")[1]
    except FileNotFoundError:  # the filesystem storage before the first release
        return []
    return [int(m.group(1)) for name in files if (m := pattern.match(name))]


def release_stored_latest(*, study: str) -> str | None:
    """The storage name of the newest stored release of `study`, if any."""
    stem = slugify(study) or "study"
    numbers = _numbers(stem)
    return f"{FOLDER}/{stem}/{stem}-release-{max(numbers)}.zip" if numbers else None


def release_store(*, study: str) -> str:
    """Build the next release of `study` in a temporary folder and store its zip; returns the storage name."""
    stem = slugify(study) or "study"
    number = max(_numbers(stem), default=0) + 1
    with tempfile.TemporaryDirectory(prefix="refig-release-") as tmp:
        release = release_build(study=study, out_dir=Path(tmp), version=str(number))
        archive = release_zip(release.path)
        name = f"{FOLDER}/{stem}/{archive.name}"
        with open(archive, "rb") as handle:
            saved = default_storage.save(name, File(handle, name=archive.name))
    if saved != name:  # another web server stored this release meanwhile: serve theirs, drop the copy
        default_storage.delete(saved)
    return name
