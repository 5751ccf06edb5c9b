"""agents.render against real LibreOffice and in-process PDFium (no database)."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import zlib
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_SHAPE
from pptx.util import Emu, Inches, Pt

from agents.render import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_LONG_EDGE,
    DEFAULT_THUMBNAIL_LONG_EDGE,
    MAX_BATCH_SIZE,
    MIN_MESSAGE_BATCH,
    LibreOfficeRenderer,
    message_batches,
    pdf_batch_command,
)
from tests.agents import hostile
from tests.agents.render_helpers import render_pptx, strip_png_metadata

pytestmark = pytest.mark.libreoffice

from tests.data.paths import PPTX_REAL, needs_shared, require_shared

FIXTURES = PPTX_REAL / "python-pptx"
needs_fixtures = needs_shared(FIXTURES)
ONE_SLIDE_FIXTURES = ["sld-blank.pptx", "shp-groupshape.pptx", "shp-freeform.pptx", "t_test.pptx"]
METADATA_CHUNKS = {b"tEXt", b"zTXt", b"iTXt", b"tIME", b"eXIf", b"iCCP", b"pHYs"}
PIXEL_CHUNKS = {b"IHDR", b"IDAT", b"IEND"}

if shutil.which("soffice") is None:
    pytest.skip("needs LibreOffice", allow_module_level=True)


# -- helpers (independent of the code under test) ------------------------------------------


def png_chunk_types(data: bytes) -> list[bytes]:
    """Chunk types of a PNG, parsed by hand: signature, then length / type / data / CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    types, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc
        types.append(kind)
        pos += 12 + length
    assert types[-1] == b"IEND"
    return types


def make_deck(
    path: Path, *, slides: int = 1, label: str = "A", width: Emu | None = None, height: Emu | None = None
) -> Path:
    prs = Presentation()
    if width is not None:
        prs.slide_width, prs.slide_height = width, height
    for n in range(slides):
        slide = prs.slides.add_slide(prs.slide_layouts[6])
        box = slide.shapes.add_textbox(Inches(0.5), Inches(0.5), Inches(6), Inches(1))
        box.text_frame.text = f"{label} slide {n + 1}"
        box.text_frame.paragraphs[0].runs[0].font.size = Pt(40)
        shape = slide.shapes.add_shape(MSO_SHAPE.ROUNDED_RECTANGLE, Inches(1), Inches(2), Inches(3), Inches(2))
        shape.fill.solid()
        shape.fill.fore_color.rgb = RGBColor(0x20, 0x60, 0xC0) if label == "A" else RGBColor(0xC0, 0x30, 0x20)
    path.parent.mkdir(parents=True, exist_ok=True)
    prs.save(path)
    return path


def slide_count(path: Path) -> int:
    return len(Presentation(path).slides)


def live_group_members(pgid: int) -> list[int]:
    """Non-zombie processes in process group ``pgid`` (a /proc scan)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def fake_soffice(tmp_path: Path, per_deck: str) -> Path:
    """A stand-in soffice: runs the shell snippet ``per_deck`` for each .pptx argument, with
    ``$a`` the deck, ``$pdf`` the PDF it is expected to write and ``$outdir`` the output folder."""
    fake = tmp_path / "fake-soffice"
    fake.write_text(
        "#!/bin/sh\n"
        'outdir=""; prev=""\n'
        'for a in "$@"; do\n'
        '  if [ "$prev" = "--outdir" ]; then outdir="$a"; fi\n'
        '  prev="$a"\n'
        "done\n"
        'for a in "$@"; do\n'
        '  case "$a" in *.pptx)\n'
        '    pdf="$outdir/$(basename "$a" .pptx).pdf"\n'
        f"    {per_deck}\n"
        "    ;;\n"
        "  esac\n"
        "done\n"
    )
    fake.chmod(0o755)
    return fake


def live_processes_mentioning(text: str) -> list[int]:
    """Non-zombie processes whose command line contains ``text`` (a /proc scan)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def renderer():
    with LibreOfficeRenderer(timeout=60.0) as shared:
        yield shared


@pytest.fixture(scope="module")
def real_renders(renderer, tmp_path_factory):
    """All one-slide decks rendered in one batch (one LibreOffice start-up)."""
    root = tmp_path_factory.mktemp("real")
    wide = make_deck(root / "wide" / "output.pptx", width=Inches(13.333), height=Inches(7.5))
    tall = make_deck(root / "tall" / "output.pptx", width=Inches(7.5), height=Inches(13.333))
    fixtures = require_shared(FIXTURES)
    decks = {name: fixtures / name for name in ONE_SLIDE_FIXTURES} | {"generated-16x9": wide, "generated-9x16": tall}
    names = list(decks)
    results = renderer.render_many([decks[n] for n in names], out_dirs=[root / n for n in names])
    return {name: (decks[name], result) for name, result in zip(names, results, strict=True)}


# -- successful renders --------------------------------------------------------------------


@pytest.mark.parametrize("name", [*ONE_SLIDE_FIXTURES, "generated-16x9", "generated-9x16"])
def test_one_slide_deck_renders_to_png_of_the_slide_shape(real_renders, name):
    deck, result = real_renders[name]
    assert slide_count(deck) == 1
    assert result.ok, result.detail
    assert (result.reason, result.detail, result.pdf_pages) == ("", "", 1)

    with Image.open(result.png_path) as png:
        assert png.size == (result.width, result.height)
    assert max(result.width, result.height) == DEFAULT_LONG_EDGE
    prs = Presentation(deck)
    expected_short = DEFAULT_LONG_EDGE * min(prs.slide_width, prs.slide_height) / max(prs.slide_width, prs.slide_height)
    assert abs(min(result.width, result.height) - expected_short) <= 1
    assert (result.width >= result.height) == (prs.slide_width >= prs.slide_height)

    with Image.open(result.thumbnail_path) as thumb:
        assert max(thumb.size) == DEFAULT_THUMBNAIL_LONG_EDGE

    assert result.png_path.name == "render.png" and result.thumbnail_path.name == "thumb.png"
    png_bytes, thumb_bytes = result.png_path.read_bytes(), result.thumbnail_path.read_bytes()
    assert result.png_sha256 == hashlib.sha256(png_bytes).hexdigest()
    assert result.thumbnail_sha256 == hashlib.sha256(thumb_bytes).hexdigest()
    # Blinding: pixels only -- no text, time, EXIF, ICC or physical-size chunks, no names.
    assert set(png_chunk_types(png_bytes)) <= PIXEL_CHUNKS
    assert set(png_chunk_types(thumb_bytes)) <= PIXEL_CHUNKS
    for data in (png_bytes, thumb_bytes):
        for word in (deck.stem, deck.parent.name, "LibreOffice", "PDFium", "pdfium", "output"):
            assert word.encode() not in data
    assert result.seconds > 0


def test_same_deck_gives_the_same_bytes_from_another_renderer(real_renders, tmp_path):
    deck, first = real_renders["shp-groupshape.pptx"]
    with LibreOfficeRenderer() as other:
        again = other.render(deck, out_dir=tmp_path / "again")
    assert (again.png_sha256, again.thumbnail_sha256) == (first.png_sha256, first.thumbnail_sha256)


def test_renderers_in_two_threads_give_the_same_bytes_as_one(real_renders, tmp_path):
    names = ["generated-16x9", "generated-9x16", "t_test.pptx"]
    decks = [real_renders[n][0] for n in names]
    found: dict[int, list] = {}

    def run(n: int) -> None:
        with LibreOfficeRenderer() as own:
            found[n] = own.render_many(decks, out_dirs=[tmp_path / f"t{n}-{i}" for i in range(len(decks))])

    threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = [real_renders[n][1].png_sha256 for n in names]
    assert [r.png_sha256 for r in found[0]] == [r.png_sha256 for r in found[1]] == expected


def test_inputs_with_the_same_file_name_render_to_their_own_outputs(renderer, tmp_path):
    first = make_deck(tmp_path / "run1" / "output.pptx", label="A")
    second = make_deck(tmp_path / "run2" / "output.pptx", label="B")
    outs = [tmp_path / "out1", tmp_path / "out2", tmp_path / "out1-again"]

    results = renderer.render_many([first, second, first], out_dirs=outs)

    assert all(r.ok for r in results), [r.detail for r in results]
    assert results[0].png_sha256 != results[1].png_sha256
    assert results[0].png_sha256 == results[2].png_sha256  # same deck, same bytes
    with Image.open(results[0].png_path) as a, Image.open(results[1].png_path) as b:
        # Deck A's rectangle is blue, deck B's is red: each output holds its own deck.
        centre = (int(a.width * 2.5 / 10), int(a.height * 3 / 7.5))
        blue, red = a.convert("RGB").getpixel(centre), b.convert("RGB").getpixel(centre)
    assert blue[2] > 150 and blue[0] < 100
    assert red[0] > 150 and red[2] < 100


# -- failures ------------------------------------------------------------------------------


def test_multi_slide_deck_is_render_failed_with_its_page_count(tmp_path):
    deck = make_deck(tmp_path / "deck.pptx", slides=3)
    assert slide_count(deck) == 3

    result = render_pptx(deck, out_dir=tmp_path / "out")

    assert (result.ok, result.reason, result.pdf_pages) == (False, "render_failed", 3)
    assert "PDF has 3 pages" in result.detail
    assert result.png_path is None and not (tmp_path / "out" / "render.png").exists()


def test_garbage_file_is_render_failed_without_naming_the_input(renderer, tmp_path):
    garbage = tmp_path / "secret-client-name.pptx"
    garbage.write_bytes(b"this is not a presentation\n" * 200)

    result = renderer.render(garbage, out_dir=tmp_path / "out")

    assert (result.ok, result.reason, result.pdf_pages) == (False, "render_failed", 0)
    assert result.detail.startswith("no PDF written")
    assert "secret-client-name" not in result.detail and str(tmp_path) not in result.detail


@needs_fixtures
def test_batch_with_one_garbage_file_still_renders_the_good_ones(renderer, tmp_path):
    garbage = tmp_path / "bad" / "output.pptx"
    garbage.parent.mkdir()
    garbage.write_bytes(os.urandom(4096))
    decks = [FIXTURES / "sld-blank.pptx", garbage, FIXTURES / "t_test.pptx"]

    results = renderer.render_many(decks, out_dirs=[tmp_path / f"out{i}" for i in range(3)])

    assert [r.ok for r in results] == [True, False, True]
    assert results[1].reason == "render_failed"
    assert all(r.png_path.exists() for r in (results[0], results[2]))


@needs_fixtures
def test_timeout_is_render_timeout_and_leaves_no_soffice_behind(tmp_path):
    with LibreOfficeRenderer(timeout=0.01) as quick:
        result = quick.render(FIXTURES / "t_test.pptx", out_dir=tmp_path / "out")
        assert (result.ok, result.reason) == (False, "render_timeout")
        assert live_processes_mentioning(str(quick.profile_dir)) == []


@needs_fixtures
def test_timeout_mid_conversion_kills_the_whole_process_group(tmp_path):
    # Long enough for oosplash to have started soffice.bin, short of a finished conversion.
    with LibreOfficeRenderer(timeout=0.4) as quick:
        result = quick.render(FIXTURES / "t_test.pptx", out_dir=tmp_path / "out")
        assert result.reason == "render_timeout"
        assert live_processes_mentioning(str(quick.profile_dir)) == []


def test_hanging_file_in_a_batch_times_out_alone(tmp_path):
    """A stand-in soffice that hangs (with a child) on one deck and 'converts' the others."""
    one_page = tmp_path / "one-page.pdf"
    Image.new("RGB", (400, 300), "white").save(one_page)
    fake = tmp_path / "fake-soffice"
    fake.write_text(
        "#!/bin/sh\n"
        'outdir=""; prev=""\n'
        'for a in "$@"; do\n'
        '  if [ "$prev" = "--outdir" ]; then outdir="$a"; fi\n'
        '  prev="$a"\n'
        "done\n"
        'for a in "$@"; do\n'
        '  case "$a" in *.pptx)\n'
        f'    if grep -q HANG "$a"; then echo $$ >> {tmp_path}/fake.pids; sleep 300 & wait; fi\n'
        f'    cp {one_page} "$outdir/$(basename "$a" .pptx).pdf";;\n'
        "  esac\n"
        "done\n"
    )
    fake.chmod(0o755)
    decks = []
    for i, body in enumerate([b"ok", b"HANG", b"ok"]):
        deck = tmp_path / f"in{i}" / "output.pptx"
        deck.parent.mkdir()
        deck.write_bytes(body)
        decks.append(deck)

    with LibreOfficeRenderer(soffice=str(fake), timeout=1.0) as fake_renderer:
        results = fake_renderer.render_many(decks, out_dirs=[tmp_path / f"out{i}" for i in range(3)])

    assert [r.reason for r in results] == ["", "render_timeout", ""]
    assert all(r.ok for r in (results[0], results[2]))
    fake_pids = [int(line) for line in (tmp_path / "fake.pids").read_text().split()]
    assert len(fake_pids) == 2  # the batch and the lone retry both hung
    assert all(live_group_members(pgid) == [] for pgid in fake_pids)


def gated_soffice(tmp_path: Path) -> Path:
    """A stand-in soffice that 'converts' each deck at once except those containing WAIT, which it converts only once
    the file ``go`` exists (it writes ``waiting`` and its pid first), within 30 s."""
    one_page = tmp_path / "one-page.pdf"
    Image.new("RGB", (400, 300), "white").save(one_page)
    return fake_soffice(
        tmp_path,
        f'if grep -q WAIT "$a"; then echo $$ > {tmp_path}/waiting; n=0; '
        f"while [ ! -e {tmp_path}/go ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done; fi; "
        f'cp {one_page} "$pdf"',
    )


def plain_decks(tmp_path: Path, bodies: list[bytes]) -> list[Path]:
    decks = []
    for i, body in enumerate(bodies):
        deck = tmp_path / f"in{i}" / "output.pptx"
        deck.parent.mkdir()
        deck.write_bytes(body)
        decks.append(deck)
    return decks


def test_a_batch_hands_over_each_rendering_while_libreoffice_converts_the_next(tmp_path):
    """Deck 0 is done while LibreOffice still waits on deck 2: it comes out then, not at the end of the batch."""
    decks = plain_decks(tmp_path, [b"ok", b"ok", b"WAIT", b"ok"])
    with LibreOfficeRenderer(soffice=str(gated_soffice(tmp_path)), timeout=30.0) as fake_renderer:
        seen = []
        for i, result in fake_renderer.render_iter(decks, out_dirs=[tmp_path / f"out{i}" for i in range(4)]):
            seen.append((i, result.ok, (tmp_path / "go").exists()))
            if i == 0:
                assert (tmp_path / "waiting").exists()  # LibreOffice is still on deck 2
                (tmp_path / "go").touch()
    assert seen[0] == (0, True, False)
    assert sorted(seen) == [(0, True, False), (1, True, True), (2, True, True), (3, True, True)]


def test_leaving_a_batch_early_stops_libreoffice(tmp_path):
    decks = plain_decks(tmp_path, [b"ok", b"ok", b"WAIT", b"ok"])
    with LibreOfficeRenderer(soffice=str(gated_soffice(tmp_path)), timeout=30.0) as fake_renderer:
        batch = fake_renderer.render_iter(decks, out_dirs=[tmp_path / f"out{i}" for i in range(4)])
        first, _ = next(batch)
        batch.close()
        pid = int((tmp_path / "waiting").read_text())
        assert first == 0
        assert live_group_members(pid) == []  # stopped, not waiting out its 30 s
        assert not list(fake_renderer.scratch_dir.glob("batch-*"))  # its staged decks and PDFs are gone


def test_render_messages_are_full_batches_and_a_small_set_is_shared_between_workers():
    assert [len(b) for b in message_batches(list(range(10_000)))] == [DEFAULT_BATCH_SIZE] * 100
    assert [len(b) for b in message_batches(list(range(23)))] == [MIN_MESSAGE_BATCH, 3]
    assert [len(b) for b in message_batches(list(range(250)))] == [32] * 7 + [26]  # eight workers can share it
    assert message_batches([]) == []
    ids = list(range(1_234))
    assert [pk for batch in message_batches(ids) for pk in batch] == ids


def test_hostile_and_corrupt_decks_in_one_batch_fail_alone_without_naming_inputs(tmp_path):
    """Broken zips fail; decks LibreOffice tolerates render; the good deck always renders."""
    made = tmp_path / "made"
    made.mkdir()
    decks = {
        "truncated": hostile.truncated(made),
        "no-content-types": hostile.no_content_types(made),
        "bad-crc": hostile.bad_crc(made),
        "huge-png": hostile.huge_png_deck(made),
        "billion-laughs": hostile.billion_laughs(made),
        "external-entity": hostile.external_entity(made),
        "good": hostile.deck(made / "good.pptx"),
    }
    names = list(decks)
    with LibreOfficeRenderer(timeout=30.0) as own:
        results = dict(zip(names, own.render_many(list(decks.values()), out_dirs=[tmp_path / n for n in names])))

    for name in ("truncated", "no-content-types"):
        assert (results[name].ok, results[name].reason) == (False, "render_failed")
        assert results[name].detail.startswith("no PDF written")
        assert not (tmp_path / name / "render.png").exists()
    good = results["good"]
    assert good.ok and set(png_chunk_types(good.png_path.read_bytes())) <= PIXEL_CHUNKS
    for name, result in results.items():
        assert result.ok or result.reason in ("render_failed", "render_timeout")
        assert str(made) not in result.detail and decks[name].stem not in result.detail


def test_corrupt_or_multi_page_pdf_from_libreoffice_is_render_failed(tmp_path):
    """PDFium reads LibreOffice's output in process: garbage must fail cleanly, not crash."""
    two_pages = tmp_path / "two-pages.pdf"
    Image.new("RGB", (40, 30), "white").save(two_pages, save_all=True, append_images=[Image.new("RGB", (40, 30))])
    fake = fake_soffice(
        tmp_path,
        f'if grep -q TWO "$a"; then cp {two_pages} "$pdf"; '
        'else head -c 3000 /dev/urandom > "$pdf"; printf "%%PDF-1.7 garbage" >> "$pdf"; fi',
    )
    decks = []
    for i, body in enumerate([b"GARBAGE", b"TWO"]):
        deck = tmp_path / f"in{i}" / "secret-name.pptx"
        deck.parent.mkdir()
        deck.write_bytes(body)
        decks.append(deck)

    with LibreOfficeRenderer(soffice=str(fake)) as fake_renderer:
        garbage, two = fake_renderer.render_many(decks, out_dirs=[tmp_path / "out0", tmp_path / "out1"])

    assert (garbage.ok, garbage.reason, garbage.pdf_pages) == (False, "render_failed", 0)
    assert garbage.detail.startswith("unreadable PDF")
    assert "secret-name" not in garbage.detail and str(tmp_path) not in garbage.detail
    assert (two.ok, two.reason, two.pdf_pages, two.detail) == (False, "render_failed", 2, "PDF has 2 pages")


def test_libreoffice_keeps_its_temporary_files_in_the_renderers_scratch(tmp_path):
    one_page = tmp_path / "one-page.pdf"
    Image.new("RGB", (400, 300), "white").save(one_page)
    fake = fake_soffice(tmp_path, f'echo "$TMPDIR" > {tmp_path}/tmpdir; cp {one_page} "$pdf"')
    deck = tmp_path / "in" / "output.pptx"
    deck.parent.mkdir()
    deck.write_bytes(b"ok")
    with LibreOfficeRenderer(soffice=str(fake)) as fake_renderer:
        assert fake_renderer.render(deck, out_dir=tmp_path / "out").ok
        used = Path((tmp_path / "tmpdir").read_text().strip())
        assert used.is_relative_to(fake_renderer.scratch_dir)


def test_half_written_pdf_of_a_killed_conversion_is_never_rasterised(tmp_path):
    """PDFium draws what it can of a truncated PDF; a killed LibreOffice's PDF must not be used."""
    whole = tmp_path / "whole.pdf"
    Image.new("RGB", (400, 300), (20, 90, 200)).save(whole)
    fake = fake_soffice(tmp_path, f'cp {whole} "$pdf"; sleep 300 & wait')
    deck = tmp_path / "in" / "output.pptx"
    deck.parent.mkdir()
    deck.write_bytes(b"deck")

    with LibreOfficeRenderer(soffice=str(fake), timeout=0.5) as fake_renderer:
        result = fake_renderer.render(deck, out_dir=tmp_path / "out")

    assert (result.ok, result.reason) == (False, "render_timeout")
    assert not (tmp_path / "out" / "render.png").exists()


@needs_fixtures
def test_libreoffice_converts_every_deck_of_the_largest_batch(tmp_path):
    """Past about 256 arguments LibreOffice ignores the rest and exits 0: the largest batch must be well inside."""
    decks = tmp_path / "in"
    decks.mkdir()
    for n in range(MAX_BATCH_SIZE):
        os.link(FIXTURES / "sld-blank.pptx", decks / f"deck-{n:04d}.pptx")
    command = pdf_batch_command("soffice", tmp_path / "profile", tmp_path / "pdf", sorted(decks.iterdir()))
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    subprocess.run(command, check=True, capture_output=True, timeout=300, env=env)
    assert len(list((tmp_path / "pdf").glob("deck-*.pdf"))) == MAX_BATCH_SIZE
    with pytest.raises(ValueError, match="between 1 and"):
        LibreOfficeRenderer(batch_size=MAX_BATCH_SIZE + 1)


def test_mismatched_out_dirs_are_rejected(renderer, tmp_path):
    with pytest.raises(ValueError):
        renderer.render_many([FIXTURES / "t_test.pptx"], out_dirs=[])


# -- fault safety: atomic outputs, private scratch ---------------------------------------


def test_leftovers_of_a_killed_write_are_never_reused(renderer, tmp_path):
    """What a SIGKILL mid-write leaves: a truncated temporary file; from an older, non-atomic
    writer: a truncated render.png itself. Both are replaced, never read back."""
    out = tmp_path / "out"
    out.mkdir()
    whole = make_deck(tmp_path / "src" / "output.pptx")
    truncated_png = hostile.png_bytes(800, 450)[:60]
    (out / "render.png").write_bytes(truncated_png)
    (out / ".render.png.k1ll3d.tmp").write_bytes(truncated_png)
    (out / ".thumb.png.k1ll3d.tmp").write_bytes(truncated_png)

    result = renderer.render(whole, out_dir=out)

    assert result.ok
    assert sorted(p.name for p in out.iterdir()) == ["render.png", "thumb.png"]
    data = result.png_path.read_bytes()
    png_chunk_types(data)  # parses to IEND with every CRC correct
    assert hashlib.sha256(data).hexdigest() == result.png_sha256


def test_a_write_that_fails_halfway_leaves_neither_output_nor_temporary_file(renderer, tmp_path, monkeypatch):
    out = tmp_path / "out"

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("agents.render.os.replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        renderer.render(make_deck(tmp_path / "src" / "output.pptx"), out_dir=out)
    assert list(out.iterdir()) == []


def test_scratch_is_private_under_tmpdir_and_removed_on_close():
    with LibreOfficeRenderer() as own:
        scratch = own.scratch_dir
        assert scratch.parent == Path(tempfile.gettempdir()) / f"refig-render-{os.getuid()}"
        assert own.profile_dir.is_relative_to(scratch)
        assert scratch.is_dir() and (scratch.stat().st_mode & 0o777) == 0o700
    assert not scratch.exists() and not scratch.with_name(scratch.name + ".lock").exists()


def test_scratch_parent_that_is_a_symlink_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError):
        LibreOfficeRenderer(scratch_parent=tmp_path / "link")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_starting_renderer_removes_scratch_of_dead_renderers_only(tmp_path):
    parent = tmp_path / "scratch"
    live = LibreOfficeRenderer(scratch_parent=parent)
    pid = os.fork()
    if pid == 0:  # a renderer whose process dies without closing it (as under SIGKILL)
        try:
            dead = LibreOfficeRenderer(scratch_parent=parent)
            (dead.profile_dir / "half-written").mkdir(parents=True)
            (tmp_path / "dead-name").write_text(dead.scratch_dir.name)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    dead_dir = parent / (tmp_path / "dead-name").read_text()
    orphan = parent / "12345-orphan"  # no lock file at all
    orphan.mkdir()
    assert dead_dir.is_dir()

    with LibreOfficeRenderer(scratch_parent=parent) as fresh:
        assert not dead_dir.exists() and not dead_dir.with_name(dead_dir.name + ".lock").exists()
        assert not orphan.exists()
        assert live.scratch_dir.is_dir() and fresh.scratch_dir.is_dir()
    live.close()
    assert list(parent.iterdir()) == []


# -- metadata stripping --------------------------------------------------------------------


def test_strip_png_metadata_keeps_pixels_and_drops_every_metadata_chunk():
    image = Image.new("RGB", (8, 4), (10, 200, 30))
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", "pdftoppm")
    info.add_itxt("Author", "somebody", zip=True)
    info.add_text("Comment", "x" * 2000, zip=True)
    info.add(b"tIME", struct.pack(">HBBBBB", 2026, 7, 20, 12, 0, 0))
    buffer = io.BytesIO()
    image.save(
        buffer,
        format="PNG",
        pnginfo=info,
        exif=b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00",
        icc_profile=b"\x00" * 128,
        dpi=(150, 150),
    )
    dirty = buffer.getvalue()
    assert {b"tEXt", b"iTXt", b"zTXt", b"tIME", b"eXIf", b"iCCP", b"pHYs"} <= set(png_chunk_types(dirty))

    clean = strip_png_metadata(dirty)

    assert set(png_chunk_types(clean)) <= {b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND"}
    with Image.open(io.BytesIO(clean)) as reread:
        assert reread.tobytes() == image.tobytes() and reread.size == image.size
    assert strip_png_metadata(dirty) == clean == strip_png_metadata(clean)
