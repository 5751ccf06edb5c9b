"""scoring.stats against hand computations and independent implementations."""

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats as sps

from corpus.protocol import RUBRIC_AXES
from scoring import stats as st

FRAC = {"text": 0.20, "semantic_structure": 0.30, "layout": 0.15, "editability": 0.25, "visual_detail": 0.10}

# Scores per configuration, run, task (t1..t4); None = judge record missing; t2 of "direct" fails the gate.
TINY = {
    ("m-h-direct", "m", "h", "direct"): {1: [60, 0, 90, None], 2: [70, 0, 80, 50]},
    ("m-h-specialized", "m", "h", "specialized"): {1: [80, 40, 90, 30], 2: [80, 50, 100, 40]},
}
HARNESS2 = {("m-h2-direct", "m", "h2", "direct"): {1: [50, 60, 70, 80], 2: [50, 60, 70, 80]}}
FIELDS = {"t1": "cs.AI", "t2": "cs.AI", "t3": "cs.CV", "t4": "cs.CV"}


def tiny(extra=None, judge="J", family="F1"):
    rows = []
    for (cfg, model, harness, wf), runs in {**TINY, **(extra or {})}.items():
        for run, vals in runs.items():
            for i, v in enumerate(vals):
                tid = f"t{i + 1}"
                gate = not (cfg == "m-h-direct" and tid == "t2")
                row = dict(
                    configuration=cfg,
                    model=model,
                    harness=harness,
                    workflow=wf,
                    task_id=tid,
                    field=FIELDS[tid],
                    judge=judge,
                    judge_family=family,
                    run=run,
                    gate_passed=gate,
                    cap=100,
                    quality=np.nan if v is None else float(v),
                    score=np.nan if v is None else float(v),
                )
                for a in RUBRIC_AXES:
                    row[a] = np.nan if v is None else FRAC[a] * v
                rows.append(row)
    return pd.DataFrame(rows)


def slow_ci(values_by_task, universe, resamples, seed):
    """Plain-Python bootstrap with the same index draws: each resample draws len(universe) tasks;
    its mean is over the drawn tasks that have a value (None = missing)."""
    idx = st.bootstrap_indices(len(universe), resamples=resamples, seed=seed)
    means = []
    for row in idx.tolist():
        drawn = [values_by_task[universe[j]] for j in row if values_by_task[universe[j]] is not None]
        if drawn:  # a resample that drew only missing tasks has no mean and is skipped
            means.append(sum(drawn) / len(drawn))
    return np.percentile(means, [2.5, 97.5])


UNIVERSE = ["t1", "t2", "t3", "t4"]


def pingouin_icc2(long, targets, raters, ratings):
    """pingouin's two-way random, absolute agreement, single rater ICC: "ICC2" before 0.7,
    "ICC(A,1)" from 0.7 on."""
    icc = pg.intraclass_corr(long, targets=targets, raters=raters, ratings=ratings).set_index("Type")["ICC"]
    return icc["ICC2"] if "ICC2" in icc.index else icc["ICC(A,1)"]


def test_pure_module_imports():
    for name in ("stats.py", "pptbench.py"):
        tree = ast.parse((Path(st.__file__).parent / name).read_text())
        mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        mods |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not mods & {"django", "rest_framework", "celery"}, name


def test_final_score():
    s = st.final_score([True, True, False, True], [70, 30, 90, np.nan], [50, 50, 100, 100])
    # min(70,50)=50 ; min(30,50)=30 ; gate fail 0 ; missing stays NaN
    np.testing.assert_array_equal(s[:3], [50, 30, 0])
    assert np.isnan(s[3])
    ser = st.final_score(pd.Series([True]), pd.Series([88.0]), pd.Series([100]))
    assert isinstance(ser, pd.Series) and ser.iloc[0] == 88


def test_config_scores_by_hand():
    t = st.config_scores(tiny(), resamples=500)
    assert list(t.columns[:18]) == st.CONFIG_SCORES_COLUMNS
    d1 = t[(t.configuration == "m-h-direct") & (t.run == 1)].iloc[0]
    # run 1 direct: t1 60, t2 0 (gate failure, stays), t3 90, t4 missing (excluded, reported)
    assert (d1.n, d1.missing) == (3, 1)
    assert d1["mean"] == 50.0  # (60+0+90)/3, not /4 and not 150/2
    assert (d1.p25, d1.p50, d1.p75) == (30.0, 60.0, 75.0)  # linear quantiles of [0,60,90]
    assert d1.share_ge_80 == pytest.approx(1 / 3) and d1.share_lt_50 == pytest.approx(1 / 3)
    assert d1.semantic_structure == pytest.approx(0.3 * 50)
    dm = t[(t.configuration == "m-h-direct") & (t.run == "mean")].iloc[0]
    # per-task means over runs: 65, 0, 85, 50 (t4 only run 2) -> 200/4
    assert (dm.n, dm.missing, dm["mean"]) == (4, 0, 50.0)
    assert list(t[t.configuration == "m-h-direct"].run) == [1, 2, "mean"]


def test_config_scores_ci_matches_slow_bootstrap_and_is_reproducible():
    t = st.config_scores(tiny(), resamples=400, seed=11)
    row = t[(t.configuration == "m-h-direct") & (t.run == 1)].iloc[0]
    lo, hi = slow_ci({"t1": 60.0, "t2": 0.0, "t3": 90.0, "t4": None}, UNIVERSE, 400, 11)
    assert (row.ci_low, row.ci_high) == pytest.approx((lo, hi))
    again = st.config_scores(tiny(), resamples=400, seed=11)
    pd.testing.assert_frame_equal(t, again)
    other = st.config_scores(tiny(), resamples=400, seed=12)
    assert not np.allclose(other.ci_low, t.ci_low)


def test_paired_effects_by_hand():
    t = st.paired_effects(tiny(), resamples=300)
    assert list(t.columns[:16]) == st.PAIRED_COLUMNS
    r1 = t[t.run == 1].iloc[0]
    # pairs t1..t3 (t4 missing on direct): 80-60, 40-0, 90-90 = 20, 40, 0
    assert (r1.n, r1.delta, r1.wins, r1.ties, r1.losses, r1.unpaired) == (3, 20.0, 2, 1, 0, 1)
    assert r1.d_editability == pytest.approx(0.25 * 20)
    lo, hi = slow_ci({"t1": 20.0, "t2": 40.0, "t3": 0.0, "t4": None}, UNIVERSE, 300, st.SCORE_BOOTSTRAP_SEED)
    assert (r1.ci_low, r1.ci_high) == pytest.approx((lo, hi))
    rm = t[t.run == "mean"].iloc[0]
    lo, hi = slow_ci({"t1": 15.0, "t2": 45.0, "t3": 10.0, "t4": -15.0}, UNIVERSE, 300, st.SCORE_BOOTSTRAP_SEED)
    assert (rm.ci_low, rm.ci_high) == pytest.approx((lo, hi))
    # means: direct 65,0,85,50 ; specialized 80,45,95,35 -> 15,45,10,-15
    assert (rm.n, rm.delta, rm.wins, rm.ties, rm.losses) == (4, 13.75, 3, 0, 1)


def test_harness_effects_by_hand():
    t = st.harness_effects(tiny(HARNESS2), resamples=200)
    assert list(t.columns[:13]) == st.HARNESS_COLUMNS
    assert set(t.workflow) == {"direct"}  # specialized exists in one harness only
    r1 = t[t.run == 1].iloc[0]
    # h2 - h on t1..t3: 50-60, 60-0, 70-90 = -10, 60, -20
    assert (r1.harness_a, r1.harness_b, r1.n, r1.delta, r1.wins, r1.losses) == ("h", "h2", 3, 10.0, 1, 2)
    rev = st.harness_effects(tiny(HARNESS2), harnesses=["h2", "h"], resamples=200)
    assert rev[rev.run == 1].iloc[0].delta == -10.0


def test_domain_scores_by_hand():
    t = st.domain_scores(tiny())
    assert list(t.columns) == st.DOMAIN_COLUMNS
    ai = t[(t.field == "cs.AI") & (t.run == 1)].iloc[0]
    # cs.AI run 1: direct 60, 0 ; specialized 80, 40 -> pooled 45, best specialized 60
    assert (ai.tasks, ai.pooled_mean, ai.best_configuration, ai.best_mean) == (2, 45.0, "m-h-specialized", 60.0)
    cv = t[(t.field == "cs.CV") & (t.run == 1)].iloc[0]
    # cs.CV run 1: direct 90 (t4 missing) ; specialized 90, 30 -> pooled 210/3, best direct 90
    assert (cv.tasks, cv.pooled_mean, cv.best_configuration, cv.best_mean) == (2, 70.0, "m-h-direct", 90.0)


def test_structural_audit_by_hand():
    audits = pd.DataFrame(
        {
            "configuration": ["m-h-direct"] * 4,
            "task_id": ["t1", "t2", "t3", "t4"],
            "gate_passed": [True, False, True, True],
            "pictures": [1, 0, 0, 2],
            "largest_picture_ratio": [0.9, 0.0, 0.0, 0.5],
            "capped": [True, False, False, False],
            "connectors": [0, 0, 3, 5],
            "text_boxes": [2, 0, 10, 6],
            "shapes": [1, 0, 7, 9],
        }
    )
    t = st.structural_audit(audits, tiny(), run="mean")
    assert list(t.columns) == st.AUDIT_COLUMNS
    r = t.iloc[0]
    assert r.n == 4 and r.share_any_picture == 0.5 and r.share_largest_ge_85 == 0.25 and r.capped == 1
    assert r.share_no_connector == 0.5
    assert (r.median_text_boxes, r.median_shapes, r.median_connectors) == (4.0, 4.0, 1.5)
    # per-task mean scores 65, 0, 85, 50 ; S = 0.3*score = 19.5, 0, 25.5, 15 -> S<15: 1/4 ; s<50: 1/4
    assert r.share_s_lt_15 == 0.25 and r.share_final_lt_50 == 0.25
    # judge run 1 (the default, the paper's): 60, 0, 90 (t4 no record) ; S 18, 0, 27 -> S<15: 1/3 ; s<50: 1/3
    r1 = st.structural_audit(audits, tiny()).iloc[0]
    assert r1.share_s_lt_15 == pytest.approx(1 / 3) and r1.share_final_lt_50 == pytest.approx(1 / 3)
    assert np.isnan(st.structural_audit(audits).iloc[0].share_s_lt_15)


def test_judge_runs_by_hand_and_icc_against_pingouin():
    t = st.judge_runs(tiny())
    d = t[t.configuration == "m-h-direct"].iloc[0]
    assert (d.runs, d.run_1, d.run_2, d.mean_over_runs) == (3 - 1, 50.0, 50.0, 50.0)
    # SDs: t1 10/sqrt2, t2 0, t3 10/sqrt2 (t4 has one record)
    assert d.mean_task_sd == pytest.approx(2 * 10 / np.sqrt(2) / 3)
    assert d.icc_tasks == 3
    long = pd.DataFrame({"task": ["t1", "t2", "t3"] * 2, "run": [1] * 3 + [2] * 3, "s": [60, 0, 90, 70, 0, 80]})
    ref = pingouin_icc2(long, "task", "run", "s")
    assert d.icc_2_1 == pytest.approx(ref)


def test_icc_vectorised_against_pingouin_random():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 30, 3)) + rng.normal(size=(4, 30, 1)) * 2 + np.array([0, 0.5, -0.3])
    ours = st.icc_2_1(x)
    for g in range(4):
        n, k = x.shape[1:]
        long = pd.DataFrame({"t": np.repeat(np.arange(n), k), "r": np.tile(np.arange(k), n), "y": x[g].ravel()})
        ref = pingouin_icc2(long, "t", "r", "y")
        assert ours[g] == pytest.approx(ref, abs=1e-12)


def test_judge_families_against_scipy():
    rng = np.random.default_rng(5)
    a = tiny()
    b = tiny(judge="K", family="F2")
    b["score"] = b["score"] + rng.normal(0, 30, len(b))
    extra = tiny(HARNESS2)
    both = pd.concat([a, b, extra[extra.configuration == "m-h2-direct"]], ignore_index=True)
    t = st.judge_families(both)
    assert list(t.columns[:3]) == ["configuration", "F1", "F2"]
    f1 = t.set_index("configuration")["F1"]
    assert f1["m-h-direct"] == 50.0  # mean of per-task run means 65, 0, 85, 50
    pair = t.dropna(subset=["F1", "F2"])
    assert t.spearman_rho.iloc[0] == pytest.approx(sps.spearmanr(pair.F1, pair.F2)[0])
    assert t.kendall_tau.iloc[0] == pytest.approx(sps.kendalltau(pair.F1, pair.F2)[0])


# Weight sensitivity: m1's specialized side loses 5 T and 10 S but gains 20 E on every task.
def ws_frame():
    subs = {
        ("m1", "direct"): [(20, 30, 15, 5, 10), (10, 20, 10, 0, 5)],
        ("m1", "specialized"): [(15, 20, 15, 25, 10), (5, 10, 10, 20, 5)],
        ("m2", "direct"): [(10, 15, 7.5, 12.5, 5)] * 2,
        ("m2", "specialized"): [(11, 16, 8.5, 13.5, 6)] * 2,
    }
    rows = []
    for (model, wf), tasks in subs.items():
        for i, sub in enumerate(tasks):
            row = dict(
                configuration=f"{model}-{wf}",
                model=model,
                harness="h",
                workflow=wf,
                task_id=f"t{i}",
                field="cs.AI",
                judge="J",
                judge_family="F",
                run=1,
                gate_passed=True,
                cap=100,
            )
            row.update(dict(zip(RUBRIC_AXES, map(float, sub))))
            row["quality"] = row["score"] = float(sum(sub))
            rows.append(row)
    return pd.DataFrame(rows)


def test_weight_sensitivity_by_hand():
    elo = pd.Series({"m1-direct": 1010.0, "m1-specialized": 1040.0, "m2-direct": 950.0, "m2-specialized": 1000.0})
    res = st.weight_sensitivity(ws_frame(), elo=elo, resamples=200)
    v = res.variants.set_index("variant")
    assert list(res.variants.columns) == st.SENSITIVITY_COLUMNS
    assert list(res.effects.columns[:8]) == st.SENSITIVITY_EFFECT_COLUMNS
    np.testing.assert_allclose(v[[f"w_{a}" for a in RUBRIC_AXES]].sum(axis=1), 100)
    assert v.loc["editability=0", "w_text"] == pytest.approx(100 * 20 / 75)
    assert v.loc["default", "spearman_default"] == 1.0
    # default means: m1d 62.5, m1s 67.5, m2d 50, m2s 55 ; at e=0: 80, 60, 50, 55.333 -> rho = 1 - 6*2/60
    assert v.loc["editability=0", "spearman_default"] == pytest.approx(0.8)
    assert v.loc["default", "pearson_elo"] == pytest.approx(sps.pearsonr([62.5, 67.5, 50, 55], elo.values)[0])
    e = res.effects.set_index(["variant", "model"])
    # m1: D = (-5, -10, 0, +20, 0) -> Δ(e) = (100-e)/75*(-15) + e/25*20 = e - 20
    for w in range(0, 41, 5):
        assert e.loc[(f"editability={w}", "m1"), "delta"] == pytest.approx(w - 20)
    assert e.loc[("default", "m1"), "delta"] == pytest.approx(5.0)  # raw Q delta -15 + 20
    assert e.loc[("equal", "m1"), "delta"] == pytest.approx(20 * (-5 / 20 - 10 / 30 + 20 / 25))
    assert e.loc[("default", "m1"), "sign_change_w_editability"] == pytest.approx(20.0)
    assert not e.loc[("editability=10", "m1"), "ci_contains_zero"]  # every task's diff is -10
    # m2 gains on every axis: never changes sign
    assert np.isnan(e.loc[("default", "m2"), "sign_change_w_editability"])


def test_sign_change_closed_form():
    assert st.sign_change_editability(dict(zip(RUBRIC_AXES, (-5, -10, 0, 20, 0)))) == pytest.approx(20.0)
    # Δ(e) = (100-e)/75*7.5 + e/25*(-5) = 10 - 0.3e  -> e* = 33.33
    assert st.sign_change_editability(dict(zip(RUBRIC_AXES, (7.5, 0, 0, -5, 0)))) == pytest.approx(100 / 3)
    assert np.isnan(st.sign_change_editability(dict(zip(RUBRIC_AXES, (0, 0, 0, 0, 0)))))


def test_tables_without_any_judge_score_are_empty_or_say_why():
    """Before the first judge run: empty tables (never a crash), and a clear reason where a table needs a judge."""
    empty = pd.DataFrame(
        [],
        columns=[
            "artifact_id",
            "configuration",
            "model",
            "harness",
            "workflow",
            "task_id",
            "field",
            "judge",
            "judge_family",
            "run",
            "gate_passed",
            "cap",
            "quality",
            "score",
            *st.AXES,
        ],
    )
    empty = empty.astype({c: float for c in ["cap", "quality", "score", *st.AXES]})
    assert st.config_scores(empty, resamples=50).empty
    assert st.paired_effects(empty, resamples=50).empty
    with pytest.raises(ValueError, match="no judge scores yet"):
        st.judge_families(empty)
    with pytest.raises(ValueError, match="no judge scores yet"):
        st.weight_sensitivity(empty, resamples=50)


@pytest.mark.parametrize("kind", ["pearson", "spearman", "kendall"])
def test_a_correlation_is_scipys_and_undefined_ones_are_nan_without_a_warning(kind):
    import warnings

    x, y = [1.0, 2.0, 4.0, 3.0, 7.0], [2.0, 1.0, 5.0, 6.0, 9.0]
    expected = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}[kind](x, y)
    assert st.correlation(kind, x, y) == (expected.statistic, expected.pvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's ConstantInputWarning would fail here
        for first, second in (([3.0, 3.0, 3.0], [1.0, 2.0, 3.0]), ([1.0, 2.0], [5.0, 5.0]), ([1.0], [2.0])):
            assert np.isnan(st.correlation(kind, first, second)).all()


def test_an_effort_sweep_pairs_each_effort_with_its_own_counterpart_by_hand():
    """Two efforts of one (model, harness): each effort's specialized pairs with that effort's direct only. The
    tiny design at effort "high" beside a copy at "low" whose specialized scores are 10 lower."""
    high = tiny().assign(reasoning_effort="high", attributes="")
    low = high.copy()
    low["configuration"] = low["configuration"] + "-low"
    low["reasoning_effort"] = "low"
    low.loc[low["workflow"] == "specialized", "score"] -= 10
    t = st.paired_effects(pd.concat([high, low], ignore_index=True), resamples=100)
    r1 = t[t.run == 1].set_index("reasoning_effort")
    # high as in test_paired_effects_by_hand: 20, 40, 0; low: 10, 30, -10
    assert r1.loc["high", "delta"] == 20.0 and r1.loc["low", "delta"] == 10.0
    assert "differing only in workflow" in t.attrs["notes"][0]


def test_identical_designs_are_left_out_with_a_note_instead_of_an_error():
    twin = tiny().assign(reasoning_effort="high", attributes="")
    copy = twin[twin["workflow"] == "direct"].assign(configuration="m-h-direct-copy")
    t = st.paired_effects(pd.concat([twin, copy], ignore_index=True), resamples=50)
    assert t.empty
    assert any("m-h-direct, m-h-direct-copy" in note for note in t.attrs["notes"])
    assert any("No two configurations differ only in workflow" in note for note in t.attrs["notes"])


def test_a_design_without_workflow_pairs_says_so():
    only_direct = tiny().assign(reasoning_effort="high", attributes="")
    only_direct = only_direct[only_direct["workflow"] == "direct"]
    t = st.paired_effects(only_direct, resamples=50)
    assert t.empty and any("this design has no such effect" in note for note in t.attrs["notes"])
