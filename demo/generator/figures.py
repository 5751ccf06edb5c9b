"""The demo's source figures: a seeded scene graph per figure (boxes, containers, arrows, dashed paths, in one of four
fields' vocabularies and five aspect ratios) and its drawing as a small palette PNG with Pillow. Decks are rebuilt
from the same scene graph (demo.generator.decks), which is why the anchors and edge paths are shared. Pure: no Django."""

from __future__ import annotations

import io
import itertools
import math
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from .configurations import FIELDS, seeded_rng

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


def figure_model(index: int, seed: int) -> FigureModel:
    rng = seeded_rng(seed, 1, index)
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


def anchor(box: Box, side: str) -> tuple[float, float]:
    x0, y0, x1, y1 = box
    return {
        "left": (x0, (y0 + y1) / 2),
        "right": (x1, (y0 + y1) / 2),
        "top": ((x0 + x1) / 2, y0),
        "bottom": ((x0 + x1) / 2, y1),
    }[side]


def edge_sides(figure: FigureModel, edge: Edge) -> tuple[str, str]:
    if edge.dashed:
        return ("bottom", "bottom") if figure.horizontal else ("right", "right")
    return ("right", "left") if figure.horizontal else ("bottom", "top")


def edge_path(figure: FigureModel, edge: Edge) -> list[tuple[float, float]]:
    src_side, dst_side = edge_sides(figure, edge)
    p0, p1 = anchor(figure.node(edge.src).box, src_side), anchor(figure.node(edge.dst).box, dst_side)
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
        path = edge_path(figure, edge)
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


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buffer, format="PNG", optimize=True
    )
    return buffer.getvalue()
