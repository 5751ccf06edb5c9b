"""rubric-means (scoring.stats_rubric) on a hand-sized case: two configurations of one model and harness, three
tasks, two judge runs. Means by hand; the CI by the documented resampling redone here with numpy. Pure."""

import numpy as np
import pandas as pd
import pytest

from scoring.stats_rubric import RUBRIC_MEANS_COLUMNS, rubric_means

AXES = ("text", "semantic_structure", "layout", "editability", "visual_detail")


def _scores() -> pd.DataFrame:
    rows = []
    text = {  # (configuration, task) -> text subscore in run 1, run 2
        ("m-direct", "t1"): (10, 12),
        ("m-direct", "t2"): (20, 20),
        ("m-direct", "t3"): (0, 0),  # gate failure: every subscore 0
        ("m-special", "t1"): (16, 18),
        ("m-special", "t2"): (14, None),  # no record in run 2
        ("m-special", "t3"): (20, 20),
    }
    for (configuration, task), values in text.items():
        for run, value in enumerate(values, start=1):
            rows.append(
                {
                    "configuration": configuration,
                    "model": "m",
                    "harness": "h",
                    "workflow": configuration.split("-")[1].replace("special", "specialized"),
                    "reasoning_effort": "high",
                    "task_id": task,
                    "field": "cs.CV",
                    "judge": "j",
                    "judge_family": "f",
                    "run": run,
                    "score": np.nan if value is None else 3.0 * value,
                    "quality": np.nan if value is None else 3.0 * value,
                    **{axis: (np.nan if value is None else float(value)) for axis in AXES},
                }
            )
    return pd.DataFrame(rows)


def test_means_per_run_and_over_runs_by_hand():
    table = rubric_means(_scores(), resamples=200, seed=7)
    assert list(table.columns) == RUBRIC_MEANS_COLUMNS
    text = table[table["axis"] == "text"].astype({"run": str}).set_index(["configuration", "run"])
    assert text.loc[("m-direct", "1"), "mean"] == pytest.approx((10 + 20 + 0) / 3)
    assert text.loc[("m-direct", "2"), "mean"] == pytest.approx((12 + 20 + 0) / 3)
    assert text.loc[("m-direct", "mean"), "mean"] == pytest.approx((11 + 20 + 0) / 3)
    assert text.loc[("m-special", "2"), "n"] == 2  # the missing record is left out, not counted as 0
    assert text.loc[("m-special", "2"), "mean"] == pytest.approx((18 + 20) / 2)
    assert text.loc[("m-special", "mean"), "mean"] == pytest.approx((17 + 14 + 20) / 3)
    assert set(table["maximum"][table["axis"] == "semantic_structure"]) == {30}
    assert list(table["axis"].iloc[:5]) == list(AXES)  # the rubric's order within a configuration and run
    assert set(table["workflow"]) == {"direct", "specialized"}


def test_ci_is_the_task_bootstrap_redone_by_hand():
    resamples, seed = 300, 7
    table = rubric_means(_scores(), resamples=resamples, seed=seed)
    row = table[
        (table["configuration"] == "m-direct") & (table["run"].astype(str) == "mean") & (table["axis"] == "text")
    ]
    per_task = np.array([11.0, 20.0, 0.0])  # tasks t1, t2, t3 (sorted), each the mean over its runs
    draws = np.random.default_rng(seed).integers(0, 3, size=(resamples, 3))
    low, high = np.percentile(per_task[draws].mean(axis=1), [2.5, 97.5])
    assert row["ci_low"].iloc[0] == pytest.approx(low)
    assert row["ci_high"].iloc[0] == pytest.approx(high)


def test_no_scores_is_an_empty_table_with_the_columns():
    assert list(rubric_means(_scores().iloc[0:0]).columns) == RUBRIC_MEANS_COLUMNS
