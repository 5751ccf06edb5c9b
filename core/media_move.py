"""Moving an installation's media from a folder (the filesystem storage's MEDIA_ROOT) into the configured media storage
(an object store: REFIG_MEDIA_STORAGE=s3), under the same names, so that every database row keeps pointing at its file.

Each file is hashed (SHA-256), uploaded, read back from the store and hashed again; only a copy whose bytes match is
recorded, one JSON line per file, in a ledger (by default `.moved.jsonl` in the folder, hidden like the partial files
the filesystem storage leaves, so never moved itself). A run that is killed or fails part-way is resumed by running it
again: files in the ledger for the same store are skipped, an upload cut short left no object (an object appears only
once whole), and one uploaded but not yet recorded is found in the store with the right bytes and recorded. The folder
is left as it was: remove it once the installation runs on the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from django.apps import apps
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.db import models

LEDGER_NAME = ".moved.jsonl"
# Names whose file name is the SHA-256 of their own bytes (decks, logs, renderings, imported figures:
# agents.services and corpus.services): a source file that no longer hashes to its name is damaged and is not moved.
# Clean copies and thumbnails (corpus/clean/, corpus/thumbs/) are named after the figure they were made from instead.
CONTENT_ADDRESSED = re.compile(r"^(?:artifacts|renders|corpus)/[0-9a-f]{2}/([0-9a-f]{64})\.\w+$")
CHUNK = 1 << 20


@dataclass
class MoveReport:
    files: int = 0
    moved: int = 0
    already: int = 0  # in the ledger, or found in the store with the same bytes
    skipped: list[str] = field(default_factory=list)  # hidden files: partial writes of an interrupted save
    damaged: list[str] = field(default_factory=list)  # content-addressed source files whose bytes do not match
    failed: dict[str, str] = field(default_factory=dict)  # name: why
    referenced: int = 0  # file names the database holds
    missing: list[str] = field(default_factory=list)  # of those, not in the store after the move

    @property
    def ok(self) -> bool:
        return not (self.damaged or self.failed or self.missing)


def _sha256(handle) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def storage_identity(storage: Storage) -> str:
    """What the ledger records the target as, so that a ledger never vouches for another bucket or folder."""
    parts = [storage.__class__.__name__]  # the configured class (default_storage is a lazy wrapper)
    for attribute in ("endpoint_url", "bucket_name", "location"):
        value = getattr(storage, attribute, None)
        if value:
            parts.append(str(value))
    return " ".join(parts)


def media_files(source: Path) -> Iterator[tuple[str, Path]]:
    """(storage name, path) of every file under `source`, hidden ones included (the caller skips them)."""
    for directory, folders, files in os.walk(source):
        folders.sort()
        for file_name in sorted(files):
            path = Path(directory) / file_name
            yield path.relative_to(source).as_posix(), path


def _ledger_read(ledger: Path, target: str) -> dict[str, str]:
    done: dict[str, str] = {}
    if ledger.exists():
        for line in ledger.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:  # the last line of a run killed while writing it
                continue
            if entry.get("target") == target:
                done[entry["name"]] = entry["sha256"]
    return done


def _stored_sha256(storage: Storage, name: str) -> str | None:
    try:
        with storage.open(name, "rb") as handle:
            return _sha256(handle)
    except FileNotFoundError:
        return None


def _move_one(storage: Storage, name: str, path: Path) -> tuple[str, str]:
    """("moved" | "already" | "damaged", sha256): the store holds the file's bytes under `name` when this returns
    "moved" or "already", read back and hashed."""
    with open(path, "rb") as handle:
        sha = _sha256(handle)
    addressed = CONTENT_ADDRESSED.match(name)
    if addressed and addressed.group(1) != sha:
        return "damaged", sha
    stored = _stored_sha256(storage, name)
    if stored == sha:
        return "already", sha
    if stored is not None:  # other bytes under the name (a damaged copy): the folder's file is the one to keep
        storage.delete(name)
    with open(path, "rb") as handle:
        saved = storage.save(name, File(handle, name=name))
    if saved != name:  # written meanwhile by someone else: keep theirs if it is this file, else report it
        storage.delete(saved)
    if _stored_sha256(storage, name) != sha:
        raise OSError("the stored copy does not read back with the file's SHA-256")
    return "moved", sha


def referenced_names() -> Iterator[str]:
    """Every file name the database holds, in every file field of every model."""
    for model in apps.get_models():
        for field_ in model._meta.get_fields():
            if isinstance(field_, models.FileField):
                values = model._default_manager.exclude(**{field_.name: ""}).exclude(**{f"{field_.name}__isnull": True})
                yield from values.values_list(field_.name, flat=True).distinct().iterator()


def media_move(
    *,
    source: Path,
    storage: Storage | None = None,
    ledger: Path | None = None,
    jobs: int = 4,
    progress: Callable[[int], None] | None = None,
) -> MoveReport:
    """Copy every file under `source` into `storage` (the media storage) under the same name, verified by SHA-256."""
    storage = storage or default_storage
    ledger = (ledger or source / LEDGER_NAME).resolve()
    target = storage_identity(storage)
    done = _ledger_read(ledger, target)
    report = MoveReport()
    lock = threading.Lock()
    step = progress or (lambda _n: None)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    with open(ledger, "a", encoding="utf-8") as out:

        def record(name: str, sha: str) -> None:
            with lock:
                out.write(json.dumps({"target": target, "name": name, "sha256": sha}) + "\n")
                out.flush()
                os.fsync(out.fileno())

        def work(item: tuple[str, Path]) -> None:
            name, path = item
            try:
                outcome, sha = _move_one(storage, name, path)
            except Exception as error:  # one file's failure (the store, the disk) is reported, the rest go on
                with lock:
                    report.failed[name] = f"{type(error).__name__}: {error}"
                step(1)
                return
            if outcome != "damaged":
                record(name, sha)
            with lock:
                if outcome == "damaged":
                    report.damaged.append(name)
                elif outcome == "moved":
                    report.moved += 1
                else:
                    report.already += 1
            step(1)

        pending = []
        for name, path in media_files(source):
            if path == ledger:
                continue
            report.files += 1
            if any(part.startswith(".") for part in name.split("/")):
                report.skipped.append(name)
            elif name in done:
                report.already += 1
            else:
                pending.append((name, path))
        step(report.files - len(pending))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(work, pending))
    report.damaged.sort()
    verified = (set(done) | {name for name, _ in pending}) - set(report.damaged) - set(report.failed)
    for name in referenced_names():
        report.referenced += 1
        if name not in verified and not storage.exists(name):
            report.missing.append(name)
    return report
