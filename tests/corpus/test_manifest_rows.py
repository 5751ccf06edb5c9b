"""A manifest row with several problems reports every one at once (pure: no database)."""

import pytest

from corpus.manifest import MANIFEST_FIELDS, RowError, parse_manifest_record


def test_every_problem_of_a_row_is_named_in_one_error(tmp_path):
    record = {name: "x" for name in MANIFEST_FIELDS}
    record.update(authors=["A"], selection_score="high", selection_evidence=[], arxiv_id="not-an-id")
    del record["license"]
    with pytest.raises(RowError) as caught:
        parse_manifest_record(record, images_dir=tmp_path, fields=frozenset({"cs.CV"}))
    message = str(caught.value)
    for expected in (
        "license: missing field",
        "selection_score: expected a number, got str",
        "arxiv_id: not an arXiv identifier",
        "sha256: expected 64 hexadecimal digits",
        "field: undeclared field 'x'",
        "image: image file not found",
        "abs_url: expected an http(s) URL",
    ):
        assert expected in message, expected
