"""Gate (minus rendering) and object audit (REFERENCE 3). Pure: no database.

Expected numbers for the real files come from reading each file's XML by hand
(``unzip -p FILE ppt/slides/slide1.xml`` and the slide/layout/master rels and backgrounds; the
verdict table of every fixture is in test_fixture_verdicts.py); the hand-built decks have geometry
worked out in the comments.
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
# Verdicts and counts of every real deck: tests/agents/test_fixture_verdicts.py. Here, geometry.


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
    audit = _timed_audit(path, limits=AuditLimits(max_member_bytes=32 << 20))
    assert audit.gate_reason == "too_large" and "limit 33.6 MB" in audit.gate_detail


def test_a_highly_compressible_but_modest_member_passes(tmp_path):
    # 8 MiB of zeros deflate ~1000:1, like the blank EMF previews of real decks: no ratio limit
    audit = audit_pptx(hostile.compressible_member(tmp_path))
    assert audit.gate_passed and audit.text_boxes == 1


def test_the_same_member_against_a_lower_total_limit(tmp_path):
    audit = _timed_audit(hostile.compressible_member(tmp_path), limits=AuditLimits(max_total_bytes=4 << 20))
    assert audit.gate_reason == "too_large" and "in total" in audit.gate_detail


def test_xml_bomb_is_refused_before_parsing(tmp_path):
    # 48 MiB of empty groups in the slide part (~2,000:1): over the 32 MiB default for XML members
    path = hostile.xml_bomb(tmp_path)
    assert path.stat().st_size < 1 << 20
    audit = _timed_audit(path)
    assert audit.gate_reason == "too_large"
    assert audit.gate_detail.startswith("member ppt/slides/slide1.xml inflates to 50.3 MB")
    assert audit.gate_detail.endswith("XML limit 33.6 MB)")


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


@pytest.mark.parametrize(
    "doctype",
    [
        "<!DOCTYPE p:sld>",
        '<!DOCTYPE p:sld PUBLIC "-//Example//DTD Slide//EN" "http://example.invalid/slide.dtd">',
        "<!DOCTYPE p:sld [ <!-- nothing declared --> ]>",
        '<!DOCTYPE p:sld [<!ATTLIST p:sld note CDATA "a > b"><!ELEMENT p:sld ANY>]>',
    ],
)
def test_harmless_doctypes_pass(tmp_path, doctype):
    audit = audit_pptx(hostile.doctype_slide(tmp_path, "harmless", doctype))
    assert audit.gate_passed, audit.gate_detail
    assert audit.text_boxes == 1


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE p:sld [<!ENTITY x "y">]>',
        '<!DOCTYPE p:sld PUBLIC "-//W3C//DTD SVG 1.1//EN" "svg11.dtd" [<!ENTITY x "y">]>',
        '<!DOCTYPE p:sld [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>',
        '<!DOCTYPE p:sld [<!ATTLIST p:sld a CDATA "]>"> <!ENTITY x "y">]>',  # a "]>" inside a literal
        "<!DOCTYPE p:sld [%p;]>",
        "<!DOCTYPE p:sld PUBLIC>",  # malformed: nothing the prolog reader can vouch for
        '<!DOCTYPE p:sld PUBLIC "-//Example//EN">',
    ],
)
def test_entity_declarations_and_unreadable_doctypes_are_refused(tmp_path, doctype):
    audit = _timed_audit(hostile.doctype_slide(tmp_path, "subset", doctype))
    assert (audit.gate_reason, audit.gate_detail) == ("corrupt", "XML entity declarations are not allowed")


def test_a_system_dtd_is_refused(tmp_path):
    audit = _timed_audit(hostile.doctype_slide(tmp_path, "system", '<!DOCTYPE p:sld SYSTEM "file:///etc/passwd">'))
    assert (audit.gate_reason, audit.gate_detail) == ("corrupt", "XML external DTD (SYSTEM) references are not allowed")


def test_a_public_dtd_is_never_loaded(tmp_path):
    # the DTD would define &secret;, on a local server and in a local file: neither is ever read
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    dtd = tmp_path / "slide.dtd"
    dtd.write_text('<!ENTITY secret "LEAKED">')
    try:
        for uri in (f"http://127.0.0.1:{server.getsockname()[1]}/slide.dtd", dtd.as_uri()):
            doctype = f'<!DOCTYPE p:sld PUBLIC "-//Example//DTD Slide//EN" "{uri}">'
            audit = audit_pptx(hostile.doctype_slide(tmp_path, "public", doctype, text="&secret;"))
            # the slide says standalone="yes", so an undeclared entity is a parse error: corrupt
            assert (audit.gate_reason, audit.text_boxes) == ("corrupt", 0)
            assert "LEAKED" not in audit.gate_detail
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected
    finally:
        server.close()


@pytest.mark.parametrize(
    "xml, verdict",
    [
        (
            (
                b'<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "svg11.dtd" '
                b'[<!ATTLIST svg a CDATA "]>"><!ENTITY x "y">]><svg/>'
            ),
            "dtd",
        ),
        (b'<?xml version="1.0"?><!-- c --><!DOCTYPE svg PUBLIC "a" "b"><svg/>', "ok"),
        (b'<!DOCTYPE svg SYSTEM "x.dtd"><svg/>', "system"),
        (b'<?xml version="1.0"?><!DOCTYPE p:sld [<!ELEMENT a ANY><?pi x?><!-- x --> %p; ]><p:sld/>', "dtd"),
    ],
)
def test_a_cut_prolog_asks_for_more_never_passes_early(xml, verdict):
    # the gate reads a member's head and grows it ×8 while the verdict is "more"
    from agents.xml_safety import prolog_verdict as _prolog_verdict

    assert _prolog_verdict(xml) == verdict
    assert {_prolog_verdict(xml[:k]) for k in range(1, len(xml))} <= {"more", verdict}


def test_svg_picture_with_a_public_doctype_passes(tmp_path):
    audit = audit_pptx(hostile.svg_picture_deck(tmp_path, hostile.svg_bytes(hostile.SVG11_DOCTYPE)))
    assert audit.gate_passed and audit.pictures == 1


@pytest.mark.parametrize(
    "prolog",
    [
        hostile.SVG11_DOCTYPE[:-1] + ' [<!ENTITY ns_svg "http://www.w3.org/2000/svg">]>',  # as Illustrator writes
        '<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    ],
)
def test_svg_picture_declaring_entities_is_refused(tmp_path, prolog):
    audit = _timed_audit(hostile.svg_picture_deck(tmp_path, hostile.svg_bytes(prolog)))
    assert (audit.gate_reason, audit.gate_detail) == ("corrupt", "XML entity declarations are not allowed")


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
