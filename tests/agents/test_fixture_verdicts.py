"""Every real deck under ``../shared/fixtures/`` gets the gate verdict and the counts its XML gives.

The table below was written by hand from each deck's XML, never from the audit's output: unzip,
follow ``_rels/.rels`` → ``ppt/presentation.xml`` (``p:sldIdLst``) → the one slide, and read its
``p:spTree`` object by object (plus the slide, layout and master ``p:bg`` and, for ``p:bgRef``
above 1000, the theme's ``a:bgFillStyleLst``), applying the counting rules in the docstring of
``agents/pptx_audit.py``. The counting conventions worth repeating, because a reader of the XML
might count otherwise:

- a ``p:sp`` with text is a text box; it is also a shape unless it is a text box proper
  (``p:cNvSpPr txBox="1"``), so "Rectangle with text" adds to both ``tb`` and ``sh``, and an empty
  ``txBox="1"`` box is a shape (it draws nothing but its outline/fill);
- ``p:cxnSp`` are connectors (never lines), attached when both ``a:stCxn`` and ``a:endCxn`` are set;
- ``p:pic`` with video/audio in ``p:nvPr`` is media (``ole``), not a picture; SVG pictures
  (``asvg:svgBlip`` with a PNG fallback blip) are pictures;
- ``mc:AlternateContent``: only the Choice is counted (``ac`` counts the objects in it); ink
  (``p:contentPart``) is never counted; hidden objects (``cNvPr hidden="1"``) are not counted;
- graphicFrames are not descended into (OLE previews, table cell text, chart text do not count).

Licences: see ``pptx-real/SOURCE.md`` and ``pptx-more/README.md`` and each folder's ``SOURCE.md``
(MIT and Apache-2.0 test data, copied unchanged). The files are read in place, never copied here.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from agents.pptx_audit import audit_pptx

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
WHERE = (
    f"real-deck fixtures not found at {FIXTURES}: they live in the shared workspace next to the "
    "checkout (../shared/fixtures/pptx-real and pptx-more, see their SOURCE.md / README.md)"
)

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
    "alternate_content",
    "external_links",
)


def counts(tb=0, sh=0, ln=0, cx=0, att=0, grp=0, pic=0, tbl=0, ch=0, sa=0, ole=0, ac=0, ext=0) -> dict:
    return dict(zip(COUNT_KEYS, (tb, sh, ln, cx, att, grp, pic, tbl, ch, sa, ole, ac, ext)))


MORE = "pptx-more/"
SC, UN, TIKA, ASP = (
    MORE + "ShapeCrawler__ShapeCrawler/",
    MORE + "Unstructured-IO__unstructured/",
    MORE + "apache__tika/",
    MORE + "aspose-slides__Aspose.Slides-for-.NET/",
)
DOC, SDK, AUTO = MORE + "docling-project__docling/", MORE + "dotnet__Open-XML-SDK/", MORE + "singerla__pptx-automizer/"
POI, PPX = "pptx-real/apache-poi/", "pptx-real/python-pptx/"

# file: (gate reason, "" when passed; slides in p:sldIdLst; counts for a deck that passed, else None)
# External links (TargetMode="External" in any .rels) are counted for every deck the gate reads in
# full; they are 0 unless listed in EXTERNAL_LINKS below.
FIXTURE_VERDICTS = {
    # ------------------------------------------------------------------ pptx-more: ShapeCrawler (MIT)
    # chart frame; group "Группа 9" of text boxes test1/test2; picture; text box "Test shape"; table
    SC + "003.pptx": ("", 1, counts(tb=3, grp=1, pic=1, tbl=1, ch=1)),
    # "TextBox 1" is hidden="1"; one table frame
    SC + "004.pptx": ("", 1, counts(tbl=1)),
    SC + "007_2 slides.pptx": ("multiple_slides", 2, None),
    # p:pic in a picture placeholder + chart frame
    SC + "018.pptx": ("", 1, counts(pic=1, ch=1)),
    # 003's objects plus "Group 15" ⊃ "Group 14" with three labelled rects, and labelled "Rectangle 16"
    SC + "039.pptx": ("", 1, counts(tb=7, sh=4, grp=3, pic=1, tbl=1, ch=1)),
    # filled title placeholder; the master's bgRef idx=1003 is the theme's third background style,
    # an a:blipFill: a full-slide background picture
    SC + "050_title-placeholder.pptx": ("", 1, counts(tb=1, sh=1, pic=1)),
    SC + "059_crop-images.pptx": ("", 1, counts(pic=8)),  # eight cropped p:pic, no groups
    # Group 19 ⊃ {Group 6 (2 labelled rects), Group 86 ⊃ 3 × (text box + group of 2 labelled rects),
    # Group 24 (58 empty freeforms/ovals/rect)} and a labelled "Test": 10 groups, 12 texts, 70 shapes
    SC + "077 grouped shape.pptx": ("", 1, counts(tb=12, sh=70, grp=10)),
    # two empty rects, txBox "Title 1" with text; the slide's own p:bg is a picture (blipFill)
    SC + "085 fill transparency when saving image.pptx": ("", 1, counts(tb=1, sh=2, pic=1)),
    SC + "087 issue-587-source.pptx": ("", 1, counts(pic=1)),
    # title ph, txBox "AutoShape 1", diagram frame, slide-number ph (a:fld text "1"), labelled rect
    # "AutoShape 2" (with an external hyperlink)
    SC + "autoshape-case001.pptx": ("", 1, counts(tb=4, sh=3, sa=1, ext=1)),
    # 5 text boxes; Group 2 (2 labelled rects); Group 1 (2 text boxes); ctrTitle ph, ellipse, "TEMP"
    SC + "autoshape-grouping.pptx": ("", 1, counts(tb=12, sh=5, grp=2)),
    SC + "new presentation.pptx": ("no_slides", 0, None),  # empty p:sldIdLst
    SC + "pictures-case001.pptx": ("", 1, counts(grp=1, pic=3)),  # one picture + a group of two
    SC + "table-case004.pptx": ("", 1, counts(tbl=2)),
    SC + "video-case001.pptx": ("", 1, counts(ole=1)),  # p:pic with a:videoFile + p14:media
    # ------------------------------------------------------------------ pptx-more: unstructured (Apache-2.0)
    # Google Slides export: title ph that is a txBox="1", table frame
    UN + "fake-power-point-table.pptx": ("", 1, counts(tb=1, tbl=1)),
    # 3 labelled shapes; Group 14 (2 labelled + empty rect); Group 21 ⊃ {labelled triangle, Group 19
    # (2 labelled + empty rect), empty rect, Group 20 (2 labelled + empty rect)}
    UN + "group-shapes-nested.pptx": ("", 1, counts(tb=10, sh=14, grp=4)),
    # ------------------------------------------------------------------ pptx-more: Apache Tika (Apache-2.0)
    TIKA + "testOCR.pptx": ("", 1, counts(tb=1, pic=1)),
    # empty ctrTitle and subTitle placeholders, a picture, two OLE frames (PDFs; their EMF previews
    # sit in graphicData). image1.emf / image2.emf inflate 31.6 KB → 1.5 MB and 2.2 KB → 1.5 MB
    # (667:1): modest, so the gate passes it (it was refused by a compression-ratio limit before)
    TIKA + "testPPT_EmbeddedPDF.pptx": ("", 1, counts(sh=2, pic=1, ole=2)),
    TIKA + "testPPT_embeddedMP3.pptx": ("", 1, counts(sh=2, ole=1)),  # 2 empty phs + audio p:pic
    TIKA + "testPPT_groups.pptx": ("multiple_slides", 2, None),
    # empty ctrTitle + subTitle, table, empty rect, txBox, labelled "Rectangle 3" and "Rectangle 5",
    # empty "Rectangle 4"
    TIKA + "testPPT_various.pptx": ("", 1, counts(tb=3, sh=6, tbl=1, ext=1)),
    TIKA + "testWPSAttachment.pptx": ("", 1, counts(ole=9)),  # nine OLE frames (WPS)
    # ------------------------------------------------------------------ pptx-more: Aspose.Slides (MIT)
    # Group 1 of four rects ("1", "", "3", ""); two txBox="1" boxes without text (shapes)
    ASP + "AltText.pptx": ("", 1, counts(tb=2, sh=6, grp=1)),
    # empty rect, elbow cxnSp with no ends attached, picture, text box, SVG picture "Graphic 10"
    ASP + "CheckTextShapes.pptx": ("", 1, counts(tb=1, sh=1, cx=1, pic=2)),
    # filled ctrTitle + subTitle, rect, triangle; three straight cxnSp (two with endCxn only)
    ASP + "ConnectorLineAngle.pptx": ("", 1, counts(tb=2, sh=4, cx=3)),
    # chart frame; AlternateContent whose Choice is a chartex frame; two evaluation-watermark text boxes
    ASP + "Funnel.pptx": ("", 1, counts(tb=2, ch=2, ac=1)),
    ASP + "HelloWorld.pptx": ("multiple_slides", 3, None),
    ASP + "ImageQuality.pptx": ("", 1, counts(pic=1)),
    # AlternateContent: Choice is ink (p:contentPart, not counted), Fallback its p:pic (not audited)
    ASP + "InkEffects.pptx": ("", 1, counts()),
    ASP + "OlePptx.pptx": ("", 1, counts(ole=11)),
    # an encrypted (password) OOXML file is an OLE compound file (D0 CF 11 E0), not a zip
    ASP + "OpenPasswordPresentation.pptx": ("not_a_zip", 0, None),
    ASP + "OrganizationChart.pptx": ("", 1, counts(tb=2, ch=1, sa=1)),  # chart, diagram, 2 watermarks
    ASP + "SvgShapesConvertion.pptx": ("", 1, counts(tb=1)),
    # one group of 16 empty freeforms and a labelled rect; one watermark text box
    ASP + "image_group.pptx": ("", 1, counts(tb=2, sh=17, grp=1)),
    # one p:pic whose SVG part starts <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "…svg11.dtd">
    # (no internal subset: allowed) + a watermark text box
    ASP + "presentation.pptx": ("", 1, counts(tb=1, pic=1)),
    # ------------------------------------------------------------------ pptx-more: Docling (MIT)
    # 11 cxnSp: 5 with both ends attached (Elbow 120, Elbow 3, Straight Arrows 53, 57, 50), 6 with
    # stCxn only; 7 groups of folded corners / rounded rects
    DOC + "docling_arch.pptx": ("", 1, counts(tb=25, sh=21, cx=11, att=5, grp=7)),
    # 8 text boxes, 7 attached straight connectors, Group 51 = empty oval + SVG picture
    DOC + "docling_ecosystem.pptx": ("", 1, counts(tb=8, sh=1, cx=7, att=7, grp=1, pic=1)),
    # filled ctrTitle; the layout's p:bg is a solid bgPr, not a picture
    DOC + "powerpoint_bad_text.pptx": ("", 1, counts(tb=1, sh=1)),
    DOC + "powerpoint_sample.pptx": ("multiple_slides", 3, None),
    # filled title + subtitle phs, two pictures (one linked: r:link, External), a text box
    DOC + "powerpoint_with_image.pptx": ("", 1, counts(tb=3, sh=2, pic=2, ext=1)),
    # ------------------------------------------------------------------ pptx-more: Open-XML-SDK (MIT)
    # title ph, roundRect, labelled roundRect, star32, labelled cloudCallout, straight arrow cxnSp
    SDK + "AutoShapes_2D (Default Styles).pptx": ("", 1, counts(tb=3, sh=5, cx=1)),
    SDK + "EmptySlide.pptx": ("", 1, counts(tb=1, sh=1)),  # hidden OLE frame + filled title ph
    SDK + "Image_Small+3D Rotation.pptx": ("", 1, counts(tb=1, sh=1, pic=1)),
    SDK + "Of16-01.pptx": ("", 1, counts(ch=1, ac=1)),  # AlternateContent Choice: chartex frame
    SDK + "SmartArt_OrgChart1.pptx": ("", 1, counts(tb=1, sh=1, sa=1)),
    # ISO/IEC 29500 Strict package (relationship types under http://purl.oclc.org/ooxml/): python-pptx
    # reads only Transitional OOXML and finds no officeDocument relationship
    SDK + "[HC]grpsppr-GroupShapeProperties-bwmode-ltgray.pptx": ("corrupt", 0, None),
    # ------------------------------------------------------------------ pptx-more: MarkItDown, docx4j
    MORE + "microsoft__markitdown/pptx_complex_layout.pptx": (
        "",
        1,
        counts(tb=2, sh=2, pic=1),
    ),  # title, empty content ph
    MORE + "plutext__docx4j/table.pptx": ("", 1, counts(tbl=1)),
    # ------------------------------------------------------------------ pptx-more: pptx-automizer (MIT)
    AUTO + "ChartWaterfall.pptx": ("", 1, counts(ch=1, ac=1)),  # Choice: chartex frame
    # straight cxnSp (no ends), txBox "tilte", labelled rect, chart (workbook linked externally)
    AUTO + "ChartWithExternalData.pptx": ("", 1, counts(tb=2, sh=1, cx=1, ch=1, ext=1)),
    AUTO + "EmptyTemplate.pptx": ("no_slides", 0, None),
    AUTO + "SVGImages.pptx": ("", 1, counts(pic=3)),  # three SVG pictures
    # table, picture, cxnSp, empty callout, pictogram (SVG), diagram, chart, txBox "Text", SVG picture,
    # labelled rect "Test", txBox "Native Textfield", rect with a:blipFill (a picture fill)
    AUTO + "ShapeTypesCollection.pptx": ("", 1, counts(tb=3, sh=2, cx=1, pic=4, tbl=1, ch=1, sa=1)),
    AUTO + "SlideWithShapes.pptx": ("multiple_slides", 3, None),
    # ------------------------------------------------------------------ pptx-real: Apache POI (Apache-2.0)
    # 4 empty-text rects, 4 pictures at top level; group "Gruppieren 3" holds groups 1 and 2, each with
    # one empty rect and one picture → 6 rects, 6 pics, 3 groups. Master bg is bgRef 1001 (solid).
    POI + "54542_cropped_bitmap.pptx": ("", 1, counts(sh=6, grp=3, pic=6)),
    POI + "OverlappingRelations.pptx": ("multiple_slides", 4, None),
    POI + "SmartArt.pptx": ("", 1, counts(sa=1)),  # one graphicFrame, uri …/drawingml/2006/diagram
    POI + "backgrounds.pptx": ("multiple_slides", 4, None),
    # title placeholder "My Bar Chart" (a shape carrying text) + chart graphicFrame
    POI + "bar-chart.pptx": ("", 1, counts(tb=1, sh=1, ch=1)),
    # chart graphicFrame only; the picture background lives inside the chart part, not on the slide
    POI + "chart-picture-bg.pptx": ("", 1, counts(ch=1)),
    # minimised fuzzer cases: start with PK\3\4, central directory broken or absent
    POI + "clusterfuzz-testcase-minimized-POIFuzzer-5205835528404992.pptx": ("corrupt", 0, None),
    POI + "clusterfuzz-testcase-minimized-POIXSLFFuzzer-5463285576892416.pptx": ("corrupt", 0, None),
    POI + "clusterfuzz-testcase-minimized-POIXSLFFuzzer-5471515212382208.pptx": ("corrupt", 0, None),
    POI + "clusterfuzz-testcase-minimized-POIXSLFFuzzer-6254434927378432.pptx": ("corrupt", 0, None),
    POI + "customGeo.pptx": ("multiple_slides", 48, None),
    POI + "keyframes.pptx": ("multiple_slides", 28, None),
    # one p:pic with an empty p:blipFill (still a picture shape); slide bg is a solidFill;
    # the slide-level mc:AlternateContent is a transition, outside the shape tree
    POI + "missing-blip-fill.pptx": ("", 1, counts(pic=1)),
    # 37 top-level empty sp + 11 groups (4×3 + 4×3 + 3×2 = 30 sp inside) = 67 sp, none with text
    POI + "sample_pptx_grouping_issues.pptx": ("", 1, counts(sh=67, grp=11)),
    POI + "shapes.pptx": ("multiple_slides", 6, None),
    # diagram graphicFrame + "TextBox 4" (cNvSpPr txBox="1") with seven paragraphs of text
    POI + "smartart-simple.pptx": ("", 1, counts(tb=1, sa=1)),
    # one table graphicFrame (6×3 cells, all empty; cells never count as text boxes)
    POI + "table_test.pptx": ("", 1, counts(tbl=1)),
    # ------------------------------------------------------------------ pptx-real: python-pptx (MIT)
    PPX + "dml-fill.pptx": ("multiple_slides", 2, None),
    # one text box (txBox="1"); its rels carry an external hyperlink (TargetMode="External")
    PPX + "ext-rels.pptx": ("", 1, counts(tb=1, ext=1)),
    PPX + "lyt-shapes.pptx": ("no_slides", 0, None),  # empty sldIdLst
    PPX + "minimal.pptx": ("no_slides", 0, None),
    PPX + "ph-populated-placeholders.pptx": ("multiple_slides", 9, None),
    PPX + "ph-unpopulated-placeholders.pptx": ("multiple_slides", 9, None),
    PPX + "shp-access-chart.pptx": ("multiple_slides", 2, None),
    # graphicFrame uri …/presentationml/2006/ole (Excel); its Fallback preview p:pic is inside
    # graphicData and is not a slide picture
    PPX + "shp-access-ole-object.pptx": ("", 1, counts(ole=1)),
    PPX + "shp-common-props.pptx": ("multiple_slides", 2, None),
    PPX + "shp-connector-props.pptx": ("multiple_slides", 2, None),
    PPX + "shp-freeform.pptx": ("", 1, counts()),  # the slide's spTree is empty
    # group "Group 4" with roundRect, ellipse, triangle + top-level rect; all txBody empty
    PPX + "shp-groupshape.pptx": ("", 1, counts(sh=4, grp=1)),
    # one p:pic whose nvPr has a:videoFile + p14:media: a movie, counted as media not picture
    PPX + "shp-movie-props.pptx": ("", 1, counts(ole=1)),
    PPX + "shp-picture.pptx": ("multiple_slides", 2, None),
    PPX + "shp-pos-and-size.pptx": ("multiple_slides", 3, None),
    PPX + "shp-shapes.pptx": ("multiple_slides", 2, None),
    PPX + "sld-blank.pptx": ("", 1, counts()),  # empty spTree
    # ctrTitle "Presentation Title Text" + subTitle "Subtitle Text" placeholders
    PPX + "t_missing_rels_item.pptx": ("", 1, counts(tb=2, sh=2)),
    # ctrTitle "Minimal Deck" + subTitle "Single slide, “White” template"
    PPX + "t_no-core-props.pptx": ("", 1, counts(tb=2, sh=2)),
    PPX + "t_no-slides.pptx": ("no_slides", 0, None),
    PPX + "t_test.pptx": ("", 1, counts(tb=2, sh=2)),  # ctrTitle + subTitle with text
    # 6 sp: empty title ph, empty content ph, roundRects "Box 1" and "Box 2" (4 shapes), and the
    # txBox="1" boxes "Test text" and "Group test text" (in Group 10): 4 carry text; Picture 5 +
    # Picture 8 (in the group); one straightConnector1 cxnSp with stCxn id=12 and endCxn id=13;
    # one table graphicFrame
    PPX + "t_test_slides.pptx": ("", 1, counts(tb=4, sh=4, cx=1, att=1, grp=1, pic=2, tbl=1)),
    PPX + "tbl-cell.pptx": ("multiple_slides", 3, None),
    # one p:pic 2590800 × 2590800 at (3276600, 2133600)
    PPX + "test-image-jpg-mime.pptx": ("", 1, counts(pic=1)),
}

# Decks the gate reads in full that are refused for their slide count still report their links.
EXTERNAL_LINKS = {
    TIKA + "testPPT_groups.pptx": 1,
    POI + "customGeo.pptx": 30,  # hyperlinks across its 48 slides
    POI + "shapes.pptx": 2,
}

needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason=WHERE)


@needs_fixtures
def test_the_table_lists_every_fixture_file():
    on_disk = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.suffix.lower() == ".pptx"}
    assert on_disk, WHERE
    assert sorted(on_disk - set(FIXTURE_VERDICTS)) == [], "new fixture: read its XML and add it to the table"
    assert sorted(set(FIXTURE_VERDICTS) - on_disk) == [], "fixture gone: drop it from the table"
    assert set(EXTERNAL_LINKS) <= set(FIXTURE_VERDICTS)


@needs_fixtures
@pytest.mark.parametrize("name", sorted(FIXTURE_VERDICTS))
def test_fixture_verdict_and_counts(name):
    reason, slides, expected = FIXTURE_VERDICTS[name]
    audit = audit_pptx(FIXTURES / name)
    assert (audit.gate_reason, audit.gate_passed) == (reason, reason == "")
    assert audit.slides == slides
    if reason == "multiple_slides":
        assert audit.gate_detail == f"{slides} slides"
    if expected is None:
        assert audit.external_links == EXTERNAL_LINKS.get(name, 0)
        assert audit.native_objects == audit.text_boxes == audit.pictures == 0  # not audited
    else:
        assert {key: getattr(audit, key) for key in expected} == expected
    assert Path(name).name not in audit.gate_detail


@needs_fixtures
def test_the_svg_doctype_and_the_blank_emf_preview_are_what_the_gate_now_accepts():
    # the two decks refused before: what is in them, read here without the audit
    with zipfile.ZipFile(FIXTURES / ASP / "presentation.pptx") as zf:
        svg = zf.read("ppt/media/image2.svg")
    head = svg[: svg.index(b"<svg")]
    assert b'<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"' in head and b"[" not in head and b"ENTITY" not in svg
    with zipfile.ZipFile(FIXTURES / TIKA / "testPPT_EmbeddedPDF.pptx") as zf:
        emf = zf.getinfo("ppt/media/image2.emf")
    assert emf.file_size > 600 * emf.compress_size and emf.file_size < 2_000_000
