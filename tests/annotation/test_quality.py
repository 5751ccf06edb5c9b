"""annotation.quality: κ, gate-review agreement, rating agreement / consistency and annotator quality, by hand and
against scikit-learn, statsmodels and scipy."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from annotation import quality


def test_cohen_kappa_by_hand_and_sklearn():
    # 2x2: both fail 2, both pass 5, a-only fail 1, b-only fail 2 (n = 10).
    a = [True, True, True, False, False, False, False, False, False, False]
    b = [True, True, False, True, True, False, False, False, False, False]
    # p_o = 7/10; p_e = (3/10)(4/10) + (7/10)(6/10) = 0.12 + 0.42 = 0.54; κ = 0.16 / 0.46
    assert quality.cohen_kappa(a, b) == pytest.approx(0.16 / 0.46)
    assert quality.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, y = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
        assert quality.cohen_kappa(x, y) == pytest.approx(cohen_kappa_score(x, y))


def test_cohen_kappa_undefined():
    assert math.isnan(quality.cohen_kappa([], []))
    assert math.isnan(quality.cohen_kappa([True, True], [True, True]))
    with pytest.raises(ValueError):
        quality.cohen_kappa([True], [True, False])


def test_fleiss_kappa_wikipedia_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories -> κ = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert quality.fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-5)
    assert math.isnan(quality.fleiss_kappa([[3, 0], [3, 0]]))
    with pytest.raises(ValueError):
        quality.fleiss_kappa([[2, 0], [1, 2]])


def _reviews(rows):
    return pd.DataFrame(rows, columns=["artifact", "reviewer", "gate_fail"])


def test_gate_review_agreement_by_hand():
    ann = [True, True, False, False, True]
    bob = [True, False, False, False, True]
    cyd = [True, True, False, True]  # did not see artifact 5
    rows = [(i + 1, "ann", v) for i, v in enumerate(ann)]
    rows += [(i + 1, "bob", v) for i, v in enumerate(bob)] + [(i + 1, "cyd", v) for i, v in enumerate(cyd)]
    table = quality.gate_review_agreement(_reviews(rows)).set_index(["reviewer_a", "reviewer_b"])
    ab = table.loc[("ann", "bob")]
    # ann/bob on 5: agree 4/5; p_e = (3/5)(2/5) + (2/5)(3/5) = 0.48; κ = (0.8 - 0.48) / 0.52
    assert (ab["n"], ab["agreement"]) == (5, 0.8)
    assert ab["kappa"] == pytest.approx(0.32 / 0.52)
    ac = table.loc[("ann", "cyd")]
    assert ac["n"] == 4 and ac["agreement"] == 0.75
    assert ac["kappa"] == pytest.approx(cohen_kappa_score(ann[:4], cyd))
    everyone = table.loc[(quality.ALL_REVIEWERS, "")]
    wide = np.array([ann[:4], bob[:4], cyd]).T  # artifacts 1-4 seen by all three
    counts, _ = aggregate_raters(wide.astype(int))
    assert everyone["n"] == 4
    assert everyone["agreement"] == 0.5  # artifacts 1 and 3 unanimous
    assert everyone["kappa"] == pytest.approx(sm_fleiss(counts))


def test_agreement_with_reference():
    rows = [(1, "ann", True), (2, "ann", False), (3, "ann", True), (4, "ann", False), (9, "ann", True)]
    automated = pd.Series({1: True, 2: False, 3: False, 4: False, 5: True})
    table = quality.agreement_with_reference(_reviews(rows), automated)
    row = table.iloc[0]
    assert (row["reviewer"], row["n"], row["agreement"]) == ("ann", 4, 0.75)
    assert row["kappa"] == pytest.approx(cohen_kappa_score([True, False, True, False], [True, False, False, False]))


def _ratings(rows):
    return pd.DataFrame(rows, columns=["artifact", "axis", "rater", "rater_kind", "run", "rating"])


def test_rating_agreement_against_scipy():
    human = {1: (4, 5), 2: (2, 2), 3: (0, 1), 4: (3, 3), 5: (5, 4)}
    judge = {1: (5, 5, 4), 2: (3, 2, 2), 3: (1, 1, 1), 4: (2, 3, 2), 5: (4, 4, 5)}
    rows = []
    for artifact, (h1, h2) in human.items():
        rows += [
            (artifact, "visual_quality", "ann", "human", 1, h1),
            (artifact, "visual_quality", "bob", "human", 1, h2),
        ]
    for artifact, runs in judge.items():
        rows += [(artifact, "visual_quality", "gpt-j", "judge", r + 1, v) for r, v in enumerate(runs)]
    rows.append((6, "visual_quality", "gpt-j", "judge", 1, 3))  # no human rating: left out
    table = quality.rating_agreement(_ratings(rows))
    row = table.iloc[0]
    h = np.array([4.5, 2.0, 0.5, 3.0, 4.5])
    j = np.array([14 / 3, 7 / 3, 1.0, 7 / 3, 13 / 3])
    assert (row["axis"], row["judge"], row["n"]) == ("visual_quality", "gpt-j", 5)
    assert row["spearman"] == pytest.approx(stats.spearmanr(h, j).statistic)
    assert row["pearson"] == pytest.approx(stats.pearsonr(h, j).statistic)
    assert row["mean_abs_diff"] == pytest.approx(np.mean(np.abs(h - j)))


def test_rating_consistency_by_hand():
    rows = [(1, "instruction_following", "gpt-j", "judge", r, v) for r, v in [(1, 4), (2, 4), (3, 5)]]
    rows += [(2, "instruction_following", "gpt-j", "judge", r, v) for r, v in [(1, 2), (2, 2), (3, 2)]]
    rows += [(3, "instruction_following", "gpt-j", "judge", 1, 0)]  # one run only: left out
    rows += [(1, "instruction_following", "ann", "human", 1, 1)]
    row = quality.rating_consistency(_ratings(rows)).iloc[0]
    assert row["n"] == 2
    assert row["majority_agreement"] == pytest.approx(1.0)  # both examples: 2 of 3 runs (> half) agree
    assert row["modal_share_mean"] == pytest.approx((2 / 3 + 1) / 2)
    assert row["sd_pct"] == pytest.approx((np.std([4, 4, 5]) + 0) / 2 / 5 * 100)


def test_annotator_quality_by_hand():
    cols = ["annotator", "item", "purpose", "label", "left_is_x", "expected"]
    votes = pd.DataFrame(
        [
            ("ann", 1, "regular", "x", True, ""),  # left
            ("ann", 2, "regular", "y", True, ""),  # right
            ("ann", 3, "regular", "tie_success", False, ""),
            ("ann", 9, "attention", "x", False, "x"),  # passed, right side
            ("ann", 8, "attention", "y", True, "x"),  # failed, right side
            ("ann", 1, "repeat", "x", False, ""),  # consistent, right side
            ("ann", 2, "repeat", "x", False, ""),  # inconsistent, right side
            ("bob", 1, "regular", "x", True, ""),
        ],
        columns=cols,
    )
    table = quality.annotator_quality(votes, excluded=["bob"]).set_index("annotator")
    ann = table.loc["ann"]
    assert (ann["votes"], ann["attention_items"], ann["attention_passed"], ann["pass_rate"]) == (3, 2, 1, 0.5)
    assert (ann["swapped_repeats"], ann["self_consistent"]) == (2, 0.5)
    assert ann["position_left_share"] == pytest.approx(1 / 6)  # decisive 6, left: only item 1's first vote
    assert not ann["excluded"] and table.loc["bob", "excluded"]
    assert math.isnan(table.loc["bob", "pass_rate"])
    assert list(table.reset_index().columns) == quality.ANNOTATOR_QUALITY_COLUMNS


def test_gate_fail_value():
    assert quality.gate_fail_value(" TRUE ") is True and quality.gate_fail_value("0") is False
    with pytest.raises(ValueError):
        quality.gate_fail_value("maybe")
