"""The pure assignment rules (no database)."""

import pytest

from annotation import assignment
from annotation import assignment as a


def test_pairs_furthest_below_target_come_first():
    pairs = [(1, 2), (1, 3), (2, 3)]
    counts = {(1, 2): 5, (1, 3): 1, (2, 3): 3}
    assert a.pairs_by_need(pairs, counts, target=4, seed=1) == [(1, 3), (2, 3), (1, 2)]


def test_equal_pairs_are_ordered_by_seed_reproducibly():
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    first = a.pairs_by_need(pairs, {}, target=3, seed=11)
    assert first == a.pairs_by_need(list(reversed(pairs)), {}, target=3, seed=11)
    assert sorted(first) == sorted(pairs)
    assert first != a.pairs_by_need(pairs, {}, target=3, seed=12)


def test_figures_with_fewest_uses_first():
    order = a.figures_by_use([10, 11, 12, 13], {10: 2, 11: 0, 12: 1, 13: 0}, seed=3, pair=(1, 2))
    assert set(order[:2]) == {11, 13} and order[2:] == [12, 10]


def test_sides_alternate_per_annotator_and_pair_before_anything_else():
    s = a.SideCounts
    # the annotator saw x on the left once for this pair: now y goes left, whatever the pair total says
    assert a.left_is_x(annotator_pair=s(1, 0), pair=s(0, 5), annotator=s(0, 0), seed=1, key=1) is False
    assert a.left_is_x(annotator_pair=s(0, 1), pair=s(9, 0), annotator=s(0, 0), seed=1, key=1) is True
    # balanced for this annotator: the pair's balance decides, then the annotator's overall balance
    assert a.left_is_x(annotator_pair=s(1, 1), pair=s(3, 4), annotator=s(0, 0), seed=1, key=1) is True
    assert a.left_is_x(annotator_pair=s(0, 0), pair=s(2, 2), annotator=s(5, 4), seed=1, key=1) is False
    # a full tie is decided by the seed, reproducibly
    tie = a.left_is_x(annotator_pair=s(), pair=s(), annotator=s(), seed=7, key=(3, 4))
    assert tie == a.left_is_x(annotator_pair=s(), pair=s(), annotator=s(), seed=7, key=(3, 4))


def test_overlap_is_drawn_at_the_rate():
    due = []
    overlap = 0
    for served in range(20):
        is_due = a.overlap_due(served=served, overlap_served=overlap, rate=0.25)
        due.append(is_due)
        overlap += is_due
    assert overlap == 5 and due[:4] == [False, False, False, True]
    assert not any(a.overlap_due(served=n, overlap_served=0, rate=0) for n in range(10))


def test_figure_sample_is_seeded_and_grows_into_larger_samples():
    ids = [f"t{i:03d}" for i in range(50)]
    small = assignment.figure_sample(ids, 5, seed=11)
    assert len(small) == 5 and set(small) <= set(ids)
    assert assignment.figure_sample(list(reversed(ids)), 5, seed=11) == small  # the input order does not matter
    assert set(small) < set(assignment.figure_sample(ids, 20, seed=11))  # a larger pilot keeps the first figures
    assert assignment.figure_sample(ids, 5, seed=12) != small
    assert assignment.figure_sample(ids, 500, seed=11) == sorted(ids)
    with pytest.raises(ValueError, match="at least one"):
        assignment.figure_sample(ids, 0, seed=1)
