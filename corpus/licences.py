"""Which figures a public release may carry: the recorded licence text and URL against a stated allow-list.

Redistributable: CC0, CC BY (any version), CC BY-SA (any version), the Public Domain Mark. Withheld: NC and ND
variants, arXiv's non-exclusive distribution licence, and anything unrecognised (an empty licence too), unless the
release names the licence in `include` (e.g. `--include-licence CC-BY-NC-4.0`; a name without a version covers
every version). Pure: imports only `re`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

ALLOWED = ("CC0", "CC-BY", "CC-BY-SA", "PDM")  # the allow-list, by family (any version)
UNKNOWN = "unknown"
ARXIV_NONEXCLUSIVE = "arXiv-nonexclusive-distrib-1.0"
_MODIFIERS = ("nc", "nd", "sa")  # SPDX order: BY-NC-ND, BY-NC-SA, BY-ND, BY-SA
_SPELLINGS = (  # long forms → the short tokens the rules read
    (r"creative\s*commons", " cc "),
    (r"\battribution\b", " by "),
    (r"non[\s-]*commercial", " nc "),
    (r"no[\s-]*deriv(ative)?s?", " nd "),
    (r"share[\s-]*alike", " sa "),
    (r"public[\s-]*domain", " pd "),
)


class Licence(NamedTuple):
    redistributable: bool
    name: str  # canonical: CC0-1.0, CC-BY-4.0, CC-BY-SA-3.0, CC-BY-NC-ND-4.0, PDM-1.0, arXiv-…, unknown


def licence_classify(text: str = "", url: str = "", *, include: tuple[str, ...] | list[str] = ()) -> Licence:
    """The verdict on one recorded licence. Text and URL are read separately; when both are recognised and disagree,
    the stricter wins (a withheld reading withholds)."""
    readings = [name for name in (_name_of_url(url or ""), _name_of_text(text or "")) if name != UNKNOWN]
    if not readings:
        name = UNKNOWN
    else:
        withheld = [name for name in readings if not _allowed(name)]
        name = withheld[0] if withheld else readings[0]
    return Licence(redistributable=_allowed(name) or licence_included(name, include), name=name)


def licence_included(name: str, include: tuple[str, ...] | list[str]) -> bool:
    """Whether `name` is one the release was told to include: compared canonically (so "CC BY-NC 4.0" names
    CC-BY-NC-4.0); a name without a version includes every version of it; "unknown" includes the unrecognised."""
    for given in include:
        wanted = _name_of_text(given)
        if wanted == UNKNOWN:  # "unknown", or a name the rules do not know: taken literally
            wanted = given.strip()
        if wanted.lower() in (name.lower(), _family(name).lower()):
            return True
    return False


def _allowed(name: str) -> bool:
    return _family(name) in ALLOWED


def _family(name: str) -> str:
    """CC-BY-SA-4.0 → CC-BY-SA; PDM-1.0 → PDM; names without a version are their own family."""
    return re.sub(r"-\d+(\.\d+)?$", "", name)


def _cc_name(modifiers: set[str], version: str) -> str:
    name = "CC-BY" + "".join(f"-{m.upper()}" for m in _MODIFIERS if m in modifiers)
    return f"{name}-{version}" if version else name


def _name_of_url(url: str) -> str:
    url = url.strip().lower()
    if not url:
        return UNKNOWN
    if "arxiv.org/licenses/nonexclusive-distrib" in url:
        return ARXIV_NONEXCLUSIVE
    match = re.search(r"creativecommons\.org/(licenses|publicdomain)/([a-z0-9-]+)(?:/(\d+(?:\.\d+)?))?", url)
    if not match:
        return UNKNOWN
    kind, code, version = match.group(1), match.group(2), match.group(3) or ""
    if kind == "publicdomain":
        return {"zero": "CC0-1.0", "mark": "PDM-1.0"}.get(code, UNKNOWN)
    parts = code.split("-")
    if parts[0] != "by" or not set(parts[1:]) <= set(_MODIFIERS):
        return UNKNOWN
    return _cc_name(set(parts[1:]), version)


def _name_of_text(text: str) -> str:
    lowered = text.strip().lower()
    if not lowered:
        return UNKNOWN
    if "arxiv" in lowered and re.search(r"non[\s-]*exclusive", lowered):
        return ARXIV_NONEXCLUSIVE
    if re.search(r"https?://", lowered):  # a URL given as the licence text
        by_url = _name_of_url(lowered)
        if by_url != UNKNOWN:
            return by_url
    for pattern, short in _SPELLINGS:
        lowered = re.sub(pattern, short, lowered)
    tokens = re.findall(r"cc0|[a-z]+|\d+(?:\.\d+)?", lowered)
    if "cc0" in tokens or ("cc" in tokens and "zero" in tokens):
        return "CC0-1.0"
    if "pdm" in tokens or "pd" in tokens:
        return "PDM-1.0"
    if "cc" in tokens and "by" in tokens:
        versions = [t for t in tokens if t[0].isdigit()]
        return _cc_name(set(tokens) & set(_MODIFIERS), versions[0] if versions else "")
    return UNKNOWN
