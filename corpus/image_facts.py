"""Facts about an image file read from its header (Pillow opens lazily; no full decode). Pure."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

HASH_CHUNK = 1 << 20


class ImageRejected(ValueError):
    """The file is not an image we accept; the message says why."""


@dataclass(frozen=True)
class ImageFacts:
    format: str
    mode: str
    width: int
    height: int
    megapixels: float
    orientation: str
    file_size: int
    sha256: str


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def orientation_of(width: int, height: int) -> str:
    if width > height:
        return "landscape"
    if height > width:
        return "portrait"
    return "square"


def read_image_facts(path: Path, *, max_pixels: int) -> ImageFacts:
    """Header-only read plus an integrity check that does not decode pixels (PNG CRCs, JPEG markers)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                width, height = image.size
                if width * height > max_pixels:
                    raise ImageRejected(
                        f"decompression bomb: {width} x {height} = {width * height:,} pixels exceeds the limit of {max_pixels:,}"
                    )
                fmt, mode = image.format or "", image.mode
                image.verify()
    except ImageRejected:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise ImageRejected(f"decompression bomb: {error}") from error
    except Exception as error:  # Pillow raises many types for broken files
        raise ImageRejected(f"unreadable image: {type(error).__name__}: {error}") from error
    if fmt not in {"PNG", "JPEG"}:
        raise ImageRejected(f"unsupported image format {fmt or 'unknown'} (PNG or JPEG expected)")
    return ImageFacts(
        format=fmt,
        mode=mode,
        width=width,
        height=height,
        megapixels=width * height / 1e6,
        orientation=orientation_of(width, height),
        file_size=path.stat().st_size,
        sha256=file_sha256(path),
    )
