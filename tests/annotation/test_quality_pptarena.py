"""PPTArena's rating statistics (REFERENCE 9, 10), by hand: judge majority agreement and SD (%), Table 8, per-system
means, the cross-judge ranking check, and the stratified sample's proportions."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotation import quality

COLUMNS = ["artifact", "axis", "rater", "rater_kind", "run", "rating", "configuration", "category", "judge_family"]


def _frame(rows):
    return pd.DataFrame(rows, columns=COLUMNS)


def _judge_runs(runs_by_artifact, *, axis="visual_quality", judge="gpt-j", family=""):
    return [
        (artifact, axis, judge, "judge", run + 1, value, f"cfg-{artifact}", "", family)
        for artifact, runs in runs_by_artifact.items()
        for run, value in enumerate(runs)
    ]


# Three examples, five runs each (PPTArena):
#   1: 4 4 4 5 3 -> 4 in 3 of 5 runs (> half): majority; mean 4, squares 0 0 0 1 1, var 2/5, SD sqrt(0.4)
#   2: 2 2 3 4 5 -> at most 2 of 5 alike: no majority; mean 3.2, squares 1.44 1.44 .04 .64 3.24 = 6.8, var 1.36
#   3: 5 5 5 5 4 -> majority; mean 4.8, squares .04 x4 + .64 = .8, var .16, SD 0.4
RUNS = {1: (4, 4, 4, 5, 3), 2: (2, 2, 3, 4, 5), 3: (5, 5, 5, 5, 4)}


def test_majority_agreement_is_the_share_of_examples_with_a_majority():
    row = quality.rating_consistency(_frame(_judge_runs(RUNS))).iloc[0]
    assert (row["n"], row["runs"]) == (3, 5)
    assert row["majority_agreement"] == pytest.approx(2 / 3)  # examples 1 and 3 of 3
    # the older statistic, kept under its own name: mean share of runs equal to the mode, (3/5 + 2/5 + 4/5) / 3
    assert row["modal_share_mean"] == pytest.approx(0.6)


def test_sd_is_a_percentage_of_the_rating_scale():
    row = quality.rating_consistency(_frame(_judge_runs(RUNS))).iloc[0]
    expected = (math.sqrt(0.4) + math.sqrt(1.36) + 0.4) / 3 / 5 * 100  # 0-5 scale: divide by 5
    assert row["sd_pct"] == pytest.approx(expected)
    assert row["sd_pct"] == pytest.approx(14.6576, abs=1e-3)


def test_majority_needs_more_than_half():
    assert quality.has_majority([3, 3, 4, 4]) is False  # exactly half is not a majority
    assert quality.has_majority([3, 3, 3, 4, 5]) is True
    assert quality.sd_percent([0, 5]) == pytest.approx(50.0)  # SD 2.5 of a scale of 5


def test_table8_joins_correlation_and_consistency():
    rows = _judge_runs(RUNS)
    human = {1: 4, 2: 2, 3: 5}
    rows += [(a, "visual_quality", "ann", "human", 1, v, f"cfg-{a}", "", "") for a, v in human.items()]
    table = quality.rating_table8(_frame(rows))
    assert list(table.columns) == quality.RATING_TABLE8_COLUMNS
    row = table.iloc[0]
    h = np.array([4, 2, 5])
    j = np.array([np.mean(RUNS[a]) for a in (1, 2, 3)])
    assert (row["n_human"], row["n_runs"]) == (3, 3)
    assert row["spearman"] == pytest.approx(stats.spearmanr(h, j).statistic)
    assert row["pearson"] == pytest.approx(stats.pearsonr(h, j).statistic)
    assert row["majority_agreement"] == pytest.approx(2 / 3)


def test_system_means_overall_and_per_category():
    rows = [
        # cfg-a: artifact 1 (maps) rated 4 and 2 by two humans -> 3; artifact 2 (plots) rated 5 -> overall (3 + 5) / 2
        (1, "visual_quality", "ann", "human", 1, 4, "cfg-a", "maps", ""),
        (1, "visual_quality", "bob", "human", 1, 2, "cfg-a", "maps", ""),
        (2, "visual_quality", "ann", "human", 1, 5, "cfg-a", "plots", ""),
        (3, "visual_quality", "ann", "human", 1, 1, "cfg-b", "", ""),  # no category: overall only
        # judges: family "gpt" over two runs of artifact 1 (3, 4) -> 3.5; judge without a family keeps its rater id
        (1, "visual_quality", "gpt-5", "judge", 1, 3, "cfg-a", "maps", "gpt"),
        (1, "visual_quality", "gpt-5", "judge", 2, 4, "cfg-a", "maps", "gpt"),
        (3, "visual_quality", "qwen-vl", "judge", 1, 2, "cfg-b", "", ""),
    ]
    table = quality.rating_system_means(_frame(rows)).set_index(["source", "category", "configuration"])
    assert table.loc[("human", quality.OVERALL, "cfg-a"), "mean"] == pytest.approx(4.0)
    assert table.loc[("human", quality.OVERALL, "cfg-a"), "n"] == 2
    assert table.loc[("human", "maps", "cfg-a"), "mean"] == pytest.approx(3.0)
    assert table.loc[("human", "plots", "cfg-a"), "mean"] == pytest.approx(5.0)
    assert table.loc[("human", quality.OVERALL, "cfg-b"), "mean"] == pytest.approx(1.0)
    assert ("human", "", "cfg-b") not in table.index
    assert table.loc[("gpt", quality.OVERALL, "cfg-a"), "mean"] == pytest.approx(3.5)
    assert table.loc[("qwen-vl", quality.OVERALL, "cfg-b"), "mean"] == pytest.approx(2.0)


def test_cross_judge_kendall_tau_and_moved_systems():
    # family A means: s1 5, s2 4, s3 3, s4 1 (ranks 1 2 3 4); family B: s1 4, s2 5, s3 3, s4 1 (ranks 2 1 3 4)
    a = {"s1": 5, "s2": 4, "s3": 3, "s4": 1}
    b = {"s1": 4, "s2": 5, "s3": 3, "s4": 1}
    rows = []
    for n, (system, value) in enumerate(a.items()):
        rows.append((n, "instruction_following", "judge-a", "judge", 1, value, system, "", "A"))
    for n, (system, value) in enumerate(b.items()):
        rows.append((n, "instruction_following", "judge-b", "judge", 1, value, system, "", "B"))
    rows.append((9, "instruction_following", "judge-c", "judge", 1, 3, "s1", "", "C"))  # rated one system: no pair
    table = quality.rating_cross_judge(_frame(rows))
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["family_a"], row["family_b"], row["systems"]) == ("A", "B", 4)
    # 6 pairs, 1 discordant (s1, s2): tau = (5 - 1) / 6
    assert row["kendall_tau"] == pytest.approx(4 / 6)
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau([5, 4, 3, 1], [4, 5, 3, 1]).statistic)
    assert row["moved"] == "s1 1→2; s2 2→1"


def test_stratified_sample_keeps_proportions():
    strata = {f"a{i:02d}": ("physics" if i < 30 else "biology") for i in range(40)}
    assert quality.stratum_sizes({"physics": 30, "biology": 10}, 8) == {"physics": 6, "biology": 2}
    sample = quality.stratified_sample(strata, 8, seed=3)
    assert len(sample) == 8
    assert sum(strata[k] == "physics" for k in sample) == 6
    assert sample == quality.stratified_sample(strata, 8, seed=3)  # seeded
    assert sample != quality.stratified_sample(strata, 8, seed=4)
    # largest remainder: 7 / 2 / 1 of 10, sample 5 -> quotas 3.5, 1.0, 0.5 -> 3 + 1 + 0 and one seat to the largest
    # remainder (a tie of 0.5 goes to the larger stratum): 4 / 1 / 0
    assert quality.stratum_sizes({"x": 7, "y": 2, "z": 1}, 5) == {"x": 4, "y": 1, "z": 0}
    with pytest.raises(ValueError):
        quality.stratum_sizes({"x": 3}, 4)
