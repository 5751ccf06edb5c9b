"""Benchmark: scoring.stats at the paper's scale against a plain groupby + Python-loop bootstrap.

10 configurations (4 models × 2 workflows + 1 model in a second harness × 2 workflows) ×
1,000 tasks × 3 runs × 2 judge families = 60,000 score rows. The baseline is what a user would
write by hand: pandas groupby for the point statistics, and for each group a Python loop over
resamples drawing indices and averaging with numpy. It is timed on BASELINE_RESAMPLES resamples
and scaled linearly to 5,000 (the loop is linear in resamples). Run: pytest tests/benchmarks -s
"""

import time

import numpy as np
import pandas as pd

from corpus.protocol import RUBRIC_AXES, RUBRIC_MAXIMA, SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED
from scoring import stats as st

BASELINE_RESAMPLES = 250
MIN_RATIO = 20.0


def make_scores(n_tasks=1000, runs=3, seed=0, missing=0.002):
    rng = np.random.default_rng(seed)
    cfgs = [(f"{m}-h1-{w}", m, "h1", w) for m in ("m1", "m2", "m3", "m4") for w in ("direct", "specialized")]
    cfgs += [(f"m1-h2-{w}", "m1", "h2", w) for w in ("direct", "specialized")]
    tasks = [f"task_{i:04d}" for i in range(n_tasks)]
    fields = rng.choice(["cs.AI", "cs.CL", "cs.CV", "cs.LG"], n_tasks)
    parts = []
    for ci, (cfg, model, harness, wf) in enumerate(cfgs):
        gate = rng.random(n_tasks) > 0.1
        cap = np.where(rng.random(n_tasks) < 0.05, 50, 100)
        skill = rng.random(n_tasks)
        for judge, family in (("judge-a", "fam-a"), ("judge-b", "fam-b")):
            for run in range(1, runs + 1):
                sub = {
                    a: np.where(
                        gate,
                        np.clip(
                            np.round(
                                RUBRIC_MAXIMA[a] * (0.3 + 0.5 * skill + 0.1 * rng.standard_normal(n_tasks) + 0.02 * ci)
                            ),
                            0,
                            RUBRIC_MAXIMA[a],
                        ),
                        0,
                    )
                    for a in RUBRIC_AXES
                }
                q = sum(sub.values()).astype(float)
                miss = gate & (rng.random(n_tasks) < missing)
                s = np.where(miss, np.nan, np.where(gate, np.minimum(q, cap), 0.0))
                d = pd.DataFrame(
                    {
                        "configuration": cfg,
                        "model": model,
                        "harness": harness,
                        "workflow": wf,
                        "task_id": tasks,
                        "field": fields,
                        "judge": judge,
                        "judge_family": family,
                        "run": run,
                        "gate_passed": gate,
                        "cap": cap,
                        "quality": np.where(miss, np.nan, q),
                        "score": s,
                    }
                )
                for a in RUBRIC_AXES:
                    d[a] = np.where(miss, np.nan, sub[a])
                parts.append(d)
    return pd.concat(parts, ignore_index=True)


def _loop_ci(values, resamples, rng):
    means = []
    for _ in range(resamples):
        means.append(values[rng.integers(0, len(values), len(values))].mean())
    return np.percentile(means, [2.5, 97.5])


def baseline_config_scores(scores, resamples):
    rng = np.random.default_rng(SCORE_BOOTSTRAP_SEED)
    m = scores.groupby(["configuration", "judge", "task_id"])["score"].mean().reset_index()
    m["run"] = "mean"
    frame = pd.concat([scores.assign(run=scores["run"].astype(object)), m])
    rows = []
    for key, g in frame.groupby(["configuration", "judge", "run"]):
        v = g["score"].dropna().to_numpy()
        lo, hi = _loop_ci(v, resamples, rng)
        rows.append(
            (*key, len(v), v.mean(), lo, hi, *np.percentile(v, [25, 50, 75]), (v >= 80).mean(), (v < 50).mean())
        )
    return pd.DataFrame(rows)


def baseline_paired_effects(scores, resamples):
    rng = np.random.default_rng(SCORE_BOOTSTRAP_SEED)
    rows = []
    for key, g in scores.groupby(["model", "harness", "judge", "run"]):
        w = g.pivot_table(index="task_id", columns="workflow", values="score").dropna()
        if "direct" not in w or "specialized" not in w:
            continue
        d = (w["specialized"] - w["direct"]).to_numpy()
        lo, hi = _loop_ci(d, resamples, rng)
        rows.append((*key, len(d), d.mean(), lo, hi, (d > 0).sum(), (d == 0).sum(), (d < 0).sum()))
    return pd.DataFrame(rows)


def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def test_scoring_tables_speed():
    scores = make_scores()
    st.bootstrap_indices.cache_clear()
    st._bootstrap_counts.cache_clear()
    audits = scores[(scores.judge == "judge-a") & (scores.run == 1)][
        ["configuration", "task_id", "gate_passed"]
    ].assign(pictures=1, largest_picture_ratio=0.5, capped=False, connectors=2, text_boxes=5, shapes=7)

    ours = {}
    _, ours["config_scores"] = _timed(st.config_scores, scores)
    _, ours["paired_effects"] = _timed(st.paired_effects, scores)
    _, ours["harness_effects"] = _timed(st.harness_effects, scores)
    _, ours["domain_scores"] = _timed(st.domain_scores, scores)
    _, ours["structural_audit"] = _timed(st.structural_audit, audits, scores)
    _, ours["judge_runs"] = _timed(st.judge_runs, scores)
    _, ours["judge_families"] = _timed(st.judge_families, scores)
    _, ours["weight_sensitivity"] = _timed(st.weight_sensitivity, scores)

    scale = SCORE_BOOTSTRAP_RESAMPLES / BASELINE_RESAMPLES
    _, b_cfg = _timed(baseline_config_scores, scores, BASELINE_RESAMPLES)
    _, b_pair = _timed(baseline_paired_effects, scores, BASELINE_RESAMPLES)
    base = {"config_scores": b_cfg * scale, "paired_effects": b_pair * scale}

    print(
        f"\nrows={len(scores)}  resamples={SCORE_BOOTSTRAP_RESAMPLES} "
        f"(baseline timed at {BASELINE_RESAMPLES} resamples, scaled ×{scale:g})"
    )
    for name, t in ours.items():
        print(f"  ours  {name:<20s} {t:8.3f} s")
    for name, t in base.items():
        print(f"  base  {name:<20s} {t:8.3f} s   ratio {t / ours[name]:6.1f}×")
    ratio = sum(base.values()) / (ours["config_scores"] + ours["paired_effects"])
    print(f"  config_scores + paired_effects: ratio {ratio:.1f}×; all eight tables (ours) {sum(ours.values()):.2f} s")
    assert ratio >= MIN_RATIO


def test_score_stability_groups_run_on_every_core():
    """The score-stability table's bootstrap (10 configurations x 1,000 figures, 10,000 draws at each sample size) per
    judge and run: its groups one at a time against a thread per core, same process, same frame; identical tables."""
    import os

    from scoring import stability

    scores = make_scores()
    frame = scores[["task_id", "configuration", "judge", "run", "score"]].dropna(subset=["score"])
    one, alone = _timed(stability.ranking_stability_by, frame, workers=1)
    every, threaded = _timed(stability.ranking_stability_by, frame)
    groups = frame.groupby(["judge", "run"]).ngroups
    print(
        f"\nscore stability, {groups} judge runs: one at a time {alone:.2f} s, a thread per core ({os.cpu_count()}) "
        f"{threaded:.2f} s: {alone / threaded:.2f}x"
    )
    for name in ("stability", "models", "pairs", "full_ranking"):
        pd.testing.assert_frame_equal(getattr(one, name), getattr(every, name), check_exact=True)
