"""The media storage, and files stored under content-addressed names (the name says what the bytes are)."""

from __future__ import annotations

import contextlib
import os
import posixpath
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from django.core.files.base import File
from django.core.files.storage import FileSystemStorage, default_storage


class AtomicFileSystemStorage(FileSystemStorage):
    """FileSystemStorage whose files appear under their names only once every byte is written: the bytes go to a
    hidden partial file in the same directory, which is then hard-linked to the name. A reader that finds a name (a
    rendering served the moment after it is made, say) never reads part of a file. The link, like the plain storage's
    exclusive open, never replaces a file: a name taken meanwhile gets another, as usual."""

    def _save(self, name: str, content: File) -> str:
        directory = posixpath.dirname(name)
        partial = super()._save(posixpath.join(directory, f".{secrets.token_hex(8)}.partial"), content)
        if self._allow_overwrite:  # configured to replace: the rename is as atomic as the link
            os.replace(self.path(partial), self.path(name))
            return name
        try:
            while True:
                try:
                    os.link(self.path(partial), self.path(name))
                    return name
                except FileExistsError:
                    name = self.get_available_name(name)
        finally:
            os.remove(self.path(partial))


def save_content_addressed(name: str, content: File) -> None:
    """Store `content` under `name`. Two requests that find the name free at once both write: the storage gives the
    second copy another name, which is removed, since the bytes under `name` are the same (content-addressed)."""
    saved = default_storage.save(name, content)
    if saved != name:
        default_storage.delete(saved)


@contextlib.contextmanager
def local_copy(name: str, suffix: str = "") -> Iterator[Path]:
    """A filesystem path holding a stored file's bytes, for tools that read files, not streams (LibreOffice,
    python-pptx's audit): the file itself on the filesystem storage, a temporary copy (removed on exit) from an object
    store. `suffix` names the copy's type (".pptx"), which LibreOffice goes by."""
    try:
        path = default_storage.path(name)
    except NotImplementedError:  # a remote storage has no local path
        path = None
    if path is not None:
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="refig-copy-") as tmp:
        local = Path(tmp) / f"file{suffix}"
        with default_storage.open(name, "rb") as src, open(local, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        yield local
