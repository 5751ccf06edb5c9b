"""Gate (minus rendering) and object audit (REFERENCE 3). Pure: no database.

Expected numbers for the real files come from reading each file's XML by hand
(``unzip -p FILE ppt/slides/slide1.xml`` and the slide/layout/master rels and backgrounds);
the hand-built decks have geometry worked out in the comments.
"""

from __future__ import annotations

import io
import signal
import threading
import time
from pathlib import Path

import pytest
from lxml import etree
from pptx import Presentation
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.oxml.ns import qn
from pptx.util import Emu

from agents.pptx_audit import AUDIT_VERSION, Audit, AuditLimits, audit_pptx
from corpus.protocol import FLATTEN_CAP, NO_CAP
from tests.agents import hostile
from tests.data.paths import PPTX_REAL as FIXTURES
from tests.data.paths import needs_shared

needs_fixtures = needs_shared(FIXTURES)

SLIDE_W, SLIDE_H = 9_144_000, 6_858_000  # python-pptx default 4:3 template
SLIDE_AREA = SLIDE_W * SLIDE_H
HANG_GUARD_SECONDS = 10.0

# --------------------------------------------------------------------------- real files

COUNT_KEYS = (
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
)


def counts(tb=0, sh=0, ln=0, cx=0, att=0, grp=0, pic=0, tbl=0, ch=0, sa=0, ole=0) -> dict:
    return dict(zip(COUNT_KEYS, (tb, sh, ln, cx, att, grp, pic, tbl, ch, sa, ole)))


# file: (gate_reason, slides, counts for one-slide files or None)
REAL_FILES = {
    # 4 empty-text rects, 4 pictures at top level; group "Gruppieren 3" holds groups 1 and 2, each with
    # one empty rect and one picture → 6 rects, 6 pics, 3 groups. Master bg is bgRef 1001 (solid).
    "apache-poi/54542_cropped_bitmap.pptx": ("", 1, counts(sh=6, grp=3, pic=6)),
    "apache-poi/OverlappingRelations.pptx": ("multiple_slides", 4, None),  # 4 sldId
    # one graphicFrame, uri .../drawingml/2006/diagram
    "apache-poi/SmartArt.pptx": ("", 1, counts(sa=1)),
    "apache-poi/backgrounds.pptx": ("multiple_slides", 4, None),
    # title placeholder "My Bar Chart" (a shape carrying text) + chart graphicFrame
    "apache-poi/bar-chart.pptx": ("", 1, counts(tb=1, sh=1, ch=1)),
    # chart graphicFrame only; the picture background lives inside the chart part, not on the slide
    "apache-poi/chart-picture-bg.pptx": ("", 1, counts(ch=1)),
    # minimised fuzzer cases: start with PK\3\4, central directory broken or absent
    "apache-poi/clusterfuzz-testcase-minimized-POIFuzzer-5205835528404992.pptx": ("corrupt", 0, None),
    "apache-poi/clusterfuzz-testcase-minimized-POIXSLFFuzzer-5463285576892416.pptx": ("corrupt", 0, None),
    "apache-poi/clusterfuzz-testcase-minimized-POIXSLFFuzzer-5471515212382208.pptx": ("corrupt", 0, None),
    "apache-poi/clusterfuzz-testcase-minimized-POIXSLFFuzzer-6254434927378432.pptx": ("corrupt", 0, None),
    "apache-poi/customGeo.pptx": ("multiple_slides", 48, None),
    "apache-poi/keyframes.pptx": ("multiple_slides", 28, None),
    # one p:pic with an empty p:blipFill (still a picture shape); slide bg is a solidFill;
    # the slide-level mc:AlternateContent is a transition, outside the shape tree
    "apache-poi/missing-blip-fill.pptx": ("", 1, counts(pic=1)),
    # 37 top-level empty sp + 11 groups (4×3 + 4×3 + 3×2 = 30 sp inside) = 67 sp, none with text
    "apache-poi/sample_pptx_grouping_issues.pptx": ("", 1, counts(sh=67, grp=11)),
    "apache-poi/shapes.pptx": ("multiple_slides", 6, None),
    # diagram graphicFrame + "TextBox 4" (cNvSpPr txBox="1") with seven paragraphs of text
    "apache-poi/smartart-simple.pptx": ("", 1, counts(tb=1, sa=1)),
    # one table graphicFrame (6×3 cells, all empty; cells never count as text boxes)
    "apache-poi/table_test.pptx": ("", 1, counts(tbl=1)),
    "python-pptx/dml-fill.pptx": ("multiple_slides", 2, None),
    # one text box (txBox="1"); its rels carry an external hyperlink (TargetMode="External")
    "python-pptx/ext-rels.pptx": ("", 1, counts(tb=1)),
    "python-pptx/lyt-shapes.pptx": ("no_slides", 0, None),  # empty sldIdLst
    "python-pptx/minimal.pptx": ("no_slides", 0, None),
    "python-pptx/ph-populated-placeholders.pptx": ("multiple_slides", 9, None),
    "python-pptx/ph-unpopulated-placeholders.pptx": ("multiple_slides", 9, None),
    "python-pptx/shp-access-chart.pptx": ("multiple_slides", 2, None),
    # graphicFrame uri .../presentationml/2006/ole (Excel); its Fallback preview p:pic is inside
    # graphicData and is not a slide picture
    "python-pptx/shp-access-ole-object.pptx": ("", 1, counts(ole=1)),
    "python-pptx/shp-common-props.pptx": ("multiple_slides", 2, None),
    "python-pptx/shp-connector-props.pptx": ("multiple_slides", 2, None),
    # the slide's spTree is empty (the freeform is built by the feature test)
    "python-pptx/shp-freeform.pptx": ("", 1, counts()),
    # group "Group 4" with roundRect, ellipse, triangle + top-level rect; all txBody empty
    "python-pptx/shp-groupshape.pptx": ("", 1, counts(sh=4, grp=1)),
    # one p:pic whose nvPr has a:videoFile + p14:media: a movie, counted as media not picture
    "python-pptx/shp-movie-props.pptx": ("", 1, counts(ole=1)),
    "python-pptx/shp-picture.pptx": ("multiple_slides", 2, None),
    "python-pptx/shp-pos-and-size.pptx": ("multiple_slides", 3, None),
    "python-pptx/shp-shapes.pptx": ("multiple_slides", 2, None),
    "python-pptx/sld-blank.pptx": ("", 1, counts()),  # empty spTree
    # ctrTitle "Presentation Title Text" + subTitle "Subtitle Text" placeholders
    "python-pptx/t_missing_rels_item.pptx": ("", 1, counts(tb=2, sh=2)),
    # ctrTitle "Minimal Deck" + subTitle "Single slide, “White” template"
    "python-pptx/t_no-core-props.pptx": ("", 1, counts(tb=2, sh=2)),
    "python-pptx/t_no-slides.pptx": ("no_slides", 0, None),
    "python-pptx/t_test.pptx": ("", 1, counts(tb=2, sh=2)),  # ctrTitle + subTitle with text
    # 6 sp: empty title ph, empty content ph, roundRects "Box 1" and "Box 2" (4 shapes), and the
    # txBox="1" boxes "Test text" and "Group test text" (in Group 10): 4 carry text; Picture 5 +
    # Picture 8 (in the group); one
    # straightConnector1 cxnSp with stCxn id=12 and endCxn id=13; one table graphicFrame
    "python-pptx/t_test_slides.pptx": ("", 1, counts(tb=4, sh=4, cx=1, att=1, grp=1, pic=2, tbl=1)),
    "python-pptx/tbl-cell.pptx": ("multiple_slides", 3, None),
    # one p:pic 2590800 × 2590800 at (3276600, 2133600)
    "python-pptx/test-image-jpg-mime.pptx": ("", 1, counts(pic=1)),
}


@needs_fixtures
def test_the_table_covers_every_fixture():
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*.pptx")}
    assert on_disk == set(REAL_FILES)


@needs_fixtures
@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_file(name):
    reason, slides, expected = REAL_FILES[name]
    audit = audit_pptx(FIXTURES / name)
    assert (audit.gate_passed, audit.gate_reason) == (reason == "", reason)
    assert audit.slides == slides
    assert name.split("/")[-1] not in audit.gate_detail
    if reason == "multiple_slides":
        assert audit.gate_detail == f"{slides} slides"
    if expected is not None:
        assert {key: getattr(audit, key) for key in COUNT_KEYS} == expected
        assert audit.alternate_content == 0


@needs_fixtures
def test_real_file_extras():
    # ext-rels: one hyperlink relationship with TargetMode="External" in slide1.xml.rels
    assert audit_pptx(FIXTURES / "python-pptx/ext-rels.pptx").external_links == 1
    # test-image-jpg-mime: one 2590800² picture on a 9144000 × 6858000 slide
    audit = audit_pptx(FIXTURES / "python-pptx/test-image-jpg-mime.pptx")
    assert (audit.slide_width_emu, audit.slide_height_emu) == (SLIDE_W, SLIDE_H)
    assert audit.largest_picture_ratio == pytest.approx(2_590_800**2 / SLIDE_AREA)
    assert audit.picture_area_ratio == pytest.approx(2_590_800**2 / SLIDE_AREA)
    assert (audit.cap, audit.capped) == (NO_CAP, False)
    # SmartArt.pptx is 16:9 (12192000 × 6858000)
    audit = audit_pptx(FIXTURES / "apache-poi/SmartArt.pptx")
    assert (audit.slide_width_emu, audit.slide_height_emu) == (12_192_000, 6_858_000)


# --------------------------------------------------------------------------- hostile files


def _timed_audit(path, **kwargs) -> Audit:
    start = time.monotonic()
    audit = audit_pptx(path, **kwargs)
    assert time.monotonic() - start < HANG_GUARD_SECONDS  # a hang guard, not a benchmark
    assert str(path) not in audit.gate_detail and Path(path).name not in audit.gate_detail
    assert not audit.gate_passed and audit.cap == NO_CAP and not audit.capped
    return audit


def test_zip_bomb_of_one_gigabyte_is_refused_from_the_central_directory(tmp_path):
    audit = _timed_audit(hostile.zip_bomb(tmp_path))
    assert audit.gate_reason == "too_large"
    assert audit.gate_detail.startswith("member ppt/media/image1.png inflates to 1.1 GB (ratio ")
    assert len(audit.sha256) == 64 and audit.size_bytes > 0


def test_zip_bomb_against_a_lower_member_limit(tmp_path):
    path = hostile.zip_bomb(tmp_path, inflated_bytes=64 << 20)
    audit = _timed_audit(path, limits=AuditLimits(max_member_bytes=32 << 20, max_compression_ratio=1e9))
    assert audit.gate_reason == "too_large" and "limit 33.6 MB" in audit.gate_detail


def test_compression_ratio_limit(tmp_path):
    audit = _timed_audit(hostile.ratio_bomb(tmp_path))
    assert audit.gate_reason == "too_large" and "ppt/media/zeros.bin" in audit.gate_detail
    assert "ratio limit 200:1" in audit.gate_detail


def test_too_many_members(tmp_path):
    audit = _timed_audit(hostile.many_members(tmp_path, extra=60), limits=AuditLimits(max_members=50))
    assert audit.gate_reason == "too_large" and "(limit 50)" in audit.gate_detail


def test_total_size_limit(tmp_path):
    audit = _timed_audit(hostile.deck(tmp_path / "d.pptx"), limits=AuditLimits(max_total_bytes=10_000))
    assert audit.gate_reason == "too_large" and "in total" in audit.gate_detail


def test_file_size_limit(tmp_path):
    audit = _timed_audit(hostile.deck(tmp_path / "d.pptx"), limits=AuditLimits(max_file_bytes=1_000))
    assert audit.gate_reason == "too_large" and audit.sha256 == ""  # refused before reading


@pytest.mark.parametrize("make", [hostile.billion_laughs, hostile.external_entity, hostile.external_entity_utf16])
def test_entity_declarations_are_refused(tmp_path, make):
    audit = _timed_audit(make(tmp_path))
    assert (audit.gate_reason, audit.gate_detail) == ("corrupt", "XML entity declarations are not allowed")
    assert "root:" not in audit.gate_detail


def test_truncated_zip(tmp_path):
    audit = _timed_audit(hostile.truncated(tmp_path))
    assert audit.gate_reason == "corrupt" and audit.gate_detail.startswith("broken zip")


def test_not_a_zip_never_names_the_file(tmp_path):
    audit = _timed_audit(hostile.not_a_zip(tmp_path, name="secret-figure-name.pptx"))
    assert (audit.gate_reason, audit.gate_detail) == ("not_a_zip", "not a zip archive")


def test_empty_file_is_not_a_zip(tmp_path):
    path = tmp_path / "empty.pptx"
    path.write_bytes(b"")
    assert _timed_audit(path).gate_reason == "not_a_zip"


def test_bad_crc_is_corrupt(tmp_path):
    audit = _timed_audit(hostile.bad_crc(tmp_path))
    assert audit.gate_reason == "corrupt" and "CRC" in audit.gate_detail


def test_missing_content_types_is_corrupt(tmp_path):
    audit = _timed_audit(hostile.no_content_types(tmp_path))
    assert (audit.gate_reason, audit.gate_detail) == ("corrupt", "missing [Content_Types].xml")


def test_multi_slide_deck(tmp_path):
    audit = _timed_audit(hostile.multi_slide(tmp_path, slides=3))
    assert (audit.gate_reason, audit.gate_detail, audit.slides) == ("multiple_slides", "3 slides", 3)
    assert audit.text_boxes == 0  # not audited


def test_zero_slide_deck(tmp_path):
    audit = _timed_audit(hostile.zero_slide(tmp_path))
    assert (audit.gate_reason, audit.slides) == ("no_slides", 0)


def test_huge_png_is_refused_from_its_header(tmp_path):
    path = hostile.huge_png_deck(tmp_path)
    assert path.stat().st_size < 50_000
    audit = _timed_audit(path)
    assert audit.gate_reason == "too_large"
    assert audit.gate_detail.startswith("image ppt/media/image1.png is too large to decode")


def test_image_pixel_limit_below_pillows_own(tmp_path):
    # a 12,000 × 10,000 PNG header = 120 MP: over the 100 MP default, under Pillow's 179 MP bomb error
    base = hostile.deck(tmp_path / "base.pptx", picture=True)
    path = hostile.rewrite_zip(
        base, tmp_path / "big.pptx", replace={"ppt/media/image1.png": hostile.huge_png_bytes(12_000, 10_000)}
    )
    audit = _timed_audit(path)
    assert (audit.gate_reason, audit.gate_detail) == (
        "too_large",
        "image ppt/media/image1.png is 12000 × 10000 px (120.0 MP; limit 100 MP)",
    )


def test_missing_path(tmp_path):
    audit = _timed_audit(tmp_path / "nowhere" / "figure.pptx")
    assert (audit.gate_reason, audit.gate_detail, audit.sha256, audit.size_bytes) == (
        "missing",
        "file does not exist",
        "",
        0,
    )


def test_directory_is_missing(tmp_path):
    assert _timed_audit(tmp_path).gate_reason == "missing"


def test_linked_picture_is_counted_not_fetched(tmp_path):
    audit = audit_pptx(hostile.linked_picture_deck(tmp_path))
    assert audit.gate_passed
    assert (audit.external_links, audit.pictures, audit.text_boxes) == (1, 1, 1)


def test_timeout_in_main_thread_and_handler_restored(tmp_path):
    path = hostile.deck(tmp_path / "d.pptx")
    previous = signal.getsignal(signal.SIGALRM)
    audit = audit_pptx(path, limits=AuditLimits(timeout_seconds=1e-6))
    assert (audit.gate_reason, audit.gate_passed) == ("audit_timeout", False)
    assert signal.getsignal(signal.SIGALRM) is previous
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_outside_the_main_thread_runs_without_timer(tmp_path):
    path = hostile.deck(tmp_path / "d.pptx")
    results = []
    worker = threading.Thread(target=lambda: results.append(audit_pptx(path, limits=AuditLimits(timeout_seconds=1e-6))))
    worker.start()
    worker.join()
    assert results[0].gate_passed


# --------------------------------------------------------------------------- hand-built geometry


def _blank():
    prs = Presentation()
    return prs, prs.slides.add_slide(prs.slide_layouts[6])


def _save(prs, path: Path) -> Path:
    prs.save(str(path))
    return path


def _set_xfrm(xfrm, off, ext, ch_off=None, ch_ext=None) -> None:
    values = {
        "a:off": ("x", "y", off),
        "a:ext": ("cx", "cy", ext),
        "a:chOff": ("x", "y", ch_off),
        "a:chExt": ("cx", "cy", ch_ext),
    }
    for tag, (kx, ky, value) in values.items():
        if value is None:
            continue
        el = xfrm.find(qn(tag))
        if el is None:
            el = etree.SubElement(xfrm, qn(tag))
        el.set(kx, str(value[0]))
        el.set(ky, str(value[1]))


def _group_xfrm(group):
    return group._element.find(qn("p:grpSpPr")).find(qn("a:xfrm"))


def test_nested_group_scaling(tmp_path):
    prs, slide = _blank()
    outer = slide.shapes.add_group_shape()
    inner = outer.shapes.add_group_shape()
    pic = inner.shapes.add_picture(io.BytesIO(hostile.png_bytes()), 0, 0, Emu(100), Emu(100))
    # outer: child space (0,0)+(2e6×1e6) → slide (1e6,1e6)+(4e6×2e6): scale 2 × 2
    _set_xfrm(_group_xfrm(outer), (1_000_000, 1_000_000), (4_000_000, 2_000_000), (0, 0), (2_000_000, 1_000_000))
    # inner (in outer's child space): (100000,100000)+(4e6×2e6) → (500000,250000)+(1e6×0.5e6): scale 0.25
    _set_xfrm(_group_xfrm(inner), (500_000, 250_000), (1_000_000, 500_000), (100_000, 100_000), (4_000_000, 2_000_000))
    _set_xfrm(pic._element.spPr.find(qn("a:xfrm")), (500_000, 300_000), (2_000_000, 1_200_000))
    # inner maps the picture to x = 500000 + 400000·0.25 = 600000, w = 500000,
    #                            y = 250000 + 200000·0.25 = 300000, h = 300000;
    # outer maps that to x = 1e6 + 2·600000 = 2.2e6, w = 1e6, y = 1e6 + 2·300000 = 1.6e6, h = 600000
    audit = audit_pptx(_save(prs, tmp_path / "nested.pptx"))
    assert (audit.groups, audit.pictures) == (2, 1)
    assert audit.largest_picture_ratio == pytest.approx(1_000_000 * 600_000 / SLIDE_AREA)
    assert audit.picture_area_ratio == pytest.approx(1_000_000 * 600_000 / SLIDE_AREA)


def test_full_slide_picture_with_one_text_box_is_capped(tmp_path):
    prs, slide = _blank()
    slide.shapes.add_picture(io.BytesIO(hostile.png_bytes()), 0, 0, Emu(SLIDE_W), Emu(SLIDE_H))
    slide.shapes.add_textbox(Emu(100_000), Emu(100_000), Emu(2_000_000), Emu(300_000)).text_frame.text = "Figure 1"
    audit = audit_pptx(_save(prs, tmp_path / "flat.pptx"))
    assert (audit.pictures, audit.text_boxes, audit.shapes, audit.native_objects) == (1, 1, 0, 1)
    assert audit.largest_picture_ratio == pytest.approx(1.0)
    assert (audit.cap, audit.capped) == (FLATTEN_CAP, True)


def test_title_and_caption_over_a_pasted_raster_are_still_capped(tmp_path):
    # corpus/protocol.py: "a title and a caption, say" still read as flattened; here as a title
    # placeholder (a shape and a text box, one native object) and a caption text box: 2 objects.
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])  # "Title Only": one title placeholder
    slide.shapes.title.text = "Title"
    slide.shapes.add_picture(io.BytesIO(hostile.png_bytes()), 0, 0, Emu(SLIDE_W), Emu(SLIDE_H))
    slide.shapes.add_textbox(Emu(100_000), Emu(6_000_000), Emu(3_000_000), Emu(300_000)).text_frame.text = "Caption"
    audit = audit_pptx(_save(prs, tmp_path / "flat2.pptx"))
    assert (audit.text_boxes, audit.shapes, audit.native_objects, audit.capped) == (2, 1, 2, True)


def test_full_slide_picture_with_ten_shapes_is_not_capped(tmp_path):
    prs, slide = _blank()
    slide.shapes.add_picture(io.BytesIO(hostile.png_bytes()), 0, 0, Emu(SLIDE_W), Emu(SLIDE_H))
    for i in range(10):
        slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, Emu(100_000 + 800_000 * i), Emu(100_000), Emu(500_000), Emu(500_000)
        )
    audit = audit_pptx(_save(prs, tmp_path / "native.pptx"))
    assert (audit.pictures, audit.shapes, audit.native_objects) == (1, 10, 10)
    assert (audit.cap, audit.capped) == (NO_CAP, False)


def test_hidden_shapes_do_not_count(tmp_path):
    prs, slide = _blank()
    slide.shapes.add_picture(io.BytesIO(hostile.png_bytes()), 0, 0, Emu(SLIDE_W), Emu(SLIDE_H))
    for i in range(10):
        shape = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Emu(800_000 * i), 0, Emu(500_000), Emu(500_000))
        shape._element.nvSpPr.cNvPr.set("hidden", "1")
    audit = audit_pptx(_save(prs, tmp_path / "hidden.pptx"))
    assert (audit.pictures, audit.shapes, audit.capped) == (1, 0, True)


def test_two_overlapping_pictures_and_one_clipped(tmp_path):
    prs, slide = _blank()
    png = hostile.png_bytes()
    slide.shapes.add_picture(io.BytesIO(png), 0, 0, Emu(4_000_000), Emu(3_000_000))  # A: 12e12
    slide.shapes.add_picture(
        io.BytesIO(png), Emu(2_000_000), Emu(1_000_000), Emu(4_000_000), Emu(3_000_000)
    )  # B: 12e12
    # C hangs off the bottom-right corner: only 1e6 × 1e6 lies on the slide, and it touches neither A nor B
    slide.shapes.add_picture(
        io.BytesIO(png), Emu(SLIDE_W - 1_000_000), Emu(SLIDE_H - 1_000_000), Emu(2_000_000), Emu(2_000_000)
    )
    audit = audit_pptx(_save(prs, tmp_path / "overlap.pptx"))
    # A ∩ B = [2e6, 4e6] × [1e6, 3e6] = 4e12; union = 12e12 + 12e12 − 4e12 + 1e12 = 21e12
    assert audit.pictures == 3
    assert audit.largest_picture_ratio == pytest.approx(12e12 / SLIDE_AREA)
    assert audit.picture_area_ratio == pytest.approx(21e12 / SLIDE_AREA)


def test_connectors_and_lines(tmp_path):
    prs, slide = _blank()
    a = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Emu(500_000), Emu(500_000), Emu(1_000_000), Emu(1_000_000))
    b = slide.shapes.add_shape(MSO_SHAPE.OVAL, Emu(4_000_000), Emu(500_000), Emu(1_000_000), Emu(1_000_000))
    attached = slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, 0, 0, 0, 0)
    attached.begin_connect(a, 3)
    attached.end_connect(b, 1)
    half = slide.shapes.add_connector(MSO_CONNECTOR.ELBOW, Emu(100), Emu(100), Emu(900_000), Emu(900_000))
    half.begin_connect(a, 2)  # one end only
    line = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Emu(500_000), Emu(3_000_000), Emu(3_000_000), Emu(0))
    line._element.spPr.find(qn("a:prstGeom")).set("prst", "line")
    audit = audit_pptx(_save(prs, tmp_path / "connectors.pptx"))
    assert (audit.connectors, audit.connectors_attached, audit.lines, audit.shapes) == (2, 1, 1, 2)
    assert audit.native_objects == 5


def test_picture_placeholder_inherits_layout_geometry(tmp_path):
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[8])  # "Picture with Caption"
    slide.placeholders[1].insert_picture(io.BytesIO(hostile.png_bytes()))
    assert slide.placeholders[1]._element.spPr.find(qn("a:xfrm")) is None  # position comes from the layout
    # slideLayout9.xml, "Picture Placeholder 2" (ph type=pic idx=1): off (1792288, 612775),
    # ext (5486400, 4114800) = 0.6 × 0.6 of the slide
    audit = audit_pptx(_save(prs, tmp_path / "ph.pptx"))
    assert (audit.pictures, audit.shapes, audit.text_boxes) == (1, 2, 0)  # empty title and caption placeholders
    assert audit.largest_picture_ratio == pytest.approx(0.36)


def _add_background_picture(part, c_sld) -> None:
    _, rid = part.get_or_add_image_part(io.BytesIO(hostile.png_bytes()))
    bg = etree.fromstring(
        f'<p:bg xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        f'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        f'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        f'<p:bgPr><a:blipFill><a:blip r:embed="{rid}"/><a:stretch><a:fillRect/></a:stretch></a:blipFill>'
        f"<a:effectLst/></p:bgPr></p:bg>"
    )
    c_sld.insert(0, bg)


def test_slide_background_picture_counts_as_full_slide(tmp_path):
    prs, slide = _blank()
    _add_background_picture(slide.part, slide._element.cSld)
    slide.shapes.add_textbox(0, 0, Emu(1_000_000), Emu(300_000)).text_frame.text = "caption"
    audit = audit_pptx(_save(prs, tmp_path / "bg.pptx"))
    assert (audit.pictures, audit.text_boxes) == (1, 1)
    assert (audit.largest_picture_ratio, audit.picture_area_ratio) == (1.0, 1.0)
    assert audit.capped


def test_layout_background_picture_is_inherited(tmp_path):
    prs, slide = _blank()
    layout = slide.slide_layout
    _add_background_picture(layout.part, layout._element.cSld)
    audit = audit_pptx(_save(prs, tmp_path / "layout-bg.pptx"))
    assert audit.pictures == 1 and audit.largest_picture_ratio == 1.0


def test_alternate_content_audits_the_choice(tmp_path):
    prs, slide = _blank()
    box = slide.shapes.add_textbox(0, 0, Emu(1_000_000), Emu(300_000))
    box.text_frame.text = "native"
    pic = slide.shapes.add_picture(io.BytesIO(hostile.png_bytes()), 0, 0, Emu(SLIDE_W), Emu(SLIDE_H))
    mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
    ac = etree.SubElement(slide.shapes._spTree, f"{{{mc}}}AlternateContent", nsmap={"mc": mc})
    etree.SubElement(ac, f"{{{mc}}}Choice", Requires="p").append(box._element)
    etree.SubElement(ac, f"{{{mc}}}Fallback").append(pic._element)
    audit = audit_pptx(_save(prs, tmp_path / "ac.pptx"))
    assert (audit.text_boxes, audit.shapes, audit.pictures, audit.alternate_content) == (1, 0, 0, 1)


@needs_fixtures
def test_summary_and_to_dict(tmp_path):
    path = FIXTURES / "python-pptx/t_test_slides.pptx"
    audit = audit_pptx(path)
    assert list(audit.summary()) == [
        "text boxes",
        "shapes",
        "lines",
        "connectors",
        "connectors attached",
        "groups",
        "pictures",
        "tables",
        "charts",
        "largest picture share %",
        "picture coverage %",
    ]
    assert list(audit.summary().values())[:9] == [4, 4, 0, 1, 1, 1, 2, 1, 0]
    data = audit.to_dict()
    assert data["audit_version"] == AUDIT_VERSION and data["sha256"] == audit.sha256
    assert path.name not in repr(data) and path.name not in repr(audit.summary())
