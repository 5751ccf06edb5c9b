"""The assignment engine: what is served next (annotation/services/engine.py)."""

import pytest

from annotation import selectors, services
from annotation.models import Item, Lease
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db


from tests.annotation.helpers import make_study, vote


def test_open_lease_is_returned_again_on_reload():
    study, *_ = make_study()
    user = annotator()
    first = next_lease(study=study, annotator=user)
    again = next_lease(study=study, annotator=user)
    assert first.pk == again.pk and len(first.token) >= 30
    assert Lease.objects.filter(annotator=user, state="open").count() == 1


def test_pairs_are_covered_evenly_and_sides_counterbalanced():
    study, *_ = make_study(target_per_pair=2, overlap_rate=0)
    user = annotator()
    pairs, sides = [], {}
    for _ in range(12):
        lease, _ = vote(study, user)
        key = (lease.item.config_x_id, lease.item.config_y_id)
        pairs.append(key)
        sides.setdefault(key, []).append(lease.left_is_x)
    # 6 pairs: the first six items cover each pair once, the next six once more
    assert len(set(pairs[:6])) == 6 and len(set(pairs[6:])) == 6
    # per pair and annotator: x was on the left once and on the right once
    assert all(sorted(s) == [False, True] for s in sides.values())
    # never the same figure twice for the same pair and annotator
    seen = [(l.item.figure_id, l.item.config_x_id, l.item.config_y_id) for l in Lease.objects.filter(annotator=user)]
    assert len(seen) == len(set(seen))


def test_figures_are_spread_evenly():
    study, figs, _ = make_study(figures=6, overlap_rate=0)
    user = annotator()
    for _ in range(6):
        vote(study, user)
    used = [l.item.figure_id for l in Lease.objects.filter(annotator=user)]
    assert sorted(used) == sorted(f.pk for f in figs)


def test_gate_failed_artifacts_are_a_study_setting():
    figs, configs, _ = build_corpus(figures=2, configurations=SLUGS[:2], failed=(("cfg-alpha-direct", 0),))
    excluded = services.study_create(name="strict", configurations=SLUGS[:2], include_gate_failed=False, min_dwell_ms=0)
    user = annotator()
    lease, _ = vote(excluded, user)
    assert lease.item.figure == figs[1]
    assert next_lease(study=excluded, annotator=user) is None  # nothing else eligible
    included = services.study_create(name="all", configurations=SLUGS[:2], min_dwell_ms=0)
    served = {vote(included, user)[0].item.figure_id for _ in range(2)}
    assert served == {figs[0].pk, figs[1].pk}


def test_two_annotators_get_different_items_and_overlap_is_drawn_on_purpose():
    study, *_ = make_study(overlap_rate=0.5)
    one, two = annotator("ann-one"), annotator("ann-two")
    lease_one = next_lease(study=study, annotator=one)
    lease_two = next_lease(study=study, annotator=two)
    assert lease_one.item_id != lease_two.item_id
    submit_vote(token=lease_one.token, annotator=one, outcome="a", dwell_ms=5000)
    submit_vote(token=lease_two.token, annotator=two, outcome="b", dwell_ms=5000)
    # second item of each annotator is an overlap item (rate 0.5): the other's item
    overlap_one = next_lease(study=study, annotator=one)
    assert overlap_one.is_overlap and overlap_one.item_id == lease_two.item_id
    # the same configuration preferred: "b" again when shown on the same sides, "a" when swapped
    same_sides = overlap_one.left_is_x == lease_two.left_is_x
    submit_vote(token=overlap_one.token, annotator=one, outcome="b" if same_sides else "a", dwell_ms=5000)
    labels = selectors.overlap_labels_frame(study="pilot")
    assert set(labels["item_id"]) == {lease_two.item_id} and len(labels) == 2
    # labels align to the item's configurations x / y, not to display sides, so they agree
    expected = "right" if lease_two.left_is_x else "left"
    assert list(labels["label"]) == [expected, expected]


def test_quota_ends_the_session():
    study, *_ = make_study(quota_per_annotator=2)
    user = annotator()
    vote(study, user)
    vote(study, user, outcome="tie_success", reason="both fine")
    assert next_lease(study=study, annotator=user) is None
    summary = selectors.annotator_summary(study=study, user=user)
    assert summary["votes"] == 2 and summary["outcomes"]["tie_success"] == 1


def test_the_engine_serves_the_pair_the_pure_rules_order_first():
    """The serving order the pure module defines (assignment.pairs_by_need) is the order that runs: at every step, the
    pair served is the first of pairs_by_need over the pair counters as they stand, among pairs with a free item."""
    from annotation import assignment
    from annotation.models import StudyPair

    study, *_ = make_study(figures=5, target_per_pair=3, overlap_rate=0)
    users = [annotator("ann-one"), annotator("ann-two")]
    for step in range(16):
        user = users[step % 2]
        counts = {(p.config_x_id, p.config_y_id): p.votes + p.open_fresh for p in StudyPair.objects.filter(study=study)}
        seen = {
            (lease.item.config_x_id, lease.item.config_y_id, lease.item.figure_id)
            for lease in Lease.objects.filter(annotator=user)
        }
        free = {
            (i.config_x_id, i.config_y_id)
            for i in Item.objects.filter(study=study, in_pool=True, open_count=0, submitted_count=0)
            if (i.config_x_id, i.config_y_id, i.figure_id) not in seen
        }
        expected = assignment.pairs_by_need(sorted(free), counts, target=study.target_per_pair, seed=study.seed)[0]
        lease = next_lease(study=study, annotator=user)
        assert (lease.item.config_x_id, lease.item.config_y_id) == expected, f"step {step}"
        if step % 3 == 2:
            services.lease_skip(token=lease.token, annotator=user, reason="unsure")
        else:
            submit_vote(token=lease.token, annotator=user, outcome="a", reason="x", dwell_ms=5000)


def test_a_claim_on_an_item_taken_meanwhile_rolls_back_every_change():
    """The counter update that claims an item checks it is still free: when another transaction took it, nothing of
    the claiming transaction stays (its lease, pair and figure counters), and the engine chooses again."""
    from django.db import transaction

    from annotation.models import StudyFigure, StudyPair
    from annotation.services.counters import ClaimLost, CounterChanges
    from tests.annotation.helpers import _counters

    def claim(item):
        with transaction.atomic():
            CounterChanges(study.pk).claim(item.pk).lease(
                item_id=item.pk,
                figure_id=item.figure_id,
                x=item.config_x_id,
                y=item.config_y_id,
                left_is_x=True,
                is_overlap=False,
                sign=1,
            ).apply()

    study, *_ = make_study(overlap_rate=0)
    item = Item.objects.filter(study=study, in_pool=True).order_by("pk").first()
    Item.objects.filter(pk=item.pk).update(open_count=1)  # someone else's lease, committed after our pick
    before = _counters(study)
    with pytest.raises(ClaimLost):
        claim(item)
    assert _counters(study) == before
    assert (
        StudyPair.objects.get(study=study, config_x_id=item.config_x_id, config_y_id=item.config_y_id).open_fresh == 0
    )
    assert StudyFigure.objects.get(study=study, figure_id=item.figure_id).uses == 0
    free = Item.objects.filter(study=study, in_pool=True, open_count=0).exclude(pk=item.pk).first()
    claim(free)
    assert Item.objects.get(pk=free.pk).open_count == 1
