"""Generators of real image files for corpus tests."""

import hashlib
import json
import struct
import zlib
from pathlib import Path

from PIL import Image


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_png_header_only(path: Path, width: int, height: int) -> None:
    """A tiny file whose IHDR claims width x height pixels: a decompression bomb's calling card."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def make_corpus_images(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "wide_png": folder / "wide.png",
        "photo_jpeg": folder / "photo.jpg",
        "cmyk_jpeg": folder / "print.jpg",
        "gray_alpha_png": folder / "gray.png",
    }
    wide = Image.new("RGB", (8000, 4200), (250, 250, 250))
    wide.paste((20, 60, 200), (100, 100, 7900, 300))
    wide.save(paths["wide_png"], format="PNG", compress_level=1)
    Image.new("RGB", (640, 480), (10, 120, 30)).save(paths["photo_jpeg"], format="JPEG", quality=90)
    Image.new("CMYK", (300, 600), (0, 100, 200, 10)).save(paths["cmyk_jpeg"], format="JPEG", quality=90)
    Image.new("LA", (500, 500), (128, 200)).save(paths["gray_alpha_png"], format="PNG")
    return paths


def manifest_row(task_id: str, arxiv_id: str, image: str, sha256: str, field: str = "cs.CV", **overrides) -> dict:
    row = {
        "task_id": task_id,
        "arxiv_id": arxiv_id,
        "arxiv_version": "v2",
        "title": f"A paper about {task_id}",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "abs_url": f"https://arxiv.org/abs/{arxiv_id}",
        "pdf_url": f"https://arxiv.org/pdf/{arxiv_id}v2",
        "source_url": f"https://arxiv.org/e-print/{arxiv_id}v2",
        "license": "CC BY 4.0",
        "license_url": "https://creativecommons.org/licenses/by/4.0/",
        "caption": "Overview of the method.",
        "label": "fig:overview",
        "source_path": "figures/overview.png",
        "sha256": sha256,
        "selection_score": 0.91,
        "selection_evidence": ["caption says overview"],
        "field": field,
        "image": image,
    }
    row.update(overrides)
    return row


def write_manifest(path: Path, rows: list) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
