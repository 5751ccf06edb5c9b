"""Plain rectangle geometry for the object audit, and the flattening cap it feeds: a shape's axis-aligned bounding
box after rotation, the mapping of a child rectangle through a group's transform, the share of the slide the
largest picture covers and the exact area of the union of all pictures (both clipped to the slide), and c(P), the
cap for a pasted raster with few native objects (REFERENCE 3). Rectangles are ``(x, y, width, height)`` tuples in
EMU; nothing here reads XML. Pure: no Django, DRF or Celery.
"""

from __future__ import annotations

import math

from corpus.protocol import FLATTEN_CAP, FLATTEN_MAX_NATIVE_OBJECTS, FLATTEN_PICTURE_SHARE, NO_CAP

Rect = tuple[float, float, float, float]  # x, y, width, height
# A group's a:xfrm: (off x, off y, ext cx, ext cy, chOff x, chOff y, chExt cx, chExt cy, rot degrees).
Transform = tuple[float, float, float, float, float, float, float, float, float]
IDENTITY: Transform = (0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0)


def flattening_cap(*, largest_picture_ratio: float, native_objects: int) -> int:
    """c(P): FLATTEN_CAP for a pasted raster with few native objects, else NO_CAP (REFERENCE 3)."""
    if largest_picture_ratio >= FLATTEN_PICTURE_SHARE and native_objects <= FLATTEN_MAX_NATIVE_OBJECTS:
        return FLATTEN_CAP
    return NO_CAP


def rotated_bbox(rect: Rect, degrees: float) -> Rect:
    """The axis-aligned box around ``rect`` turned about its centre: exact for quarter turns, an over-estimate else."""
    if not degrees % 360:
        return rect
    x, y, w, h = rect
    rad = math.radians(degrees)
    c, s = abs(math.cos(rad)), abs(math.sin(rad))
    nw, nh = w * c + h * s, w * s + h * c
    cx, cy = x + w / 2, y + h / 2
    return (cx - nw / 2, cy - nh / 2, nw, nh)


def apply_transform(t: Transform, rect: Rect) -> Rect:
    """``rect`` in a group's child coordinates mapped to the group's parent (chOff/chExt → off/ext, then rotation)."""
    ox, oy, cx, cy, chx, chy, chcx, chcy, rot = t
    sx = cx / chcx if chcx else 1.0
    sy = cy / chcy if chcy else 1.0
    x, y, w, h = rect
    mapped = (ox + (x - chx) * sx, oy + (y - chy) * sy, w * sx, h * sy)
    if rot % 360:  # the group turns about its own centre
        gx, gy = ox + cx / 2, oy + cy / 2
        rad = math.radians(rot)
        corners = [(mapped[0] + dx, mapped[1] + dy) for dx in (0, mapped[2]) for dy in (0, mapped[3])]
        xs = [gx + (px - gx) * math.cos(rad) - (py - gy) * math.sin(rad) for px, py in corners]
        ys = [gy + (px - gx) * math.sin(rad) + (py - gy) * math.cos(rad) for px, py in corners]
        mapped = (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
    return mapped


def picture_ratios(rects: list[Rect], width: int, height: int) -> tuple[float, float]:
    """(largest clipped picture / slide, union of clipped pictures / slide)."""
    slide_area = float(width) * float(height)
    if slide_area <= 0 or not rects:
        return 0.0, 0.0
    clipped = []
    for x, y, w, h in rects:
        x0, y0 = max(x, 0.0), max(y, 0.0)
        x1, y1 = min(x + w, float(width)), min(y + h, float(height))
        if x1 > x0 and y1 > y0:
            clipped.append((x0, y0, x1, y1))
    if not clipped:
        return 0.0, 0.0
    largest = max((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in clipped)
    return min(largest / slide_area, 1.0), min(union_area(clipped) / slide_area, 1.0)


def union_area(boxes: list[tuple[float, float, float, float]]) -> float:
    """Exact area of a union of axis-aligned boxes (x0, y0, x1, y1): sweep over compressed x."""
    xs = sorted({x for box in boxes for x in (box[0], box[2])})
    area = 0.0
    for left, right in zip(xs, xs[1:]):
        spans = sorted((y0, y1) for x0, y0, x1, y1 in boxes if x0 <= left and x1 >= right)
        covered, end = 0.0, -math.inf
        for y0, y1 in spans:
            if y0 > end:
                covered += y1 - y0
                end = y1
            elif y1 > end:
                covered += y1 - end
                end = y1
        area += covered * (right - left)
    return area
