"""Plain PNG (pixel chunks only): the check is exact on real files written by Pillow, and the re-encode keeps pixels."""

import io
import zlib

from PIL import Image, PngImagePlugin

from core.png import clean_png, png_is_plain
from tests.agents.render_helpers import strip_png_metadata


def png(image: Image.Image, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", **options)
    return buffer.getvalue()


def chunk_types(data: bytes) -> list[bytes]:
    """An independent walk with the zlib CRC checked, to know what the files hold."""
    at, kinds = 8, []
    while at < len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert zlib.crc32(kind + body) == int.from_bytes(data[at + 8 + length : at + 12 + length], "big")
        kinds.append(kind)
        at += 12 + length
    return kinds


def test_plain_only_when_every_chunk_is_a_pixel_chunk():
    image = Image.new("RGB", (64, 32), (10, 20, 30))
    plain = png(image)
    assert chunk_types(plain) == [b"IHDR", b"IDAT", b"IEND"] and png_is_plain(plain)
    info = PngImagePlugin.PngInfo()
    info.add_text("Title", "cfg-alpha-direct")
    tagged = png(image, pnginfo=info)
    assert b"tEXt" in chunk_types(tagged) and not png_is_plain(tagged)
    with_icc = png(image, icc_profile=b"\0" * 100)
    assert b"iCCP" in chunk_types(with_icc) and not png_is_plain(with_icc)
    with_dpi = png(image, dpi=(300, 300))
    assert b"pHYs" in chunk_types(with_dpi) and not png_is_plain(with_dpi)
    palette = png(Image.new("P", (8, 8)), transparency=0)
    assert set(chunk_types(palette)) <= {b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND"} and png_is_plain(palette)
    assert not png_is_plain(plain + b"trailing name")  # bytes after IEND
    assert not png_is_plain(plain[:-12])  # no IEND
    jpeg = io.BytesIO()
    image.save(jpeg, format="JPEG")
    assert not png_is_plain(jpeg.getvalue()) and not png_is_plain(b"")


def test_clean_png_keeps_pixels_and_drops_metadata():
    image = Image.new("RGBA", (40, 30), (1, 2, 3, 128))
    image.putpixel((5, 5), (200, 100, 50, 255))
    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "secret")
    tagged = png(image, pnginfo=info, icc_profile=b"\0" * 50)
    clean = clean_png(tagged)
    assert png_is_plain(clean) and b"secret" not in clean
    assert Image.open(io.BytesIO(clean)).tobytes() == image.tobytes()
    exif = Image.Exif()
    exif[0x010E] = "cfg-bravo-direct"  # ImageDescription
    jpeg = io.BytesIO()
    Image.new("RGB", (16, 16), (9, 9, 9)).save(jpeg, format="JPEG", exif=exif)
    assert b"cfg-bravo-direct" in jpeg.getvalue()
    cleaned = clean_png(jpeg.getvalue())
    assert png_is_plain(cleaned) and b"cfg-bravo-direct" not in cleaned


def test_renders_are_written_plain():
    """agents.render writes what lease_image serves without re-encoding."""
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", "LibreOffice")
    assert png_is_plain(strip_png_metadata(png(Image.new("RGB", (20, 10)), pnginfo=info, dpi=(96, 96))))
