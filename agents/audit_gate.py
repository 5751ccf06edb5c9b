"""The audit gate before any slide is read: the limits on hostile input (``AuditLimits``) and the checks that
enforce them, cheapest and safest first, so hostile input never reaches python-pptx. ``open_package`` takes a
file's size from ``stat``, reads it once (sha256 over those bytes), checks the zip central directory (member count,
declared sizes per member, lower for XML, and in total; encrypted members), inflates every member once through its
local header with the checks of ``ZipFile.read``, refuses dangerous DTDs in every XML prolog (``agents/xml_safety.py``)
and oversized raster images by their headers, counts external relationships, and hands the checked blobs to
python-pptx so it neither re-reads nor re-inflates the zip. ``time_limit`` bounds the whole audit by the wall clock.
A refusal is a ``GateFailure`` carrying one of the audit's gate reasons. Pure: no Django, DRF or Celery.
"""

from __future__ import annotations

import hashlib
import io
import re
import signal
import struct
import threading
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from PIL import Image
from pptx import Presentation
from pptx.opc.constants import CONTENT_TYPE as _CT
from pptx.opc.packuri import PackURI as _PackURI

from .xml_safety import REFUSALS, prolog_verdict, tree_verdict

MiB = 1024 * 1024


@dataclass(frozen=True)
class AuditLimits:
    """Bounds for hostile input; defaults are generous for agent-made one-slide decks."""

    max_file_bytes: int = 200 * MiB
    max_members: int = 5_000
    # Inflated sizes, as the central directory declares them (and binds them: see _member_bytes).
    # Absolute bounds on memory, not compression ratios: a 1.5 MB EMF preview of mostly blank
    # records compresses 667:1 in a real 108 KB deck and is harmless; a bomb is refused by what it
    # would inflate to. Media (video, audio) is stored near 1:1, so a member rarely outgrows the file.
    max_member_bytes: int = 256 * MiB  # any member (python-pptx holds every member in memory)
    max_xml_member_bytes: int = 32 * MiB  # an XML member: python-pptx parses these into lxml trees,
    # which take several times the text's size; real slide, chart and drawing parts stay under ~10 MB
    max_total_bytes: int = 512 * MiB  # all members together
    max_image_pixels: int = 100_000_000
    timeout_seconds: float = 30.0


DEFAULT_LIMITS = AuditLimits()


class GateFailure(Exception):
    """The gate refuses the file: ``reason`` is one of the audit's gate reasons, ``detail`` the message."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class AuditTimeout(BaseException):  # BaseException: not swallowed by an ``except Exception`` inside libraries
    pass


def open_package(path: Path, limits: AuditLimits, state: dict):
    """The checked presentation and its count of external relationships; fills ``state`` (sha256, size) as it goes.

    Raises ``GateFailure`` for anything the gate refuses, including what python-pptx cannot open.
    """
    try:
        stat = path.stat()
    except (OSError, ValueError):
        raise GateFailure("missing", "file does not exist") from None
    if not S_ISREG(stat.st_mode):
        raise GateFailure("missing", "not a regular file")
    state["size"] = stat.st_size
    if stat.st_size > limits.max_file_bytes:
        raise GateFailure(
            "too_large", f"file is {_fmt_bytes(stat.st_size)} (limit {_fmt_bytes(limits.max_file_bytes)})"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GateFailure("missing", f"unreadable: {exc.strerror or exc}") from None
    state["size"] = len(data)
    state["sha256"] = hashlib.sha256(data).hexdigest()

    stream = io.BytesIO(data)
    zf = _check_zip(data, stream, limits)
    blobs, external = _read_members(data, zf, limits)
    try:
        prs = _open_presentation(stream, blobs)
    except AuditTimeout:
        raise
    except Exception as exc:  # python-pptx raises KeyError, XMLSyntaxError, ValueError, ...
        raise GateFailure("corrupt", f"python-pptx cannot open it: {exc_text(exc)}") from None
    return prs, external


def _check_zip(data: bytes, stream: io.BytesIO, limits: AuditLimits) -> zipfile.ZipFile:
    """The central directory against the limits; returns the one ``ZipFile`` the audit uses."""
    try:
        zf = zipfile.ZipFile(stream)
        infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        if data[:2] != b"PK":
            raise GateFailure("not_a_zip", "not a zip archive") from None
        raise GateFailure("corrupt", f"broken zip: {exc}") from None
    except Exception as exc:
        raise GateFailure("corrupt", f"broken zip: {exc_text(exc)}") from None

    if len(infos) > limits.max_members:
        raise GateFailure("too_large", f"{len(infos)} zip members (limit {limits.max_members})")
    total = 0
    for info in infos:
        size = info.file_size
        total += size
        if size > limits.max_member_bytes:
            raise GateFailure("too_large", _inflate_detail(info, f"limit {_fmt_bytes(limits.max_member_bytes)}"))
        if size > limits.max_xml_member_bytes and info.filename.lower().endswith(_XML_SUFFIXES):
            raise GateFailure(
                "too_large", _inflate_detail(info, f"XML limit {_fmt_bytes(limits.max_xml_member_bytes)}")
            )
        if info.flag_bits & 0x1:
            raise GateFailure("corrupt", f"member {info.filename} is encrypted")
    if total > limits.max_total_bytes:
        raise GateFailure(
            "too_large", f"members inflate to {_fmt_bytes(total)} in total (limit {_fmt_bytes(limits.max_total_bytes)})"
        )
    if "[Content_Types].xml" not in zf.NameToInfo:
        raise GateFailure("corrupt", "missing [Content_Types].xml")
    return zf


def _read_members(data: bytes, zf: zipfile.ZipFile, limits: AuditLimits) -> tuple[dict, int]:
    """Inflate every member once (CRC checked) and check it; returns (python-pptx blobs, external rels).

    Every XML member's prolog is refused if it carries a DTD, ``.rels`` members are searched for
    external relationships, raster images under ``ppt/`` are measured from their headers. The
    blobs are what python-pptx's own zip reader would have read (``{"/" + name: bytes}``, the last
    of duplicate names winning), so python-pptx never opens or inflates the zip a second time.
    """
    blobs: dict = {}
    external = 0
    for info in zf.infolist():
        blob = _member_bytes(data, zf, info)
        blobs[_PackURI("/" + info.filename)] = blob
        if not blob:
            continue
        name = info.filename.lower()
        if name.endswith(".rels"):
            _check_prolog(info, blob)
            external += len(_EXTERNAL_MODE.findall(blob))
        elif name.startswith("ppt/") and name.rpartition(".")[2] in _RASTER_EXTENSIONS:
            _check_image(info, blob, limits)  # docProps/thumbnail.jpeg is never rendered
        else:
            _check_member_prolog(info, blob)
    return blobs, external


try:  # python-pptx's loader, fed the blobs the gate already read (see _open_presentation)
    from pptx.opc.package import _PackageLoader
    from pptx.opc.packuri import PACKAGE_URI as _PACKAGE_URI
    from pptx.opc.serialized import PackageReader as _PackageReader
    from pptx.opc.serialized import _ZipPkgReader
    from pptx.package import Package as _Package
    from pptx.util import lazyproperty as _lazyproperty

    _PRELOAD = all(
        isinstance(vars(cls).get(name), _lazyproperty)
        for cls, name in (
            (_PackageLoader, "_package_reader"),
            (_PackageReader, "_blob_reader"),
            (_ZipPkgReader, "_blobs"),
        )
    ) and callable(getattr(_PackageLoader, "_load", None))
except ImportError:  # pragma: no cover - another python-pptx layout: open the bytes again
    _PRELOAD = False

_PPTX_CONTENT_TYPES = (_CT.PML_PRESENTATION_MAIN, _CT.PML_PRES_MACRO_MAIN)


def _open_presentation(stream: io.BytesIO, blobs: dict):
    """``pptx.Presentation(stream)`` without python-pptx re-reading the zip the gate has read.

    python-pptx's zip reader keeps its blobs in a lazy property (``_ZipPkgReader._blobs``, a
    ``{PackURI: bytes}`` dict of every member); it is pre-filled with the gate's checked blobs,
    then the package is loaded exactly as ``OpcPackage._load`` and ``pptx.api.Presentation`` do.
    Where python-pptx's internals differ, the stream is simply opened again.
    """
    if not _PRELOAD:
        return Presentation(stream)
    phys = _ZipPkgReader(stream)
    phys.__dict__["_blobs"] = blobs
    reader = _PackageReader(stream)
    reader.__dict__["_blob_reader"] = phys
    package = _Package(stream)
    loader = _PackageLoader(stream, package)
    loader.__dict__["_package_reader"] = reader
    pkg_xml_rels, parts = loader._load()
    package._rels.load_from_xml(_PACKAGE_URI, pkg_xml_rels, parts)
    part = package.main_document_part
    if part.content_type not in _PPTX_CONTENT_TYPES:
        raise ValueError(f"not a PowerPoint file, content type is '{part.content_type}'")
    return part.presentation


def _inflate_detail(info: zipfile.ZipInfo, limit: str) -> str:
    ratio = info.file_size / max(info.compress_size, 1)
    return f"member {info.filename} inflates to {_fmt_bytes(info.file_size)} (ratio {ratio:.0f}:1; {limit})"


_XML_SUFFIXES = (".xml", ".rels")  # the parts python-pptx parses into trees are named so in practice
_EXTERNAL_MODE = re.compile(rb"""TargetMode\s*=\s*["']External["']""")
_RASTER_EXTENSIONS = frozenset(
    {"png", "jpg", "jpeg", "jpe", "jfif", "gif", "bmp", "dib", "tif", "tiff", "webp", "ico", "tga"}
)
_HEAD_BYTES = 256  # an OOXML prolog is one XML declaration, ~60 bytes


def _member_bytes(data: bytes, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, inflated through its local header to exactly its declared size, CRC checked.

    The same checks as ``ZipFile.read`` (local header signature and name, size, CRC-32) without
    its per-member file object; bzip2 / lzma (rare in OOXML) go through ``ZipFile.read``.
    """
    if info.is_dir():
        return b""
    try:
        offset = info.header_offset
        if data[offset : offset + 4] != b"PK\x03\x04" or len(data) < offset + 30:
            raise zipfile.BadZipFile(f"bad local header for member {info.filename}")
        name_len, extra_len = struct.unpack_from("<HH", data, offset + 26)
        local_name = data[offset + 30 : offset + 30 + name_len]
        if local_name.decode("utf-8" if info.flag_bits & 0x800 else "cp437") != info.orig_filename:
            raise zipfile.BadZipFile(f"file name in directory and header differ for member {info.filename}")
        start = offset + 30 + name_len + extra_len
        if info.compress_type == zipfile.ZIP_STORED:
            blob = data[start : start + info.file_size]
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            raw = memoryview(data)[start : start + info.compress_size]  # no copy of large members
            blob = zlib.decompressobj(-15).decompress(raw, info.file_size) if info.file_size else b""
        else:
            return zf.read(info)
        if len(blob) != info.file_size:
            raise zipfile.BadZipFile(f"member {info.filename} is shorter than declared")
        if zlib.crc32(blob) != info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
        return blob
    except AuditTimeout:
        raise
    except Exception as exc:
        raise GateFailure("corrupt", f"broken zip: {exc_text(exc)}") from None


def _check_member_prolog(info: zipfile.ZipInfo, blob: bytes) -> None:
    """Refuse a DTD in the XML prolog of a member, looking only as far as the root element."""
    want = _HEAD_BYTES
    while True:
        head = blob[:want]
        if _check_prolog(info, head) or len(head) >= len(blob):
            return
        want *= 8


def _check_prolog(info: zipfile.ZipInfo, head: bytes) -> bool:
    """True when the prolog is settled (no DTD); raises on a DTD; False when more bytes are needed."""
    verdict = prolog_verdict(head)
    if verdict in REFUSALS:
        raise GateFailure("corrupt", REFUSALS[verdict])
    if verdict == "not_xml" and info.filename.lower().endswith(_XML_SUFFIXES):
        raise GateFailure("corrupt", f"member {info.filename} is not XML in a supported encoding")
    return verdict != "more"


_VECTOR_FORMATS = frozenset({"WMF", "EMF"})


def _check_image(info: zipfile.ZipInfo, blob: bytes, limits: AuditLimits) -> None:
    """Refuse a raster whose header declares more than ``max_image_pixels``; pixels are never decoded."""
    size = _image_size(blob)
    if size is None:
        return  # unreadable or unknown formats are the renderer's business, not the gate's
    if isinstance(size, str):
        raise GateFailure("too_large", f"image {info.filename} is too large to decode ({size})")
    width, height = size
    if width * height > limits.max_image_pixels:
        raise GateFailure(
            "too_large",
            f"image {info.filename} is {width} × {height} px "
            f"({width * height / 1e6:.1f} MP; limit {limits.max_image_pixels / 1e6:g} MP)",
        )


def _image_size(blob: bytes) -> tuple[int, int] | str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(blob)) as img:  # parses the header only
                return None if img.format in _VECTOR_FORMATS else img.size
    except Image.DecompressionBombError as exc:
        return str(exc)
    except Exception:
        return None


def refuse_dtd(*elements) -> None:
    """Defence in depth on the parts the audit reads (python-pptx parsed them, entities unresolved).

    The same rule as the prolog check: a DOCTYPE is harmless unless it declares entities or names
    a SYSTEM external subset; a PUBLIC identifier was never loaded.
    """
    for element in elements:
        if element is None:
            continue
        verdict = tree_verdict(element)
        if verdict in REFUSALS:
            raise GateFailure("corrupt", REFUSALS[verdict])


class time_limit:
    """SIGALRM-based wall-clock limit; a no-op outside the main thread or without setitimer.

    The timer can fire at any bytecode, even inside ``__enter__`` or during clean-up, so the
    handler is installed first, the timer is armed last, and clean-up retries until both are undone.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = (
            seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        self.previous_handler = None
        self.previous_timer = (0.0, 0.0)

    def __enter__(self):
        if self.active:
            self.previous_handler = signal.signal(signal.SIGALRM, self._fire)
            try:
                self.previous_timer = signal.setitimer(signal.ITIMER_REAL, self.seconds)
            except AuditTimeout:
                self._restore()
                raise
        return self

    @staticmethod
    def _fire(signum, frame):
        raise AuditTimeout()

    def _restore(self) -> None:
        while True:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self.previous_handler)
                delay, interval = self.previous_timer
                if delay > 0:  # re-arm a timer someone else had set (approximately: minus our run time)
                    signal.setitimer(signal.ITIMER_REAL, delay, interval)
                return
            except AuditTimeout:
                continue

    def __exit__(self, *exc) -> None:
        if self.active:
            self._restore()


def exc_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"
