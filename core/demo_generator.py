"""A synthetic demo study in the app's data-contract formats (issue 13). Pure: no Django, DRF or Celery.

`generate_demo(out_dir, seed=...)` writes, deterministically (the same seed gives byte-identical files):

    out_dir/
      DEMO.md, summary.json           what is synthetic, the seed, the true strengths, the defect rates
      manifest.jsonl, images/*.png    the corpus (DESIGN contract 1): drawn overview figures
      configurations.toml             ten configurations (contract 2)
      runs/<slug>/<task_id>/          output.pptx, output.py | output.js, output.jsonl, error.log (contract 2)
      judge.jsonl                     two judge families x three runs (contract 3)
      battles.csv                     blinded human comparisons of study `demo` (contract 5)
      gate_reviews.csv                human gate reviews (PPTBench protocol; `import_gate_reviews`)
      ratings.csv                     0–5 ratings by humans and a judge's three runs (PPTArena; `import_ratings`)

Every figure is first a scene graph (boxes, containers, arrows, dashed paths); the PNG is drawn from it with
Pillow and each configuration's PPTX is rebuilt from it with python-pptx, carrying the behaviours the paper
reports (faithful native slides, reversed arrows, missing or misspelled labels, freeform "connectors",
unattached connectors, shifted layouts, pasted full-slide rasters, multi-slide decks, corrupt files, missing
outputs). Each configuration has a stated true strength (Elo scale, mean 1000) that sets how often it injects
defects and how humans vote. Nothing here is real data: titles start with "[synthetic]", arXiv ids use the
impossible month 13, URLs point to example.org, judge reasons say "synthetic demo judge".
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from lxml import etree
from PIL import Image, ImageDraw, ImageFont
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.dml import MSO_LINE_DASH_STYLE
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.oxml.ns import qn
from pptx.util import Emu, Pt

DEFAULT_SEED = 20260713
DEFAULT_FIGURES = 30  # enough for every pair and overlap, small enough to bundle with renderings
STUDY = "demo"
FIELDS: tuple[str, ...] = ("cs.AI", "cs.CL", "cs.CV", "cs.LG")
ANNOTATORS: tuple[str, ...] = ("annotator", "demo-ann-2", "demo-ann-3", "demo-ann-4")
# Rubric maxima, as corpus.protocol.RUBRIC_MAXIMA states them (copied: this module imports no app code).
RUBRIC_MAXIMA: dict[str, int] = {
    "text": 20,
    "semantic_structure": 30,
    "layout": 15,
    "editability": 25,
    "visual_detail": 10,
}
GATE_FAILURES: tuple[str, ...] = ("missing", "corrupt", "multi_slide")
SLIDE_WIDTH_EMU = 9_144_000  # 10 inches; the height follows the figure's aspect ratio
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
FIXED_DOC_TIME = datetime(2026, 7, 1, 9, 0, 0)
VOTES_START = datetime(2026, 7, 6, 9, 0, 0, tzinfo=UTC)
# Human vote model (stated in summary.json): ties among two gate-passing artifacts, and the sides' strengths.
HUMAN_TIE_RATE = 0.25
ELO_PER_RUBRIC_POINT = 3.0  # an artifact's own quality moves its side's strength around the configuration's
TIE_SUCCESS_MIN_SCORE = 60
DENSE_PAIR_ITEMS, SPARSE_PAIR_ITEMS, SPARSE_PAIRS, OVERLAP_ITEMS = 20, 4, 9, 50


# --- configurations ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoConfiguration:
    slug: str
    model: str
    harness: str
    workflow: str
    reasoning_effort: str
    label: str
    strength: float  # the true Bradley-Terry strength on the Elo scale (mean 1000 over the ten)


def _configuration(model: str, harness: str, workflow: str, strength: float) -> DemoConfiguration:
    name = model.replace("synth-", "").capitalize()
    return DemoConfiguration(
        slug=f"{model}-{harness}-{workflow}",
        model=model,
        harness=harness,
        workflow=workflow,
        reasoning_effort="high",
        label=f"{name} · {harness} · {workflow}",
        strength=strength,
    )


# Four fictional models x two workflows, synth-alpha also in a second harness: ten configurations (REFERENCE 2).
# Strengths are 80 Elo apart, so ~160 votes per configuration recover their order.
# The model names are invented on purpose: synthetic scores must not be read as claims about real models.
CONFIGURATIONS: tuple[DemoConfiguration, ...] = (
    _configuration("synth-alpha", "codex", "direct", 1360),
    _configuration("synth-alpha", "codex", "specialized", 1120),
    _configuration("synth-alpha", "claude-code", "direct", 1200),
    _configuration("synth-alpha", "claude-code", "specialized", 1280),
    _configuration("synth-beta", "claude-code", "direct", 1040),
    _configuration("synth-beta", "claude-code", "specialized", 960),
    _configuration("synth-gamma", "gemini-cli", "direct", 880),
    _configuration("synth-gamma", "gemini-cli", "specialized", 800),
    _configuration("synth-delta", "opencode", "direct", 720),
    _configuration("synth-delta", "opencode", "specialized", 640),
)
PRICE_PER_MTOK = {
    "synth-alpha": (3.0, 15.0),
    "synth-beta": (1.25, 10.0),
    "synth-gamma": (1.0, 8.0),
    "synth-delta": (0.4, 1.6),
}


def defect_rates(configuration: DemoConfiguration) -> dict[str, float]:
    """Per-artifact probability of each behaviour; weakness w in [0, 1] grows as the strength falls."""
    w = min(1.0, max(0.0, (1200.0 - configuration.strength) / 400.0))
    specialized = configuration.workflow == "specialized"
    return {
        "missing": round(0.005 + 0.04 * w, 4),
        "corrupt": round(0.005 + 0.02 * w, 4),
        "multi_slide": round(0.005 + (0.02 if specialized else 0.04) * w, 4),
        "pasted_raster": round(0.01 + (0.03 if specialized else 0.10) * w, 4),
        "freeform_connectors": round(0.45 + 0.25 * w if specialized else 0.03 + 0.07 * w, 4),
        "unattached_connectors": round(0.08 + 0.30 * w, 4),
        "reversed_arrows": round(0.05 + 0.30 * w, 4),
        "dropped_edges": round(0.04 + 0.25 * w, 4),
        "missing_labels": round(0.04 + 0.30 * w, 4),
        "misspelled_labels": round(0.05 + 0.25 * w, 4),
        "dropped_groups": round(0.03 + 0.25 * w, 4),
        "shifted_layout": round(0.06 + 0.40 * w, 4),
        "truncated_log": round(0.01 + 0.03 * w, 4),
    }


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed, *keys])


# --- the scene graph of a figure -----------------------------------------------------------------------------

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in image pixels


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    box: Box
    kind: str  # rect | rounded | ellipse | cylinder
    fill: tuple[int, int, int]


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    dashed: bool = False  # a dashed path routed around the boxes (feedback / skip)
    label: str = ""


@dataclass(frozen=True)
class Group:
    label: str
    box: Box
    members: tuple[str, ...]


@dataclass(frozen=True)
class FigureModel:
    task_id: str
    field: str
    title: str
    heading: str
    width: int
    height: int
    horizontal: bool
    font_size: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    groups: tuple[Group, ...]
    route: int  # the cross-axis coordinate of dashed paths (below or right of every box)

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)


VOCABULARY: dict[str, tuple[str, ...]] = {
    "cs.AI": (
        "Planner",
        "Tool Executor",
        "Memory Store",
        "Critic",
        "Environment",
        "World Model",
        "Goal Parser",
        "Action Selector",
        "Reflection",
        "Task Queue",
        "Knowledge Base",
        "Verifier",
        "Skill Library",
        "Observation",
        "Reward Model",
        "Scheduler",
        "Agent Loop",
        "Search Tree",
        "Policy",
        "Feedback",
    ),
    "cs.CL": (
        "Tokenizer",
        "Text Encoder",
        "Retriever",
        "Reranker",
        "Prompt Builder",
        "LLM Decoder",
        "Document Index",
        "Query Rewriter",
        "Cross Attention",
        "Answer Head",
        "Vocabulary",
        "Span Extractor",
        "Summarizer",
        "Alignment",
        "Instruction Set",
        "Embedding",
        "Beam Search",
        "Output Text",
        "Corpus",
        "Classifier",
    ),
    "cs.CV": (
        "Input Image",
        "Patch Embedding",
        "ViT Backbone",
        "Feature Pyramid",
        "Detection Head",
        "Mask Decoder",
        "Region Proposals",
        "Depth Estimator",
        "Optical Flow",
        "Segmentation",
        "Image Encoder",
        "Query Tokens",
        "Box Regressor",
        "Upsampler",
        "Attention Map",
        "Keypoints",
        "Camera Pose",
        "Renderer",
        "Video Frames",
        "3D Volume",
    ),
    "cs.LG": (
        "Dataset",
        "Mini-batch",
        "Encoder",
        "Latent z",
        "Decoder",
        "Loss",
        "Optimizer",
        "Replay Buffer",
        "Policy Network",
        "Value Network",
        "Teacher",
        "Student",
        "Augmentation",
        "Projection Head",
        "Gradient",
        "Prior",
        "Posterior",
        "Sampler",
        "Ensemble",
        "Evaluation",
    ),
}
GROUP_WORDS = ("Stage", "Module", "Pretraining", "Inference", "Training", "Retrieval", "Perception", "Reasoning")
TITLE_ADJECTIVES = (
    "Hierarchical",
    "Sparse",
    "Unified",
    "Modular",
    "Self-Supervised",
    "Contrastive",
    "Adaptive",
    "Efficient",
)
TITLE_NOUNS = {
    "cs.AI": "Agents",
    "cs.CL": "Language Models",
    "cs.CV": "Visual Recognition",
    "cs.LG": "Representation Learning",
}
EDGE_LABELS = ("feedback", "update", "retrieve", "gradient", "refine", "reuse")
PALETTES = (
    ((219, 232, 251), (252, 228, 214), (226, 240, 217)),
    ((237, 226, 246), (255, 242, 204), (222, 235, 247)),
    ((252, 234, 234), (220, 240, 240), (240, 240, 220)),
)
CYLINDER_WORDS = ("Memory", "Store", "Buffer", "Index", "Base", "Corpus", "Dataset", "Library", "Queue")
ASPECTS = (
    ("banner", 1240, 420),
    ("wide", 1120, 540),
    ("landscape", 960, 640),
    ("square", 720, 700),
    ("portrait", 600, 860),
)


def _figure_model(index: int, seed: int) -> FigureModel:
    rng = _rng(seed, 1, index)
    field_name = FIELDS[index % len(FIELDS)]
    aspect, base_w, base_h = ASPECTS[int(rng.integers(len(ASPECTS)))]
    scale = float(rng.uniform(0.8, 1.1))
    width, height = int(base_w * scale) // 4 * 4, int(base_h * scale) // 4 * 4
    horizontal = aspect != "portrait"
    stages = int(rng.integers(3, 6 if aspect in ("banner", "wide") else 5))
    per_stage = [int(rng.choice([1, 2, 3], p=[0.45, 0.4, 0.15])) for _ in range(stages)]
    if aspect == "banner":
        per_stage = [min(n, 2) for n in per_stage]
    vocabulary = list(VOCABULARY[field_name])
    labels = [vocabulary[i] for i in rng.permutation(len(vocabulary))[: sum(per_stage)]]
    palette = PALETTES[int(rng.integers(len(PALETTES)))]
    font_size = max(11, min(16, int(min(width, height) / 42)))

    adjective = TITLE_ADJECTIVES[int(rng.integers(len(TITLE_ADJECTIVES)))]
    method = f"{adjective[:3].upper()}-{labels[0].split()[0][:4].upper()}"
    title = f"[synthetic] {method}: {adjective} {labels[0]} Pipelines for {TITLE_NOUNS[field_name]}"
    heading = f"Overview of {method}" if rng.random() < 0.6 else ""

    margin = 24
    top = margin + (int(font_size * 2.2) if heading else 0)
    route_room = 56
    flow_len = (width if horizontal else height - top) - 2 * margin - (0 if horizontal else route_room)
    cross_start = top if horizontal else margin
    cross_len = (height - top - margin - route_room) if horizontal else (width - 2 * margin - route_room)
    band = flow_len / stages
    nodes: list[Node] = []
    stage_nodes: list[list[str]] = []
    label_iter = iter(labels)
    for s, count in enumerate(per_stage):
        ids = []
        slot = cross_len / count
        for k in range(count):
            label = next(label_iter)
            flow0 = margin + s * band + band * 0.17
            flow1 = flow0 + band * 0.66
            cross0 = cross_start + k * slot + slot * 0.22
            cross1 = cross0 + min(slot * 0.6, 120 if horizontal else 160)
            box = (flow0, cross0, flow1, cross1) if horizontal else (cross0, flow0 + top, cross1, flow1 + top)
            kind = (
                "cylinder"
                if any(w in label for w in CYLINDER_WORDS)
                else ("ellipse" if s == 0 and rng.random() < 0.3 else "rounded" if rng.random() < 0.6 else "rect")
            )
            node_id = f"n{len(nodes)}"
            nodes.append(Node(node_id, label, tuple(round(v) for v in box), kind, palette[s % len(palette)]))
            ids.append(node_id)
        stage_nodes.append(ids)

    edges: list[Edge] = []
    for s in range(stages - 1):
        outgoing: set[str] = set()
        for dst in stage_nodes[s + 1]:
            src = stage_nodes[s][int(rng.integers(len(stage_nodes[s])))]
            edges.append(Edge(src, dst))
            outgoing.add(src)
        for src in stage_nodes[s]:
            if src not in outgoing:
                edges.append(Edge(src, stage_nodes[s + 1][int(rng.integers(len(stage_nodes[s + 1])))]))
    if rng.random() < 0.7 and stages >= 3:
        src_stage = int(rng.integers(2, stages))
        dst_stage = int(rng.integers(0, src_stage - 1))
        label = EDGE_LABELS[int(rng.integers(len(EDGE_LABELS)))] if rng.random() < 0.6 else ""
        edges.append(Edge(stage_nodes[src_stage][-1], stage_nodes[dst_stage][-1], dashed=True, label=label))

    groups: list[Group] = []
    start = int(rng.integers(0, 2))
    while start + 1 < stages and len(groups) < 2 and rng.random() < 0.75:
        members = tuple(stage_nodes[start] + stage_nodes[start + 1])
        boxes = [n.box for n in nodes if n.id in members]
        pad, label_room = int(band * 0.1), font_size + 8
        box = (
            min(b[0] for b in boxes) - pad,
            min(b[1] for b in boxes) - pad - label_room,
            max(b[2] for b in boxes) + pad,
            max(b[3] for b in boxes) + pad,
        )
        box = (max(2, box[0]), max(top - 4, box[1]), min(width - 3, box[2]), min(height - 3, box[3]))
        groups.append(Group(f"{GROUP_WORDS[int(rng.integers(len(GROUP_WORDS)))]} {len(groups) + 1}", box, members))
        start += 2 + int(rng.integers(0, 2))
    extent = max((n.box[3] if horizontal else n.box[2]) for n in nodes)
    extent = max([extent] + [(g.box[3] if horizontal else g.box[2]) for g in groups])
    route = min(extent + 22, (height if horizontal else width) - 10)
    return FigureModel(
        task_id=f"demo-{index + 1:03d}",
        field=field_name,
        title=title,
        heading=heading,
        width=width,
        height=height,
        horizontal=horizontal,
        font_size=font_size,
        nodes=tuple(nodes),
        edges=tuple(edges),
        groups=tuple(groups),
        route=route,
    )


# --- drawing the source figure -------------------------------------------------------------------------------


def _anchor(box: Box, side: str) -> tuple[float, float]:
    x0, y0, x1, y1 = box
    return {
        "left": (x0, (y0 + y1) / 2),
        "right": (x1, (y0 + y1) / 2),
        "top": ((x0 + x1) / 2, y0),
        "bottom": ((x0 + x1) / 2, y1),
    }[side]


def _edge_sides(figure: FigureModel, edge: Edge) -> tuple[str, str]:
    if edge.dashed:
        return ("bottom", "bottom") if figure.horizontal else ("right", "right")
    return ("right", "left") if figure.horizontal else ("bottom", "top")


def _edge_path(figure: FigureModel, edge: Edge) -> list[tuple[float, float]]:
    src_side, dst_side = _edge_sides(figure, edge)
    p0, p1 = _anchor(figure.node(edge.src).box, src_side), _anchor(figure.node(edge.dst).box, dst_side)
    if not edge.dashed:
        return [p0, p1]
    r = figure.route
    return [p0, (p0[0], r), (p1[0], r), p1] if figure.horizontal else [p0, (r, p0[1]), (r, p1[1]), p1]


def _dashed(draw: ImageDraw.ImageDraw, p0, p1, *, fill, width: int, dash: int = 9, gap: int = 6) -> None:
    length = math.dist(p0, p1)
    if length == 0:
        return
    ux, uy = (p1[0] - p0[0]) / length, (p1[1] - p0[1]) / length
    position = 0.0
    while position < length:
        end = min(position + dash, length)
        draw.line(
            (p0[0] + ux * position, p0[1] + uy * position, p0[0] + ux * end, p0[1] + uy * end), fill=fill, width=width
        )
        position = end + gap


def _arrow_head(draw: ImageDraw.ImageDraw, tail, tip, *, fill, size: float = 10) -> None:
    angle = math.atan2(tip[1] - tail[1], tip[0] - tail[0])
    left = (tip[0] - size * math.cos(angle - 0.45), tip[1] - size * math.sin(angle - 0.45))
    right = (tip[0] - size * math.cos(angle + 0.45), tip[1] - size * math.sin(angle + 0.45))
    draw.polygon([tip, left, right], fill=fill)


def _wrap(label: str, font, max_width: float) -> list[str]:
    if font.getlength(label) <= max_width or " " not in label:
        return [label]
    words = label.split()
    best = min(range(1, len(words)), key=lambda k: abs(len(" ".join(words[:k])) - len(" ".join(words[k:]))))
    return [" ".join(words[:best]), " ".join(words[best:])]


def _centered_text(draw: ImageDraw.ImageDraw, box: Box, label: str, font, fill=(20, 20, 20)) -> None:
    lines = _wrap(label, font, box[2] - box[0] - 8)
    line_height = font.size + 3
    y = (box[1] + box[3]) / 2 - line_height * len(lines) / 2
    for line in lines:
        draw.text(((box[0] + box[2]) / 2 - font.getlength(line) / 2, y), line, font=font, fill=fill)
        y += line_height


def draw_figure(figure: FigureModel) -> Image.Image:
    """The source figure as a palette PNG-ready image (flat colours keep the files small)."""
    image = Image.new("RGB", (figure.width, figure.height), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=figure.font_size)
    small = ImageFont.load_default(size=max(10, figure.font_size - 2))
    ink, accent = (40, 40, 40), (90, 90, 160)
    if figure.heading:
        draw.text((24, 14), figure.heading, font=ImageFont.load_default(size=figure.font_size + 3), fill=ink)
    for group in figure.groups:
        x0, y0, x1, y1 = group.box
        for a, b in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))):
            _dashed(draw, a, b, fill=accent, width=2)
        draw.text((x0 + 8, y0 + 4), group.label, font=small, fill=accent)
    for node in figure.nodes:
        x0, y0, x1, y1 = node.box
        if node.kind == "rounded":
            draw.rounded_rectangle(node.box, radius=10, fill=node.fill, outline=ink, width=2)
        elif node.kind == "ellipse":
            draw.ellipse(node.box, fill=node.fill, outline=ink, width=2)
        elif node.kind == "cylinder":
            cap = max(6, (y1 - y0) // 6)
            draw.rectangle((x0, y0 + cap // 2, x1, y1 - cap // 2), fill=node.fill)
            draw.ellipse((x0, y1 - cap, x1, y1), fill=node.fill, outline=ink, width=2)
            draw.line((x0, y0 + cap // 2, x0, y1 - cap // 2), fill=ink, width=2)
            draw.line((x1, y0 + cap // 2, x1, y1 - cap // 2), fill=ink, width=2)
            draw.ellipse((x0, y0, x1, y0 + cap), fill=node.fill, outline=ink, width=2)
        else:
            draw.rectangle(node.box, fill=node.fill, outline=ink, width=2)
        _centered_text(draw, node.box, node.label, font)
    for edge in figure.edges:
        path = _edge_path(figure, edge)
        for a, b in itertools.pairwise(path):
            if edge.dashed:
                _dashed(draw, a, b, fill=accent, width=2)
            else:
                draw.line((*a, *b), fill=ink, width=2)
        _arrow_head(draw, path[-2], path[-1], fill=accent if edge.dashed else ink)
        if edge.label:
            mid = ((path[1][0] + path[2][0]) / 2, (path[1][1] + path[2][1]) / 2)
            draw.text((mid[0] - small.getlength(edge.label) / 2, mid[1] + 3), edge.label, font=small, fill=accent)
    return image


def _png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buffer, format="PNG", optimize=True
    )
    return buffer.getvalue()


# --- what each artifact does ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArtifactPlan:
    configuration: str
    task_id: str
    gate: str = ""  # "", or one of GATE_FAILURES
    pasted_raster: bool = False
    freeform_connectors: bool = False
    unattached_connectors: bool = False
    shifted_layout: bool = False
    dropped_groups: bool = False
    reversed_edges: tuple[int, ...] = ()
    dropped_edges: tuple[int, ...] = ()
    missing_labels: tuple[str, ...] = ()
    misspelled_labels: tuple[str, ...] = ()
    truncated_log: bool = False
    subscores: dict[str, int] = field(default_factory=dict)  # the artifact's true rubric subscores (0 when gated)

    @property
    def behaviours(self) -> tuple[str, ...]:
        names = [self.gate] if self.gate else []
        names += [
            n
            for n in (
                "pasted_raster",
                "freeform_connectors",
                "unattached_connectors",
                "shifted_layout",
                "dropped_groups",
            )
            if getattr(self, n)
        ]
        names += [
            n for n in ("reversed_edges", "dropped_edges", "missing_labels", "misspelled_labels") if getattr(self, n)
        ]
        return tuple(names) or ("faithful",)

    @property
    def true_score(self) -> float:
        """Final score s = g · min(Q, c) of the true subscores (the cap for a pasted raster)."""
        if self.gate:
            return 0.0
        total = float(sum(self.subscores.values()))
        return min(total, 50.0) if self.pasted_raster else total


def _subset(rng: np.random.Generator, items: list, low: int, high: int) -> tuple:
    if not items:
        return ()
    count = min(len(items), int(rng.integers(low, high + 1)))
    return tuple(items[i] for i in sorted(rng.choice(len(items), size=count, replace=False)))


def _true_subscores(plan: ArtifactPlan, configuration: DemoConfiguration, rng: np.random.Generator) -> dict[str, int]:
    offset = (configuration.strength - 1000.0) / 80.0
    if plan.pasted_raster:
        raw = {"text": 17, "semantic_structure": 22, "layout": 13, "editability": 2, "visual_detail": 8}
    else:
        raw = {
            "text": 19 - 2.5 * len(plan.missing_labels) - 1.5 * len(plan.misspelled_labels),
            "semantic_structure": 28
            - 3 * len(plan.reversed_edges)
            - 3 * len(plan.dropped_edges)
            - 4 * plan.dropped_groups
            - 3 * plan.freeform_connectors
            - 2 * plan.unattached_connectors,
            "layout": 13 - 6 * plan.shifted_layout - plan.dropped_groups + offset / 2,
            "editability": 23 - 8 * plan.freeform_connectors - 4 * plan.unattached_connectors,
            "visual_detail": 8 - 2 * plan.shifted_layout - plan.freeform_connectors + offset / 2,
        }
    return {
        axis: int(min(RUBRIC_MAXIMA[axis], max(0, round(raw[axis] + rng.normal(0, 1.0))))) for axis in RUBRIC_MAXIMA
    }


def plan_artifacts(figures: list[FigureModel], seed: int) -> dict[tuple[str, str], ArtifactPlan]:
    """Draw every artifact's behaviours from its configuration's rates; each gate failure and the raster appear."""
    plans: dict[tuple[str, str], ArtifactPlan] = {}
    for c_index, configuration in enumerate(CONFIGURATIONS):
        rates = defect_rates(configuration)
        for f_index, figure in enumerate(figures):
            rng = _rng(seed, 2, c_index, f_index)
            draw = {name: bool(rng.random() < rate) for name, rate in rates.items()}
            gate = next((g for g in GATE_FAILURES if draw[g]), "")
            edges = list(range(len(figure.edges)))
            labelled = [n.id for n in figure.nodes]
            plans[(configuration.slug, figure.task_id)] = ArtifactPlan(
                configuration=configuration.slug,
                task_id=figure.task_id,
                gate=gate,
                pasted_raster=draw["pasted_raster"] and not gate,
                freeform_connectors=draw["freeform_connectors"],
                unattached_connectors=draw["unattached_connectors"] and not draw["freeform_connectors"],
                shifted_layout=draw["shifted_layout"],
                dropped_groups=draw["dropped_groups"] and bool(figure.groups),
                reversed_edges=_subset(rng, edges, 1, 2) if draw["reversed_arrows"] else (),
                dropped_edges=_subset(rng, edges, 1, 2) if draw["dropped_edges"] else (),
                missing_labels=_subset(rng, labelled, 1, 3) if draw["missing_labels"] else (),
                misspelled_labels=_subset(rng, labelled, 1, 2) if draw["misspelled_labels"] else (),
                truncated_log=draw["truncated_log"],
            )
    # Every behaviour the demo promises is present at least once: force the missing ones on the weakest configurations.
    forced = {
        "missing": CONFIGURATIONS[-1],
        "corrupt": CONFIGURATIONS[-2],
        "multi_slide": CONFIGURATIONS[-3],
        "pasted_raster": CONFIGURATIONS[-4],
    }
    for b_index, (behaviour, configuration) in enumerate(forced.items()):
        if any(behaviour in p.behaviours for p in plans.values()):
            continue
        slot = int(_rng(seed, 3, b_index).integers(len(figures)))
        key = (configuration.slug, figures[slot].task_id)
        values = {
            **plans[key].__dict__,
            **({"gate": behaviour} if behaviour in GATE_FAILURES else {"pasted_raster": True, "gate": ""}),
        }
        plans[key] = ArtifactPlan(**values)
    by_slug = {c.slug: (i, c) for i, c in enumerate(CONFIGURATIONS)}
    for key, plan in plans.items():
        c_index, configuration = by_slug[plan.configuration]
        f_index = next(i for i, f in enumerate(figures) if f.task_id == plan.task_id)
        subscores = {} if plan.gate else _true_subscores(plan, configuration, _rng(seed, 4, c_index, f_index))
        plans[key] = ArtifactPlan(**{**plan.__dict__, "subscores": subscores})
    return plans


# --- building the PPTX ---------------------------------------------------------------------------------------

_SHAPES = {
    "rect": MSO_SHAPE.RECTANGLE,
    "rounded": MSO_SHAPE.ROUNDED_RECTANGLE,
    "ellipse": MSO_SHAPE.OVAL,
    "cylinder": MSO_SHAPE.CAN,
}
_SITE = {"top": 0, "left": 1, "bottom": 2, "right": 3}


APP_XML = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    b"<Application>refig-study demo generator</Application><Slides>1</Slides></Properties>"
)


def _lean_presentation(width: int, height: int) -> Presentation:
    """python-pptx's default deck without what a one-slide reconstruction never uses (keeps the bundle small)."""
    deck = Presentation()
    blank = deck.slide_layouts[6]
    for layout in list(deck.slide_layouts):
        if layout is not blank:
            deck.slide_layouts.remove(layout)
    for rels, dropped in (
        (deck.part.package._rels, {RT.THUMBNAIL}),
        (deck.part.rels, {RT.PRINTER_SETTINGS, RT.VIEW_PROPS}),
    ):
        for key, rel in list(rels.items()):
            if rel.reltype in dropped:
                rels.pop(key)
    for tree in (deck.slide_masters[0].shapes._spTree, blank.shapes._spTree):
        for placeholder in tree.xpath("./p:sp[p:nvSpPr/p:nvPr/p:ph]"):
            tree.remove(placeholder)
    theme = deck.slide_masters[0].part.part_related_by(RT.THEME)
    root = etree.fromstring(theme.blob)
    for font in root.iter(qn("a:font")):  # per-script font substitutions: optional, a third of the theme
        font.getparent().remove(font)
    theme._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    deck.part.package.part_related_by(RT.EXTENDED_PROPERTIES)._blob = APP_XML
    deck.slide_width, deck.slide_height = Emu(width), Emu(height)
    props = deck.core_properties
    props.author = props.last_modified_by = "refig-study demo generator (synthetic)"
    props.created = props.modified = FIXED_DOC_TIME
    props.revision = 1
    props.title = "synthetic demo reconstruction"
    return deck


def _deterministic_zip(data: bytes) -> bytes:
    """Rewrite a saved package with fixed timestamps and the members in the order python-pptx wrote them."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as target:
        for info in source.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=FIXED_ZIP_TIME)
            member.compress_type, member.create_system, member.external_attr = zipfile.ZIP_DEFLATED, 3, 0o644 << 16
            target.writestr(member, source.read(info.filename), compresslevel=9)
    return out.getvalue()


def _arrow_end(line_owner, *, dashed: bool) -> None:
    line = line_owner.line
    line.color.rgb = RGBColor(0x5A, 0x5A, 0xA0) if dashed else RGBColor(0x28, 0x28, 0x28)
    line.width = Pt(1.5)
    if dashed:
        line.dash_style = MSO_LINE_DASH_STYLE.DASH
    etree.SubElement(line._get_or_add_ln(), qn("a:tailEnd"), {"type": "triangle"})


def _misspell(label: str, rng: np.random.Generator) -> str:
    letters = [
        i for i in range(len(label) - 1) if label[i].isalpha() and label[i + 1].isalpha() and label[i] != label[i + 1]
    ]
    if not letters:
        return label + label[-1]
    i = letters[int(rng.integers(len(letters)))]
    return label[:i] + label[i + 1] + label[i] + label[i + 2 :]


def _set_text(shape, text: str, size: float, *, bold: bool = False, anchor_top: bool = False) -> None:
    frame = shape.text_frame
    frame.word_wrap = True
    frame.vertical_anchor = MSO_ANCHOR.TOP if anchor_top else MSO_ANCHOR.MIDDLE
    paragraph = frame.paragraphs[0]
    paragraph.alignment = PP_ALIGN.LEFT if anchor_top else PP_ALIGN.CENTER
    run = paragraph.add_run()
    run.text = text
    run.font.size = Pt(size)
    run.font.bold = bold
    run.font.color.rgb = RGBColor(0x14, 0x14, 0x14)


def build_deck(figure: FigureModel, plan: ArtifactPlan, *, png: bytes, seed: int) -> bytes:
    """The configuration's PPTX for this figure, with the plan's behaviours, as deterministic bytes."""
    rng = _rng(seed, 5, int(hashlib.sha256(f"{plan.configuration}/{plan.task_id}".encode()).hexdigest()[:8], 16))
    scale = SLIDE_WIDTH_EMU / figure.width
    deck = _lean_presentation(SLIDE_WIDTH_EMU, int(figure.height * scale))
    layout = deck.slide_layouts[0]
    slide = deck.slides.add_slide(layout)
    text_pt = max(9.0, figure.font_size * scale / 12700 * 0.95)

    def emu(box: Box, shift: tuple[float, float] = (0, 0), grow: float = 1.0) -> tuple[int, int, int, int]:
        x0, y0, x1, y1 = box
        w, h = (x1 - x0) * grow, (y1 - y0) * grow
        return int((x0 + shift[0]) * scale), int((y0 + shift[1]) * scale), int(w * scale), int(h * scale)

    if plan.pasted_raster:
        slide.shapes.add_picture(io.BytesIO(png), 0, 0, deck.slide_width, deck.slide_height)
        if figure.heading:
            _set_text(
                slide.shapes.add_textbox(
                    Emu(int(20 * scale)),
                    Emu(int(8 * scale)),
                    Emu(int(figure.width * 0.5 * scale)),
                    Emu(int(30 * scale)),
                ),
                figure.heading,
                text_pt + 2,
                bold=True,
            )
    else:
        if figure.heading:
            box = slide.shapes.add_textbox(
                Emu(int(20 * scale)),
                Emu(int(8 * scale)),
                Emu(int(figure.width * 0.6 * scale)),
                Emu(int(figure.font_size * 2 * scale)),
            )
            _set_text(box, figure.heading, text_pt + 2, bold=True, anchor_top=True)
        jitter = figure.width * 0.06
        shapes: dict[str, object] = {}
        for node in figure.nodes:
            shift = (
                (float(rng.uniform(-jitter, jitter)), float(rng.uniform(-jitter, jitter) * 0.6))
                if plan.shifted_layout
                else (0.0, 0.0)
            )
            grow = float(rng.uniform(0.8, 1.2)) if plan.shifted_layout else 1.0
            shape = slide.shapes.add_shape(_SHAPES[node.kind], *map(Emu, emu(node.box, shift, grow)))
            shape.fill.solid()
            shape.fill.fore_color.rgb = RGBColor(*node.fill)
            shape.line.color.rgb = RGBColor(0x28, 0x28, 0x28)
            shape.line.width = Pt(1.5)
            shape.shadow.inherit = False
            label = (
                ""
                if node.id in plan.missing_labels
                else _misspell(node.label, rng)
                if node.id in plan.misspelled_labels
                else node.label
            )
            if label:
                _set_text(shape, label, text_pt)
            shapes[node.id] = shape
        if not plan.dropped_groups:
            for group in figure.groups:
                frame = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, *map(Emu, emu(group.box)))
                frame.fill.background()
                frame.line.color.rgb = RGBColor(0x5A, 0x5A, 0xA0)
                frame.line.dash_style = MSO_LINE_DASH_STYLE.DASH
                frame.shadow.inherit = False
                _set_text(frame, group.label, text_pt * 0.85, anchor_top=True)
                frame.text_frame.paragraphs[0].runs[0].font.color.rgb = RGBColor(0x5A, 0x5A, 0xA0)
                members = [shapes[m] for m in group.members]
                container = slide.shapes.add_group_shape()  # a native group: the frame and its member boxes
                for element in [frame._element] + [m._element for m in members]:
                    container._element.append(element)
                container._element.recalculate_extents()
        for e_index, edge in enumerate(figure.edges):
            if e_index in plan.dropped_edges:
                continue
            src, dst = (edge.dst, edge.src) if e_index in plan.reversed_edges else (edge.src, edge.dst)
            src_side, dst_side = _edge_sides(figure, edge)
            if (
                plan.freeform_connectors or edge.dashed
            ):  # freeform: the specialized signature; dashed routes are polylines
                path = _edge_path(figure, edge)
                if e_index in plan.reversed_edges:
                    path = path[::-1]
                builder = slide.shapes.build_freeform(Emu(int(path[0][0] * scale)), Emu(int(path[0][1] * scale)))
                builder.add_line_segments(
                    [(Emu(int(x * scale)), Emu(int(y * scale))) for x, y in path[1:]], close=False
                )
                line = builder.convert_to_shape()
                line.fill.background()
                line.shadow.inherit = False
                _arrow_end(line, dashed=edge.dashed)
                if edge.label:
                    mid = ((path[1][0] + path[2][0]) / 2, (path[1][1] + path[2][1]) / 2)
                    label = slide.shapes.add_textbox(
                        Emu(int((mid[0] - 40) * scale)),
                        Emu(int((mid[1] + 2) * scale)),
                        Emu(int(80 * scale)),
                        Emu(int(20 * scale)),
                    )
                    _set_text(label, edge.label, text_pt * 0.85)
                continue
            connector = slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, 0, 0, 0, 0)
            if e_index in plan.reversed_edges:
                src_side, dst_side = dst_side, src_side
            if plan.unattached_connectors:
                (x0, y0), (x1, y1) = _anchor(figure.node(src).box, src_side), _anchor(figure.node(dst).box, dst_side)
                connector.begin_x, connector.begin_y = Emu(int(x0 * scale)), Emu(int(y0 * scale))
                connector.end_x, connector.end_y = Emu(int(x1 * scale)), Emu(int(y1 * scale))
            else:
                connector.begin_connect(shapes[src], _SITE[src_side])
                connector.end_connect(shapes[dst], _SITE[dst_side])
            _arrow_end(connector, dashed=False)
        if plan.gate == "multi_slide":  # the agent put its legend (and a duplicate title) on a second slide
            extra = deck.slides.add_slide(layout)
            _set_text(
                extra.shapes.add_textbox(
                    Emu(int(20 * scale)),
                    Emu(int(20 * scale)),
                    Emu(int(figure.width * 0.8 * scale)),
                    Emu(int(60 * scale)),
                ),
                figure.heading or "Legend: boxes are modules, arrows are data flow",
                text_pt + 2,
            )
    buffer = io.BytesIO()
    deck.save(buffer)
    data = _deterministic_zip(buffer.getvalue())
    if plan.gate == "corrupt":  # the process died while writing: a truncated zip
        data = data[: len(data) * 3 // 5]
    return data


# --- agent code, logs, errors --------------------------------------------------------------------------------


def _code(figure: FigureModel, configuration: DemoConfiguration) -> tuple[str, str]:
    labels = ", ".join(json.dumps(n.label) for n in figure.nodes[:4])
    if configuration.workflow == "direct":
        return "output.py", (
            "# synthetic demo: stands in for the agent's python-pptx code (not executed)\n"
            "from pptx import Presentation\nfrom pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE\n\n"
            f"LABELS = [{labels}, ...]\ndeck = Presentation()\nslide = deck.slides.add_slide(deck.slide_layouts[6])\n"
            "# ... one shape per module, one connector per arrow ...\ndeck.save('output.pptx')\n"
        )
    return "output.js", (
        "// synthetic demo: stands in for the agent's PPTX-skill script (not executed)\n"
        "const pptx = require('pptx-skill');\n"
        f"const labels = [{labels}];\n"
        "// ... html2pptx layout, shapes and lines ...\npptx.writeFile({ fileName: 'output.pptx' });\n"
    )


def _run_log(
    figure: FigureModel, configuration: DemoConfiguration, plan: ArtifactPlan, rng: np.random.Generator
) -> tuple[str, dict]:
    """An agent log in the shape its harness writes; returns (text, economics)."""
    specialized = configuration.workflow == "specialized"
    turns = int(rng.integers(5, 11) + (4 if specialized else 0) + (6 if plan.gate == "missing" else 0))
    start = datetime(2026, 6, 20, 8, 0, 0, tzinfo=UTC) + timedelta(minutes=int(rng.integers(0, 60 * 24 * 5)))
    clock, total_in, total_out, lines = 0.0, 0, 0, []
    claude_style = configuration.harness in ("claude-code", "opencode")
    if claude_style:
        lines.append(
            {"type": "system", "subtype": "init", "model": configuration.model, "timestamp": start.isoformat()}
        )
    else:
        lines.append({"type": "thread.started", "timestamp": start.isoformat()})
    for turn in range(turns):
        tokens_in, tokens_out = int(rng.integers(3_000, 9_000)) + 1_500 * turn, int(rng.integers(300, 2_400))
        total_in, total_out = total_in + tokens_in, total_out + tokens_out
        clock += float(rng.uniform(6, 40))
        stamp = (start + timedelta(seconds=clock)).isoformat()
        if claude_style:
            lines.append(
                {
                    "type": "assistant",
                    "message": {
                        "content": [{"type": "tool_use", "name": "Bash"}],
                        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                    },
                }
            )
        else:
            lines.append({"type": "item.completed", "item": {"type": "command_execution", "exit_code": 0}})
            lines.append(
                {
                    "type": "turn.completed",
                    "timestamp": stamp,
                    "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                }
            )
    price_in, price_out = PRICE_PER_MTOK[configuration.model]
    cost = round((total_in * price_in + total_out * price_out) / 1e6, 4)
    if claude_style:
        lines.append(
            {
                "type": "result",
                "subtype": "error_max_turns" if plan.gate == "missing" else "success",
                "is_error": plan.gate == "missing",
                "num_turns": turns,
                "duration_ms": int(clock * 1000),
                "total_cost_usd": cost,
                "usage": {"input_tokens": total_in, "output_tokens": total_out},
                "timestamp": (start + timedelta(seconds=clock)).isoformat(),
            }
        )
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    if plan.truncated_log:
        text = text[: int(len(text) * 0.7)]
    economics = {
        "turns": turns,
        "input_tokens": total_in,
        "output_tokens": total_out,
        "duration_s": round(clock, 1),
        "cost_usd": cost if claude_style else None,
        "recoverable": not plan.truncated_log,
    }
    return text, economics


ERROR_LOGS = {
    "missing": "synthetic demo: agent stopped at the turn budget before output.pptx was written\n",
    "corrupt": "synthetic demo: the process was killed while writing output.pptx (truncated zip)\n",
}


# --- judge records -------------------------------------------------------------------------------------------

JUDGES: tuple[tuple[str, str, float, float], ...] = (
    # judge model id, family, bias per axis (rubric points), noise sd per axis
    ("synthetic-judge-pinned-2026-06", "synthetic-proprietary", 0.0, 0.9),
    ("synthetic-judge-open-32b", "synthetic-open-weight", -0.8, 1.5),
)
JUDGE_RUNS = 3
DEFECT_TEXT = {
    "pasted_raster": ("the slide is one pasted picture of the source", "major"),
    "freeform_connectors": ("arrows are freeform lines, not connectors", "major"),
    "unattached_connectors": ("connectors are not attached to the boxes", "minor"),
    "shifted_layout": ("boxes are displaced and resized relative to the source", "minor"),
    "dropped_groups": ("the dashed containers are missing", "major"),
    "reversed_edges": ("{n} arrow(s) point the wrong way", "major"),
    "dropped_edges": ("{n} arrow(s) are missing", "major"),
    "missing_labels": ("{n} module label(s) are missing", "major"),
    "misspelled_labels": ("{n} label(s) are misspelled", "minor"),
}


def _defect_notes(plan: ArtifactPlan) -> tuple[list[str], list[str]]:
    major, minor = [], []
    for name in plan.behaviours:
        if name in DEFECT_TEXT:
            text, kind = DEFECT_TEXT[name]
            value = getattr(plan, name)
            note = text.format(n=len(value) if isinstance(value, tuple) else 1)
            (major if kind == "major" else minor).append(note)
    return major, minor


def judge_records(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    records = []
    for j_index, (judge, family, bias, sd) in enumerate(JUDGES):
        for run in range(1, JUDGE_RUNS + 1):
            for c_index, configuration in enumerate(CONFIGURATIONS):
                for f_index, figure in enumerate(figures):
                    plan = plans[(configuration.slug, figure.task_id)]
                    if plan.gate:  # the judge sees only artifacts that pass the gate
                        continue
                    rng = _rng(seed, 6, j_index, run, c_index, f_index)
                    subscores = {
                        axis: int(min(top, max(0, round(plan.subscores[axis] + bias + rng.normal(0, sd)))))
                        for axis, top in RUBRIC_MAXIMA.items()
                    }
                    major, minor = _defect_notes(plan)
                    if plan.pasted_raster:
                        assessment = "a single full-slide picture; nothing is editable"
                    elif plan.freeform_connectors:
                        assessment = "native boxes and text; arrows are freeform shapes"
                    else:
                        assessment = "native text boxes, shapes and connectors"
                    worst = major[0] if major else minor[0] if minor else "close to the source"
                    records.append(
                        {
                            "task_id": figure.task_id,
                            "configuration": configuration.slug,
                            "judge": judge,
                            "judge_family": family,
                            "run": run,
                            "subscores": subscores,
                            "score": sum(subscores.values()),
                            "major_errors": major,
                            "minor_errors": minor,
                            "editability_assessment": assessment,
                            "reason": f"synthetic demo judge: {worst}",
                        }
                    )
    return records


# --- human comparisons ---------------------------------------------------------------------------------------

REASONS_A = ("A keeps the arrows and labels of the source; {loser}", "A is closer to the figure; {loser}")


def _loser_reason(plan: ArtifactPlan) -> str:
    if plan.gate == "missing":
        return "there is no slide at all"
    if plan.gate == "corrupt":
        return "the file does not open"
    if plan.gate == "multi_slide":
        return "it is split over two slides"
    major, minor = _defect_notes(plan)
    return (major or minor or ["it is a little less tidy"])[0]


def _vote(
    plan_a: ArtifactPlan, plan_b: ArtifactPlan, ra: float, rb: float, rng: np.random.Generator
) -> tuple[str, str]:
    """The stated human model: BT on the sides' strengths, fixed tie rate, gate failures shortcut."""
    fail_a, fail_b = bool(plan_a.gate), bool(plan_b.gate)
    u = float(rng.random())
    if fail_a and fail_b:
        outcome = "tie_failure" if u < 0.9 else ("a" if u < 0.95 else "b")
    elif fail_a or fail_b:
        winner = "b" if fail_a else "a"
        outcome = winner if u < 0.92 else "tie_failure"
    elif u < HUMAN_TIE_RATE:
        good = min(plan_a.true_score, plan_b.true_score) >= TIE_SUCCESS_MIN_SCORE
        outcome = "tie_success" if good else "tie_failure"
    else:
        p_a = 1.0 / (1.0 + 10 ** ((rb - ra) / 400.0))
        outcome = "a" if rng.random() < p_a else "b"
    if outcome == "tie_success":
        return outcome, "both are faithful, editable reconstructions"
    if outcome == "tie_failure":
        return outcome, f"neither is usable: A — {_loser_reason(plan_a)}; B — {_loser_reason(plan_b)}"
    loser = plan_b if outcome == "a" else plan_a
    side = "A" if outcome == "a" else "B"
    return outcome, f"{side} is closer to the source; the other: {_loser_reason(loser)}"


def battles(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    rng = _rng(seed, 7)
    by_slug = {c.slug: c for c in CONFIGURATIONS}
    mean_q = {c.slug: float(np.mean([plans[(c.slug, f.task_id)].true_score for f in figures])) for c in CONFIGURATIONS}

    def side_strength(plan: ArtifactPlan) -> float:
        return by_slug[plan.configuration].strength + ELO_PER_RUBRIC_POINT * (
            plan.true_score - mean_q[plan.configuration]
        )

    pairs = list(itertools.combinations([c.slug for c in CONFIGURATIONS], 2))
    sparse = {int(i) for i in rng.choice(len(pairs), size=SPARSE_PAIRS, replace=False)}
    items = []
    for p_index, (x, y) in enumerate(pairs):
        n = SPARSE_PAIR_ITEMS if p_index in sparse else DENSE_PAIR_ITEMS
        for f_index in sorted(rng.choice(len(figures), size=n, replace=False)):
            items.append((figures[int(f_index)].task_id, x, y))
    order = rng.permutation(len(items))
    items = [items[i] for i in order]
    votes = []
    for i, (task_id, x, y) in enumerate(items):
        votes.append((task_id, x, y, ANNOTATORS[i % len(ANNOTATORS)]))
    for i in sorted(rng.choice(len(items), size=OVERLAP_ITEMS, replace=False)):
        task_id, x, y = items[int(i)]
        first = ANNOTATORS[int(i) % len(ANNOTATORS)]
        others = [a for a in ANNOTATORS if a != first]
        votes.append((task_id, x, y, others[int(rng.integers(len(others)))]))
    clocks = {a: VOTES_START + timedelta(hours=2 * k) for k, a in enumerate(ANNOTATORS)}
    rows = []
    for task_id, x, y, annotator in votes:
        a, b = (x, y) if rng.random() < 0.5 else (y, x)
        plan_a, plan_b = plans[(a, task_id)], plans[(b, task_id)]
        outcome, reason = _vote(plan_a, plan_b, side_strength(plan_a), side_strength(plan_b), rng)
        dwell = int(min(600_000, rng.lognormal(math.log(22_000), 0.5)))
        clocks[annotator] += timedelta(milliseconds=dwell + int(rng.integers(2_000, 15_000)))
        rows.append(
            {
                "study": STUDY,
                "task_id": task_id,
                "annotator": annotator,
                "config_a": a,
                "config_b": b,
                "left_config": a,
                "outcome": outcome,
                "reason": reason,
                "created_at": clocks[annotator].isoformat().replace("+00:00", "Z"),
                "dwell_ms": dwell,
                "render_sha256_a": "",
                "render_sha256_b": "",
                "audit_sha256_a": "",
                "audit_sha256_b": "",
            }
        )
    rows.sort(key=lambda r: (r["created_at"], r["annotator"]))
    return [{"comparison_id": f"demo-{n + 1:05d}", **row} for n, row in enumerate(rows)]


# Human studies of the other two protocols (issue 15): who takes part, how often they slip, which figures.
GATE_REVIEWERS: tuple[str, ...] = ("demo-reviewer-1", "demo-reviewer-2", "demo-reviewer-3")
GATE_REVIEW_FIGURES = 8  # a seeded sample of figures; every configuration's artifact on each
GATE_REVIEW_SLIP = 0.08  # chance that a reviewer's verdict disagrees with the artifact's true gate
SEMANTIC_GATE_BELOW = 30.0  # a rendered slide whose true score is below this fails the semantic gate
GATE_REVIEW_COLUMNS = ("task_id", "configuration", "reviewer", "gate_fail", "reason")
RATING_FIGURES = 6
RATING_AXES = ("instruction_following", "visual_quality")
RATING_RATERS: tuple[str, ...] = ("demo-rater-1", "demo-rater-2")
RATING_JUDGE, RATING_JUDGE_RUNS = "synthetic-judge-pinned-2026-06", 3
RATING_COLUMNS = ("task_id", "configuration", "rater", "rater_kind", "run", "axis", "rating")


def _true_gate_fail(plan: ArtifactPlan) -> str:
    """'' when the artifact passes; otherwise the gate it fails (rendering for a broken deck, semantic for a poor one)."""
    if plan.gate:
        return "rendering"
    return "semantic" if plan.true_score < SEMANTIC_GATE_BELOW else ""


def gate_review_rows(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    rng = _rng(seed, 11)
    chosen = sorted(
        int(i) for i in rng.choice(len(figures), size=min(GATE_REVIEW_FIGURES, len(figures)), replace=False)
    )
    rows = []
    for f_index in chosen:
        task_id = figures[f_index].task_id
        for configuration in CONFIGURATIONS:
            gate = _true_gate_fail(plans[(configuration.slug, task_id)])
            for reviewer in GATE_REVIEWERS:
                fail = bool(gate) != (rng.random() < GATE_REVIEW_SLIP)
                reason = (f"fails the {gate or 'semantic'} gate" if fail else "") + (" (synthetic)" if fail else "")
                rows.append(
                    {
                        "task_id": task_id,
                        "configuration": configuration.slug,
                        "reviewer": reviewer,
                        "gate_fail": "true" if fail else "false",
                        "reason": reason,
                    }
                )
    return rows


def _rating(value: float) -> int:
    return int(min(5, max(0, round(value))))


def rating_rows(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    """Humans rate a stratified subset (every configuration on the same sampled figures); the judge rates it three
    times. Instruction following follows the true score, visual quality the layout and visual-detail subscores."""
    rng = _rng(seed, 12)
    chosen = sorted(int(i) for i in rng.choice(len(figures), size=min(RATING_FIGURES, len(figures)), replace=False))
    rows = []
    for f_index in chosen:
        task_id = figures[f_index].task_id
        for configuration in CONFIGURATIONS:
            plan = plans[(configuration.slug, task_id)]
            layout = plan.subscores.get("layout", 0) / RUBRIC_MAXIMA["layout"]
            detail = plan.subscores.get("visual_detail", 0) / RUBRIC_MAXIMA["visual_detail"]
            truth = {
                "instruction_following": plan.true_score / 20.0,
                "visual_quality": 0.0 if plan.gate else 2.5 * (layout + detail),
            }
            raters = [(r, "human", 1, 0.6) for r in RATING_RATERS]
            raters += [(RATING_JUDGE, "judge", run, 0.5) for run in range(1, RATING_JUDGE_RUNS + 1)]
            for rater, kind, run, noise in raters:
                for axis in RATING_AXES:
                    rows.append(
                        {
                            "task_id": task_id,
                            "configuration": configuration.slug,
                            "rater": rater,
                            "rater_kind": kind,
                            "run": run,
                            "axis": axis,
                            "rating": _rating(truth[axis] + rng.normal(0, noise)),
                        }
                    )
    return rows


def _csv_text(columns: tuple[str, ...], rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


BATTLE_COLUMNS = (
    "comparison_id",
    "study",
    "task_id",
    "annotator",
    "config_a",
    "config_b",
    "left_config",
    "outcome",
    "reason",
    "created_at",
    "dwell_ms",
    "render_sha256_a",
    "render_sha256_b",
    "audit_sha256_a",
    "audit_sha256_b",
)


# --- the whole bundle ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoSummary:
    out_dir: Path
    seed: int
    figures: int
    task_ids: tuple[str, ...]
    configurations: tuple[str, ...]
    strengths: dict[str, float]  # Elo scale, mean 1000
    defect_rates: dict[str, dict[str, float]]  # stated per-artifact probabilities
    behaviours: dict[str, dict[str, int]]  # per configuration: how many artifacts show each behaviour
    gate_failures: dict[str, tuple[tuple[str, str], ...]]  # kind → (configuration, task_id)
    pasted_rasters: tuple[tuple[str, str], ...]
    judge_records: int
    votes: int
    overlap_items: int
    files: int
    total_bytes: int


def _write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def _configurations_toml() -> str:
    blocks = ["# synthetic demo: ten configurations (fictional models), see DEMO.md\n"]
    for c in CONFIGURATIONS:
        fields = "".join(
            f"{name} = {json.dumps(getattr(c, name), ensure_ascii=False)}\n"
            for name in ("slug", "model", "harness", "workflow", "reasoning_effort", "label")
        )
        blocks.append(f"[[configurations]]\n{fields}")
    return "\n".join(blocks)


def _manifest_row(figure: FigureModel, index: int, png: bytes, rng: np.random.Generator) -> dict:
    arxiv = f"2613.{index + 1:05d}"  # month 13 does not exist: no real arXiv id can collide
    base = f"https://example.org/refig-demo/{arxiv}"
    return {
        "task_id": figure.task_id,
        "arxiv_id": arxiv,
        "arxiv_version": "v1",
        "title": figure.title,
        "authors": [f"Demo Author {int(rng.integers(1, 90))}", f"Synthetic Coauthor {int(rng.integers(1, 90))}"],
        "abs_url": f"{base}/abs",
        "pdf_url": f"{base}/pdf",
        "source_url": f"{base}/src",
        "license": "CC0-1.0 (synthetic demo figure)",
        "license_url": "https://creativecommons.org/publicdomain/zero/1.0/",
        "caption": f"[synthetic] Overview of the method: {len(figure.nodes)} modules, {len(figure.edges)} arrows.",
        "label": "fig:overview",
        "source_path": f"figures/{figure.task_id}.png",
        "sha256": hashlib.sha256(png).hexdigest(),
        "selection_score": round(float(rng.uniform(0.6, 0.99)), 3),
        "selection_evidence": ["synthetic demo: drawn by core.demo_generator"],
        "field": figure.field,
        "image": f"{figure.task_id}.png",
    }


def _demo_md(summary: dict) -> str:
    lines = [
        "# refig-study demo bundle — SYNTHETIC DATA",
        "",
        "Everything here was generated by `core/demo_generator.py`; no figure, paper, model, judge or annotator is real.",
        f"Seed {summary['seed']}. Regenerate with `generate_demo(out_dir, seed={summary['seed']})`: the same seed gives byte-identical files.",
        "",
        "## True strengths (Bradley–Terry, Elo scale, mean 1000) and behaviour counts",
        "",
        "| configuration | strength | " + " | ".join(BEHAVIOUR_COLUMNS) + " |",
        "|---|---|" + "---|" * len(BEHAVIOUR_COLUMNS),
    ]
    for slug, strength in summary["strengths"].items():
        counts = summary["behaviours"][slug]
        lines.append(
            f"| {slug} | {strength:g} | " + " | ".join(str(counts.get(b, 0)) for b in BEHAVIOUR_COLUMNS) + " |"
        )
    lines += [
        "",
        "Defect rates (per-artifact probabilities) are in `summary.json` under `defect_rates`.",
        "",
        "## How the human votes were drawn",
        "",
        "- Both artifacts fail the gate: `tie_failure` with probability 0.9, otherwise a coin flip.",
        "- One fails: the other wins with probability 0.92, otherwise `tie_failure`.",
        (
            f"- Neither fails: a tie with probability {HUMAN_TIE_RATE} (`tie_success` when both final scores are at least "
            f"{TIE_SUCCESS_MIN_SCORE}); otherwise A wins with probability 1 / (1 + 10^((R_B − R_A) / 400)), where R is the "
            f"configuration's strength plus {ELO_PER_RUBRIC_POINT:g} Elo per rubric point of the artifact's true score above its configuration's mean."
        ),
        f"- {summary['votes']} votes from {len(ANNOTATORS)} annotators; {summary['overlap_items']} items voted twice (inter-annotator agreement).",
        "",
        "## Judge records",
        "",
        "Two judge families x three runs over the artifacts that pass the gate: true subscores (from the injected defects)",
        "plus a family bias and per-run noise, clipped to the rubric maxima; every reason starts with `synthetic demo judge`.",
        "",
        "## Gate reviews and ratings (the PPTBench and PPTArena protocols)",
        "",
        (
            f"- `gate_reviews.csv`: {summary['gate_reviews']} verdicts by {len(GATE_REVIEWERS)} reviewers on every "
            f"configuration's artifact for {GATE_REVIEW_FIGURES} sampled figures. The true verdict fails the rendering "
            f"gate for a missing, corrupt or multi-slide deck and the semantic gate below a true score of "
            f"{SEMANTIC_GATE_BELOW:g}; each reviewer slips with probability {GATE_REVIEW_SLIP}."
        ),
        (
            f"- `ratings.csv`: {summary['ratings']} ratings 0–5 of {', '.join(RATING_AXES)} on {RATING_FIGURES} sampled "
            f"figures (every configuration): {len(RATING_RATERS)} humans (noise sd 0.6) and {RATING_JUDGE_RUNS} runs of "
            f"{RATING_JUDGE} (noise sd 0.5) around the true score / 20 and the layout + visual-detail share × 5."
        ),
        "",
    ]
    return "\n".join(lines)


BEHAVIOUR_COLUMNS = (
    "faithful",
    "missing",
    "corrupt",
    "multi_slide",
    "pasted_raster",
    "freeform_connectors",
    "unattached_connectors",
    "reversed_edges",
    "dropped_edges",
    "missing_labels",
    "misspelled_labels",
    "dropped_groups",
    "shifted_layout",
)


def generate_demo(out_dir: Path, *, seed: int = DEFAULT_SEED, figures: int = DEFAULT_FIGURES) -> DemoSummary:
    """Write the synthetic demo study under `out_dir` (created if absent; existing demo files are overwritten)."""
    out_dir = Path(out_dir)
    models = [_figure_model(i, seed) for i in range(figures)]
    pngs = {}
    rows = []
    for index, figure in enumerate(models):
        pngs[figure.task_id] = _png_bytes(draw_figure(figure))
        _write(out_dir / "images" / f"{figure.task_id}.png", pngs[figure.task_id])
        rows.append(_manifest_row(figure, index, pngs[figure.task_id], _rng(seed, 8, index)))
    _write(out_dir / "manifest.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    _write(out_dir / "configurations.toml", _configurations_toml())

    plans = plan_artifacts(models, seed)
    economics = {}
    for c_index, configuration in enumerate(CONFIGURATIONS):
        for f_index, figure in enumerate(models):
            plan = plans[(configuration.slug, figure.task_id)]
            task_dir = out_dir / "runs" / configuration.slug / figure.task_id
            if plan.gate != "missing":
                _write(task_dir / "output.pptx", build_deck(figure, plan, png=pngs[figure.task_id], seed=seed))
                name, code = _code(figure, configuration)
                _write(task_dir / name, code)
            log, economics[(configuration.slug, figure.task_id)] = _run_log(
                figure, configuration, plan, _rng(seed, 9, c_index, f_index)
            )
            _write(task_dir / "output.jsonl", log)
            if plan.gate in ERROR_LOGS:
                _write(task_dir / "error.log", ERROR_LOGS[plan.gate])

    records = judge_records(models, plans, seed)
    _write(
        out_dir / "judge.jsonl",
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records),
    )
    votes = battles(models, plans, seed)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=BATTLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(votes)
    _write(out_dir / "battles.csv", buffer.getvalue())
    reviews = gate_review_rows(models, plans, seed)
    _write(out_dir / "gate_reviews.csv", _csv_text(GATE_REVIEW_COLUMNS, reviews))
    ratings = rating_rows(models, plans, seed)
    _write(out_dir / "ratings.csv", _csv_text(RATING_COLUMNS, ratings))

    behaviours = {c.slug: {b: 0 for b in BEHAVIOUR_COLUMNS} for c in CONFIGURATIONS}
    for plan in plans.values():
        for name in plan.behaviours:
            behaviours[plan.configuration][name] += 1
    keys = [(c.slug, f.task_id) for c in CONFIGURATIONS for f in models]
    gate_failures = {kind: tuple(k for k in keys if plans[k].gate == kind) for kind in GATE_FAILURES}
    rasters = tuple(k for k in keys if plans[k].pasted_raster)
    pair_tasks = [(v["task_id"], *sorted((v["config_a"], v["config_b"]))) for v in votes]
    overlap = sum(1 for n in Counter(pair_tasks).values() if n > 1)
    summary = {
        "synthetic": True,
        "note": "synthetic demo data generated by core/demo_generator.py; nothing here is real",
        "seed": seed,
        "figures": figures,
        "study": STUDY,
        "annotators": list(ANNOTATORS),
        "strengths": {c.slug: c.strength for c in CONFIGURATIONS},
        "defect_rates": {c.slug: defect_rates(c) for c in CONFIGURATIONS},
        "behaviours": behaviours,
        "gate_failures": {kind: [list(k) for k in v] for kind, v in gate_failures.items()},
        "pasted_rasters": [list(k) for k in rasters],
        "human_model": {
            "tie_rate": HUMAN_TIE_RATE,
            "elo_per_rubric_point": ELO_PER_RUBRIC_POINT,
            "tie_success_min_score": TIE_SUCCESS_MIN_SCORE,
            "both_fail_tie_failure": 0.9,
            "one_fails_other_wins": 0.92,
        },
        "judges": [
            {"judge": j, "judge_family": f, "bias": b, "noise_sd": s, "runs": JUDGE_RUNS} for j, f, b, s in JUDGES
        ],
        "judge_records": len(records),
        "votes": len(votes),
        "overlap_items": overlap,
        "gate_reviews": len(reviews),
        "ratings": len(ratings),
        "true_mean_score": {
            c.slug: round(float(np.mean([plans[(c.slug, f.task_id)].true_score for f in models])), 2)
            for c in CONFIGURATIONS
        },
        "mean_cost_usd": {
            c.slug: round(float(np.mean([economics[(c.slug, f.task_id)]["cost_usd"] or 0 for f in models])), 4)
            for c in CONFIGURATIONS
        },
    }
    _write(out_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    _write(out_dir / "DEMO.md", _demo_md(summary))
    written = [p for p in out_dir.rglob("*") if p.is_file()]
    return DemoSummary(
        out_dir=out_dir,
        seed=seed,
        figures=figures,
        task_ids=tuple(f.task_id for f in models),
        configurations=tuple(c.slug for c in CONFIGURATIONS),
        strengths=dict(summary["strengths"]),
        defect_rates=summary["defect_rates"],
        behaviours=behaviours,
        gate_failures=gate_failures,
        pasted_rasters=rasters,
        judge_records=len(records),
        votes=len(votes),
        overlap_items=overlap,
        files=len(written),
        total_bytes=sum(p.stat().st_size for p in written),
    )
