"""PNG that carries pixels only: the check that stored bytes may be served to an annotator as they are, and the one
re-encode that makes any PNG or JPEG so (pure: Pillow, no Django)."""

from __future__ import annotations

import io
import struct

from PIL import Image

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Chunks that describe pixels and nothing else: no text, EXIF, ICC profile, time, physical size or private chunks.
PIXEL_CHUNKS = frozenset({b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND"})


def png_is_plain(data: bytes) -> bool:
    """True when `data` is a PNG whose chunks are all pixel chunks, ending at IEND with nothing after it. Walks the
    chunk headers only (a few dozen bytes read per chunk), so it costs microseconds even for a large image."""
    if not data.startswith(SIGNATURE):
        return False
    at = len(SIGNATURE)
    while at + 8 <= len(data):
        (length,) = struct.unpack_from(">I", data, at)
        kind = data[at + 4 : at + 8]
        if kind not in PIXEL_CHUNKS:
            return False
        at += 12 + length  # length, type, data, CRC
        if kind == b"IEND":
            return at == len(data)
    return False


def clean_png(data: bytes) -> bytes:
    """Re-encode through Pillow to PNG carrying pixels only: no text chunks, EXIF, ICC or other metadata."""
    with Image.open(io.BytesIO(data)) as source:
        source.load()
        mode = "RGBA" if source.mode in ("RGBA", "LA", "PA") or "transparency" in source.info else "RGB"
        pixels = source.convert(mode)
    clean = Image.frombytes(mode, pixels.size, pixels.tobytes())
    buffer = io.BytesIO()
    clean.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()
