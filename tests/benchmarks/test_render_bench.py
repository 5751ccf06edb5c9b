"""Batched rendering vs the naive way (one cold LibreOffice per file), same work on both sides.

Both sides start from 20 one-slide PPTX files and end with a 1600 px PNG per file:
  naive: per file, ``soffice --headless --convert-to pdf`` with its own fresh profile, then
         ``pdftoppm -png -singlefile -scale-to 1600``;
  ours:  ``LibreOfficeRenderer.render_many`` (fresh renderer, so its profile creation is timed),
         which also strips metadata, makes a thumbnail and hashes both.

Run: .venv/bin/pytest -s tests/benchmarks/test_render_bench.py
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.util import Inches, Pt

from agents.render import DEFAULT_LONG_EDGE, LibreOfficeRenderer

pytestmark = pytest.mark.libreoffice

FILES = 20
MIN_RATIO = 2.5
SHAPES = [MSO_SHAPE.RECTANGLE, MSO_SHAPE.ROUNDED_RECTANGLE, MSO_SHAPE.OVAL, MSO_SHAPE.DIAMOND, MSO_SHAPE.HEXAGON]


def make_figure_deck(path: Path, seed: int) -> None:
    """A one-slide reconstruction-like figure: title, labelled boxes, connectors between them."""
    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    title = slide.shapes.add_textbox(Inches(0.5), Inches(0.3), Inches(12), Inches(0.8))
    title.text_frame.text = f"Figure {seed}: pipeline overview"
    title.text_frame.paragraphs[0].runs[0].font.size = Pt(28)
    boxes = []
    for i in range(4 + seed % 3):
        x, y = Inches(0.6 + 2.1 * i), Inches(2.0 + (i % 2) * 2.2)
        box = slide.shapes.add_shape(SHAPES[(seed + i) % len(SHAPES)], x, y, Inches(1.8), Inches(1.1))
        box.fill.solid()
        box.fill.fore_color.rgb = RGBColor((40 * i + seed * 11) % 256, (90 + 17 * seed) % 256, 200)
        box.text_frame.text = f"Stage {i + 1}"
        boxes.append(box)
    for left, right in zip(boxes, boxes[1:]):
        connector = slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, 0, 0, 0, 0)
        connector.begin_connect(left, 3)
        connector.end_connect(right, 1)
        connector.line.width = Pt(2)
    note = slide.shapes.add_textbox(Inches(0.5), Inches(6.4), Inches(12), Inches(0.6))
    note.text_frame.text = "Boxes are stages; arrows show data flow. " * 2
    prs.save(path)


def naive_render(deck: Path, work: Path) -> Path:
    profile = Path(tempfile.mkdtemp(prefix="naive-profile-", dir=work))
    outdir = work / f"naive-{deck.parent.name}"
    subprocess.run(
        ["soffice", f"-env:UserInstallation={profile.as_uri()}", "--headless", "--convert-to", "pdf",
         "--outdir", str(outdir), str(deck)],
        check=True, capture_output=True, timeout=120,
    )
    pdf = outdir / f"{deck.stem}.pdf"
    subprocess.run(
        ["pdftoppm", "-png", "-singlefile", "-scale-to", str(DEFAULT_LONG_EDGE), str(pdf), str(outdir / "render")],
        check=True, capture_output=True, timeout=120,
    )
    return outdir / "render.png"


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice")
def test_batched_rendering_beats_one_cold_soffice_per_file(tmp_path):
    decks = []
    for seed in range(FILES):
        deck = tmp_path / f"artifact-{seed:02d}" / "output.pptx"
        deck.parent.mkdir()
        make_figure_deck(deck, seed)
        decks.append(deck)

    started = time.monotonic()
    naive_pngs = [naive_render(deck, tmp_path) for deck in decks]
    naive_seconds = time.monotonic() - started

    started = time.monotonic()
    with LibreOfficeRenderer() as renderer:
        results = renderer.render_many(decks, out_dirs=[tmp_path / f"ours-{i:02d}" for i in range(FILES)])
    our_seconds = time.monotonic() - started

    assert all(png.exists() for png in naive_pngs)
    assert all(r.ok for r in results), [r.detail for r in results if not r.ok]
    ratio = naive_seconds / our_seconds
    print(
        f"\n{FILES} decks -> PNG: naive (cold soffice per file) {naive_seconds:.1f} s "
        f"({naive_seconds / FILES:.2f} s/file), render_many {our_seconds:.1f} s "
        f"({our_seconds / FILES:.2f} s/file), ratio {ratio:.2f}x"
    )
    assert ratio >= MIN_RATIO
