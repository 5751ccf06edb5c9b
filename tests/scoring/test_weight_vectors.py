"""ReFigBench Table 21's twelve weight vectors, the two surplus variants rescored by hand, and the judge run the
sensitivity is computed on (run 1 by default, as the paper). Pure: no database."""

import numpy as np
import pandas as pd
import pytest

from corpus.protocol import RUBRIC_AXES
from scoring import stats as st
from scoring.stats_weights import PAPER_VARIANTS, weight_variants

# Subscores (T, S, L, E, V) of one task; direct and specialized of one model and harness.
DIRECT = (10, 15, 15, 5, 8)
SPECIALIZED = (12, 24, 9, 20, 6)


def frame(runs: dict[int, tuple[tuple, tuple]]) -> pd.DataFrame:
    rows = []
    for run, sides in runs.items():
        for workflow, subscores in zip(("direct", "specialized"), sides, strict=True):
            row = dict(
                configuration=f"m-{workflow}",
                model="m",
                harness="h",
                workflow=workflow,
                task_id="t1",
                field="cs.AI",
                judge="J",
                judge_family="F",
                run=run,
                gate_passed=True,
                cap=100,
            )
            row.update(zip(RUBRIC_AXES, map(float, subscores), strict=True))
            row["quality"] = row["score"] = float(sum(subscores))
            rows.append(row)
    return pd.DataFrame(rows)


def test_the_papers_twelve_vectors():
    variants = weight_variants()
    assert len(PAPER_VARIANTS) == 12 and set(PAPER_VARIANTS) <= set(variants)
    weights = {name: tuple(variants[name][a] for a in RUBRIC_AXES) for name in PAPER_VARIANTS}
    assert [n for n in PAPER_VARIANTS if n.startswith("editability=")] == [f"editability={e}" for e in range(0, 41, 5)]
    assert weights["editability=25"] == (20, 30, 15, 25, 10)  # the default is one of the sweep
    # the sweep keeps T : S : L : V = 20 : 30 : 15 : 10 ; at E = 40 the other 60 points split 16 / 24 / 12 / 8
    assert weights["editability=40"] == pytest.approx((16, 24, 12, 40, 8))
    assert weights["e15-surplus-to-structure"] == (20, 40, 15, 15, 10)
    assert weights["e15-surplus-to-visual"] == (20, 30, 15, 15, 20)
    assert weights["uniform"] == (20, 20, 20, 20, 20)
    assert all(sum(w) == pytest.approx(100) for w in weights.values())


def test_the_surplus_variants_rescore_by_hand():
    one = frame({1: (DIRECT, SPECIALIZED)})
    variants = weight_variants()
    # s' = sum of w_a * sub_a / max_a (maxima T20 S30 L15 E25 V10)
    # direct, surplus to S (20/40/15/15/10): 10 + 40*15/30 + 15 + 15*5/25 + 8 = 10 + 20 + 15 + 3 + 8 = 56
    # direct, surplus to V (20/30/15/15/20): 10 + 15 + 15 + 3 + 20*8/10 = 59 ; uniform: 10 + 10 + 20 + 4 + 16 = 60
    # specialized: S 12 + 32 + 9 + 12 + 6 = 71 ; V 12 + 24 + 9 + 12 + 12 = 69 ; uniform 12 + 16 + 12 + 16 + 12 = 68
    expected = {"e15-surplus-to-structure": (56, 71), "e15-surplus-to-visual": (59, 69), "uniform": (60, 68)}
    for name, scores in expected.items():
        np.testing.assert_allclose(st.rescore(one, variants[name]), scores)
    effects = st.weight_sensitivity(one, resamples=50).effects.set_index("variant")
    for name, (direct, specialized) in expected.items():
        assert effects.loc[name, "delta"] == pytest.approx(specialized - direct)  # 15, 10, 8
        assert bool(effects.loc[name, "paper"])
    assert not bool(effects.loc["text-heavy", "paper"])  # this app's extras stay beside the paper's


def test_run_one_by_default_another_run_or_the_mean_when_asked():
    # run 2 swaps the sides: the workflow effect changes sign
    two = frame({1: (DIRECT, SPECIALIZED), 2: (SPECIALIZED, DIRECT)})
    default = st.weight_sensitivity(two, resamples=50)
    effects = default.effects.set_index("variant")
    assert effects.loc["uniform", "delta"] == pytest.approx(8.0)
    assert "judge J, run 1" in default.variants.attrs["notes"][0]
    second = st.weight_sensitivity(two, run=2, resamples=50)
    assert second.effects.set_index("variant").loc["uniform", "delta"] == pytest.approx(-8.0)
    assert "run 2" in second.effects.attrs["notes"][0] and "ReFigBench uses run 1" in second.effects.attrs["notes"][0]
    mean = st.weight_sensitivity(two, run="mean", resamples=50)
    assert mean.effects.set_index("variant").loc["uniform", "delta"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match=r"Judge J has no run 3 \(its runs: 1, 2\)"):
        st.weight_sensitivity(two, run=3, resamples=50)
