"""import_corpus on real image files: statistics by hand, every bad-row case, idempotency."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from corpus.models import Figure
from corpus.selectors import corpus_fields, corpus_stats
from tests.corpus.images import make_corpus_images, manifest_row, sha256_of, write_manifest, write_png_header_only

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    make_corpus_images(folder)
    return folder


@pytest.fixture
def good_rows(image_dir):
    return [
        manifest_row("t0001", "2301.00001", "wide.png", sha256_of(image_dir / "wide.png"), field="cs.CV"),
        manifest_row("t0002", "2302.00002", "photo.jpg", sha256_of(image_dir / "photo.jpg"), field="cs.CL"),
        manifest_row("t0003", "2303.00003", "print.jpg", sha256_of(image_dir / "print.jpg"), field="cs.CV"),
        manifest_row("t0004", "2304.00004", "gray.png", sha256_of(image_dir / "gray.png"), field="cs.LG"),
    ]


def run_import(manifest, image_dir):
    out, err = io.StringIO(), io.StringIO()
    failed = None
    try:
        call_command("import_corpus", manifest=manifest, images=image_dir, no_progress=True, stdout=out, stderr=err)
    except CommandError as error:
        failed = error
    return out.getvalue(), err.getvalue(), failed


def test_good_manifest_imports_with_facts_and_hand_computed_statistics(tmp_path, image_dir, good_rows):
    manifest = write_manifest(tmp_path / "m.jsonl", good_rows)
    out, err, failed = run_import(manifest, image_dir)
    assert failed is None, err
    assert "4 imported" in out

    wide = Figure.objects.get(task_id="t0001")
    assert (wide.image_format, wide.width, wide.height, wide.orientation) == ("PNG", 8000, 4200, "landscape")
    assert wide.megapixels == pytest.approx(33.6)
    assert wide.file_size == (image_dir / "wide.png").stat().st_size
    assert wide.arxiv_base_id == "2301.00001" and wide.authors == ["Ada Lovelace", "Alan Turing"]
    cmyk = Figure.objects.get(task_id="t0003")
    assert (cmyk.image_format, cmyk.image_mode, cmyk.orientation) == ("JPEG", "CMYK", "portrait")
    gray = Figure.objects.get(task_id="t0004")
    assert (gray.image_mode, gray.orientation) == ("LA", "square")
    # Stored content-addressed: the manifest's file name does not travel.
    assert "wide" not in wide.image.name and wide.sha256 in wide.image.name
    assert wide.image.open("rb").read() == (image_dir / "wide.png").read_bytes()

    stats = dict(corpus_stats().itertuples(index=False))
    # widths 8000, 640, 300, 500 → median (500 + 640) / 2; heights 4200, 480, 600, 500 → (500 + 600) / 2
    assert stats["figures"] == 4 and stats["format_png"] == 2 and stats["format_jpeg"] == 2
    assert stats["distinct_resolutions"] == 4
    assert stats["median_width"] == 570.0 and stats["median_height"] == 550.0
    assert (stats["min_width"], stats["max_width"], stats["min_height"], stats["max_height"]) == (300, 8000, 480, 4200)
    # areas in MP sorted: 0.18, 0.25, 0.3072, 33.6 → median 0.2786; P95 at rank 2.85 → 0.3072 + 0.85 · 33.2928
    assert stats["area_mp_median"] == pytest.approx(0.2786)
    assert stats["area_mp_p95"] == pytest.approx(28.60608)
    assert stats["area_mp_max"] == pytest.approx(33.6)
    assert (stats["landscape"], stats["portrait"], stats["square"]) == (2, 1, 1)

    sizes = {name: (image_dir / name).stat().st_size for name in ("wide.png", "photo.jpg", "print.jpg", "gray.png")}
    fields = corpus_fields().set_index("field")
    cv = sorted([sizes["wide.png"], sizes["print.jpg"]])
    assert fields.loc["cs.CV", "tasks"] == 2 and fields.loc["cs.CV", "share"] == 0.5
    assert fields.loc["cs.CV", "total_bytes"] == sum(cv)
    assert fields.loc["cs.CV", "p25_bytes"] == pytest.approx(cv[0] + 0.25 * (cv[1] - cv[0]))
    assert fields.loc["cs.CL", "p50_bytes"] == sizes["photo.jpg"]
    everything = sorted(sizes.values())
    assert fields.loc["all", "tasks"] == 4 and fields.loc["all", "total_bytes"] == sum(everything)
    assert fields.loc["all", "mean_bytes"] == pytest.approx(sum(everything) / 4)
    assert fields.loc["all", "p75_bytes"] == pytest.approx(everything[2] + 0.25 * (everything[3] - everything[2]))
    assert list(fields.index) == ["cs.CL", "cs.CV", "cs.LG", "all"]


def test_reimport_adds_nothing_and_changes_nothing(tmp_path, image_dir, good_rows):
    manifest = write_manifest(tmp_path / "m.jsonl", good_rows)
    run_import(manifest, image_dir)
    before = list(Figure.objects.order_by("task_id").values())
    out, err, failed = run_import(manifest, image_dir)
    assert failed is None, err
    assert "0 imported, 4 already stored, 0 rejected" in out
    assert list(Figure.objects.order_by("task_id").values()) == before


def bad_cases(image_dir, tmp_path):
    (image_dir / "garbage.png").write_bytes(b"\x89PNG\r\n\x1a\n this is not really a png")
    write_png_header_only(image_dir / "bomb.png", 50_000, 50_000)
    outside = tmp_path / "outside.png"
    outside.write_bytes((image_dir / "gray.png").read_bytes())
    gray_sha = sha256_of(image_dir / "gray.png")
    base = manifest_row("t0100", "2310.00100", "gray.png", gray_sha)
    missing_title = dict(base)
    del missing_title["title"]
    return [
        ('{"task_id": "t0101", "arxiv_id": ', "$", "malformed JSON"),
        (json.dumps(missing_title | {"task_id": "t0102", "arxiv_id": "2310.00102"}), "title", "missing field"),
        (json.dumps(base | {"task_id": "t0103", "arxiv_id": "2310.00103", "colour": "red"}), "colour", "unknown field"),
        (
            json.dumps(base | {"task_id": "t0104", "arxiv_id": "2310.00104", "image": "nope.png"}),
            "image",
            "image file not found",
        ),
        (
            json.dumps(
                base
                | {
                    "task_id": "t0105",
                    "arxiv_id": "2310.00105",
                    "image": "garbage.png",
                    "sha256": sha256_of(image_dir / "garbage.png"),
                }
            ),
            "image",
            "unreadable image",
        ),
        (json.dumps(base | {"task_id": "t0106", "arxiv_id": "2310.00106", "sha256": "0" * 64}), "sha256", "mismatch"),
        (
            json.dumps(base | {"task_id": "t0107", "arxiv_id": "2301.00001v3"}),
            "arxiv_id",
            "duplicate arXiv base id 2301.00001",
        ),
        (
            json.dumps(base | {"task_id": "t0108", "arxiv_id": "2310.00108", "image": "../outside.png"}),
            "image",
            "path escapes the image folder",
        ),
        (
            json.dumps(
                base
                | {
                    "task_id": "t0109",
                    "arxiv_id": "2310.00109",
                    "image": "bomb.png",
                    "sha256": sha256_of(image_dir / "bomb.png"),
                }
            ),
            "image",
            "decompression bomb",
        ),
        (
            json.dumps(base | {"task_id": "t0110", "arxiv_id": "2310.00110", "field": "astro-ph"}),
            "field",
            "undeclared field",
        ),
        (
            json.dumps(base | {"task_id": "t0111", "arxiv_id": "2310.00111", "selection_score": "high"}),
            "selection_score",
            "expected a number",
        ),
    ]


def test_each_bad_row_is_reported_with_file_line_field_and_good_rows_land(tmp_path, image_dir, good_rows):
    images = tmp_path / "imgs"
    images.mkdir()
    for path in image_dir.iterdir():
        (images / path.name).write_bytes(path.read_bytes())
    cases = bad_cases(images, tmp_path)
    # Good rows interleaved with the bad ones: the first good row is stored before the duplicate case.
    lines = [json.dumps(good_rows[0])]
    for text, _, _ in cases:
        lines.append(text)
    lines.append(json.dumps(good_rows[1]))
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(lines) + "\n")

    out, err, failed = run_import(manifest, images)
    assert failed is None  # the good rows are stored: exit 0, the bad ones reported
    messages = [line for line in err.splitlines() if line.startswith(str(manifest))]
    assert len(messages) == len(cases)
    for offset, (_, field, reason) in enumerate(cases):
        line_number = offset + 2
        assert messages[offset].startswith(f"{manifest}:{line_number} {field}: "), messages[offset]
        assert reason in messages[offset], messages[offset]
    assert f"{len(cases) + 2} rows: 2 imported, 0 already stored, {len(cases)} rejected" in out
    assert sorted(Figure.objects.values_list("task_id", flat=True)) == ["t0001", "t0002"]


def test_a_rejected_rerun_keeps_what_was_stored(tmp_path, image_dir, good_rows):
    write_manifest(tmp_path / "a.jsonl", good_rows[:2])
    run_import(tmp_path / "a.jsonl", image_dir)
    changed = dict(good_rows[0], title="A different title")
    out, err, failed = run_import(write_manifest(tmp_path / "b.jsonl", [changed]), image_dir)
    assert failed is not None
    assert f"{tmp_path / 'b.jsonl'}:1 title: differs from the stored record of t0001" in err
    assert Figure.objects.get(task_id="t0001").title == good_rows[0]["title"]
    assert Figure.objects.count() == 2


def test_import_stores_a_metadata_free_png_of_each_figure(tmp_path, image_dir, good_rows):
    """What annotators are served is prepared once at import: pixel chunks only, the same pixels as the original."""
    from PIL import Image, PngImagePlugin

    from core.png import png_is_plain
    from corpus.services import clean_image_name, figure_clean_image

    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "Ada Lovelace")
    Image.new("RGB", (120, 80), (5, 90, 200)).save(tmp_path / "tagged.png", format="PNG", pnginfo=info)
    rows = good_rows[1:] + [manifest_row("t0005", "2305.00005", "tagged.png", sha256_of(tmp_path / "tagged.png"))]
    for name in ("photo.jpg", "print.jpg", "gray.png"):
        (tmp_path / name).write_bytes((image_dir / name).read_bytes())
    _, err, failed = run_import(write_manifest(tmp_path / "m.jsonl", rows), tmp_path)
    assert failed is None, err
    from django.core.files.storage import default_storage

    for figure in Figure.objects.all():
        name = clean_image_name(figure.sha256)
        assert default_storage.exists(name) and figure_clean_image(figure=figure) == name
        data = default_storage.open(name, "rb").read()
        assert png_is_plain(data) and b"Ada Lovelace" not in data
        with figure.image.open("rb") as handle, Image.open(handle) as original:
            mode = "RGBA" if original.mode in ("LA", "RGBA") else "RGB"
            expected = original.convert(mode).tobytes()
        assert Image.open(io.BytesIO(data)).convert(mode).tobytes() == expected
    gray = Figure.objects.get(task_id="t0004")
    assert default_storage.open(clean_image_name(gray.sha256), "rb").read() == (image_dir / "gray.png").read_bytes()


def test_rows_repeated_in_one_file_are_checked_against_the_earlier_row_before_it_is_written(
    tmp_path, image_dir, good_rows
):
    """Rows are written in batches, so a repeat can meet its first occurrence before that reaches the database."""
    first = good_rows[0]
    rows = [
        first,
        first,  # the same again: already stored
        dict(first, title="Another title"),
        manifest_row("t0009", "2301.00001v2", "gray.png", sha256_of(image_dir / "gray.png"), field="cs.LG"),
        good_rows[1],
    ]
    manifest = write_manifest(tmp_path / "m.jsonl", rows)
    out, err, failed = run_import(manifest, image_dir)
    assert failed is None
    assert "5 rows: 2 imported, 1 already stored, 2 rejected" in out
    assert f"{manifest}:3 title: differs from the row earlier in this file of t0001" in err
    assert f"{manifest}:4 arxiv_id: duplicate arXiv base id 2301.00001 (already stored as t0001)" in err
    assert sorted(Figure.objects.values_list("task_id", flat=True)) == ["t0001", "t0002"]


def test_a_row_the_database_refuses_is_named_and_leaves_no_image_behind(tmp_path, image_dir, good_rows, settings):
    """Validation knows the manifest's rules, the database its column sizes: a license too long for its column fails
    the batch, which is written again row by row, so only that row is refused; its image file is never stored."""
    from django.core.files.storage import default_storage
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite does not enforce a column's length, so it refuses nothing here")
    settings.MEDIA_ROOT = tmp_path / "media"
    too_long = dict(good_rows[2], license="x" * (Figure._meta.get_field("license").max_length + 1))
    manifest = write_manifest(tmp_path / "m.jsonl", [good_rows[0], too_long, good_rows[1]])
    out, err, failed = run_import(manifest, image_dir)
    assert failed is None and "3 rows: 2 imported, 0 already stored, 1 rejected" in out
    assert f"{manifest}:2 row: refused by the database" in err
    assert sorted(Figure.objects.values_list("task_id", flat=True)) == ["t0001", "t0002"]
    refused_sha = good_rows[2]["sha256"]
    assert not any(refused_sha in name for name in _stored_names(default_storage, "corpus"))
    for figure in Figure.objects.all():
        assert default_storage.exists(figure.image.name)


def _stored_names(storage, folder: str) -> list[str]:
    directories, files = storage.listdir(folder)
    return [f"{folder}/{f}" for f in files] + [n for d in directories for n in _stored_names(storage, f"{folder}/{d}")]
