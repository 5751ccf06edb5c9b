"""The object count of one parsed slide: ``ShapeWalker`` walks the slide's shape tree (groups and
``mc:AlternateContent`` branches included) and counts text boxes, shapes, lines, connectors, groups, pictures,
tables, charts, SmartArt, OLE and media objects and native objects, collecting each picture's rectangle on the
slide; ``background_is_picture`` finds an effective picture background. The counting rules are those in the
docstring of ``agents/pptx_audit.py``; the rectangle arithmetic is ``agents/geometry.py``. Pure: no Django, DRF or
Celery.
"""

from __future__ import annotations

from lxml import etree

from .geometry import IDENTITY, Rect, Transform, apply_transform, rotated_bbox

# What the walk counts, in the order the audit reports them (the audit adds slides and external links, which it
# reads from the package itself).
OBJECT_COUNTS: tuple[str, ...] = (
    "text_boxes",
    "shapes",
    "lines",
    "connectors",
    "connectors_attached",
    "groups",
    "pictures",
    "tables",
    "charts",
    "smartart",
    "ole_media",
    "alternate_content",
)
# ... plus each native object once, which the flattening cap counts.
WALK_COUNTS: tuple[str, ...] = (*OBJECT_COUNTS, "native_objects")

_NS = {
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "p14": "http://schemas.microsoft.com/office/powerpoint/2010/main",
}


def _q(tag: str) -> str:
    prefix, local = tag.split(":")
    return f"{{{_NS[prefix]}}}{local}"


LINE_PRESETS = frozenset(
    {
        "line",
        "lineInv",
        "straightConnector1",
        "bentConnector2",
        "bentConnector3",
        "bentConnector4",
        "bentConnector5",
        "curvedConnector2",
        "curvedConnector3",
        "curvedConnector4",
        "curvedConnector5",
    }
)
_MEDIA_TAGS = tuple(
    _q(t) for t in ("a:videoFile", "a:audioFile", "a:quickTimeFile", "a:wavAudioFile", "a:audioCd", "p14:media")
)
_URI_FIELD = {
    "http://schemas.openxmlformats.org/drawingml/2006/table": "tables",
    "http://schemas.openxmlformats.org/drawingml/2006/chart": "charts",
    "http://schemas.microsoft.com/office/drawing/2014/chartex": "charts",
    "http://schemas.openxmlformats.org/drawingml/2006/diagram": "smartart",
}
# python-pptx's layout → master placeholder type mapping (LayoutPlaceholder._base_placeholder).
_MASTER_PH_TYPE = {"ctrTitle": "title", "title": "title", "dt": "dt", "ftr": "ftr", "sldNum": "sldNum"}

T_SP, T_PIC, T_CXN, T_GRP, T_GF, T_AC = (
    _q(t) for t in ("p:sp", "p:pic", "p:cxnSp", "p:grpSp", "p:graphicFrame", "mc:AlternateContent")
)
T_CHOICE, T_FALLBACK = _q("mc:Choice"), _q("mc:Fallback")
T_XFRM, T_OFF, T_EXT, T_CHOFF, T_CHEXT = (_q(t) for t in ("a:xfrm", "a:off", "a:ext", "a:chOff", "a:chExt"))
T_SPPR, T_GRPSPPR, T_PXFRM, T_BLIPFILL = _q("p:spPr"), _q("p:grpSpPr"), _q("p:xfrm"), _q("a:blipFill")
T_PRSTGEOM, T_TXBODY, T_T, T_PH, T_NVPR = _q("a:prstGeom"), _q("p:txBody"), _q("a:t"), _q("p:ph"), _q("p:nvPr")
T_STCXN, T_ENDCXN, T_GRAPHIC, T_GRAPHICDATA = _q("a:stCxn"), _q("a:endCxn"), _q("a:graphic"), _q("a:graphicData")
T_CNVPR = _q("p:cNvPr")
T_NVSPPR, T_CNVSPPR = _q("p:nvSpPr"), _q("p:cNvSpPr")
_OTHER_OBJECT_TAGS = frozenset({T_PIC, T_CXN, T_GRP, T_GF})  # p:sp is dispatched first


def shape_tree(part_el):
    """The ``p:cSld/p:spTree`` of a slide, layout or master element, or None."""
    return part_el.find(f"{_q('p:cSld')}/{_q('p:spTree')}")


class ShapeWalker:
    """Counts the objects of a shape tree (``WALK_COUNTS`` as attributes) and collects ``picture_rects``."""

    def __init__(self, layout_el, master_el) -> None:
        for name in WALK_COUNTS:
            setattr(self, name, 0)
        self.picture_rects: list[Rect] = []
        self._layout_el = layout_el
        self._master_el = master_el

    def walk(self, container, transforms: tuple[Transform, ...], in_ac: bool) -> None:
        for child in container:
            tag = child.tag
            if tag == T_AC:
                branch = _child(child, T_CHOICE)
                if branch is None:
                    branch = _child(child, T_FALLBACK)
                if branch is not None:
                    self.walk(branch, transforms, True)
                continue
            if tag == T_SP:
                self._sp(child, transforms, in_ac)  # checks hidden from the children it reads anyway
                continue
            if tag not in _OTHER_OBJECT_TAGS or _hidden(child):
                continue
            if in_ac:
                self.alternate_content += 1
            if tag == T_PIC:
                if _is_media(child):
                    self.ole_media += 1
                else:
                    self.pictures += 1
                    self._add_picture(child, transforms)
            elif tag == T_CXN:
                self.connectors += 1
                self.native_objects += 1
                nv = child[0] if len(child) else None
                if (
                    nv is not None
                    and next(nv.iter(T_STCXN), None) is not None
                    and next(nv.iter(T_ENDCXN), None) is not None
                ):
                    self.connectors_attached += 1
            elif tag == T_GRP:
                self.groups += 1
                self.walk(child, (*transforms, _group_transform(child)), in_ac)
            else:  # graphicFrame
                data = _child(_child(child, T_GRAPHIC), T_GRAPHICDATA)
                uri = data.get("uri", "") if data is not None else ""
                field = _URI_FIELD.get(uri, "ole_media")
                setattr(self, field, getattr(self, field) + 1)

    def _sp(self, sp, transforms: tuple[Transform, ...], in_ac: bool) -> None:
        sppr = body = geom = None
        picture_fill = text_box = False
        hidden = False  # from the first child, as _hidden reads it (p:nvSpPr in valid XML)
        first = True
        for child in sp:
            tag = child.tag
            if tag == T_SPPR:
                sppr = child
            elif tag == T_TXBODY:
                body = child
            elif tag == T_NVSPPR:
                cnvpr = cnvsppr = None
                for nv_child in child:
                    nv_tag = nv_child.tag
                    if nv_tag == T_CNVPR and cnvpr is None:
                        cnvpr = nv_child
                    elif nv_tag == T_CNVSPPR and cnvsppr is None:
                        cnvsppr = nv_child
                if first:
                    hidden = cnvpr is not None and cnvpr.get("hidden") in ("1", "true")
                text_box = cnvsppr is not None and cnvsppr.get("txBox") in ("1", "true")
            if first:
                if tag != T_NVSPPR:
                    hidden = _hidden(sp)
                first = False
        if hidden:
            return  # hidden objects do not render
        if in_ac:
            self.alternate_content += 1
        if sppr is not None:
            for child in sppr:
                tag = child.tag
                if tag == T_PRSTGEOM:
                    geom = child
                elif tag == T_BLIPFILL:
                    picture_fill = True
        has_text = body is not None and any((t.text or "").strip() for t in body.iter(T_T))
        if has_text:
            self.text_boxes += 1
        if geom is not None and geom.get("prst") in LINE_PRESETS:
            self.lines += 1
        elif picture_fill:
            self.pictures += 1
            self._add_picture(sp, transforms)
            if not has_text:
                return  # a text-less picture fill is a picture, not a native object
        elif not (text_box and has_text):  # a labelled autoshape or placeholder is a shape too
            self.shapes += 1
        self.native_objects += 1

    def _add_picture(self, el, transforms: tuple[Transform, ...]) -> None:
        sppr = _child(el, T_SPPR)
        xfrm = _child(sppr, T_XFRM) if sppr is not None else None
        rect = _xfrm_rect(xfrm)
        if rect is None:
            rect = self._inherited_rect(el)
        if rect is None:
            return
        for transform in reversed(transforms):
            rect = apply_transform(transform, rect)
        self.picture_rects.append(rect)

    def _inherited_rect(self, el) -> Rect | None:
        ph = _placeholder(el)
        if ph is None or self._layout_el is None:
            return None
        idx, ph_type = ph.get("idx", "0"), ph.get("type", "obj")
        layout_ph = _find_placeholder(self._layout_el, lambda p: p.get("idx", "0") == idx)
        if layout_ph is not None:
            rect = _shape_rect(layout_ph)
            if rect is not None:
                return rect
            ph_type = _placeholder(layout_ph).get("type", "obj")
        if self._master_el is None:
            return None
        master_type = _MASTER_PH_TYPE.get(ph_type, "body")
        master_ph = _find_placeholder(self._master_el, lambda p: p.get("type", "obj") == master_type)
        return _shape_rect(master_ph) if master_ph is not None else None


def _child(el, tag: str):
    """First child with ``tag``; lxml filters the tag in C (ElementPath ``find`` is several times slower)."""
    return None if el is None else next(el.iterchildren(tag), None)


def _is_media(pic) -> bool:
    nvpr = _child(pic[0], T_NVPR) if len(pic) else None
    return nvpr is not None and next(nvpr.iter(*_MEDIA_TAGS), None) is not None


def _hidden(el) -> bool:
    nv = el[0] if len(el) else None
    cnvpr = _child(nv, T_CNVPR) if nv is not None else None
    return cnvpr is not None and cnvpr.get("hidden") in ("1", "true")


def _placeholder(el):
    nv = el[0] if len(el) else None
    nvpr = _child(nv, T_NVPR) if nv is not None else None
    return _child(nvpr, T_PH) if nvpr is not None else None


def _find_placeholder(part_el, match):
    tree = shape_tree(part_el)
    if tree is None:
        return None
    for child in tree:
        if child.tag in (T_SP, T_PIC, T_GF):
            ph = _placeholder(child)
            if ph is not None and match(ph):
                return child
    return None


def _shape_rect(el) -> Rect | None:
    if el.tag == T_GF:
        return _xfrm_rect(_child(el, T_PXFRM))
    sppr = _child(el, T_SPPR)
    return _xfrm_rect(_child(sppr, T_XFRM) if sppr is not None else None)


def _int(el, name: str) -> float:
    try:
        return float(int(el.get(name, "0")))
    except (TypeError, ValueError):
        return 0.0


def _xfrm_rect(xfrm) -> Rect | None:
    if xfrm is None:
        return None
    off, ext = _child(xfrm, T_OFF), _child(xfrm, T_EXT)
    if off is None or ext is None:
        return None
    rect = (_int(off, "x"), _int(off, "y"), max(_int(ext, "cx"), 0.0), max(_int(ext, "cy"), 0.0))
    return rotated_bbox(rect, _int(xfrm, "rot") / 60000.0)


def _group_transform(grp) -> Transform:
    """The group's ``a:xfrm`` as a ``Transform``; identity when it has none."""
    gpr = _child(grp, T_GRPSPPR)
    xfrm = _child(gpr, T_XFRM) if gpr is not None else None
    if xfrm is None:
        return IDENTITY
    off, ext, choff, chext = (xfrm.find(t) for t in (T_OFF, T_EXT, T_CHOFF, T_CHEXT))
    ox, oy = (_int(off, "x"), _int(off, "y")) if off is not None else (0.0, 0.0)
    cx, cy = (_int(ext, "cx"), _int(ext, "cy")) if ext is not None else (0.0, 0.0)
    chx, chy = (_int(choff, "x"), _int(choff, "y")) if choff is not None else (ox, oy)
    chcx, chcy = (_int(chext, "cx"), _int(chext, "cy")) if chext is not None else (cx, cy)
    return (ox, oy, cx, cy, chx, chy, chcx, chcy, _int(xfrm, "rot") / 60000.0)


def background_is_picture(slide, layout, master) -> bool:
    """The effective background (slide, else layout, else master) is an image."""
    for owner in (slide, layout, master):
        if owner is None:
            continue
        bg = owner._element.find(f"{_q('p:cSld')}/{_q('p:bg')}")
        if bg is None:
            continue
        bgpr = bg.find(_q("p:bgPr"))
        if bgpr is not None:
            return _child(bgpr, T_BLIPFILL) is not None
        bgref = bg.find(_q("p:bgRef"))
        if bgref is not None and master is not None:
            return _theme_background_is_picture(master, int(_int(bgref, "idx")))
        return False
    return False


def _theme_background_is_picture(master, idx: int) -> bool:
    if idx <= 1000:
        return False
    try:
        theme = master.part.part_related_by("http://schemas.openxmlformats.org/officeDocument/2006/relationships/theme")
    except Exception:
        return False
    blob = theme.blob
    start = blob.find(b"bgFillStyleLst")
    if start < 0 or b"blipFill" not in blob[start:]:
        return False  # the usual case: no picture fill among the background styles, no parse needed
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(blob, parser)
    except etree.XMLSyntaxError:
        return False
    styles = root.find(f".//{_q('a:bgFillStyleLst')}")
    if styles is None:
        return False
    fills = [child for child in styles if isinstance(child.tag, str)]
    return 0 < idx - 1000 <= len(fills) and fills[idx - 1001].tag == T_BLIPFILL
