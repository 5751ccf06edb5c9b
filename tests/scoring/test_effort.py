"""Effort sweeps by hand: a family's efforts in order, gate-pass rates and the paired change from the effort below."""

import numpy as np
import pandas as pd
import pytest

from scoring.effort import EFFORT_SWEEP_COLUMNS, effort_sweep


def frame(rows):
    """rows: (configuration, effort, effort_rank, task, gate_passed, score) for model m, harness h, workflow direct."""
    return pd.DataFrame(
        [
            dict(
                configuration=c,
                model="m",
                harness="h",
                workflow="direct",
                attributes="",
                reasoning_effort=e,
                effort_rank=r,
                task_id=t,
                judge="J",
                run=1,
                gate_passed=g,
                score=s,
            )
            for c, e, r, t, g, s in rows
        ]
    )


def test_efforts_in_order_with_hand_computed_means_rates_and_changes():
    # declared out of order on purpose: "max" (rank 6) before "low" (rank 2) before "high" (rank 4)
    scores = frame(
        [
            ("m-max", "max", 6, "t1", True, 90.0),
            ("m-max", "max", 6, "t2", True, 70.0),
            ("m-low", "low", 2, "t1", True, 60.0),
            ("m-low", "low", 2, "t2", False, 0.0),
            ("m-high", "high", 4, "t1", True, 80.0),
            ("m-high", "high", 4, "t2", True, np.nan),  # passed, not judged: not in n, not paired
        ]
    )
    table = effort_sweep(scores, resamples=200, seed=1)
    assert list(table.columns) == EFFORT_SWEEP_COLUMNS
    run1 = table[table["run"] == 1].set_index("reasoning_effort")
    assert list(run1.index) == ["low", "high", "max"]
    assert run1.loc["low", "mean"] == 30.0 and run1.loc["low", "gate_pass_rate"] == 0.5
    assert run1.loc["low", "mean_on_passed"] == 60.0 and np.isnan(run1.loc["low", "delta_previous"])
    # high − low on t1 only: 80 − 60
    assert (run1.loc["high", "n_paired"], run1.loc["high", "delta_previous"]) == (1, 20.0)
    # max − high on t1 only: 90 − 80
    assert (run1.loc["max", "n_paired"], run1.loc["max", "delta_previous"]) == (1, 10.0)
    assert run1.loc["max", "ci_low"] == run1.loc["max", "ci_high"] == 10.0  # one difference: every resample is it


def test_a_declared_order_is_followed_and_single_effort_families_are_noted():
    scores = frame(
        [
            ("a-fast", "fast", 0, "t1", True, 50.0),
            ("a-slow", "slow", 1, "t1", True, 70.0),
        ]
    )
    lone = frame([("b", "high", 4, "t1", True, 40.0)]).assign(model="other")
    table = effort_sweep(pd.concat([scores, lone], ignore_index=True), resamples=50, seed=1)
    run1 = table[table["run"] == 1]
    assert list(run1["reasoning_effort"]) == ["fast", "slow"]
    assert run1["delta_previous"].iloc[1] == pytest.approx(20.0)
    assert any("1 family run at one effort only" in note for note in table.attrs["notes"])


def test_no_judge_scores_give_an_empty_table_that_says_so():
    table = effort_sweep(frame([]).reindex(columns=["configuration", "judge", "score"]), resamples=10, seed=1)
    assert table.empty and "No judge scores yet." in table.attrs["notes"]
