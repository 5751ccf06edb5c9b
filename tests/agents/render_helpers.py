"""Test-only conveniences over agents.render: the application renders through a long-lived LibreOfficeRenderer and
never re-encodes a PNG it did not make, so neither helper belongs to it."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from agents.render import LibreOfficeRenderer, Rendering, _encode, _plain


def render_pptx(path: Path | str, *, out_dir: Path | str, **options) -> Rendering:
    """Render one deck with a throw-away renderer (one LibreOffice start-up)."""
    with LibreOfficeRenderer(**options) as renderer:
        return renderer.render(path, out_dir=out_dir)


def strip_png_metadata(src: bytes) -> bytes:
    """Re-encode a PNG the way the renderer writes its own: pixels only, no text, EXIF, ICC, time or size chunks."""
    with Image.open(io.BytesIO(src)) as opened:
        return _encode(_plain(opened))
