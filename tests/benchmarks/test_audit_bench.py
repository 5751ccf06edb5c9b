"""Gate + audit throughput against a bare python-pptx open (REFERENCE 3; lead's requirement ≥ 0.8×).

Run explicitly (benchmarks are outside the default test paths):
    .venv/bin/pytest tests/benchmarks/test_audit_bench.py -q -s
"""

from __future__ import annotations

import gc
import io
import random
import time
from pathlib import Path

import pytest
from PIL import Image
from pptx import Presentation
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.util import Emu

from agents.pptx_audit import audit_pptx

N_FILES = 40
REPETITIONS = 10
MIN_RATIO = 0.8
SHAPE_KINDS = (MSO_SHAPE.RECTANGLE, MSO_SHAPE.ROUNDED_RECTANGLE, MSO_SHAPE.OVAL, MSO_SHAPE.RIGHT_ARROW)


def _png(rng: random.Random) -> bytes:
    image = Image.new(
        "RGB", (rng.randint(200, 800), rng.randint(150, 600)), tuple(rng.randrange(256) for _ in range(3))
    )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _deck(path: Path, rng: random.Random) -> None:
    """A realistic agent-made figure slide: boxes with labels, connectors, a group, a picture."""
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    shapes = slide.shapes
    boxes = []
    for i in range(rng.randint(4, 12)):
        box = shapes.add_shape(
            rng.choice(SHAPE_KINDS),
            Emu(rng.randrange(0, 7_000_000)),
            Emu(rng.randrange(0, 5_500_000)),
            Emu(900_000),
            Emu(500_000),
        )
        box.text_frame.text = f"step {i}"
        boxes.append(box)
    for a, b in zip(boxes, boxes[1:]):
        connector = shapes.add_connector(MSO_CONNECTOR.STRAIGHT, 0, 0, 0, 0)
        connector.begin_connect(a, 3)
        connector.end_connect(b, 1)
    for _ in range(rng.randint(1, 4)):
        shapes.add_textbox(
            Emu(rng.randrange(0, 8_000_000)), Emu(rng.randrange(0, 6_000_000)), Emu(1_000_000), Emu(300_000)
        ).text_frame.text = "label"
    group = shapes.add_group_shape()
    for j in range(3):
        group.shapes.add_shape(MSO_SHAPE.OVAL, Emu(200_000 * j), Emu(6_000_000), Emu(150_000), Emu(150_000))
    shapes.add_picture(
        io.BytesIO(_png(rng)), Emu(rng.randrange(0, 4_000_000)), Emu(rng.randrange(0, 3_000_000)), width=Emu(2_500_000)
    )
    prs.save(str(path))


@pytest.fixture(scope="module")
def decks(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("bench")
    rng = random.Random(7)
    paths = [root / f"deck{i:02d}.pptx" for i in range(N_FILES)]
    for path in paths:
        _deck(path, rng)
    return paths


def _timed(fn, paths: list[Path]) -> float:
    gc.collect()  # start each run from the same heap
    start = time.perf_counter()
    for path in paths:
        fn(path)
    return time.perf_counter() - start


def _best_of_interleaved(first, second, paths: list[Path]) -> tuple[float, float]:
    """Best-of-N for both, alternating runs so a noisy neighbour slows both alike."""
    best_first = best_second = float("inf")
    for _ in range(REPETITIONS):
        best_first = min(best_first, _timed(first, paths))
        best_second = min(best_second, _timed(second, paths))
    return best_first, best_second


def test_audit_throughput_is_at_least_0_8_of_bare_open(decks):
    assert all(audit_pptx(path).gate_passed for path in decks)  # warm-up, and the decks are valid
    bare, audited = _best_of_interleaved(lambda p: Presentation(str(p)), audit_pptx, decks)
    ratio = bare / audited  # throughput ratio: files/s audited over files/s opened
    print(
        f"\nbare open {1e3 * bare / len(decks):.2f} ms/file, gate+audit {1e3 * audited / len(decks):.2f} ms/file, throughput ratio {ratio:.3f}"
    )
    assert ratio >= MIN_RATIO
