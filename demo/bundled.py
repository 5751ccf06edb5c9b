"""Where the bundled synthetic demo study is (demo/bundle/, data, not code) and how it is read (issue 13). Pure: no
Django.

`make run` loads the bundle through the app's own importers, so it needs no LibreOffice. It is written by
`python manage.py build_demo` (demo/build.py), which runs demo.generator, audits every deck and renders it with
LibreOffice. Layout:

    manifest.jsonl, images/, configurations.toml, runs/, judge.jsonl, battles.csv, gate_reviews.csv, ratings.csv,
    summary.json, DEMO.md         the generator's files
    renders/<pptx sha256>.png     the rendering of every deck that passes the audit (palette PNG, RENDER_LONG_EDGE)
    bundle.json                   the seed, the render settings, a SHA-256 per file and per artifact
                                  (pptx, audit, render), which tests compare with a fresh generator run

Thumbnails are not bundled: `thumbnail_png` derives them from the rendering when the demo is loaded.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import tomllib
from pathlib import Path

from PIL import Image

from agents.render import PNG_COMPRESS_LEVEL

BUNDLE_DIR = Path(__file__).resolve().parent / "bundle"
INDEX_NAME = "bundle.json"
RENDERS_DIR = "renders"
# Smaller than the app's 1600 px and reduced to a palette so ~270 renderings stay a few MB in git.
RENDER_LONG_EDGE = 640
RENDER_COLOURS = 64
DEMO_STUDY = "demo"
SYNTHETIC_NOTE = (
    "synthetic demo data (demo/bundle, made by demo/generator): no figure, model, judge or annotator is real"
)


def audit_sha256(summary: dict | None) -> str:
    """SHA-256 of an audit summary in canonical JSON: the form annotation.selectors.audit_digest stores with votes."""
    if not summary:
        return ""
    return hashlib.sha256(json.dumps(summary, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def bundle_png(png: bytes) -> bytes:
    """The renderer's PNG scaled to RENDER_LONG_EDGE (if larger) and reduced to RENDER_COLOURS colours; deterministic."""
    with Image.open(io.BytesIO(png)) as opened:
        image = opened.convert("RGB")
    if max(image.size) > RENDER_LONG_EDGE:
        image.thumbnail((RENDER_LONG_EDGE, RENDER_LONG_EDGE), Image.Resampling.LANCZOS)
    palette = image.quantize(RENDER_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    palette.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def thumbnail_png(png: bytes, long_edge: int) -> tuple[bytes, int, int]:
    """An RGB thumbnail of a bundled rendering, and the rendering's own width and height."""
    with Image.open(io.BytesIO(png)) as opened:
        image = opened.convert("RGB")
    size = image.size
    image.thumbnail((long_edge, long_edge), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    # Encoded as the renderer encodes its own thumbnails: optimize=True spent about a quarter of `make run`'s demo load
    # on 277 small files.
    image.save(buffer, format="PNG", optimize=False, compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue(), size[0], size[1]


def bundle_index(bundle_dir: Path = BUNDLE_DIR) -> dict:
    """bundle.json: {"seed", "figures", "render": {...}, "files": {path: sha256}, "artifacts": {"slug/task": {...}}}."""
    return json.loads((Path(bundle_dir) / INDEX_NAME).read_text(encoding="utf-8"))


@functools.cache
def configuration_slugs(bundle_dir: Path = BUNDLE_DIR) -> list[str]:
    """The demo's configuration slugs in declaration order (configurations.toml)."""
    declared = tomllib.loads((Path(bundle_dir) / "configurations.toml").read_text(encoding="utf-8"))
    return [c["slug"] for c in declared["configurations"]]


@functools.cache
def stated_strengths(bundle_dir: Path = BUNDLE_DIR) -> list[tuple[str, float]]:
    """The true Bradley-Terry strengths the votes were drawn from (Elo scale), strongest first (summary.json)."""
    summary = json.loads((Path(bundle_dir) / "summary.json").read_text(encoding="utf-8"))
    return sorted(summary["strengths"].items(), key=lambda item: -item[1])


def render_path(pptx_sha256: str, bundle_dir: Path = BUNDLE_DIR) -> Path:
    return Path(bundle_dir) / RENDERS_DIR / f"{pptx_sha256}.png"


def file_hashes(root: Path) -> dict[str, str]:
    """SHA-256 of every file under root except bundle.json and the renderings, by POSIX path relative to root."""
    root = Path(root)
    hashes = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and relative != INDEX_NAME and not relative.startswith(RENDERS_DIR + "/"):
            hashes[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes
