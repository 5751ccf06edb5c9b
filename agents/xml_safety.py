"""The XML safety rule of the audit gate, on raw bytes and on parsed trees: a DOCTYPE is refused when it is
dangerous, not when it is merely unusual. ``prolog_verdict`` reads a member's prolog (UTF-8/16/32 recognised) up to
the root element with a hand-written scanner, before any XML parser sees it; ``tree_verdict`` applies the same rule
to a tree lxml has already parsed (entities unresolved). Any ``<!ENTITY`` declaration or parameter-entity reference
(so billion laughs and XXE), or anything in an internal subset but element, attribute-list and notation
declarations, comments and PIs, is "dtd"; a ``SYSTEM`` external subset is "system"; a ``PUBLIC`` identifier (SVG 1.1
files carry one) passes, because no parser here loads a DTD. ``REFUSALS`` holds the gate's message for each refused
verdict. Pure: no Django, DRF or Celery, and no XML parser.
"""

from __future__ import annotations

REFUSALS: dict[str, str] = {
    "dtd": "XML entity declarations are not allowed",
    "system": "XML external DTD (SYSTEM) references are not allowed",
}


def prolog_verdict(head: bytes) -> str:
    """ "dtd", "system", "ok" (root element reached), "not_xml", or "more" (the prolog continues past head)."""
    if head.startswith(b"<?xml"):  # fast path: declaration, whitespace, root start tag
        end = head.find(b"?>", 5)
        if end > 0:
            rest = head[end + 2 :].lstrip(b" \t\r\n")
            if rest[:1] == b"<" and rest[1:2] not in (b"!", b"?", b""):
                return "ok"
    text = _decode_head(head)
    if text is None:
        return "not_xml"
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return "more"
        if text[i] != "<":
            return "not_xml"  # text before the root: no XML parser accepts it
        if text.startswith("<?", i):
            j = text.find("?>", i + 2)
            if j < 0:
                return "more"
            i = j + 2
        elif text.startswith("<!--", i):
            j = text.find("-->", i + 4)
            if j < 0:
                return "more"
            i = j + 3
        elif text.startswith("<!DOCTYPE", i):
            verdict, i = _doctype_verdict(text, i + 9)
            if verdict != "ok":
                return verdict
        elif text.startswith("<!", i) or (
            n - i < 9 and ("<!--".startswith(text[i:]) or "<!DOCTYPE".startswith(text[i:]))
        ):
            return "dtd" if text.startswith("<!", i) and n - i >= 9 else "more"
        else:
            return "ok"


def tree_verdict(element) -> str:
    """The same rule for a tree lxml parsed with entities unresolved: "dtd", "system" or "ok".

    A PUBLIC identifier was never loaded, so only a SYSTEM identifier without one is refused.
    """
    docinfo = element.getroottree().docinfo
    dtd = docinfo.internalDTD
    if dtd is None:
        return "ok"
    if next(dtd.iterentities(), None) is not None:
        return "dtd"
    if docinfo.system_url and not docinfo.public_id:
        return "system"
    return "ok"


_NAME_END = frozenset(" \t\r\n[>")
_SUBSET_DECLARATIONS = ("<!ELEMENT", "<!ATTLIST", "<!NOTATION")


def _doctype_verdict(text: str, i: int) -> tuple[str, int]:
    """Read a DOCTYPE declaration from just after ``<!DOCTYPE``: ("ok", index after it), "dtd", "system" or "more".

    Allowed: ``<!DOCTYPE name>``, ``<!DOCTYPE name PUBLIC "id" "uri">`` (SVG 1.0/1.1 files carry one),
    and an internal subset of element, attribute-list and notation declarations, comments and
    processing instructions only. Refused: any ``<!ENTITY`` (internal, external or parameter; so
    billion laughs and XXE), a parameter-entity reference, and a ``SYSTEM`` external subset ("system").
    The DTD is never loaded (no parser here or in python-pptx has ``load_dtd``; lxml's
    ``no_network`` stays on), so the PUBLIC identifier and its URI are inert text.
    """
    n = len(text)
    j = i
    while j < n and text[j] in " \t\r\n":
        j += 1
    if j == i or j >= n:
        return ("more" if j >= n else "dtd"), i
    while j < n and text[j] not in _NAME_END:  # the root element name
        j += 1
    literals = 0
    keyword = ""
    while True:
        while j < n and text[j] in " \t\r\n":
            j += 1
        if j >= n:
            return "more", j
        ch = text[j]
        if ch in ">[":
            if keyword == "SYSTEM":
                return "system", j
            if literals != (2 if keyword == "PUBLIC" else 0):
                return "dtd", j  # not a DOCTYPE this reader can vouch for
            return ("ok", j + 1) if ch == ">" else _internal_subset_verdict(text, j + 1)
        if ch in "\"'":
            end = text.find(ch, j + 1)
            if end < 0:
                return "more", j
            literals += 1
            if keyword not in ("PUBLIC", "SYSTEM") or literals > (2 if keyword == "PUBLIC" else 1):
                return "dtd", j
            j = end + 1
        elif text.startswith("PUBLIC", j) or text.startswith("SYSTEM", j):
            if keyword:
                return "dtd", j
            keyword = text[j : j + 6]
            j += 6
        elif n - j < 6:
            return "more", j
        else:
            return "dtd", j


def _internal_subset_verdict(text: str, j: int) -> tuple[str, int]:
    """The internal subset from just after ``[``: ("ok", index after the closing ``>``), "dtd" or "more"."""
    n = len(text)
    while True:
        while j < n and text[j] in " \t\r\n":
            j += 1
        if j >= n:
            return "more", j
        if text[j] == "]":
            k = j + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k >= n:
                return "more", k
            return ("ok", k + 1) if text[k] == ">" else ("dtd", k)
        if text.startswith("<!--", j):
            end = text.find("-->", j + 4)
            if end < 0:
                return "more", j
            j = end + 3
        elif text.startswith("<?", j):
            end = text.find("?>", j + 2)
            if end < 0:
                return "more", j
            j = end + 2
        elif text.startswith(_SUBSET_DECLARATIONS, j):
            j = _skip_declaration(text, j)
            if j < 0:
                return "more", n
        elif n - j < 10 and any(d.startswith(text[j:]) for d in _SUBSET_DECLARATIONS):
            return "more", j
        else:
            return "dtd", j  # <!ENTITY, a %parameter; reference, or anything else


def _skip_declaration(text: str, j: int) -> int:
    """Index after the ``>`` closing a markup declaration (quoted literals skipped), or -1 if it runs on."""
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == ">":
            return j + 1
        if ch in "\"'":
            end = text.find(ch, j + 1)
            if end < 0:
                return -1
            j = end + 1
        else:
            j += 1
    return -1


_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\x00<", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
)


def _decode_head(head: bytes) -> str | None:
    """The head as text if it looks like XML in UTF-8/16/32 or an ASCII superset, else None."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    for mark, codec in _BOMS:
        if head.startswith(mark):
            if b"<" not in mark:
                head = head[len(mark) :]  # a byte-order mark, not the first character
            width = 4 if "32" in codec else 2
            return head[: len(head) // width * width].decode(codec, errors="replace")
    if not head.lstrip(b" \t\r\n").startswith(b"<"):
        return None
    return head.decode("latin-1")
