"""Identifiers for systems named in imported battles (issue 30): any name, kept as given for display, and a slug
derived from it reversibly.

Letters (either case), digits and `-` stay as they are; every other character, `_` included, becomes `_` and the
two lowercase hex digits of each of its UTF-8 bytes. So `Qwen/Qwen2.5-72B` is `Qwen_2fQwen2_2e5-72B`, distinct names
never share a slug (no lowercasing, no dropped characters) and `system_name(system_slug(n)) == n`. The slug uses the
slug alphabet only, so it is safe in URLs, file names and the Configuration.slug column.

Pure: no Django.
"""

from __future__ import annotations

import re

_KEPT = re.compile(r"[A-Za-z0-9-]")
_ESCAPE = "_"


def system_slug(name: str) -> str:
    """The slug of a system name (see the module docstring). Raises ValueError for an empty name."""
    if not name:
        raise ValueError("a system name cannot be empty")
    return "".join(c if _KEPT.fullmatch(c) else "".join(f"_{b:02x}" for b in c.encode("utf-8")) for c in name)


def system_name(slug: str) -> str:
    """The name a slug was derived from; ValueError for text no name derives to."""
    out, i = bytearray(), 0
    while i < len(slug):
        c = slug[i]
        if c == _ESCAPE:
            pair = slug[i + 1 : i + 3]
            if not re.fullmatch(r"[0-9a-f]{2}", pair):
                raise ValueError(f"{slug!r}: '_' must be followed by two lowercase hex digits at {i}")
            out.append(int(pair, 16))
            i += 3
        elif _KEPT.fullmatch(c):
            out.extend(c.encode("ascii"))
            i += 1
        else:
            raise ValueError(f"{slug!r}: {c!r} is not a character of a system slug")
    name = out.decode("utf-8")
    if system_slug(name) != slug:  # e.g. "_41" for "A": one name, one slug
        raise ValueError(f"{slug!r} is not the slug of any name (the slug of {name!r} is {system_slug(name)!r})")
    return name
