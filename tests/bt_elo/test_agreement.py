"""Judge–human agreement (REFERENCE 7). Pure tests: no database.

Expected numbers are worked out by hand in the comments, or come from scikit-learn / statsmodels.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from bt_elo.agreement import (
    direction_agreement,
    inter_annotator_agreement,
    margin_bucket,
    matchup_agreement,
    three_class_agreement,
)
from corpus.protocol import AGREEMENT_BOOTSTRAP_RESAMPLES, AGREEMENT_BOOTSTRAP_SEED

BUCKETS = ["all", "[0,2)", "[2,5)", "[5,10)", "[10,inf)"]


def votes(rows, matchup=None):
    out = pd.DataFrame(rows, columns=["task_id", "outcome", "margin"])
    if matchup is not None:
        out["matchup"] = matchup
    return out


# task, human outcome, judge margin (A − B)
EXAMPLE = votes(
    [
        (1, "a", 3.0),  # agree, [2,5)
        (1, "b", -1.0),  # agree, [0,2)
        (2, "a", -6.0),  # disagree, [5,10)
        (2, "b", 0.0),  # zero margin: single ⇒ disagree; mean ⇒ excluded. [0,2)
        (3, "tie_success", 4.0),  # not decisive: ignored
        (3, "a", 12.0),  # agree, [10,inf)
        (3, "a", 2.0),  # agree, exactly 2 ⇒ [2,5)
    ]
)


@pytest.mark.parametrize(
    ("value", "bucket"),
    [(0, "[0,2)"), (1.999, "[0,2)"), (2, "[2,5)"), (4.99, "[2,5)"), (5, "[5,10)"), (10, "[10,inf)"), (1e9, "[10,inf)")],
)
def test_margin_bucket_edges(value, bucket):
    assert margin_bucket(value) == bucket


@pytest.mark.parametrize("value", [-0.5, float("nan")])
def test_margin_bucket_rejects(value):
    with pytest.raises(ValueError):
        margin_bucket(value)


def test_direction_agreement_single_run():
    table = direction_agreement(EXAMPLE, mode="single", resamples=200)
    assert list(table["bucket"]) == BUCKETS
    assert list(table.columns) == ["bucket", "n", "agreement", "ci_low", "ci_high", "excluded"]
    # all: 6 decisive, 4 agree ⇒ 2/3; [0,2): −1 agrees, 0 does not ⇒ 1/2; [2,5): 3 and 2 ⇒ 1;
    # [5,10): −6 against "a" ⇒ 0; [10,inf): 12 ⇒ 1.
    assert list(table["n"]) == [6, 2, 2, 1, 1]
    np.testing.assert_allclose(table["agreement"], [4 / 6, 0.5, 1.0, 0.0, 1.0])
    assert list(table["excluded"]) == [0, 0, 0, 0, 0]


def test_direction_agreement_mean_of_runs_excludes_zero():
    table = direction_agreement(EXAMPLE, mode="mean", resamples=200)
    # The zero-margin vote leaves: all 4/5, [0,2) 1/1; it is counted as excluded in all and [0,2).
    assert list(table["n"]) == [5, 1, 2, 1, 1]
    np.testing.assert_allclose(table["agreement"], [0.8, 1.0, 1.0, 0.0, 1.0])
    assert list(table["excluded"]) == [1, 1, 0, 0, 0]


def test_empty_bucket_is_nan():
    table = direction_agreement(votes([(1, "a", 1.0), (2, "b", -3.0)]), resamples=100).set_index("bucket")
    assert table.loc["[5,10)", "n"] == 0
    assert np.isnan(table.loc["[5,10)", ["agreement", "ci_low", "ci_high"]].astype(float)).all()


def random_votes(seed, figures=200):
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(figures), 3)
    outcome = rng.choice(["a", "b", "tie_failure"], size=task.size, p=[0.4, 0.4, 0.2])
    sign = np.where(outcome == "a", 1.0, -1.0)
    margin = np.where(rng.random(task.size) < 0.7, sign, -sign) * rng.exponential(5.0, size=task.size)
    return votes(list(zip(task, outcome, margin)))


def test_ci_reproducible_with_seed():
    frame = random_votes(1)
    first = direction_agreement(frame, resamples=500)
    again = direction_agreement(frame, resamples=500)
    other = direction_agreement(frame, resamples=500, seed=AGREEMENT_BOOTSTRAP_SEED + 1)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first[["ci_low", "ci_high"]], other[["ci_low", "ci_high"]])
    row = first.iloc[0]
    assert row.ci_low < row.agreement < row.ci_high
    assert AGREEMENT_BOOTSTRAP_RESAMPLES == 5000 and AGREEMENT_BOOTSTRAP_SEED == 20260721


def test_cluster_bootstrap_keeps_figures_together():
    # Every figure has one agreeing and one disagreeing decisive vote: any resample of whole
    # figures gives exactly 1/2, so the CI collapses. Resampling single votes would not.
    frame = votes([(t, o, m) for t in range(40) for o, m in (("a", 3.0), ("a", -3.0))])
    row = direction_agreement(frame, resamples=1000).iloc[0]
    assert row.agreement == row.ci_low == row.ci_high == 0.5


def test_three_class_agreement_hand_example():
    frame = votes(
        [(1, "a", 3.0), (1, "b", -1.0), (2, "tie_success", 0.0), (2, "tie_failure", 1.5), (3, "a", -4.0), (3, "b", 6.0)]
    )
    table = three_class_agreement(frame)
    assert list(table.columns) == ["threshold", "n", "agreement", "kappa"]
    assert list(table["threshold"]) == [0, 2, 5]
    # human: a b tie tie a b
    # t=0 judge: a b tie a b a ⇒ 3/6;  t=2: a tie tie tie b a ⇒ 3/6;  t=5: tie tie tie tie tie a ⇒ 2/6.
    np.testing.assert_allclose(table["agreement"], [0.5, 0.5, 2 / 6])
    # κ at t=0: p_o = 1/2; human marginals 1/3 each, judge a 1/2, b 1/3, tie 1/6 ⇒ p_e = 1/3;
    # κ = (1/2 − 1/3) / (2/3) = 0.25.
    assert table.loc[0, "kappa"] == pytest.approx(0.25)
    human = ["a", "b", "tie", "tie", "a", "b"]
    judges = {0: ["a", "b", "tie", "a", "b", "a"], 2: ["a", "tie", "tie", "tie", "b", "a"], 5: ["tie"] * 5 + ["a"]}
    for row in table.itertuples():
        assert row.kappa == pytest.approx(cohen_kappa_score(human, judges[row.threshold]))


def test_matchup_agreement():
    frame = pd.concat(
        [
            votes([(1, "a", 2.0), (1, "b", 1.0), (2, "b", -3.0), (2, "tie_success", 1.0)], matchup="within"),
            votes([(3, "a", 5.0), (4, "b", -1.0), (5, "a", 0.5)], matchup="across"),
        ]
    )
    table = matchup_agreement(frame, resamples=300)
    assert list(table.columns) == ["matchup", "n", "agreement", "ci_low", "ci_high"]
    assert list(table["matchup"]) == ["within", "across"]
    # within: 3 decisive, 2 agree (2.0 for a; −3 for b) ⇒ 2/3; across: 3 of 3 agree.
    assert list(table["n"]) == [3, 3]
    np.testing.assert_allclose(table["agreement"], [2 / 3, 1.0])
    assert table.loc[1, "ci_low"] == table.loc[1, "ci_high"] == 1.0
    with pytest.raises(ValueError, match="matchup"):
        matchup_agreement(frame.drop(columns="matchup"))


IAA = pd.DataFrame(
    [
        (1, "x", "left"), (1, "y", "left"),
        (2, "x", "left"), (2, "y", "right"),
        (3, "x", "tie"), (3, "y", "tie"),
        (4, "y", "right"), (4, "x", "right"),
        (5, "x", "left"), (5, "y", "left"), (5, "z", "right"),
        (6, "x", "tie"), (6, "y", "tie"), (6, "z", "tie"),
        (7, "x", "left"),  # rated once: ignored
    ],
    columns=["item_id", "annotator", "label"],
)  # fmt: skip


def test_inter_annotator_agreement_hand_example():
    table = inter_annotator_agreement(IAA).set_index("raters")
    assert list(table.columns) == ["items", "annotators", "raw_agreement", "kappa", "kappa_type"]
    assert list(table.index) == ["all", 2, "3+"]
    assert list(table["items"]) == [6, 4, 2]
    assert list(table["annotators"]) == [3, 2, 3]
    # Items 1–4 were rated by exactly x and y: Cohen. The 3+ items and "all" involve z too: Fleiss.
    assert list(table["kappa_type"]) == ["fleiss", "cohen", "fleiss"]
    # Two raters (items 1–4): 3 of 4 agree. Rater x: left left tie right; y: left right tie right.
    # p_e = .5·.25 (left) + .25·.5 (right) + .25·.25 (tie) = .3125; κ = (.75 − .3125)/.6875 = 7/11.
    assert table.loc[2, "raw_agreement"] == pytest.approx(0.75)
    assert table.loc[2, "kappa"] == pytest.approx(7 / 11)
    assert table.loc[2, "kappa"] == pytest.approx(
        cohen_kappa_score(["left", "left", "tie", "right"], ["left", "right", "tie", "right"])
    )
    # Three raters (items 5, 6): pairs 3 + 3, agreeing 1 + 3 ⇒ 4/6. Fleiss: P̄ = (1/3 + 1)/2 = 2/3,
    # p = (2/6, 1/6, 3/6) ⇒ p_e = 14/36 = 7/18; κ = (2/3 − 7/18)/(11/18) = 5/11.
    assert table.loc["3+", "raw_agreement"] == pytest.approx(4 / 6)
    assert table.loc["3+", "kappa"] == pytest.approx(5 / 11)
    assert table.loc["3+", "kappa"] == pytest.approx(fleiss_kappa(np.array([[2, 1, 0], [0, 0, 3]]), method="fleiss"))
    # All six items: agreeing pairs (1+0+1+1+1+3) / pairs (1+1+1+1+3+3) = 7/10. Generalised Fleiss:
    # P̄ = (1+0+1+1+1/3+1)/6 = 13/18; pooled (left, right, tie) = (5, 4, 5)/14 ⇒ p_e = 66/196;
    # κ = (13/18 − 33/98)/(65/98) = (340/882)/(585/882) = 68/117.
    assert table.loc["all", "raw_agreement"] == pytest.approx(0.7)
    assert table.loc["all", "kappa"] == pytest.approx(68 / 117)


# Two people rated every overlap item: rater identity is real, so Cohen's κ for every row.
TWO_PEOPLE = pd.DataFrame(
    [
        (1, "x", "left"), (1, "y", "left"),
        (2, "x", "left"), (2, "y", "right"),
        (3, "x", "tie"), (3, "y", "tie"),
        (4, "x", "right"), (4, "y", "right"),
        (5, "x", "left"), (5, "y", "tie"),
    ],
    columns=["item_id", "annotator", "label"],
)  # fmt: skip


def test_inter_annotator_two_people_is_cohen():
    table = inter_annotator_agreement(TWO_PEOPLE).set_index("raters")
    assert list(table.index) == ["all", 2]
    assert list(table["kappa_type"]) == ["cohen", "cohen"] and list(table["annotators"]) == [2, 2]
    # x: left left tie right left; y: left right tie right tie ⇒ items 1, 3, 4 agree: p_o = 3/5.
    # x marginals (left, right, tie) = (3, 1, 1)/5, y = (1, 2, 2)/5 ⇒ p_e = (3 + 2 + 2)/25 = 7/25;
    # κ = (3/5 − 7/25)/(18/25) = 8/18 = 4/9. (Fleiss would pool the marginals: p_e = .34, κ = 13/33.)
    assert table.loc["all", "raw_agreement"] == pytest.approx(0.6)
    assert table.loc["all", "kappa"] == pytest.approx(4 / 9)
    x = ["left", "left", "tie", "right", "left"]
    y = ["left", "right", "tie", "right", "tie"]
    assert table.loc["all", "kappa"] == pytest.approx(cohen_kappa_score(x, y))
    assert table.loc[2, "kappa"] == table.loc["all", "kappa"]
    # Swapping who is rater 1 and rater 2 (renaming y to "a") changes nothing: Cohen's κ is symmetric.
    renamed = inter_annotator_agreement(TWO_PEOPLE.replace({"annotator": {"y": "a"}}))
    pd.testing.assert_frame_equal(renamed, inter_annotator_agreement(TWO_PEOPLE))


# Items with two ratings each, from different pairs of people.
MIXED_PAIRS = pd.DataFrame(
    [
        (1, "alice", "left"), (1, "bob", "right"),
        (2, "bob", "left"), (2, "carol", "right"),
        (3, "alice", "tie"), (3, "carol", "right"),
        (4, "bob", "tie"), (4, "carol", "tie"),
        (5, "alice", "right"), (5, "bob", "left"),
        (6, "bob", "left"), (6, "carol", "left"),
    ],
    columns=["item_id", "annotator", "label"],
)  # fmt: skip


def name_ordered_cohen(labels):
    """The former rule: each item's ratings in annotator-name order as "first" and "second" rater."""
    ordered = labels.sort_values(["item_id", "annotator"])
    first = ordered.groupby("item_id")["label"].first()
    second = ordered.groupby("item_id")["label"].last()
    return cohen_kappa_score(first, second)


def test_inter_annotator_different_pairs_is_fleiss_and_ignores_names():
    table = inter_annotator_agreement(MIXED_PAIRS).set_index("raters")
    assert list(table.index) == ["all", 2]
    assert list(table["kappa_type"]) == ["fleiss", "fleiss"] and list(table["annotators"]) == [3, 3]
    # counts (left, right, tie): (1,1,0) (1,1,0) (0,1,1) (0,0,2) (1,1,0) (2,0,0): 2 of 6 pairs agree.
    # P̄ = (0+0+0+1+0+1)/6 = 1/3; pooled (5, 4, 3)/12 ⇒ p_e = 50/144 = 25/72;
    # κ = (24/72 − 25/72)/(47/72) = −1/47.
    assert table.loc[2, "raw_agreement"] == pytest.approx(1 / 3)
    assert table.loc[2, "kappa"] == pytest.approx(-1 / 47)
    counts = np.array([[1, 1, 0], [1, 1, 0], [0, 1, 1], [0, 0, 2], [1, 1, 0], [2, 0, 0]])
    assert table.loc[2, "kappa"] == pytest.approx(fleiss_kappa(counts, method="fleiss"))
    # Renaming bob to zzz makes him "second" rater after carol on items 2, 4 and 6: the former
    # name-ordered Cohen's κ changes, the table does not.
    renamed = MIXED_PAIRS.replace({"annotator": {"bob": "zzz"}})
    assert name_ordered_cohen(renamed) != pytest.approx(name_ordered_cohen(MIXED_PAIRS))
    pd.testing.assert_frame_equal(inter_annotator_agreement(renamed), inter_annotator_agreement(MIXED_PAIRS))


def test_inter_annotator_random_renames_change_nothing():
    rng = np.random.default_rng(4)
    people = [f"p{i}" for i in range(6)]
    rows = []
    for item in range(60):
        chosen = rng.choice(people, size=int(rng.integers(2, 5)), replace=False)
        rows += [(item, person, rng.choice(["left", "right", "tie"], p=[0.5, 0.3, 0.2])) for person in chosen]
    labels = pd.DataFrame(rows, columns=["item_id", "annotator", "label"])
    before = inter_annotator_agreement(labels)
    shuffled = dict(zip(people, rng.permutation([f"q{i}" for i in range(6)])))
    after = inter_annotator_agreement(
        labels.assign(annotator=labels["annotator"].map(shuffled)).sample(frac=1, random_state=1)
    )
    pd.testing.assert_frame_equal(before, after)
    assert set(before["kappa_type"]) == {"fleiss"}


def test_inter_annotator_fleiss_matches_statsmodels_when_counts_equal():
    rng = np.random.default_rng(9)
    rows = [(item, f"r{r}", rng.choice(["left", "right", "tie"])) for item in range(30) for r in range(4)]
    labels = pd.DataFrame(rows, columns=["item_id", "annotator", "label"])
    table = inter_annotator_agreement(labels).set_index("raters")
    counts = pd.crosstab(labels.item_id, labels.label).to_numpy()
    assert list(table.index) == ["all", "3+"]
    assert table.loc["3+", "kappa"] == pytest.approx(fleiss_kappa(counts, method="fleiss"))
    assert table.loc["all", "kappa"] == pytest.approx(table.loc["3+", "kappa"])


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="mode"):
        direction_agreement(EXAMPLE, mode="median")
    with pytest.raises(ValueError, match="unknown outcomes"):
        direction_agreement(votes([(1, "left", 1.0)]))
    with pytest.raises(ValueError, match="unknown labels"):
        inter_annotator_agreement(pd.DataFrame({"item_id": [1], "annotator": ["x"], "label": ["A"]}))
    with pytest.raises(ValueError, match="twice"):
        inter_annotator_agreement(pd.DataFrame({"item_id": [1, 1], "annotator": ["x", "x"], "label": ["tie", "left"]}))
