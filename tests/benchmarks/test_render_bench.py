"""Rendering vs the naive way (one cold LibreOffice per file), same work on both sides.

All sides start from 20 one-slide PPTX files; the first two end with a 1600 px PNG per file:
  cold:  per file, ``soffice --headless --convert-to pdf`` with its own fresh profile, then
         ``pdftoppm -png -singlefile -scale-to 1600``;
  ours:  ``LibreOfficeRenderer.render_many`` (fresh renderer, so its profile creation is timed),
         which also strips metadata, makes a thumbnail and hashes both;
  limit: LibreOffice's own batch conversion of the 20 decks to PDF (one ``soffice`` call, fresh
         profile, no PNG at all) -- no renderer built on LibreOffice can beat it.
Then throughput of one renderer alone vs two renderers at once, each in its own process with its
own profile (as on a render worker with two processes), each rendering all 20 decks, beside what a
second process gives a pure CPU loop and LibreOffice's own batch conversion on this machine now
(LibreOffice is memory-heavy: it scales less than a loop on two cores sharing caches).

Run: .venv/bin/pytest -s tests/benchmarks/test_render_bench.py
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.util import Inches, Pt

from agents.render import DEFAULT_LONG_EDGE, LibreOfficeRenderer, pdf_batch_command

pytestmark = pytest.mark.libreoffice

FILES = 20
MIN_RATIO = 6.0  # ours vs cold; LibreOffice's own batch conversion is the ceiling
# Two renderers vs one, as a share of what the cores allow. A fixed 1.5x assumed a renderer keeps one core busy; it
# rasterises while its LibreOffice converts, so one keeps about 1.2-1.4 cores busy and two on two cores can reach at
# most cores / that (about 1.5-1.6x): the old target failed the faster renderer for using the idle core.
MIN_SCALING_SHARE = 0.85
SCALING_ROUNDS = 3  # one and two renderers alternate; the best of each counts (others share the cores)
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
    for left, right in itertools.pairwise(boxes):
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
        [
            "soffice",
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(outdir),
            str(deck),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    pdf = outdir / f"{deck.stem}.pdf"
    subprocess.run(
        ["pdftoppm", "-png", "-singlefile", "-scale-to", str(DEFAULT_LONG_EDGE), str(pdf), str(outdir / "render")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return outdir / "render.png"


def _libreoffice_batch_command(decks: list[Path], work: Path) -> list[str]:
    """LibreOffice alone: all decks to PDF in one call with a fresh profile, in a directory of its own under `work`
    (names made distinct first)."""
    work = Path(tempfile.mkdtemp(prefix="limit-", dir=work))
    staged = work / "in"
    staged.mkdir()
    names = []
    for i, deck in enumerate(decks):
        os.link(deck, staged / f"deck-{i:04d}.pptx")
        names.append(staged / f"deck-{i:04d}.pptx")
    return pdf_batch_command("soffice", work / "profile", work / "pdf", names)


def libreoffice_batches(decks: list[Path], work: Path, count: int = 1) -> float:
    """Wall time for `count` of LibreOffice's own batch conversions at once, each of every deck, each with its own
    profile: with one, the limit of any renderer built on LibreOffice; with two, how far LibreOffice itself scales on
    this machine now."""
    commands = [_libreoffice_batch_command(decks, work) for _ in range(count)]
    started = time.monotonic()
    running = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
    assert [p.wait(timeout=600) for p in running] == [0] * count
    seconds = time.monotonic() - started
    for command in commands:
        assert len(list(Path(command[-len(decks) - 1]).glob("*.pdf"))) == len(decks)
    return seconds


def _renderer_process(decks: list[Path], out_root: Path, go, results) -> None:
    go.wait()
    with LibreOfficeRenderer() as renderer:
        rendered = renderer.render_many(decks, out_dirs=[out_root / f"{i:02d}" for i in range(len(decks))])
    results.put(sum(r.ok for r in rendered))


def renderers_in_parallel(decks: list[Path], work: Path, count: int) -> tuple[float, float]:
    """Wall time for ``count`` renderer processes, started together, each rendering every deck, and the CPU time they
    and their LibreOffice took (the renderers reap their soffice, this process reaps the renderers)."""
    cpu_before = _children_cpu()
    work = Path(tempfile.mkdtemp(dir=work))
    ctx = multiprocessing.get_context("fork")
    go, results = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_renderer_process, args=(decks, work / f"par{count}-{n}", go, results)) for n in range(count)
    ]
    for proc in procs:
        proc.start()
    time.sleep(0.2)  # all forked and waiting
    started = time.monotonic()
    go.set()
    done = [results.get(timeout=600) for _ in procs]
    seconds = time.monotonic() - started
    for proc in procs:
        proc.join(timeout=60)
    assert done == [len(decks)] * count
    return seconds, _children_cpu() - cpu_before


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def cpu_loop_scaling(rounds: int = SCALING_ROUNDS, n: int = 10_000_000) -> float:
    """What this machine gives a second process now: a pure CPU loop in one process vs two at once, best of each."""
    ctx = multiprocessing.get_context("fork")
    one, two = [], []
    with ctx.Pool(2) as pool:
        for _ in range(rounds):
            started = time.monotonic()
            pool.map(_spin, [n])
            one.append(time.monotonic() - started)
            started = time.monotonic()
            pool.map(_spin, [n, n], chunksize=1)
            two.append(time.monotonic() - started)
    return 2 * min(one) / min(two)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.mark.skipif(
    shutil.which("soffice") is None or shutil.which("pdftoppm") is None,
    reason="needs LibreOffice and, for the cold way, Poppler",
)
def test_rendering_vs_cold_soffice_per_file_and_libreoffice_alone(tmp_path):
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

    limit_seconds = libreoffice_batches(decks, tmp_path)
    one_runs, two_runs, one_cores, limit_one, limit_two = [], [], [], [], []
    for _ in range(SCALING_ROUNDS):
        seconds, cpu = renderers_in_parallel(decks, tmp_path, 1)
        one_runs.append(seconds)
        one_cores.append(cpu / seconds)
        two_runs.append(renderers_in_parallel(decks, tmp_path, 2)[0])
        limit_one.append(libreoffice_batches(decks, tmp_path, 1))
        limit_two.append(libreoffice_batches(decks, tmp_path, 2))
    one_seconds, two_seconds = min(one_runs), min(two_runs)
    libreoffice_scaling = 2 * min(limit_one) / min(limit_two)
    machine_scaling = cpu_loop_scaling()
    # One renderer keeping more than one core busy (LibreOffice's own threads, the rasteriser beside it) caps what a
    # second can add on this machine: two can be at most cores / (cores one keeps busy) times one.
    cores = os.cpu_count() or 1
    busy = statistics.median(one_cores)

    assert all(png.exists() for png in naive_pngs)
    assert all(r.ok for r in results), [r.detail for r in results if not r.ok]
    ratio = naive_seconds / our_seconds
    limit_ratio = naive_seconds / limit_seconds
    scaling = (2 * FILES / two_seconds) / (FILES / one_seconds)
    print(
        f"\n{FILES} decks -> PNG\n"
        f"  cold (soffice + pdftoppm per file): {naive_seconds:.2f} s ({naive_seconds / FILES:.3f} s/deck)\n"
        f"  render_many:                        {our_seconds:.2f} s ({our_seconds / FILES:.3f} s/deck), "
        f"{ratio:.2f}x cold\n"
        f"  LibreOffice's own batch to PDF:     {limit_seconds:.2f} s ({limit_seconds / FILES:.3f} s/deck), "
        f"{limit_ratio:.2f}x cold (the limit); render_many at {our_seconds / limit_seconds:.2f}x its time\n"
        f"  1 renderer: {FILES} decks in {one_seconds:.2f} s; 2 renderers (processes, own profiles): "
        f"{2 * FILES} decks in {two_seconds:.2f} s; throughput ratio {scaling:.2f}x "
        f"(best of {SCALING_ROUNDS}: {' '.join(f'{t:.2f}' for t in one_runs)} / {' '.join(f'{t:.2f}' for t in two_runs)} s)\n"
        f"  one renderer keeps {busy:.2f} cores busy (CPU time / wall time, median of {SCALING_ROUNDS}): on {cores} "
        f"cores two renderers can reach at most {min(2.0, cores / busy):.2f}x one; a pure CPU loop in two processes "
        f"runs {machine_scaling:.2f}x one here now (best of {SCALING_ROUNDS})\n"
        f"  LibreOffice's own batch, two at once (own profiles) against one: {libreoffice_scaling:.2f}x (best of "
        f"{SCALING_ROUNDS}: {' '.join(f'{t:.2f}' for t in limit_one)} / {' '.join(f'{t:.2f}' for t in limit_two)} s); "
        f"the renderers scale to {scaling / libreoffice_scaling:.2f} of that\n"
        f"  load average at the end: {os.getloadavg()[0]:.2f}"
    )
    assert ratio >= MIN_RATIO
    assert scaling >= MIN_SCALING_SHARE * min(2.0, cores / busy)
