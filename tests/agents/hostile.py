"""Generators of hostile and hand-built PPTX files, written into a test's tmp directory.

Each returns the path it wrote. Nothing here calls the code under test.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

from PIL import Image
from pptx import Presentation
from pptx.util import Emu

SLIDE = "ppt/slides/slide1.xml"


def png_bytes(width: int = 64, height: int = 48, colour=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def deck(path: Path, *, slides: int = 1, picture: bool = False) -> Path:
    """A plain python-pptx deck: blank-layout slides, each with one text box (and a picture)."""
    prs = Presentation()
    for i in range(slides):
        slide = prs.slides.add_slide(prs.slide_layouts[6])
        slide.shapes.add_textbox(Emu(914400), Emu(914400), Emu(3000000), Emu(400000)).text_frame.text = f"slide {i + 1}"
        if picture:
            slide.shapes.add_picture(io.BytesIO(png_bytes()), Emu(914400), Emu(2000000), Emu(1828800), Emu(1371600))
    prs.save(str(path))
    return path


def rewrite_zip(
    src: Path, dst: Path, *, replace: dict[str, bytes | None] | None = None, add: dict[str, bytes] | None = None
) -> Path:
    """Copy a zip, replacing (or, with None, dropping) members and adding new ones."""
    replace = replace or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename in replace:
                if replace[info.filename] is not None:
                    zout.writestr(info.filename, replace[info.filename])
            else:
                zout.writestr(info.filename, zin.read(info.filename))
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst


# --------------------------------------------------------------------------- hostile files


def zip_bomb(directory: Path, *, inflated_bytes: int = 1 << 30) -> Path:
    """A valid deck plus one member of ``inflated_bytes`` zeros (1 GiB deflates to ~4 MB at level 1)."""
    base = deck(directory / "bomb-base.pptx")
    path = rewrite_zip(base, directory / "bomb.pptx")
    chunk = bytes(1 << 20)
    with (
        zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("ppt/media/image1.png", "w") as member,
    ):
        for _ in range(inflated_bytes // len(chunk)):
            member.write(chunk)
    return path


def compressible_member(directory: Path) -> Path:
    """8 MiB of zeros in one member: ~1000:1, yet modest (like a blank EMF preview); not a bomb."""
    return rewrite_zip(
        deck(directory / "ratio-base.pptx"), directory / "ratio.pptx", add={"ppt/media/zeros.bin": bytes(8 << 20)}
    )


def xml_bomb(directory: Path, *, inflated_bytes: int = 48 << 20) -> Path:
    """A slide part padded to ``inflated_bytes`` of empty groups: python-pptx would build a huge tree."""
    base = deck(directory / "xml-bomb-base.pptx")
    xml = _slide_xml(base)
    at = xml.index("</p:spTree>")
    unit = "<p:grpSp/>"
    padding = unit * ((inflated_bytes - len(xml)) // len(unit) + 1)
    return rewrite_zip(base, directory / "xml-bomb.pptx", replace={SLIDE: (xml[:at] + padding + xml[at:]).encode()})


def many_members(directory: Path, *, extra: int = 60) -> Path:
    return rewrite_zip(
        deck(directory / "many-base.pptx"),
        directory / "many.pptx",
        add={f"customXml/item{i}.bin": b"x" for i in range(extra)},
    )


def _slide_xml(src: Path) -> str:
    with zipfile.ZipFile(src) as zf:
        return zf.read(SLIDE).decode("utf-8")


def _with_doctype(directory: Path, name: str, doctype: str, entity_ref: str, *, encoding: str = "utf-8") -> Path:
    base = deck(directory / f"{name}-base.pptx")
    xml = _slide_xml(base)
    decl_end = xml.index("?>") + 2
    body = xml[decl_end:].replace("slide 1", entity_ref)
    if encoding == "utf-8":
        data = (xml[:decl_end] + doctype + body).encode("utf-8")
    else:  # UTF-16 with a byte-order mark and a matching declaration
        data = ('<?xml version="1.0" encoding="UTF-16" standalone="yes"?>' + doctype + body).encode("utf-16")
    return rewrite_zip(base, directory / f"{name}.pptx", replace={SLIDE: data})


def billion_laughs(directory: Path) -> Path:
    lols = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol;" if i == 1 else f"&lol{i - 1};") * 10}">' for i in range(1, 10)
    ]
    doctype = "<!DOCTYPE p:sld [" + "".join(lols) + "]>"
    return _with_doctype(directory, "laughs", doctype, "&lol9;")


def external_entity(directory: Path) -> Path:
    doctype = '<!DOCTYPE p:sld [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    return _with_doctype(directory, "xxe", doctype, "&xxe;")


def external_entity_utf16(directory: Path) -> Path:
    doctype = '<!DOCTYPE p:sld [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    return _with_doctype(directory, "xxe16", doctype, "&xxe;", encoding="utf-16")


SVG11_DOCTYPE = '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">'


def doctype_slide(directory: Path, name: str, doctype: str, *, text: str = "slide 1") -> Path:
    """The slide part with ``doctype`` after its XML declaration (and its text box saying ``text``)."""
    return _with_doctype(directory, name, doctype, text)


def svg_picture_deck(directory: Path, svg: bytes, name: str = "svg") -> Path:
    """A picture deck whose media includes an SVG part (as PowerPoint stores an SVG's source)."""
    base = deck(directory / f"{name}-base.pptx", picture=True)
    with zipfile.ZipFile(base) as zf:
        types = zf.read("[Content_Types].xml").decode()
    types = types.replace("<Default ", '<Default Extension="svg" ContentType="image/svg+xml"/><Default ', 1)
    return rewrite_zip(
        base,
        directory / f"{name}.pptx",
        replace={"[Content_Types].xml": types.encode()},
        add={"ppt/media/image2.svg": svg},
    )


def svg_bytes(prolog: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        + prolog
        + '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
    ).encode()


def truncated(directory: Path) -> Path:
    data = deck(directory / "trunc-base.pptx").read_bytes()
    path = directory / "truncated.pptx"
    path.write_bytes(data[: len(data) // 2])
    return path


def not_a_zip(directory: Path, name: str = "not-a-zip.pptx") -> Path:
    path = directory / name
    path.write_bytes(b"%PDF-1.4\n% this is a PDF pretending to be a deck\n" * 20)
    return path


def bad_crc(directory: Path) -> Path:
    """One stored member with a flipped byte: the CRC no longer matches."""
    base = deck(directory / "crc-base.pptx")
    path = directory / "bad-crc.pptx"
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("docProps/app.xml")
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    at = info.header_offset + 30 + name_len + extra_len + 200  # well past the XML prolog
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    return path


def no_content_types(directory: Path) -> Path:
    return rewrite_zip(
        deck(directory / "ct-base.pptx"), directory / "no-ct.pptx", replace={"[Content_Types].xml": None}
    )


def multi_slide(directory: Path, slides: int = 3) -> Path:
    return deck(directory / f"multi-{slides}.pptx", slides=slides)


def zero_slide(directory: Path) -> Path:
    path = directory / "zero.pptx"
    Presentation().save(str(path))
    return path


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def huge_png_bytes(width: int = 50_000, height: int = 50_000) -> bytes:
    """A PNG whose IHDR declares width × height (8-bit RGB) with a token IDAT: ~60 bytes on disk."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 16))
        + _png_chunk(b"IEND", b"")
    )


def huge_png_deck(directory: Path) -> Path:
    base = deck(directory / "png-base.pptx", picture=True)
    return rewrite_zip(base, directory / "huge-png.pptx", replace={"ppt/media/image1.png": huge_png_bytes()})


def linked_picture_deck(directory: Path) -> Path:
    """A picture whose image is an external link (r:link, TargetMode="External"); must never be fetched."""
    base = deck(directory / "link-base.pptx", picture=True)
    with zipfile.ZipFile(base) as zf:
        rels = zf.read("ppt/slides/_rels/slide1.xml.rels").decode()
        slide = zf.read(SLIDE).decode()
    rels = rels.replace(
        'Target="../media/image1.png"', 'Target="http://example.invalid/figure.png" TargetMode="External"'
    )
    slide = slide.replace("r:embed=", "r:link=")
    return rewrite_zip(
        base,
        directory / "linked.pptx",
        replace={
            "ppt/slides/_rels/slide1.xml.rels": rels.encode(),
            SLIDE: slide.encode(),
            "ppt/media/image1.png": None,
        },
    )
