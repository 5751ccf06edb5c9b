"""`make run` sample: a tiny corpus of drawn block diagrams and four agents' real PPTX reconstructions.

Everything goes through the real importers, audit and renderer, so the sample shows the app as it
is. There are no judge scores in the sample: nothing here pretends to be a judge.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw
from pptx import Presentation
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.util import Emu, Inches

SAMPLE_FIGURES = 6
STAGES = ("Input", "Encoder", "Latent", "Decoder", "Output")
SAMPLE_CONFIGURATIONS = [
    {
        "slug": "sample-m1-direct",
        "model": "sample-model-1",
        "harness": "codex",
        "workflow": "direct",
        "reasoning_effort": "high",
        "label": "Model 1 · direct",
    },
    {
        "slug": "sample-m1-specialized",
        "model": "sample-model-1",
        "harness": "codex",
        "workflow": "specialized",
        "reasoning_effort": "high",
        "label": "Model 1 · specialized",
    },
    {
        "slug": "sample-m2-direct",
        "model": "sample-model-2",
        "harness": "claude-code",
        "workflow": "direct",
        "reasoning_effort": "high",
        "label": "Model 2 · direct",
    },
    {
        "slug": "sample-m2-specialized",
        "model": "sample-model-2",
        "harness": "claude-code",
        "workflow": "specialized",
        "reasoning_effort": "high",
        "label": "Model 2 · specialized",
    },
]


def _figure_image(path: Path, index: int) -> None:
    stages = STAGES[: 3 + index % 3]
    image = Image.new("RGB", (1400, 600), "white")
    draw = ImageDraw.Draw(image)
    width = 1400 // len(stages)
    for n, label in enumerate(stages):
        x = n * width + 30
        draw.rounded_rectangle(
            (x, 220, x + width - 90, 380), radius=18, outline=(30, 60, 160), width=4, fill=(220, 232, 250)
        )
        draw.text((x + 20, 290), f"{label} {index}", fill=(0, 0, 0))
        if n:
            draw.line((x - 60, 300, x, 300), fill=(0, 0, 0), width=4)
            draw.polygon([(x, 300), (x - 14, 292), (x - 14, 308)], fill=(0, 0, 0))
    draw.text((40, 60), f"Figure {index + 1}: an overview of the method", fill=(0, 0, 0))
    image.save(path, format="PNG")


def _deck(path: Path, *, index: int, quality: int, figure_png: Path | None) -> None:
    deck = Presentation()
    deck.slide_width, deck.slide_height = Inches(14), Inches(6)
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    if figure_png is not None:  # a pasted raster: the flattening the cap exists for
        slide.shapes.add_picture(str(figure_png), 0, 0, deck.slide_width, deck.slide_height)
    else:
        stages = STAGES[: 3 + index % 3][: max(2, 3 + index % 3 - (2 - quality))]
        slide.shapes.add_textbox(
            Inches(0.4), Inches(0.4), Inches(9), Inches(0.6)
        ).text_frame.text = f"Figure {index + 1}: an overview of the method"
        width = Emu(deck.slide_width // len(stages))
        boxes = []
        for n, label in enumerate(stages):
            box = slide.shapes.add_shape(
                MSO_SHAPE.ROUNDED_RECTANGLE, width * n + Inches(0.3), Inches(2.2), width - Inches(0.9), Inches(1.6)
            )
            box.text_frame.text = f"{label} {index}"
            boxes.append(box)
        for left, right in zip(boxes, boxes[1:]):
            connector = slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, 0, 0, 0, 0)
            connector.begin_connect(left, 3)
            if quality > 0:
                connector.end_connect(right, 1)
            else:
                connector.end_x, connector.end_y = right.left, right.top
    path.parent.mkdir(parents=True, exist_ok=True)
    deck.save(path)


def build_sample_run(root: Path) -> tuple[Path, Path, Path, Path]:
    """Write images + manifest + run layout + configuration file under `root`."""
    images = root / "images"
    images.mkdir(parents=True)
    rows = []
    for index in range(SAMPLE_FIGURES):
        name = f"figure-{index}.png"
        _figure_image(images / name, index)
        arxiv = f"2601.{index + 1:05d}"
        rows.append(
            {
                "task_id": f"sample-{index:03d}",
                "arxiv_id": arxiv,
                "arxiv_version": "v1",
                "title": f"Sample paper {index + 1}",
                "authors": ["Sample Author"],
                "abs_url": f"https://arxiv.org/abs/{arxiv}",
                "pdf_url": f"https://arxiv.org/pdf/{arxiv}v1",
                "source_url": f"https://arxiv.org/e-print/{arxiv}v1",
                "license": "CC0 (generated sample)",
                "license_url": "",
                "caption": "A generated block diagram for trying the app.",
                "label": "fig:overview",
                "source_path": name,
                "sha256": hashlib.sha256((images / name).read_bytes()).hexdigest(),
                "selection_score": 1.0,
                "selection_evidence": ["generated sample"],
                "field": ("cs.CV", "cs.CL", "cs.LG")[index % 3],
                "image": name,
            }
        )
    manifest = root / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run_root = root / "runs"
    for c_index, configuration in enumerate(SAMPLE_CONFIGURATIONS):
        for index in range(SAMPLE_FIGURES):
            task_dir = run_root / configuration["slug"] / f"sample-{index:03d}"
            if c_index == 0 and index == SAMPLE_FIGURES - 1:
                task_dir.mkdir(parents=True)
                (task_dir / "error.log").write_text("agent ran out of turns\n")
                continue
            pasted = images / f"figure-{index}.png" if (c_index == 2 and index % 3 == 0) else None
            _deck(task_dir / "output.pptx", index=index, quality=c_index % 2 + (index % 2), figure_png=pasted)
    configurations = root / "configurations.json"
    configurations.write_text(json.dumps({"configurations": SAMPLE_CONFIGURATIONS}))
    return images, manifest, run_root, configurations


def load_sample_corpus_and_artifacts() -> str:
    from agents.models import Configuration
    from agents.selectors import artifact_list
    from agents.services import artifact_audit, artifacts_import, artifacts_render
    from corpus.services import corpus_import

    if Configuration.objects.filter(slug=SAMPLE_CONFIGURATIONS[0]["slug"]).exists():
        return "sample corpus and artifacts already loaded"
    with tempfile.TemporaryDirectory(prefix="refig-sample-") as tmp:
        images, manifest, run_root, configurations = build_sample_run(Path(tmp))
        corpus_import(manifest=manifest, images_dir=images)
        artifacts_import(run_root=run_root, configurations_file=configurations)
    artifacts = [artifact_audit(artifact=a) for a in artifact_list() if a.configuration.slug.startswith("sample-")]
    try:
        rendered = artifacts_render(artifacts=artifacts)
    except FileNotFoundError:
        return "sample corpus and artifacts loaded; LibreOffice is not installed, so nothing was rendered"
    return f"sample corpus: {SAMPLE_FIGURES} figures, {len(artifacts)} artifacts of {len(SAMPLE_CONFIGURATIONS)} configurations ({rendered} rendered)"
