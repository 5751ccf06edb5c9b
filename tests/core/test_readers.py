"""core.readers on hand-made hostile files: every row's line, values, field and reason are written out by hand."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.readers import (
    MAX_FIELD_CHARS,
    MAX_LINE_BYTES,
    MAX_RECORD_LINES,
    RowError,
    SourceRow,
    read_csv,
    read_json_document,
)
from core.readers import read_jsonl as _read_jsonl


def jsonl(tmp_path, data: bytes) -> list[SourceRow]:
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    return list(_read_jsonl(path))


def csv_rows(tmp_path, data: bytes, required=("a", "b")) -> list[SourceRow]:
    path = tmp_path / "in.csv"
    path.write_bytes(data)
    return list(read_csv(path, required=required))


def document(tmp_path, data: bytes):
    path = tmp_path / "in.json"
    path.write_bytes(data)
    rows = read_json_document(path)
    return None if rows is None else list(rows)


def ok(line: int, values: dict, lines: int = 1) -> SourceRow:
    return SourceRow(line, values, lines=lines)


def bad(line: int, field: str, reason: str) -> SourceRow:
    return SourceRow(line, None, field, reason)


# --- JSON Lines ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("middle", "field", "reason"),
    [
        # a raw NUL inside a string: the key it sits in is named, with the column of the NUL (1-based, 9th byte)
        (b'{"a": "x\x00y"}', "a", "contains a NUL character at column 9"),
        # after the object: no key holds it, so the line is named
        (b'{"a": 2}\x00', "line", "contains a NUL character at column 9"),
        # an escaped NUL decodes to the same character PostgreSQL text cannot hold
        (b'{"a": "x\\u0000y"}', "a", "contains a NUL character"),
        # a Latin-1 e-acute (0xe9) in a UTF-8 file, 11th byte of the line
        (b'{"a": "caf\xe9"}', "a", "not UTF-8: byte 0xe9 at column 11"),
        (b'{"caf\xe9": 1}', "caf\ufffd", "not UTF-8: byte 0xe9 at column 6"),
        (b'{"a": NaN}', "a", "not a finite number"),
        (b'{"a": Infinity}', "a", "not a finite number"),
        (b'{"a": -Infinity}', "a", "not a finite number"),
        (b'{"a": 1e400}', "a", "not a finite number"),
        (b'{"a": [1, NaN]}', "a[1]", "not a finite number"),
        (b'{"subscores": {"text": 1e400}}', "subscores.text", "not a finite number"),
        (b'{"a": 1, "a": 2}', "a", "duplicate key"),
        (b'{"s": {"k": 1, "k": 1}}', "s.k", "duplicate key"),
        (b"[1]", "$", "expected a JSON object, got list"),
        (b"1e400", "$", "not a finite number"),
        (b'{"a": ', "$", "malformed JSON (Expecting value at column 7)"),
        (b'{"a": 1} {"a": 2}', "$", "malformed JSON (Extra data at column 10)"),
        (b"[" * 100_000, "$", "JSON nested too deeply"),
    ],
)
def test_a_bad_jsonl_line_is_one_row_error_and_the_lines_around_it_are_kept(tmp_path, middle, field, reason):
    rows = jsonl(tmp_path, b'{"a": 1}\n' + middle + b'\n{"a": 3}\n')
    assert rows == [ok(1, {"a": 1}), bad(2, field, reason), ok(3, {"a": 3})]


def test_jsonl_bom_crlf_blank_lines_and_a_missing_final_newline(tmp_path):
    rows = jsonl(tmp_path, b'\xef\xbb\xbf{"a": 1}\r\n\r\n   \n{"a": "\xc3\xa9"}')
    assert rows == [ok(1, {"a": 1}), ok(4, {"a": "é"})]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ('{"a": 1}\n{"a": 2}\n'.encode("utf-16"), "the file is UTF-16 text; save it as UTF-8"),
        (
            '{"a": 1}\n'.encode("utf-16-be"),
            "the file looks like UTF-16 text without a byte-order mark; save it as UTF-8",
        ),
        (
            '{"a": 1}\n'.encode("utf-16-le"),
            "the file looks like UTF-16 text without a byte-order mark; save it as UTF-8",
        ),
        ('{"a": 1}\n'.encode("utf-32"), "the file is UTF-32 text; save it as UTF-8"),
    ],
)
def test_wide_encodings_are_refused_once_as_a_whole(tmp_path, data, reason):
    assert jsonl(tmp_path, data) == [bad(1, "file", reason)]
    assert csv_rows(tmp_path, data) == [bad(1, "file", reason)]
    assert document(tmp_path, data) == [bad(1, "file", reason)]


def test_an_over_long_jsonl_line_is_skipped_without_losing_the_next(tmp_path):
    long = b'{"a": "' + b"x" * MAX_LINE_BYTES + b'"}'
    rows = jsonl(tmp_path, b'{"a": 1}\n' + long + b'\n{"a": 3}\n')
    assert rows == [ok(1, {"a": 1}), bad(2, "line", f"longer than {MAX_LINE_BYTES} bytes"), ok(3, {"a": 3})]


# --- CSV --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("middle", "field", "reason"),
    [
        (b"3,x\x00y", "b", "contains a NUL character at column 4"),
        (b"3,caf\xe9", "b", "not UTF-8: byte 0xe9 at column 6"),
        (b"caf\xe9,4", "a", "not UTF-8: byte 0xe9 at column 4"),
        (b"3,4,5", "line", "3 fields where the header has 2"),
        (b"3", "line", "1 fields where the header has 2"),
        (b"3," + b"x" * (MAX_FIELD_CHARS + 1), "b", f"longer than {MAX_FIELD_CHARS} characters"),
    ],
)
def test_a_bad_csv_record_is_one_row_error_naming_its_column(tmp_path, middle, field, reason):
    rows = csv_rows(tmp_path, b"a,b\n1,2\n" + middle + b"\n5,6\n")
    assert rows == [ok(2, {"a": "1", "b": "2"}), bad(3, field, reason), ok(4, {"a": "5", "b": "6"})]


def test_csv_fields_over_the_old_128_kib_limit_and_quoted_newlines_are_read(tmp_path):
    big = "y" * (200 * 1024)
    rows = csv_rows(tmp_path, b'a,b\n1,"two\nlines"\n2,"' + big.encode() + b'"\n5,6\n')
    assert rows == [
        ok(2, {"a": "1", "b": "two\nlines"}, lines=2),
        ok(4, {"a": "2", "b": big}),
        ok(5, {"a": "5", "b": "6"}),
    ]


def test_an_unbalanced_quote_is_reported_on_its_own_line_and_the_rows_after_it_are_kept(tmp_path):
    rows = csv_rows(tmp_path, b'a,b\n1,2\n3,"oops\n5,6\n7,8\n')
    never_closes = "a quoted field opened on this line never closes"
    assert rows == [
        ok(2, {"a": "1", "b": "2"}),
        bad(3, "line", never_closes),
        ok(4, {"a": "5", "b": "6"}),
        ok(5, {"a": "7", "b": "8"}),
    ]
    # at the end of the file, and a quote spanning more lines than any real field does
    assert csv_rows(tmp_path, b'a,b\n1,2\n3,"oops\n') == [ok(2, {"a": "1", "b": "2"}), bad(3, "line", never_closes)]
    filler = b"".join(b"%d,%d\n" % (i, i) for i in range(MAX_RECORD_LINES + 5))
    rows = csv_rows(tmp_path, b'a,b\n3,"oops\n' + filler)
    assert rows[0] == bad(2, "line", never_closes)
    assert rows[1:] == [ok(3 + i, {"a": str(i), "b": str(i)}) for i in range(MAX_RECORD_LINES + 5)]


def test_csv_header_bom_duplicates_missing_columns_and_empty_files(tmp_path):
    assert csv_rows(tmp_path, b"\xef\xbb\xbfa,b\n1,2\n") == [ok(2, {"a": "1", "b": "2"})]
    assert csv_rows(tmp_path, b"a,b,a\n1,2,3\n") == [bad(1, "header", "duplicate column(s) a")]
    assert csv_rows(tmp_path, b" a ,b,b ,a\n1,2,3,4\n") == [bad(1, "header", "duplicate column(s) a, b")]
    assert csv_rows(tmp_path, b"a,c\n1,2\n") == [bad(1, "header", "missing column(s) b")]
    assert csv_rows(tmp_path, b"") == [bad(1, "header", "the file is empty")]
    assert csv_rows(tmp_path, b"a,b\x00\n1,2\n") == [bad(1, "header", "contains a NUL character at column 4")]
    # blank lines and all-empty records are skipped, not errors
    assert csv_rows(tmp_path, b"a,b\n\n,\n5,6\n") == [ok(4, {"a": "5", "b": "6"})]


# --- the JSON table document ------------------------------------------------------------------

GOOD_DOCUMENT = json.dumps(
    {"table": "t", "columns": ["a", "b"], "rows": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": "z"}]},
    indent=1,
).encode()
# indent=1 puts "{" of the rows on lines 8, 12 and 16 (line 1 "{", 2 table, 3 "columns": [, 4 a, 5 b, 6 ], 7 "rows": [)
ROW_LINES = (8, 12, 16)


@pytest.mark.parametrize(
    ("replacement", "field", "reason"),
    [
        (b'"\xe9"', "b", "not UTF-8: byte 0xe9"),
        (b'"\\u0000"', "b", "contains a NUL character"),
        (b'"\x00"', "b", "contains a NUL character"),
        (b"NaN", "b", "not a finite number"),
        (b"1e400", "b", "not a finite number"),
        (b'"y", "b": "w"', "b", "duplicate key"),
    ],
)
def test_a_bad_value_in_a_table_document_refuses_its_row_only(tmp_path, replacement, field, reason):
    rows = document(tmp_path, GOOD_DOCUMENT.replace(b'"y"', replacement))
    first, middle, last = ROW_LINES
    assert rows == [ok(first, {"a": 1, "b": "x"}), bad(middle, field, reason), ok(last, {"a": 3, "b": "z"})]


def test_table_documents_with_a_bom_list_rows_nulls_and_broken_structure(tmp_path):
    first, middle, last = ROW_LINES
    expected = [ok(first, {"a": 1, "b": "x"}), ok(middle, {"a": 2, "b": "y"}), ok(last, {"a": 3, "b": "z"})]
    assert document(tmp_path, GOOD_DOCUMENT) == expected
    assert document(tmp_path, b"\xef\xbb\xbf" + GOOD_DOCUMENT) == expected
    listed = b'{"columns": ["a", "b"],\n "rows": [\n  [1, null],\n  [2],\n  "x"\n]}'
    assert document(tmp_path, listed) == [
        ok(3, {"a": 1, "b": ""}),
        bad(4, "row", "expected a JSON object (or a list matching columns)"),
        bad(5, "row", "expected a JSON object (or a list matching columns)"),
    ]
    broken = b'{"rows": [\n {"a": 1},\n {"a": ,\n {"a": 3}\n]}'
    assert document(tmp_path, broken) == [
        ok(2, {"a": 1}),
        bad(3, "row", "malformed JSON (Expecting value at column 8); the rows after it were not read"),
    ]
    # not a table document: the caller reads the file as JSON Lines instead
    assert document(tmp_path, b'{"a": 1}\n{"a": 2}\n') is None
    assert document(tmp_path, b"[1, 2]") is None


_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\x00", "\\", '"', "\udc80"]), max_size=8)
)
_JSON_VALUES = st.recursive(
    _JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(st.tuples(st.text(max_size=4) | st.sampled_from(["a", "\x00"]), children), max_size=4)
    ),
    max_leaves=12,
)


def _as_json(value) -> str:
    """JSON text of a generated value; a list of (key, value) tuples is an object, so keys may repeat."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return "{" + ", ".join(f"{json.dumps(k)}: {_as_json(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_as_json(v) for v in value) + "]"
    return json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(value=_JSON_VALUES, ascii_only=st.booleans())
def test_the_quick_json_parse_answers_exactly_as_the_checked_walk(value, ascii_only):
    """parse_json_object parses quickly and walks the value only when the text may hold what must be refused: the
    value, or the field and reason of the refusal, are always those of the checked walk alone."""
    from core import readers

    text = '{"v": ' + _as_json(value) + "}"
    if not ascii_only:  # the same value with its characters written out rather than escaped (repeated keys merged)
        text = json.dumps(json.loads(text), ensure_ascii=False)

    def outcome(parse):
        try:
            return ("value", json.dumps(parse(text)))
        except RowError as error:
            return ("refused", error.field, error.reason)

    def checked_walk(text):
        return readers._checked(readers._DECODER.raw_decode(text)[0], "")

    assert outcome(readers.parse_json_object) == outcome(checked_walk)
