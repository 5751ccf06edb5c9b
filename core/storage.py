"""Files stored under content-addressed names (the name says what the bytes are), safe when two writers race."""

from __future__ import annotations

from django.core.files.base import File
from django.core.files.storage import default_storage


def save_content_addressed(name: str, content: File) -> None:
    """Store `content` under `name`. Two requests that find the name free at once both write: the storage gives the
    second copy another name, which is removed, since the bytes under `name` are the same (content-addressed)."""
    saved = default_storage.save(name, content)
    if saved != name:
        default_storage.delete(saved)
