"""Stable keyed pseudonyms for annotators in everything that leaves the app (table exports, study exports, releases).

pseudonym = "annotator-" + the first 8 hex digits of HMAC-SHA256(key, username). The key is REFIG_PSEUDONYM_KEY from
the environment, else a secret generated once per installation into a file under the var dir (mode 0600, never in the
repository's tracked files). It is never derived from SECRET_KEY (the embedded mode's default is public), and it never
leaves the app: the same person gets the same pseudonym in every file and every later release of this installation.
The HTML pages, which staff see inside the app, keep the usernames.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

import pandas as pd

PREFIX = "annotator-"
KEY_FILE = "pseudonym.key"  # under the var dir, outside the tracked files
DIGITS = 8
PSEUDONYM = re.compile(rf"^{PREFIX}[0-9a-f]{{{DIGITS}}}$")
# Columns naming a person: annotator, annotator_a / annotator_b, reviewer(_a/_b), rater(_a/_b), screener, decided_by.
PERSON_COLUMN = re.compile(r"^(annotator|reviewer|rater|screener)(_name|_[a-z])?$|^decided_by$")


def pseudonym(username: str, *, key: bytes) -> str:
    """The pseudonym of one username under `key`; one already pseudonymous (a re-imported export) stays as it is."""
    if PSEUDONYM.match(username):
        return username
    digest = hmac.new(key, username.encode("utf-8"), hashlib.sha256).hexdigest()
    return PREFIX + digest[:DIGITS]


def pseudonymise_frame(frame: pd.DataFrame, *, key: bytes | None = None) -> pd.DataFrame:
    """A copy of `frame` with every person column mapped to pseudonyms (empty values stay empty); `frame` itself
    is returned when it has no such column."""
    columns = [c for c in frame.columns if isinstance(c, str) and PERSON_COLUMN.match(c)]
    if not columns:
        return frame
    key = key if key is not None else pseudonym_key()
    mapped = frame.copy()
    for column in columns:
        mapped[column] = [
            pseudonym(value, key=key) if isinstance(value, str) and value else value for value in frame[column]
        ]
    return mapped


def pseudonym_key() -> bytes:
    """The installation's key: REFIG_PSEUDONYM_KEY, else the key file (created once, 0600)."""
    from django.conf import settings

    configured = getattr(settings, "REFIG_PSEUDONYM_KEY", "")
    if configured:
        return configured.encode("utf-8")
    return key_file_read_or_create(Path(settings.VAR_DIR) / KEY_FILE)


def key_file_read_or_create(path: Path) -> bytes:
    """The key stored at `path`, created with 32 random bytes (hex) on first use; concurrent first uses agree."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole into a private temporary file, then linked into place: a reader never sees a half-written key.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(secrets.token_hex(32) + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:  # another process made it first: theirs is the key
            pass
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> bytes:
    key = path.read_text(encoding="ascii").strip()
    if not key:
        raise RuntimeError(f"{path}: empty pseudonym key file; delete it or set REFIG_PSEUDONYM_KEY")
    return key.encode("ascii")
