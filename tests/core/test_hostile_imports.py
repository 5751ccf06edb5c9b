"""Every importer × every hostile input: which rows are kept, the exact FILE:LINE field: reason, never a traceback.

Each hostile file is three rows — a good one, the hostile one, a good one — so "good rows before and after kept" is
checked by counting what is stored. The hostile bytes are put into the file by hand (not by the code under test).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Comparison
from annotation.services import comparisons_import
from core.readers import MAX_FIELD_CHARS, MAX_LINE_BYTES
from corpus.models import Figure
from corpus.services import corpus_import
from scoring.models import JudgeRecord, PptbenchScore
from scoring.services import judge_records_import, pptbench_scores_import
from tests.corpus.images import manifest_row, sha256_of
from tests.factories import artifact_create, configuration_create, figure_create, png_bytes

pytestmark = pytest.mark.django_db

TEXT, NUMBER = "@@TEXT@@", "@@NUMBER@@"  # placeholders the hostile bytes replace


@dataclass
class Importer:
    name: str
    suffix: str
    good: Callable[[int], dict]  # the i-th good row of this importer's contract
    run: Callable[[Path], object]  # path → ImportReport
    stored: Callable[[], int]
    text_field: str  # where a NUL, an invalid byte, a huge value, a quote go
    number_field: str  # where NaN, Infinity, 1e400 go
    command: Callable[[Path], list]  # argv for call_command
    non_finite: Callable[[str], str] | None = None  # the importer's own message for a CSV number it refuses
    huge_is_text: bool = True  # the text field is a TextField (a 200 KiB value is stored)

    @property
    def is_csv(self) -> bool:
        return self.suffix == ".csv"


def _manifest_importer(images: Path) -> Importer:
    def good(i: int) -> dict:
        return manifest_row(f"c{i}", f"2501.{i:05d}", f"img{i}.png", sha256_of(images / f"img{i}.png"))

    return Importer(
        name="corpus",
        suffix=".jsonl",
        good=good,
        run=lambda path: corpus_import(manifest=path, images_dir=images),
        stored=lambda: Figure.objects.filter(task_id__startswith="c").count(),
        text_field="caption",
        number_field="selection_score",
        command=lambda path: ["import_corpus", "--manifest", str(path), "--images", str(images)],
    )


def _judge_importer() -> Importer:
    def good(i: int) -> dict:
        return {
            "task_id": f"t{i}",
            "configuration": "m1-direct",
            "judge": "gpt-judge",
            "judge_family": "gpt",
            "run": 1,
            "subscores": {"text": 18, "semantic_structure": 25, "layout": 12, "editability": 20, "visual_detail": 8},
            "score": 83,
            "major_errors": [],
            "minor_errors": [],
            "editability_assessment": "native shapes",
            "reason": "close match",
        }

    return Importer(
        name="judge records",
        suffix=".jsonl",
        good=good,
        run=lambda path: judge_records_import(path=path),
        stored=lambda: JudgeRecord.objects.count(),
        text_field="reason",
        number_field="score",
        command=lambda path: ["import_judge_records", str(path)],
    )


def _pptbench_importer() -> Importer:
    def good(i: int) -> dict:
        return {
            "task_id": f"p{i}",
            "candidate_id": "gpt-x__high",
            "majority_gate": "False",
            "gate_count": "0",
            "layout_score": "20.5",
            "text_score": "30",
            "local_graphics_score": "25",
            "total_score": "75.5",
            "issue_count": "3",
            "single_round_issue_count": "1",
        }

    return Importer(
        name="pptbench",
        suffix=".csv",
        good=good,
        run=lambda path: pptbench_scores_import(path=path),
        stored=lambda: PptbenchScore.objects.count(),
        text_field="task_id",
        number_field="layout_score",
        command=lambda path: ["import_pptbench_scores", str(path)],
        non_finite=lambda raw: f"not a finite score: {raw!r}",
        huge_is_text=False,
    )


def _comparison_importer(suffix: str) -> Importer:
    def good(i: int) -> dict:
        return {
            "comparison_id": f"cmp-{i}",
            "study": "hostile",
            "task_id": f"t{i}",
            "annotator": "someone",
            "config_a": "m1-direct",
            "config_b": "m1-specialized",
            "left_config": "m1-direct",
            "outcome": "a",
            "reason": "clearer arrows",
            "created_at": "2026-01-02T03:04:05+00:00",
            "dwell_ms": 4000 if suffix != ".csv" else "4000",
        }

    return Importer(
        name=f"comparisons {suffix}",
        suffix=suffix,
        good=good,
        run=lambda path: comparisons_import(path=path),
        stored=lambda: Comparison.objects.count(),
        text_field="reason",
        number_field="dwell_ms",
        command=lambda path: ["import_comparisons", str(path)],
        non_finite=lambda raw: f"not a number: {raw!r}",
    )


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile-images")
    for i in range(3):
        (folder / f"img{i}.png").write_bytes(png_bytes(colour=(10 * i, 100, 200), text=f"hostile {i}"))
    return folder


@pytest.fixture
def stored_artifacts():
    figures = [figure_create(f"t{i}", index=i) for i in range(3)]
    direct = configuration_create("m1-direct", model="m1", workflow="direct", position=0)
    special = configuration_create("m1-specialized", model="m1", workflow="specialized", position=1)
    for figure in figures:
        artifact_create(direct, figure)
        artifact_create(special, figure)


IMPORTERS = ("corpus", "judge", "pptbench", "comparisons-csv", "comparisons-jsonl", "comparisons-json")


@pytest.fixture(params=IMPORTERS)
def importer(request, images, stored_artifacts) -> Importer:
    return {
        "corpus": lambda: _manifest_importer(images),
        "judge": _judge_importer,
        "pptbench": _pptbench_importer,
        "comparisons-csv": lambda: _comparison_importer(".csv"),
        "comparisons-jsonl": lambda: _comparison_importer(".jsonl"),
        "comparisons-json": lambda: _comparison_importer(".json"),
    }[request.param]()


def file_bytes(importer: Importer, rows: list[dict]) -> bytes:
    """The rows in the importer's format, as a tool would write them."""
    if importer.is_csv:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().encode()
    if importer.suffix == ".json":
        return json.dumps({"table": "comparisons", "columns": list(rows[0]), "rows": rows}, indent=1).encode()
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def hostile_file(tmp_path, importer: Importer, *, text: bytes | None = None, number: bytes | None = None) -> Path:
    """Good row 0, row 1 with `text` in its text field or `number` in its number field (raw bytes), good row 2."""
    middle = importer.good(1)
    quoted = not importer.is_csv
    if text is not None:
        middle[importer.text_field] = TEXT
    if number is not None:
        middle[importer.number_field] = NUMBER
    data = file_bytes(importer, [importer.good(0), middle, importer.good(2)])
    if text is not None:
        data = data.replace(TEXT.encode(), text)
    if number is not None:
        data = data.replace(f'"{NUMBER}"'.encode() if quoted else NUMBER.encode(), number)
    path = tmp_path / f"hostile{importer.suffix}"
    path.write_bytes(data)
    return path


def line_of(path: Path, needle: bytes) -> tuple[int, int]:
    """(line, column) of the first `needle` in the file, counted here from the bytes."""
    data = path.read_bytes()
    at = data.index(needle)
    start = data.rfind(b"\n", 0, at) + 1
    return data.count(b"\n", 0, at) + 1, at - start + 1


def row_line(path: Path, importer: Importer, i: int) -> int:
    """The line the i-th row starts on: its JSON object's `{` (JSON document) or its own line."""
    key = json.dumps(importer.good(i)[next(iter(importer.good(i)))]).encode()
    line, _ = line_of(path, key if not importer.is_csv else key.strip(b'"') + b",")
    return line - 1 if importer.suffix == ".json" else line


def check(importer: Importer, path: Path, *, kept: int, rejected: list[str]) -> None:
    report = importer.run(path)
    assert report.rejected == rejected
    assert (report.created, importer.stored()) == (kept, kept)


def test_good_file_with_a_bom_is_read_by_every_importer(tmp_path, importer):
    path = tmp_path / f"bom{importer.suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + file_bytes(importer, [importer.good(i) for i in range(3)]))
    check(importer, path, kept=3, rejected=[])
    again = importer.run(path)  # idempotent
    assert (again.created, again.unchanged, again.rejected) == (0, 3, [])


@pytest.mark.parametrize(
    ("raw", "bad", "reason"), [(b"x\x00y", 1, "contains a NUL character"), (b"caf\xe9", 3, "not UTF-8: byte 0xe9")]
)
def test_nul_and_invalid_bytes_refuse_their_row_naming_line_and_field(tmp_path, importer, raw, bad, reason):
    path = hostile_file(tmp_path, importer, text=raw)
    line, column = line_of(path, raw)
    if importer.suffix == ".json":  # a document row spans lines: its line is its `{`, and no column is given
        message = f"{path}:{row_line(path, importer, 1)} {importer.text_field}: {reason}"
    else:
        message = f"{path}:{line} {importer.text_field}: {reason} at column {column + bad}"
    check(importer, path, kept=2, rejected=[message])


@pytest.mark.parametrize("raw", [b"NaN", b"Infinity", b"-Infinity", b"1e400"])
def test_non_finite_numbers_refuse_their_row(tmp_path, importer, raw):
    if importer.is_csv:
        raw = {b"NaN": b"nan", b"Infinity": b"inf", b"-Infinity": b"-inf"}.get(raw, raw)
    path = hostile_file(tmp_path, importer, number=raw)
    line = row_line(path, importer, 1)
    reason = importer.non_finite(raw.decode()) if importer.is_csv else "not a finite number"
    check(importer, path, kept=2, rejected=[f"{path}:{line} {importer.number_field}: {reason}"])


def test_duplicate_keys_or_columns_are_refused_not_silently_resolved(tmp_path, importer):
    if importer.is_csv:
        rows = [importer.good(i) for i in range(3)]
        data = file_bytes(importer, rows)
        header, rest = data.split(b"\n", 1)
        # the text field's column appears twice; which value is meant cannot be known, so the file is refused
        path = tmp_path / "dup.csv"
        path.write_bytes(header + b"," + importer.text_field.encode() + b"\n" + rest.replace(b"\n", b",again\n"))
        check(importer, path, kept=0, rejected=[f"{path}:1 header: duplicate column(s) {importer.text_field}"])
        return
    path = hostile_file(tmp_path, importer, text=b'one", "' + importer.text_field.encode() + b'": "two')
    line = row_line(path, importer, 1)
    check(importer, path, kept=2, rejected=[f"{path}:{line} {importer.text_field}: duplicate key"])


def test_utf16_and_utf32_files_are_refused_with_one_message(tmp_path, importer):
    text = file_bytes(importer, [importer.good(i) for i in range(3)]).decode()
    for codec, name in (("utf-16", "UTF-16"), ("utf-32", "UTF-32")):
        path = tmp_path / f"wide-{codec}{importer.suffix}"
        path.write_bytes(text.encode(codec))
        check(importer, path, kept=0, rejected=[f"{path}:1 file: the file is {name} text; save it as UTF-8"])


def test_huge_fields(tmp_path, importer):
    if importer.huge_is_text:
        # over the 128 KiB limit of Python's csv module: stored whole, and the row after it too
        check(importer, hostile_file(tmp_path, importer, text=b"y" * (200 * 1024)), kept=3, rejected=[])
    if importer.is_csv:
        path = hostile_file(tmp_path, importer, text=b"y" * (MAX_FIELD_CHARS + 1))
        too_long = f"{path}:3 {importer.text_field}: longer than {MAX_FIELD_CHARS} characters"
        report = importer.run(path)
        assert report.rejected == [too_long] and report.created + report.unchanged == 2


def test_an_over_long_jsonl_line_is_skipped(tmp_path, stored_artifacts):
    judge = _judge_importer()
    path = hostile_file(tmp_path, judge, text=b"y" * (MAX_LINE_BYTES + 1))
    check(judge, path, kept=2, rejected=[f"{path}:2 line: longer than {MAX_LINE_BYTES} bytes"])


def test_an_unbalanced_quote_is_reported_on_its_line_and_the_rows_after_it_are_kept(tmp_path, importer):
    path = hostile_file(tmp_path, importer, text=b'"unclosed')
    line, column = line_of(path, b'"unclosed')
    report = importer.run(path)
    if importer.is_csv:
        assert report.rejected == [f"{path}:{line} line: a quoted field opened on this line never closes"]
        assert importer.stored() == 2
    elif importer.suffix == ".jsonl":  # JSON Lines: one malformed line, the next one read as usual
        assert report.rejected == [f"{path}:{line} $: malformed JSON (Expecting ',' delimiter at column {column + 1})"]
        assert importer.stored() == 2
    else:  # in one JSON document nothing after broken structure can be found again: said so, the rows before kept
        assert report.rejected == [
            f"{path}:{row_line(path, importer, 1)} row: malformed JSON (Expecting ',' delimiter at column {column + 1});"
            " the rows after it were not read"
        ]
        assert importer.stored() == 1


def test_the_commands_report_and_never_trace_back(tmp_path, importer):
    path = hostile_file(tmp_path, importer, text=b"caf\xe9\x00")
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(*importer.command(path), no_progress=True, stdout=stdout, stderr=stderr)  # exit 0: good rows kept
    assert ", 1 rejected" in stdout.getvalue()
    assert "Traceback" not in stderr.getvalue() + stdout.getvalue()
    assert f"{path}:" in stderr.getvalue() and "not UTF-8: byte 0xe9" in stderr.getvalue()
    assert "2 imported" in stdout.getvalue() and importer.stored() == 2
