"""The one import machinery (core/imports.py): one report and summary format, row errors kept apart from good rows,
bulk writes that fall back to row by row when the database refuses a batch."""

import pytest
from django.contrib.auth.models import Group

from core.imports import ImportReport, RowError, import_batches, import_rows
from core.readers import SourceRow
from core.roles import ROLES

pytestmark = pytest.mark.django_db


def added() -> list[str]:
    """Group names besides the role groups every database has."""
    return sorted(Group.objects.exclude(name__in=ROLES).values_list("name", flat=True))


def rows(*values):
    return [
        SourceRow(line, value) if isinstance(value, dict) else SourceRow(line, None, "line", value)
        for line, value in values
    ]


def test_summary_counts_every_row_once():
    report = ImportReport(source="f.csv", noun="scores", created=3, unchanged=2)
    report.reject(7, "score", "not a number")
    report.warn(8, "render_sha256_a", "differs")
    assert report.summary() == "6 scores: 3 imported, 2 already stored, 1 rejected, 1 warnings"
    assert report.rejected == ["f.csv:7 score: not a number"] and report.warnings == [
        "f.csv:8 render_sha256_a: differs"
    ]


def test_import_rows_keeps_good_rows_around_bad_ones_and_drops_a_refused_rows_warnings():
    report = ImportReport(source="g.jsonl")
    advanced = []

    def store(values, line):
        report.warn(line, "name", "noted")
        if values["name"] == "bad":
            raise RowError("name", "refused")
        Group.objects.create(name=values["name"])
        return True

    import_rows(
        rows=rows((1, {"name": "a"}), (2, {"name": "bad"}), (3, "not JSON"), (4, {"name": "b"})),
        store=store,
        report=report,
        progress=advanced.append,
    )
    assert added() == ["a", "b"]
    assert report.rejected == ["g.jsonl:2 name: refused", "g.jsonl:3 line: not JSON"]
    assert report.warnings == ["g.jsonl:1 name: noted", "g.jsonl:4 name: noted"]
    assert sum(advanced) == 4


def test_import_batches_names_the_row_a_refused_batch_failed_on_and_keeps_the_rest():
    """A duplicate name violates a unique constraint inside a bulk write: the batch is written again row by row."""
    Group.objects.create(name="taken")
    report = ImportReport(source="h.csv", noun="groups")
    values = [(line, {"name": name}) for line, name in enumerate(["a", "b", "taken", "c", "d"], start=2)]
    import_batches(
        rows=rows(*values),
        validate=lambda v, _line: Group(name=v["name"]),
        write=lambda batch: Group.objects.bulk_create(batch),
        report=report,
        batch_size=10,
    )
    assert added() == ["a", "b", "c", "d", "taken"]
    assert (
        report.created == 4
        and len(report.rejected) == 1
        and report.rejected[0].startswith("h.csv:4 row: refused by the database")
    )


def test_import_batches_counts_stored_rows_and_validation_errors():
    report = ImportReport(source="i.csv")

    def validate(values, _line):
        if values["name"] == "old":
            return None
        if not values["name"]:
            raise RowError("name", "missing or empty")
        return Group(name=values["name"])

    import_batches(
        rows=rows((2, {"name": "old"}), (3, {"name": ""}), (4, {"name": "new"})),
        validate=validate,
        write=lambda batch: Group.objects.bulk_create(batch),
        report=report,
        batch_size=1,
    )
    assert (report.created, report.unchanged, report.rejected) == (1, 1, ["i.csv:3 name: missing or empty"])
