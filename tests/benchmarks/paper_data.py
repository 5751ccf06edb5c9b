"""The paper's scale in the data contracts' formats, written fast: 1,000 figures, ten configurations, 10,000 artifact
folders (a few distinct real decks from ../shared, hard-linked), 60,000 judge records (two families x three runs),
4,270 battle rows over the 45 pairs. Deterministic; nothing here claims to be real data.

Also the measuring tools the ingest and paper-scale benchmarks share: wall time and peak resident memory of a stage.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from tests.corpus.images import manifest_row
from tests.data.paths import PPTX_REAL, require_shared

FIGURES, CONFIGURATIONS, VOTES, STUDY = 1000, 10, 4270, "paper"
JUDGES = (("judge-one", "family-one"), ("judge-two", "family-two"))
RUNS = (1, 2, 3)
DECKS = ("minimal.pptx", "shp-connector-props.pptx", "tbl-cell.pptx", "sld-blank.pptx")
AXES = {"text": 20, "semantic_structure": 30, "layout": 15, "editability": 25, "visual_detail": 10}


@dataclass(frozen=True)
class PaperData:
    root: Path
    manifest: Path
    images: Path
    configurations: Path
    runs: Path
    judge_records: Path
    battles: Path
    slugs: tuple[str, ...]
    figures: int = FIGURES

    @property
    def task_ids(self) -> list[str]:
        return [f"task-{i:04d}" for i in range(self.figures)]


def slug_of(i: int) -> str:
    return f"cfg-{i:02d}-{'specialized' if i % 2 else 'direct'}"


def generate(
    root: Path, *, figures: int = FIGURES, votes: int = VOTES, deck: Callable[[Path, int, int], None] | None = None
) -> PaperData:
    """The study's input files under `root`; `deck(path, configuration, figure)` writes each deck (by default a hard
    link to one of a few real decks), `figures` and `votes` scale it down (tests/benchmarks/test_bench_paper.py)."""
    decks = [] if deck else [require_shared(PPTX_REAL / "python-pptx" / name) for name in DECKS]
    images, runs = root / "images", root / "runs"
    images.mkdir(parents=True)
    rows = []
    for i in range(figures):
        buffer = io.BytesIO()
        Image.new("RGB", (96, 64), (i % 251, (i * 7) % 253, (i * 13) % 255)).save(buffer, format="PNG")
        data = buffer.getvalue()
        (images / f"f{i}.png").write_bytes(data)
        rows.append(
            manifest_row(
                f"task-{i:04d}",
                f"2401.{i:05d}",
                f"f{i}.png",
                hashlib.sha256(data).hexdigest(),
                field=("cs.AI", "cs.CL", "cs.CV", "cs.LG")[i % 4],
            )
        )
    manifest = root / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    slugs = tuple(slug_of(i) for i in range(CONFIGURATIONS))
    configurations = root / "configurations.json"
    configurations.write_text(
        json.dumps(
            {
                "configurations": [
                    {
                        "slug": s,
                        "model": f"model-{i // 2}",
                        "harness": "harness",
                        "workflow": "specialized" if i % 2 else "direct",
                        "reasoning_effort": "high",
                        "label": s,
                    }
                    for i, s in enumerate(slugs)
                ]
            }
        )
    )
    for c, slug in enumerate(slugs):
        for i in range(figures):
            folder = runs / slug / f"task-{i:04d}"
            folder.mkdir(parents=True)
            if deck:
                deck(folder / "output.pptx", c, i)
            else:
                os.link(decks[(c + i) % len(decks)], folder / "output.pptx")
    judge = root / "judge.jsonl"
    with judge.open("w") as handle:
        for (name, family), run in itertools.product(JUDGES, RUNS):
            for c, slug in enumerate(slugs):
                for i in range(figures):
                    shift = (c * 3 + i * 7 + run) % 5
                    subscores = {axis: max(0, top - shift - (c % 3)) for axis, top in AXES.items()}
                    handle.write(
                        json.dumps(
                            {
                                "task_id": f"task-{i:04d}",
                                "configuration": slug,
                                "judge": name,
                                "judge_family": family,
                                "run": run,
                                "subscores": subscores,
                                "score": sum(subscores.values()),
                                "major_errors": [],
                                "minor_errors": ["synthetic"],
                                "editability_assessment": "synthetic",
                                "reason": "synthetic benchmark judge",
                            }
                        )
                        + "\n"
                    )
    battles = root / "battles.csv"
    pairs = list(itertools.combinations(slugs, 2))
    with battles.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "left_config", "outcome"]
            + ["reason", "created_at", "dwell_ms"]
        )
        for n in range(votes):
            x, y = pairs[n % len(pairs)]
            a, b = (x, y) if n % 2 else (y, x)
            outcome = ("a", "b", "a", "tie_success", "b", "tie_failure")[n % 6]
            figure = (n * 7 + n // len(pairs)) % figures
            writer.writerow(
                [f"vote-{n}", STUDY, f"task-{figure:04d}", f"ann-{n % 12}", a, b, a, outcome, "clearer"]
                + [f"2026-01-{1 + n % 28:02d}T10:{n % 60:02d}:00Z", 4000 + n % 9000]
            )
    return PaperData(root, manifest, images, configurations, runs, judge, battles, slugs, figures)


# --- measuring ----------------------------------------------------------------------------------
def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Measured:
    seconds: float = 0.0
    peak_mb: float = 0.0  # resident memory above the stage's start, sampled every 5 ms


@contextlib.contextmanager
def measured():
    """Wall time and peak resident memory (above the start) of the block."""
    result, start_rss, done = Measured(), _rss_bytes(), threading.Event()
    peak = [start_rss]

    def sample():
        while not done.wait(0.005):
            peak[0] = max(peak[0], _rss_bytes())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        yield result
    finally:
        result.seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        result.peak_mb = (max(peak[0], _rss_bytes()) - start_rss) / 2**20


def line(name: str, rows: int, ours: Measured, bare: Measured | None = None) -> str:
    text = f"{name:22s} {rows:>7d} rows  {ours.seconds:7.2f} s  {rows / ours.seconds:9.0f} rows/s  peak +{ours.peak_mb:6.1f} MB"
    if bare is not None:
        text += (
            f"  | bare {bare.seconds:6.2f} s {rows / bare.seconds:9.0f} rows/s peak +{bare.peak_mb:6.1f} MB"
            f"  | ratio {ours.seconds / bare.seconds:5.2f}x"
        )
    return text
