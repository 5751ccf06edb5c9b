"""Each configuration's reconstruction of a figure as a one-slide PPTX built with python-pptx from the figure's scene
graph, carrying its plan's behaviours (native shapes and attached connectors when faithful; a pasted full-slide
raster, freeform lines, unattached connectors, reversed or dropped arrows, missing or misspelled labels, shifted boxes,
a second slide or a truncated file when not). Decks are lean and written with fixed zip timestamps, so the same seed
gives the same bytes. Pure: no Django."""

from __future__ import annotations

import hashlib
import io
import zipfile
from datetime import datetime

import numpy as np
from lxml import etree
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.dml import MSO_LINE_DASH_STYLE
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.oxml.ns import qn
from pptx.util import Emu, Pt

from .configurations import seeded_rng
from .figures import Box, FigureModel, anchor, edge_path, edge_sides
from .plans import ArtifactPlan

SLIDE_WIDTH_EMU = 9_144_000  # 10 inches; the height follows the figure's aspect ratio
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
FIXED_DOC_TIME = datetime(2026, 7, 1, 9, 0, 0)

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
    rng = seeded_rng(seed, 5, int(hashlib.sha256(f"{plan.configuration}/{plan.task_id}".encode()).hexdigest()[:8], 16))
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
            src_side, dst_side = edge_sides(figure, edge)
            if (
                plan.freeform_connectors or edge.dashed
            ):  # freeform: the specialized signature; dashed routes are polylines
                path = edge_path(figure, edge)
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
                (x0, y0), (x1, y1) = anchor(figure.node(src).box, src_side), anchor(figure.node(dst).box, dst_side)
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
