"""core/bulk_write.py: rows written without model instances read back as the ORM would have written them, on either
database; a row the database refuses fails the write like any other, leaving the transaction usable after it."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group, User
from django.db import DatabaseError, transaction
from django.utils import timezone

from core.bulk_write import insert_rows
from scoring.models import JudgeRecord, JudgeRun
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db


def test_rows_take_the_given_values_and_the_fields_defaults():
    before = timezone.now()
    given = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert insert_rows(User, [dict(username="ada", date_joined=given), dict(username="bob", is_staff=True)]) == 2
    ada, bob = User.objects.get(username="ada"), User.objects.get(username="bob")
    assert ada.date_joined == given and bob.date_joined >= before  # default=timezone.now, called for the batch
    assert (ada.is_active, ada.is_staff, ada.last_login, ada.email) == (True, False, None, "")
    assert (bob.is_active, bob.is_staff) == (True, True)


def test_json_text_numbers_and_automatic_dates_round_trip():
    figure = figure_create("t0")
    artifact = artifact_create(configuration_create("c0", model="m", position=0), figure)
    run = JudgeRun.objects.create(judge="j", family="f", run=1, rubric_version="v")
    before = timezone.now()
    awkward = 'tab\there, newline\nthere, backslash \\N, quote " and \u00e9'
    insert_rows(
        JudgeRecord,
        [
            dict(
                artifact_id=artifact.pk,
                judge_run_id=run.pk,
                status="ok",
                score=87.5,
                text=20,  # an int for a float field is converted by the field, as the ORM would
                major_errors=[{"kind": "missing arrow", "count": 2}],
                minor_errors=["small"],
                reason=awkward,
                rubric_version="v",
            )
        ],
    )
    record = JudgeRecord.objects.get()
    assert (record.score, record.text, record.layout) == (87.5, 20.0, None)
    assert record.major_errors == [{"kind": "missing arrow", "count": 2}] and record.minor_errors == ["small"]
    assert record.attempts == [] and record.source == "judged" and record.reason == awkward
    assert record.created_at >= before and record.updated_at >= before  # auto_now_add / auto_now


def test_a_refused_row_fails_the_write_and_the_transaction_goes_on():
    Group.objects.create(name="taken")
    with pytest.raises(DatabaseError), transaction.atomic():
        insert_rows(Group, [dict(name="new"), dict(name="taken")])
    insert_rows(Group, [dict(name="after")])
    assert sorted(Group.objects.filter(name__in=["new", "taken", "after"]).values_list("name", flat=True)) == [
        "after",
        "taken",
    ]
    assert insert_rows(Group, []) == 0


def test_a_row_naming_no_column_of_the_model_is_refused_before_anything_is_written():
    with pytest.raises(TypeError, match="Group has no column 'colour'"):
        insert_rows(Group, [dict(name="first"), dict(name="second", colour="red")])
    assert not Group.objects.filter(name__in=["first", "second"]).exists()
