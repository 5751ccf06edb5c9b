"""annotation/services/counters.py: counter changes are plain UPDATEs run one after another in the caller's transaction,
so two changes of one row both apply, and a claim that finds its item taken is told so; on either database."""

import pytest
from django.db import transaction
from django.db.models import F

from annotation import services
from annotation.models import Comparison, Item, Lease, Purpose, StudyFigure, StudyPair
from annotation.services import quality
from annotation.services.counters import ClaimLost, CounterChanges
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease, submit_vote
from tests.annotation.helpers import _counters, make_study
from tests.factories import artifact_create, configuration_create

pytestmark = pytest.mark.django_db


def _row(item: Item) -> tuple:
    pair = StudyPair.objects.get(study_id=item.study_id, config_x_id=item.config_x_id, config_y_id=item.config_y_id)
    figure = StudyFigure.objects.get(study_id=item.study_id, figure_id=item.figure_id)
    item.refresh_from_db()
    return item.votes, item.open_count, pair.votes, pair.x_left, figure.uses


def test_two_updates_of_one_row_in_one_transaction_both_apply():
    """The same item, pair and figure rows changed twice in one transaction (a statement of the caller's, then two
    sets of counter changes): every change counts. Sent as one statement of data-modifying CTEs, PostgreSQL applied
    only the first change of a row."""
    study, *_ = make_study(figures=1, overlap_rate=0)
    item = Item.objects.filter(study=study, in_pool=True).order_by("pk").first()
    x, y = item.config_x_id, item.config_y_id
    before = _row(item)
    with transaction.atomic():
        Item.objects.filter(pk=item.pk).update(votes=F("votes") + 1)
        first = CounterChanges(study.pk)
        first.imported_vote(item_id=item.pk, x=x, y=y)
        first.lease(item_id=item.pk, figure_id=item.figure_id, x=x, y=y, left_is_x=True, is_overlap=False, sign=1)
        first.apply()
        second = CounterChanges(study.pk)
        second.imported_vote(item_id=item.pk, x=x, y=y)
        second.lease(item_id=item.pk, figure_id=item.figure_id, x=x, y=y, left_is_x=True, is_overlap=False, sign=1)
        second.apply()
    votes, open_count, pair_votes, x_left, uses = before
    assert _row(item) == (votes + 3, open_count + 2, pair_votes + 2, x_left + 2, uses + 2)


def test_a_claim_of_a_taken_item_is_lost_and_rolled_back():
    study, *_ = make_study(figures=1, overlap_rate=0)
    taken = next_lease(study=study, annotator=annotator("first")).item
    before = _row(taken)
    changes = CounterChanges(study.pk).claim(taken.pk)
    changes.lease(
        item_id=taken.pk,
        figure_id=taken.figure_id,
        x=taken.config_x_id,
        y=taken.config_y_id,
        left_is_x=False,
        is_overlap=False,
        sign=1,
    )
    with pytest.raises(ClaimLost), transaction.atomic():
        changes.apply()
    assert _row(taken) == before


def test_a_vote_and_its_lease_come_back_saved_alike_on_either_database():
    """What the services return are saved instances (primary key set, not 'adding'), as any ORM save leaves them."""
    study, *_ = make_study(figures=1, overlap_rate=0)
    user = annotator()
    lease = next_lease(study=study, annotator=user)
    vote = submit_vote(token=lease.token, annotator=user, outcome="a", reason="r", dwell_ms=5000)
    for saved in (lease, vote):
        assert saved.pk is not None and not saved._state.adding and saved._state.db == "default"
    assert Lease.objects.get(pk=lease.pk).state == Lease.State.SUBMITTED
    assert Comparison.objects.get(pk=vote.pk).lease_id == lease.pk


def test_attention_and_repeat_leases_keep_the_counters_where_a_rebuild_puts_them():
    """Every kind of lease is written by the engine's one lease writer, with its counters."""
    figs, *_ = build_corpus(figures=4)
    raster = configuration_create("cfg-raster-paste", model="model-rasterfour", position=9)
    for figure in figs:
        artifact_create(raster, figure, cap=50)  # a pasted raster: the attention items' known loser
    study = services.study_create(
        name="qc",
        configurations=[*SLUGS, raster.slug],
        min_dwell_ms=0,
        attention_rate=0.2,
        repeat_rate=0.2,
        quota_per_annotator=12,
    )
    quality.attention_items_add(study=study, count=3)
    user = annotator()
    purposes = []
    while (lease := next_lease(study=study, annotator=user)) is not None:
        purposes.append(lease.purpose)
        assert Lease.objects.get(pk=lease.pk).purpose == lease.purpose
        submit_vote(token=lease.token, annotator=user, outcome="a", reason="r", dwell_ms=5000)
    assert {Purpose.ATTENTION, Purpose.REPEAT, Purpose.REGULAR} <= set(purposes)
    held = next_lease(study=study, annotator=annotator("second"))
    assert held is not None
    kept = _counters(study)
    services.study_pool_sync(study=study, force=True)
    assert _counters(study) == kept
