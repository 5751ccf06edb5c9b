"""scoring.pptbench_tables on hand-made frames: every number below is worked out by hand (or by an independent
formula written out here), never taken from the code under test. No database."""

import numpy as np
import pandas as pd
import pytest

from scoring import pptbench_tables as t
from scoring.stability import ranking_stability


def scores(rows) -> pd.DataFrame:
    """(task, candidate, gated, total) rows as scores.csv columns."""
    frame = pd.DataFrame(rows, columns=["task_id", "candidate_id", "majority_gate", "total_score"])
    frame["gate_count"] = np.where(frame["majority_gate"], 3, 0)
    for column in ("layout_score", "text_score", "local_graphics_score", "issue_count", "single_round_issue_count"):
        frame[column] = 0
    return frame


def test_family_names_and_effort_order():
    assert t.family_name("claude-opus-5") == "Claude Opus 5"
    assert t.family_name("gpt-5.6-sol") == "GPT-5.6 Sol"
    assert t.family_name("glm-5.3-flash") == "GLM-5.3 Flash"
    assert t.family_name("qwen3.8-max") == "Qwen3.8 Max"
    names = t.candidates(["m__max", "m__none", "m__high", "m__odd"]).sort_values("effort_rank")
    assert list(names["effort"]) == ["none", "high", "max", "odd"]  # an unnamed level sorts last


def test_issue_penalties_top_rows_and_rounding():
    summary = pd.DataFrame(
        {
            "dimension": ["text", "text", "layout"],
            "category": ["a", "b", "c"],
            "issue_type": ["small", "big", "middle"],
            "severity": ["low", "high", "medium"],
            "case_count": [10, 4, 3],
            "mean_max_ratio": [0.12345, 1.0, 0.5],
            "total_penalty": [12.5, 30.0, 11.25],
            "single_round_rate": [0.25, 0.06813, 1.0],
        }
    )
    table = t.issue_penalties(summary, top=2)
    assert list(table.columns) == t.ISSUE_COLUMNS
    assert list(table["issue_type"]) == ["big", "small"]
    assert table.loc[0, "single_round_pct"] == 6.8 and table.loc[1, "category_ratio"] == 0.123


def test_high_vs_highest_by_hand():
    rows = []
    # Family m at high and max over four tasks; t4 gated at high, t3 gated at max: both pass t1, t2.
    for task, high, top in (("t1", 50, 60), ("t2", 70, 74), ("t3", 40, None), ("t4", None, 90)):
        rows.append((task, "m__high", high is None, high or 0.0))
        rows.append((task, "m__max", top is None, top or 0.0))
        rows.append((task, "solo__high", False, 10.0))  # no higher effort: no row
    table = t.high_vs_highest(scores(rows), resamples=2000, seed=1)
    assert list(table["model"]) == ["m"]
    row = table.iloc[0]
    assert (row["highest"], row["n"]) == ("max", 2)
    assert row["delta_detail"] == 7.0  # ((60 − 50) + (74 − 70)) / 2
    assert (row["ci_low"], row["ci_high"]) == (4.0, 10.0)  # the two possible draw means span 4 … 10
    assert row["delta_pass"] == 0.0  # 3/4 pass at each effort


def test_configuration_menus_by_hand():
    rows = []
    per_config = {"a__low": 10.0, "a__high": 30.0, "b__medium": 40.0}
    for task in ("t1", "t2"):
        for candidate, score in per_config.items():
            rows.append((task, candidate, False, score))
    table = t.configuration_menus(scores(rows), resamples=200, seed=3).set_index("menu")
    assert table.loc["3 configurations, equal weight", ["mean", "median"]].tolist() == [26.67, 30.0]
    assert table.loc["2 families, mean over efforts", ["mean", "median"]].tolist() == [30.0, 30.0]  # (20, 40)
    assert table.loc["2 families, highest effort", ["mean", "median"]].tolist() == [35.0, 35.0]  # (30, 40)
    assert table.loc["2 families, best effort", ["mean", "median"]].tolist() == [35.0, 35.0]
    # Every task scores the same, so every resample gives the same mean: the interval has no width.
    row = table.loc["3 configurations, equal weight"]
    assert row["ci_low"] == row["ci_high"] == 26.67


def test_effort_sweep_and_outcomes_by_hand():
    rows = [
        ("t1", "m__low", True, 0.0),
        ("t2", "m__low", False, 40.0),
        ("t1", "m__high", False, 80.0),
        ("t2", "m__high", False, 60.0),
    ]
    sweep = t.effort_sweep(scores(rows))
    assert list(sweep["effort"]) == ["low", "high"]
    low = sweep.iloc[0]
    assert (low["mean_score"], low["gate_pass_rate"], low["passed"], low["mean_on_passed"]) == (20.0, 0.5, 1, 40.0)
    generation = pd.DataFrame(
        {
            "candidate_id": ["m__low", "m__high"],
            "task_count": [2, 2],
            "invalid_artifacts": [1, 0],
            "failed_tasks": [0, 0],
        }
    )
    out = t.outcomes(scores(rows), generation).set_index("effort")
    assert out.loc["low", ["artifact_failure", "gate_failure", "pass"]].tolist() == [0.5, 0.0, 0.5]
    assert out.loc["mean", ["artifact_failure", "gate_failure", "pass"]].tolist() == [0.25, 0.0, 0.75]
    unknown = t.outcomes(scores(rows), None).set_index("effort")
    assert np.isnan(unknown.loc["low", "artifact_failure"]) and unknown.loc["low", "gate_failure"] == 0.5


def test_judge_repeatability_against_fleiss_by_hand():
    # Judge J, three repeats on four cases: gated 3/3, 0/3, 2/3, 1/3; a fifth case has two repeats only.
    rows = []
    for case, gates in (("c1", [1, 1, 1]), ("c2", [0, 0, 0]), ("c3", [1, 1, 0]), ("c4", [1, 0, 0]), ("c5", [1, 1])):
        for repeat, gate in enumerate(gates, start=1):
            rows.append(("J", case, "m__high", repeat, bool(gate)))
    repeats = pd.DataFrame(rows, columns=["judge", "task_id", "candidate_id", "repeat", "gate"])
    table, notes = t.judge_repeatability(repeats)
    row = table.iloc[0]
    assert (row["cases"], row["repeats"], row["unanimous_rate"], row["flipped"]) == (4, 3, 0.5, 2)
    assert row["gate_rate"] == 6 / 12
    # Fleiss: P_i = (Σ n_ij² − n) / (n(n − 1)) = 1, 1, 1/3, 1/3 → P̄ = 2/3; p_gate = p_pass = 1/2 → P_e = 1/2.
    assert row["fleiss_kappa"] == pytest.approx((2 / 3 - 1 / 2) / (1 - 1 / 2))
    assert notes == ["J: 1 case(s) without exactly 3 repeats left out"]


def test_process_correlations_and_domains_by_hand():
    rows = [(task, c, False, s) for task in ("t1", "t2") for c, s in (("a__x", 10.0), ("b__x", 20.0), ("c__x", 40.0))]
    frame = scores(rows)
    process = pd.DataFrame(
        {
            "task_id": ["t1"] * 3,
            "candidate_id": ["a__x", "b__x", "c__x"],
            "review_turns": [1.0, 2.0, 4.0],  # exactly linear in the score: r = ρ = 1
            "revision_turns": [9.0, 5.0, 1.0],  # decreasing, not linear: ρ = −1, r by hand below
        }
    )
    table = t.process_correlations(frame, process).set_index("metric")
    assert table.loc["review_turns", ["configurations", "pearson_r", "spearman_rho"]].tolist() == pytest.approx(
        [3, 1, 1]
    )
    x, y = np.array([9.0, 5.0, 1.0]), np.array([10.0, 20.0, 40.0])
    r = ((x - x.mean()) * (y - y.mean())).sum() / np.sqrt(((x - x.mean()) ** 2).sum() * ((y - y.mean()) ** 2).sum())
    assert table.loc["revision_turns", "pearson_r"] == pytest.approx(r)
    assert table.loc["revision_turns", "spearman_rho"] == pytest.approx(-1)

    domains = pd.DataFrame({"task_id": ["t1", "t2"], "domain": ["bio", "cs"]})
    by_domain = t.domain_results(frame, domains).set_index("domain")
    assert by_domain.loc["bio", ["tasks", "mean_score", "pass_rate", "best_candidate", "best_mean"]].tolist() == [
        1,
        pytest.approx(70 / 3),
        1.0,
        "c__x",
        40.0,
    ]


def test_published_checks_notice_a_difference():
    from scoring.pptbench import leaderboard

    rows = [(task, c, False, s) for task in ("t1", "t2", "t3") for c, s in (("a__x", 10.0), ("b__x", 20.0))]
    frame = scores(rows)
    published = leaderboard(frame)
    assert t.leaderboard_differences(frame, published) == []
    published.loc[0, "mean_final_score"] = 20.5
    assert t.leaderboard_differences(frame, published) == ["b__x mean_final_score: computed 20.0, published 20.5"]

    result = ranking_stability(
        pd.DataFrame({"task_id": frame["task_id"], "model": frame["candidate_id"], "score": frame["total_score"]}),
        sample_sizes=(2,),
        iterations=50,
        seed=5,
    )
    document = {
        "seed": 5,
        "iterations": 50,
        "task_count": 3,
        "full_ranking": result.full_ranking.to_dict("records"),
        "sample_sizes": [
            {
                **result.stability.iloc[0].to_dict(),
                "model_intervals": result.models.drop(columns="sample_size").to_dict("records"),
                "adjacent_pairs": result.pairs.drop(columns="sample_size").to_dict("records"),
            }
        ],
    }
    assert t.bootstrap_differences(result, document) == []
    document["seed"] = 6
    document["sample_sizes"][0]["model_intervals"][0]["ci_low"] += 1e-12
    assert t.bootstrap_differences(result, document) == ["seed: computed 5, published 6", "models: 1 of 2 rows differ"]


@pytest.mark.parametrize("fmt", ("pdf", "png", "svg"))
def test_pptbench_figures_are_valid_files(fmt):
    from bt_elo import pptbench_plots
    from tests.bt_elo.test_paper_figures import assert_valid

    rows = [(f"t{i}", c, i % 3 == 0, 10.0 * i) for i in range(1, 7) for c in ("m__low", "m__high", "n__max")]
    frame = scores(rows)
    frame["gate_count"] = [i % 4 for i in range(len(frame))]
    stability = ranking_stability(
        pd.DataFrame({"task_id": frame["task_id"], "model": frame["candidate_id"], "score": frame["total_score"]}),
        sample_sizes=(3, 6),
        iterations=20,
        seed=1,
    ).stability
    for body in (
        pptbench_plots.gate_rounds_plot(t.gate_rounds(frame), fmt),
        pptbench_plots.effort_sweep_plot(t.effort_sweep(frame), fmt),
        pptbench_plots.outcomes_plot(t.outcomes(frame, None), fmt),
        pptbench_plots.stability_plot(stability, fmt),
        pptbench_plots.outcomes_plot(pd.DataFrame(columns=t.OUTCOME_COLUMNS), fmt),  # nothing imported: a message
    ):
        assert_valid(body, fmt)
