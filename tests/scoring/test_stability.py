"""scoring.stability: PPTBench's published bootstrap.json reproduced value for value, plus hand-solved cases.

Pure tests: no database. Known answers come from PPTBench's own output file, hand reasoning, or
scipy — never from the code under test.
"""

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from scoring.stability import (
    STABILITY_COLUMNS,
    STABILITY_ITERATIONS,
    STABILITY_MODEL_COLUMNS,
    STABILITY_PAIR_COLUMNS,
    STABILITY_SAMPLE_SIZES,
    STABILITY_SEED,
    kendall_tau_to_reference,
    pptbench_long,
    ranking_stability,
    ranking_stability_by,
)

SHARED_PPTBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "pptbench"


def long(rows):
    """rows: {model: [score per task]} → long frame over tasks t0, t1, …"""
    return pd.DataFrame(
        [(f"t{t}", model, score) for model, scores in rows.items() for t, score in enumerate(scores)],
        columns=["task_id", "model", "score"],
    )


# ------------------------------------------------------------------------------ PPTBench


def test_reproduces_pptbench_bootstrap_json_value_for_value():
    if not (SHARED_PPTBENCH / "bootstrap.json").exists():
        pytest.skip(
            f"PPTBench results not at {SHARED_PPTBENCH}: copy results/scores.csv and results/bootstrap.json "
            "from github.com/Einsia/PPTBench at d64c09f10a4376fa46532dc82048d1b5228e8b76 (see SOURCE.md)"
        )
    published = json.loads((SHARED_PPTBENCH / "bootstrap.json").read_text())
    # Parse with the csv module and float(), as PPTBench did, so pandas' parser is not in play.
    with (SHARED_PPTBENCH / "scores.csv").open(newline="") as handle:
        scores = pd.DataFrame(
            [
                {"task_id": r["task_id"], "candidate_id": r["candidate_id"], "total_score": float(r["total_score"])}
                for r in csv.DictReader(handle)
            ]
        )

    ours = ranking_stability(pptbench_long(scores))

    assert published["seed"] == STABILITY_SEED
    assert published["iterations"] == STABILITY_ITERATIONS == ours.iterations
    assert [e["sample_size"] for e in published["sample_sizes"]] == list(STABILITY_SAMPLE_SIZES)
    assert published["task_count"] == ours.task_count == 500
    assert ours.dropped_tasks == 0
    assert list(ours.full_ranking.columns) == ["rank", "model", "mean_score"]
    assert ours.full_ranking.to_dict("records") == published["full_ranking"]

    assert list(ours.stability.columns) == STABILITY_COLUMNS
    assert list(ours.models.columns) == STABILITY_MODEL_COLUMNS
    assert list(ours.pairs.columns) == STABILITY_PAIR_COLUMNS
    expected_stability = [{c: e[c] for c in STABILITY_COLUMNS} for e in published["sample_sizes"]]
    expected_models = [
        {"sample_size": e["sample_size"], **item} for e in published["sample_sizes"] for item in e["model_intervals"]
    ]
    expected_pairs = [
        {"sample_size": e["sample_size"], **item} for e in published["sample_sizes"] for item in e["adjacent_pairs"]
    ]
    # Exact equality of every float (no tolerance): 6 × 10 + 216 × 7 + 210 × 8 values.
    assert ours.stability.to_dict("records") == expected_stability
    assert ours.models.to_dict("records") == expected_models
    assert ours.pairs.to_dict("records") == expected_pairs
    assert len(expected_models) == 6 * 36 and len(expected_pairs) == 6 * 35


# ------------------------------------------------------------------------------ hand-solved


def test_two_models_two_tasks_by_hand():
    # A scores (10, 0), B scores (4, 4): full means A 5 > B 4. With one task per draw, A stays
    # ahead exactly when task 0 is drawn; with two tasks A falls behind only on the draw (1, 1).
    scores = long({"A": [10.0, 0.0], "B": [4.0, 4.0]})
    iterations, seed = 400, 11
    result = ranking_stability(scores, sample_sizes=(1, 2), iterations=iterations, seed=seed)

    rng = np.random.default_rng(seed)  # the documented stream: one block per sample size
    single = rng.integers(0, 2, size=(iterations, 1))[:, 0]
    double = rng.integers(0, 2, size=(iterations, 2))
    p_single = np.mean(single == 1)
    p_double = np.mean(double.sum(axis=1) == 2)
    assert 0.3 < p_single < 0.7 and 0.1 < p_double < 0.4  # the example exercises both outcomes

    one, two = result.stability.iloc[0], result.stability.iloc[1]
    assert one["kendall_tau_mean"] == pytest.approx(1 - 2 * p_single)
    assert one["top1_exact_probability"] == pytest.approx(1 - p_single)
    assert one["kendall_tau_p05"] == -1.0 and one["kendall_tau_p95"] == 1.0
    # Two models: the top-2 set is always both of them.
    assert one["top2_exact_set_probability"] == 1.0
    assert two["top1_exact_probability"] == pytest.approx(1 - p_double)

    pairs = result.pairs.set_index("sample_size")
    assert pairs.loc[1, "upper_model"] == "A" and pairs.loc[1, "lower_model"] == "B"
    assert pairs.loc[1, "full_gap"] == 1.0
    assert pairs.loc[1, "rank_flip_probability"] == pytest.approx(p_single)
    assert pairs.loc[2, "rank_flip_probability"] == pytest.approx(p_double)
    # A − B per single-task draw is +6 or −4: both ends fall inside the 2.5–97.5 % band's reach.
    assert pairs.loc[1, "difference_ci_low"] == -4.0 and pairs.loc[1, "difference_ci_high"] == 6.0
    assert not pairs.loc[1, "significant_95pct"]

    models = result.models.set_index(["sample_size", "model"])
    assert models.loc[(1, "B"), "ci_low"] == models.loc[(1, "B"), "ci_high"] == 4.0  # B never varies
    assert models.loc[(1, "B"), "ci_width"] == 0.0
    assert models.loc[(1, "A"), "ci_low"] == 0.0 and models.loc[(1, "A"), "ci_high"] == 10.0
    # Both models are in the top 3 of two models every time.
    assert (result.models["top3_probability"] == 1.0).all()
    assert one["mean_model_ci_width"] == 5.0 and one["max_model_ci_width"] == 10.0


def test_equal_means_rank_by_name_and_never_flip():
    scores = long({"b": [1.0, 3.0], "a": [3.0, 1.0], "c": [0.0, 0.0]})
    result = ranking_stability(scores, sample_sizes=(2,), iterations=50, seed=1)
    assert list(result.full_ranking["model"]) == ["a", "b", "c"]  # a and b tie at 2.0: name decides
    pairs = result.pairs
    assert list(pairs["upper_model"]) == ["a", "b"] and list(pairs["full_gap"]) == [0.0, 2.0]
    # b beats a in a draw only when task 1 is drawn more often than task 0.
    rng = np.random.default_rng(1)
    draws = rng.integers(0, 2, size=(50, 2))
    assert pairs["rank_flip_probability"].iloc[0] == pytest.approx(np.mean(draws.sum(axis=1) == 2))
    assert pairs["rank_flip_probability"].iloc[1] == 0.0


def test_kendall_tau_matches_scipy():
    rng = np.random.default_rng(3)
    reference = rng.permutation(12)
    orders = np.stack([rng.permutation(12) for _ in range(200)])
    ours = kendall_tau_to_reference(reference, orders)
    ref_rank = np.argsort(reference)
    for order, tau in zip(orders, ours):
        expected = kendalltau(ref_rank, np.argsort(order)).statistic
        assert tau == pytest.approx(expected, abs=1e-12)


def test_incomplete_tasks_are_dropped_like_pptbench():
    scores = long({"A": [1.0, 2.0, 3.0], "B": [3.0, 2.0, np.nan]})
    result = ranking_stability(scores, sample_sizes=(2,), iterations=20, seed=0)
    assert result.task_count == 2 and result.dropped_tasks == 1
    assert dict(zip(result.full_ranking["model"], result.full_ranking["mean_score"])) == {"A": 1.5, "B": 2.5}


def test_per_judge_and_run_groups_equal_separate_runs():
    rng = np.random.default_rng(5)
    rows = []
    for judge in ("j1", "j2"):
        for run in (1, 2):
            for task in range(30):
                for configuration in ("x", "y", "z"):
                    rows.append((judge, run, f"fig{task}", configuration, float(rng.integers(0, 100))))
    scores = pd.DataFrame(rows, columns=["judge", "run", "task_id", "configuration", "score"])
    grouped = ranking_stability_by(scores, by=["judge", "run"], sample_sizes=(10, 30), iterations=100, seed=9)
    assert list(grouped.stability.columns) == ["judge", "run"] + STABILITY_COLUMNS
    one = scores[(scores.judge == "j2") & (scores.run == 1)]
    alone = ranking_stability(one, sample_sizes=(10, 30), iterations=100, seed=9, model_column="configuration")
    part = grouped.pairs[(grouped.pairs.judge == "j2") & (grouped.pairs.run == 1)].drop(columns=["judge", "run"])
    pd.testing.assert_frame_equal(part.reset_index(drop=True), alone.pairs)


def test_rejects_duplicates():
    scores = long({"A": [1.0], "B": [2.0]})
    with pytest.raises(ValueError, match="duplicate"):
        ranking_stability(pd.concat([scores, scores]), sample_sizes=(1,), iterations=5)


@pytest.mark.parametrize("dtype", [float, int])
def test_resampled_means_are_pptbenchs_per_draw_means_to_the_last_bit(dtype):
    """PPTBench draws one task list at a time and takes matrix[:, idx].mean(axis=1); summed in another order, means
    differ in the last bits and near-ties in a draw can rank the other way."""
    from scoring.stability import resampled_means

    rng = np.random.default_rng(7)
    matrix = (rng.random((6, 300)) * 100).astype(dtype) if dtype is int else rng.random((6, 300)) * 100 / 3
    indices = rng.integers(0, 300, size=(2_500, 97))  # more draws than one block, a size that is not a power of two
    expected = np.stack([matrix[:, idx].mean(axis=1) for idx in indices])
    assert np.array_equal(resampled_means(matrix, indices), expected)
