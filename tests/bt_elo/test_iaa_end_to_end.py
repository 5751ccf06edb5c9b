"""The `iaa` table over votes stored through the annotation services (three annotators, overlap items)."""

import pytest

from annotation import services
from core.tables import table_frame
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db

# Each annotator's judgement per item (items named I1, I2, I3 in the order first served), aligned to the item:
# "left" = its x (the earlier-declared configuration) better, "right" = y better, "tie".
LABELS = {
    ("I1", "ann-one"): "left", ("I1", "ann-two"): "left", ("I1", "ann-three"): "right",
    ("I2", "ann-one"): "tie", ("I2", "ann-two"): "tie",
    ("I3", "ann-two"): "left", ("I3", "ann-three"): "right",
}  # fmt: skip


def outcome_for(lease, label: str) -> str:
    """The button to press for `label`: A is the left pane, which shows x when lease.left_is_x."""
    if label == "tie":
        return "tie_success"
    x_better = label == "left"
    return "a" if x_better == lease.left_is_x else "b"


def test_iaa_table_from_three_annotators_votes():
    build_corpus(figures=3, configurations=SLUGS[:2])  # one pair, three items
    study = services.study_create(name="overlap", configurations=SLUGS[:2], overlap_rate=1.0, min_dwell_ms=0)
    users = {name: annotator(name) for name in ("ann-one", "ann-two", "ann-three")}
    names = {}  # item pk -> I1 / I2 / I3, in the order the items were first served

    def vote(who: str, *, overlap: bool):
        lease = next_lease(study=study, annotator=users[who])
        assert lease.is_overlap == overlap
        key = names.setdefault(lease.item_id, f"I{len(names) + 1}")
        submit_vote(
            token=lease.token,
            annotator=users[who],
            outcome=outcome_for(lease, LABELS[(key, who)]),
            reason="because",
            dwell_ms=5000,
        )
        return key

    # Overlap rate 1: an overlap item is due on every request, served when a voted item the annotator has not
    # seen exists (fewest votes first), otherwise a fresh item.
    assert vote("ann-one", overlap=False) == "I1"
    assert vote("ann-two", overlap=True) == "I1"
    assert vote("ann-three", overlap=True) == "I1"
    assert vote("ann-one", overlap=False) == "I2"
    assert vote("ann-two", overlap=True) == "I2"
    assert vote("ann-two", overlap=False) == "I3"
    assert vote("ann-three", overlap=True) == "I3"  # I3 has 1 vote, I2 has 2: fewest first

    table = table_frame("iaa", study="overlap").set_index("raters")
    assert list(table.index) == ["all", 2, "3+"]
    assert list(table["items"]) == [3, 2, 1]
    assert list(table["annotators"]) == [3, 3, 3]
    # Every row mixes three people on items rated by different pairs: Fleiss' κ throughout.
    assert list(table["kappa_type"]) == ["fleiss", "fleiss", "fleiss"]
    # Counts (left, right, tie): I1 (2, 1, 0), I2 (0, 0, 2), I3 (1, 1, 0).
    # 2 ratings (I2, I3): 1 of 2 pairs agree. P̄ = (1 + 0)/2 = 1/2; pooled (1, 1, 2)/4 ⇒ p_e = 6/16;
    #   κ = (1/2 − 3/8)/(5/8) = 1/5.
    assert table.loc[2, "raw_agreement"] == pytest.approx(1 / 2)
    assert table.loc[2, "kappa"] == pytest.approx(1 / 5)
    # 3+ (I1): 1 of 3 pairs agree. P̄ = 2/6 = 1/3; p = (2/3, 1/3, 0) ⇒ p_e = 5/9; κ = (1/3 − 5/9)/(4/9) = −1/2.
    assert table.loc["3+", "raw_agreement"] == pytest.approx(1 / 3)
    assert table.loc["3+", "kappa"] == pytest.approx(-1 / 2)
    # all: (1 + 1 + 0) of (3 + 1 + 1) pairs agree = 2/5. P̄ = (1/3 + 1 + 0)/3 = 4/9; pooled (3, 2, 2)/7 ⇒
    #   p_e = 17/49; κ = (4/9 − 17/49)/(32/49) = (43/441)·(49/32) = 43/288.
    assert table.loc["all", "raw_agreement"] == pytest.approx(2 / 5)
    assert table.loc["all", "kappa"] == pytest.approx(43 / 288)


def test_iaa_table_two_annotators_is_cohen():
    build_corpus(figures=3, configurations=SLUGS[:2])
    study = services.study_create(name="pair", configurations=SLUGS[:2], overlap_rate=1.0, min_dwell_ms=0)
    one, two = annotator("ann-one"), annotator("ann-two")
    # ann-one: x, x, tie; ann-two: x, y, tie on the same three items (each served fresh to one, overlap to two).
    plan = [("left", "left"), ("left", "right"), ("tie", "tie")]
    for first, second in plan:
        lease = next_lease(study=study, annotator=one)
        submit_vote(token=lease.token, annotator=one, outcome=outcome_for(lease, first), reason="r", dwell_ms=5000)
        other = next_lease(study=study, annotator=two)
        assert other.item_id == lease.item_id
        submit_vote(token=other.token, annotator=two, outcome=outcome_for(other, second), reason="r", dwell_ms=5000)
    table = table_frame("iaa", study="pair").set_index("raters")
    assert list(table.index) == ["all", 2] and list(table["kappa_type"]) == ["cohen", "cohen"]
    # p_o = 2/3. ann-one (left, right, tie) = (2, 0, 1)/3, ann-two (1, 1, 1)/3 ⇒ p_e = (2 + 0 + 1)/9 = 1/3;
    # κ = (2/3 − 1/3)/(2/3) = 1/2.
    assert table.loc["all", "raw_agreement"] == pytest.approx(2 / 3)
    assert table.loc["all", "kappa"] == pytest.approx(1 / 2)
