"""Import of battle rows, and the export → import round trip (annotation/services/importer.py)."""

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command

from annotation import selectors
from annotation.models import Comparison, Study
from core.pseudonyms import pseudonymise_frame
from tests.annotation.data import annotator

pytestmark = pytest.mark.django_db


from tests.annotation.helpers import import_rejecting, make_study, vote


def test_export_then_import_round_trip_and_errors(tmp_path):
    study, *_ = make_study(overlap_rate=0)
    user = annotator()
    for outcome in ("a", "b", "tie_success"):
        vote(study, user, outcome=outcome)
    out = tmp_path / "cmp.csv"
    call_command("export", "comparisons", study="pilot", format="csv", out=out, stderr=io.StringIO())
    text = out.read_text()
    assert text.splitlines()[0].startswith(
        "comparison_id,study,task_id,annotator,config_a,config_b,left_config,outcome"
    )
    renamed = tmp_path / "other.csv"
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    frame["study"], frame["comparison_id"] = "elsewhere", "copy-" + frame["comparison_id"]
    frame.to_csv(renamed, index=False)
    stdout = io.StringIO()
    call_command("import_comparisons", renamed, no_progress=True, stdout=stdout, stderr=io.StringIO())
    assert "created study elsewhere" in stdout.getvalue()
    # comparison ids are kept: importing a second time (or the original file) changes nothing
    call_command("import_comparisons", out, no_progress=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert Comparison.objects.count() == 6
    copied = selectors.comparisons_frame(study="elsewhere")
    original = selectors.comparisons_frame(study="pilot")
    columns = [
        "task_id",
        "annotator",
        "config_a",
        "config_b",
        "left_config",
        "outcome",
        "reason",
        "created_at",
        "dwell_ms",
        "render_sha256_a",
        "audit_sha256_b",
    ]
    # The export names annotators by pseudonym (core.pseudonyms), so the copy carries the pseudonyms.
    assert copied[columns].equals(pseudonymise_frame(original)[columns])
    json_out = tmp_path / "cmp.json"
    call_command("export", "comparisons", study="pilot", format="json", out=json_out, stderr=io.StringIO())
    assert len(json.loads(json_out.read_text())["rows"]) == 3

    good = {
        "comparison_id": "ext-1",
        "study": "ext",
        "task_id": "task-fig-0001",
        "annotator": "someone",
        "config_a": "cfg-bravo-direct",
        "config_b": "cfg-alpha-direct",
        "left_config": "cfg-bravo-direct",
        "outcome": "a",
        "reason": "",
        "created_at": "2025-01-02T03:04:05Z",
        "dwell_ms": 4200,
    }
    rows = [
        good,
        {**good, "comparison_id": "ext-2", "task_id": "task-nope"},
        {**good, "comparison_id": "ext-3", "config_b": "cfg-zulu"},
        {**good, "comparison_id": "ext-4", "outcome": "maybe"},
        {**good, "comparison_id": "ext-5", "outcome": "b"},
    ]
    jsonl = tmp_path / "ext.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    errors = import_rejecting(jsonl, rejected=4)
    assert f"{jsonl}:2 task_id: unknown figure 'task-nope'" in errors
    assert f"{jsonl}:3 config_b: unknown configuration 'cfg-zulu'" in errors
    assert f"{jsonl}:4 outcome:" in errors and f"{jsonl}:6 $: malformed JSON" in errors
    frame = selectors.comparisons_frame(study="ext")
    assert sorted(frame["comparison_id"]) == ["ext-1", "ext-5"]
    assert frame.iloc[0]["created_at"].startswith("2025-01-02T03:04:05")
    ext = Study.objects.get(name="ext")
    assert set(ext.configurations.values_list("slug", flat=True)) == {"cfg-alpha-direct", "cfg-bravo-direct"}
    coverage = selectors.coverage_frame(study="ext")
    assert coverage.loc[0, "n"] == 2


def test_import_json_document_bom_and_bad_values_are_rejected_row_by_row(tmp_path):
    study, *_ = make_study(overlap_rate=0)
    user = annotator()
    for outcome in ("a", "b"):
        vote(study, user, outcome=outcome)
    # the JSON document `export --format json` writes imports back (under another study name)
    json_out = tmp_path / "cmp.json"
    call_command("export", "comparisons", study="pilot", format="json", out=json_out, stderr=io.StringIO())
    document = json.loads(json_out.read_text())
    for row in document["rows"]:
        row["study"], row["comparison_id"] = "from-json", "json-" + row["comparison_id"]
    json_out.write_text(json.dumps(document, indent=1))
    stdout = io.StringIO()
    call_command("import_comparisons", json_out, no_progress=True, stdout=stdout, stderr=io.StringIO())
    assert "2 imported" in stdout.getvalue() and len(selectors.comparisons_frame(study="from-json")) == 2

    good = {
        "comparison_id": "x-1",
        "study": "bad-values",
        "task_id": "task-fig-0001",
        "annotator": "someone",
        "config_a": "cfg-bravo-direct",
        "config_b": "cfg-alpha-direct",
        "left_config": "cfg-bravo-direct",
        "outcome": "a",
        "reason": "",
        "created_at": "",
        "dwell_ms": "",
    }
    rows = [
        good,
        {**good, "comparison_id": "x-2", "dwell_ms": "-5"},
        {**good, "comparison_id": "x-3", "created_at": "2024-13-45T00:00:00"},
        {**good, "comparison_id": "x-4", "dwell_ms": "1e30"},
        {**good, "comparison_id": "x-5", "study": "Bad Name!"},
        {**good, "comparison_id": "x-6", "render_sha256_a": "f" * 64},
        {**good, "comparison_id": "x-7", "outcome": "b"},
    ]
    bom = tmp_path / "excel.csv"
    pd.DataFrame(rows).to_csv(bom, index=False, encoding="utf-8-sig")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf")
    errors = import_rejecting(bom, rejected=4)
    assert f"{bom}:3 dwell_ms: -5 is not a duration" in errors
    assert f"{bom}:4 created_at: not an ISO 8601 date-time: '2024-13-45T00:00:00'" in errors
    assert f"{bom}:5 dwell_ms:" in errors
    assert f"{bom}:6 study: 'Bad Name!' is not a study name" in errors
    # a vote made on another rendering is stored, with a warning naming the line and the field
    assert f"warning: {bom}:7 render_sha256_a: differs from the stored render" in errors
    assert sorted(selectors.comparisons_frame(study="bad-values")["comparison_id"]) == ["x-1", "x-6", "x-7"]

    header = tmp_path / "header.csv"
    header.write_text("id,who,what\n1,2,3\n")
    assert f"{header}:1 header: missing column(s) comparison_id, study, task_id" in import_rejecting(header, rejected=1)
