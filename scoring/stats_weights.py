"""Rubric-weight sensitivity of :mod:`scoring.stats` (REFERENCE 4, Table 21): alternative weight
vectors (the paper's twelve — the editability sweep and three named vectors — and a few of this app's),
rescoring records under them, the editability weight at which a paired effect changes sign, and
:func:`weight_sensitivity`, which reports per variant the rank agreement with the default weights and
with Elo and every workflow effect with its bootstrap CI, under one judge run (ReFigBench's: run 1) or
each task's mean over runs. Pure: no Django, DRF or Celery."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpus.protocol import PAPER_JUDGE_RUN, RUBRIC_MAXIMA, SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED
from scoring.stats_audit import judge_run_rows, run_used_note
from scoring.stats_base import (
    AXES,
    NO_JUDGE_SCORES,
    NoJudgeScores,
    _bootstrap_ci,
    _task_universe,
    correlation,
    final_score,
)
from scoring.stats_paired import _design_columns, _twins

SENSITIVITY_COLUMNS = [
    "variant",
    *(f"w_{a}" for a in AXES),
    "spearman_default",
    "pearson_elo",
    "paper",  # one of ReFigBench's twelve vectors (Table 21)
]
SENSITIVITY_EFFECT_COLUMNS = [
    "variant",
    "model",
    "harness",
    "delta",
    "ci_low",
    "ci_high",
    "ci_contains_zero",
    "sign_change_w_editability",
]
# After the contract columns: n, capped_tasks, paper, then any design attributes beyond model and harness.


DEFAULT_WEIGHTS: dict[str, float] = {a: float(RUBRIC_MAXIMA[a]) for a in AXES}
EDITABILITY_SWEEP: tuple[int, ...] = tuple(range(0, 41, 5))
# ReFigBench Table 21's named vectors beside the sweep (REFERENCE 10): E down from 25 to 15, the 10 points to S or to
# V; and all axes equal. T/S/L/E/V in rubric points, each summing to 100.
PAPER_NAMED_VARIANTS: dict[str, dict[str, float]] = {
    name: dict(zip(AXES, map(float, weights), strict=True))
    for name, weights in (
        ("e15-surplus-to-structure", (20, 40, 15, 15, 10)),
        ("e15-surplus-to-visual", (20, 30, 15, 15, 20)),
        ("uniform", (20, 20, 20, 20, 20)),
    )
}
# The paper's twelve: the sweep 0, 5, …, 40 (the default 25 among them), then the named three.
PAPER_VARIANTS: tuple[str, ...] = (*(f"editability={e}" for e in EDITABILITY_SWEEP), *PAPER_NAMED_VARIANTS)
# Named variants: the paper's, then this app's extras (each sums to 100).
NAMED_WEIGHT_VARIANTS: dict[str, dict[str, float]] = {
    **PAPER_NAMED_VARIANTS,
    "default": DEFAULT_WEIGHTS,
    "equal": {a: 20.0 for a in AXES},
    "no-editability": {
        "text": 100 * 20 / 75,
        "semantic_structure": 100 * 30 / 75,
        "layout": 100 * 15 / 75,
        "editability": 0.0,
        "visual_detail": 100 * 10 / 75,
    },
    "structure-heavy": {
        "text": 15.0,
        "semantic_structure": 45.0,
        "layout": 10.0,
        "editability": 20.0,
        "visual_detail": 10.0,
    },
    "text-heavy": {"text": 35.0, "semantic_structure": 25.0, "layout": 12.5, "editability": 20.0, "visual_detail": 7.5},
}


def editability_weights(w_e: float) -> dict[str, float]:
    """Editability weight w_e; the remaining 100 − w_e split in the default proportions
    T20 : S30 : L15 : V10."""
    rest = {a: RUBRIC_MAXIMA[a] for a in AXES if a != "editability"}
    total = sum(rest.values())
    w = {a: (100.0 - w_e) * v / total for a, v in rest.items()}
    w["editability"] = float(w_e)
    return {a: w[a] for a in AXES}


def weight_variants() -> dict[str, dict[str, float]]:
    variants = {f"editability={e}": editability_weights(e) for e in EDITABILITY_SWEEP}
    variants.update(NAMED_WEIGHT_VARIANTS)
    return variants


def rescore(frame: pd.DataFrame, weights: Mapping[str, float]) -> np.ndarray:
    """s' = g · min(Σ_a w_a · sub_a / max_a, c) row by row (NaN stays NaN)."""
    q = sum(float(weights[a]) * frame[a].to_numpy(dtype=float) / RUBRIC_MAXIMA[a] for a in AXES)
    return final_score(frame["gate_passed"].to_numpy(), q, frame["cap"].to_numpy())


def sign_change_editability(d_axes: Mapping[str, float]) -> float:
    """Editability weight e ∈ [0, 100] at which a paired delta changes sign along the sweep.

    Ignoring the cap's min, s' is linear in the weights, so along w_E = e, w_a = (100 − e)·max_a/75
    (a ≠ E) the paired delta is Δ(e) = (100 − e)/75 · Σ_{a≠E} D_a + e/25 · D_E, with D_a the mean
    subscore delta in rubric points. Δ(e) = A + B·e with A = (100/75)·Σ_{a≠E} D_a and
    B = D_E/25 − Σ_{a≠E} D_a/75, so e* = −A/B; NaN when B = 0 or e* ∉ [0, 100]. Artifacts whose
    rescored Q exceeds their cap (50) break linearity; :func:`weight_sensitivity` reports how many
    paired tasks are capped (``capped_tasks``) so the reader can judge."""
    rest = sum(float(d_axes[a]) for a in AXES if a != "editability")
    d_e = float(d_axes["editability"])
    total = sum(RUBRIC_MAXIMA[a] for a in AXES if a != "editability")
    a_ = 100.0 * rest / total
    b_ = d_e / RUBRIC_MAXIMA["editability"] - rest / total
    if b_ == 0 or not np.isfinite(b_):
        return float("nan")
    e = -a_ / b_
    return float(e) if 0.0 <= e <= 100.0 else float("nan")


@dataclass(frozen=True)
class WeightSensitivity:
    """Two export tables: ``variants`` (weight-sensitivity) and ``effects``
    (weight-sensitivity-effects)."""

    variants: pd.DataFrame
    effects: pd.DataFrame


def weight_sensitivity(
    scores: pd.DataFrame,
    *,
    elo: pd.Series | None = None,
    judge: str | None = None,
    run: int | str = PAPER_JUDGE_RUN,
    variants: Mapping[str, Mapping[str, float]] | None = None,
    direct: str = "direct",
    specialized: str = "specialized",
    resamples: int = SCORE_BOOTSTRAP_RESAMPLES,
    seed: int = SCORE_BOOTSTRAP_SEED,
) -> WeightSensitivity:
    """Rescore under alternative weight vectors (default: the editability sweep 0…40 step 5 plus
    :data:`NAMED_WEIGHT_VARIANTS`). Scores of ``judge`` (default: first judge in sorted order) and
    judge run ``run`` (default: run 1, as ReFigBench's Table 21; "mean": each task's mean over runs)
    are rescored per record, then averaged per task. Per variant: Spearman ρ of the
    configuration means to the default weights' means, Pearson r to ``elo`` (Series
    configuration → Elo) if given; every workflow paired effect with its bootstrap CI, a
    ``ci_contains_zero`` marker and :func:`sign_change_editability` (the same for every variant:
    it is a property of the effect)."""
    if scores["judge"].dropna().empty:
        raise NoJudgeScores(NO_JUDGE_SCORES)
    chosen = judge if judge is not None else sorted(scores["judge"].dropna().unique())[0]
    of_judge = scores[scores["judge"] == chosen]
    runs = list(of_judge["run"].dropna().unique())
    note = run_used_note(chosen, run, runs)
    base = judge_run_rows(of_judge, run)
    if base.empty:
        raise NoJudgeScores(note)
    universe = _task_universe(scores)
    variants = dict(variants) if variants is not None else weight_variants()
    design = _design_columns(base, "workflow")
    keep = ["configuration", *design, "workflow", "task_id", "gate_passed", "cap", *AXES]
    work = base[keep].copy()
    for name, w in variants.items():
        if abs(sum(w.values()) - 100.0) > 1e-6:
            raise ValueError(f"weights of variant {name!r} sum to {sum(w.values())}, not 100")
        work[f"s::{name}"] = rescore(base, w)
    work["s::__default"] = rescore(base, DEFAULT_WEIGHTS)
    work["q::__default"] = sum(base[a].to_numpy(float) for a in AXES)
    score_cols = [c for c in work.columns if c.startswith(("s::", "q::"))]
    per_task = (
        work.groupby(["configuration", "task_id"], sort=True)
        .agg(
            {
                **{c: "mean" for c in [*score_cols, *AXES]},
                **{c: "first" for c in [*design, "workflow", "cap"]},
            }
        )
        .reset_index()
    )
    cfg_means = per_task.groupby("configuration", sort=True)[score_cols].mean()

    var_rows = []
    for name, w in variants.items():
        col = f"s::{name}"
        rho = correlation("spearman", cfg_means[col], cfg_means["s::__default"])[0]
        r_elo = np.nan
        if elo is not None:
            joined = pd.concat([cfg_means[col], elo.rename("elo")], axis=1, join="inner").dropna()
            r_elo = correlation("pearson", joined[col], joined["elo"])[0]
        var_rows.append(
            {
                "variant": name,
                **{f"w_{a}": float(w[a]) for a in AXES},
                "spearman_default": float(rho),
                "pearson_elo": float(r_elo),
                "paper": name in PAPER_VARIANTS,
            }
        )
    variant_table = pd.DataFrame(var_rows, columns=SENSITIVITY_COLUMNS)

    on = [*design, "task_id"]
    vcols = [f"s::{n}" for n in variants]
    # Each side keyed by its design and task; configurations identical in every attribute pair with nothing.
    sides = [per_task[per_task["workflow"] == value] for value in (direct, specialized)]
    left, right = (side[~side["configuration"].isin(_twins(side, design))].set_index(on) for side in sides)
    idx = left.index.intersection(right.index)
    idx = idx[left.loc[idx, "s::__default"].notna().to_numpy() & right.loc[idx, "s::__default"].notna().to_numpy()]
    diffs = (right.loc[idx, [*vcols, *AXES]] - left.loc[idx, [*vcols, *AXES]]).reset_index()
    capped = (left.loc[idx, "q::__default"] > left.loc[idx, "cap"]).to_numpy() | (
        right.loc[idx, "q::__default"] > right.loc[idx, "cap"]
    ).to_numpy()
    diffs["_capped"] = capped
    diffs = diffs.sort_values(on, kind="stable")
    eff_rows = []
    for design_values, block in diffs.groupby(design, sort=True):
        described = dict(zip(design, design_values, strict=True))
        d_axes = block[list(AXES)].mean()
        cross = sign_change_editability(d_axes)
        long = block.melt(id_vars=["task_id"], value_vars=vcols, var_name="_v", value_name="_d")
        cis = _bootstrap_ci(long, ["_v"], "_d", universe, resamples, seed).set_index("_v")
        for name in variants:
            col = f"s::{name}"
            low, high = cis.loc[col, "ci_low"], cis.loc[col, "ci_high"]
            eff_rows.append(
                {
                    "variant": name,
                    **described,
                    "delta": float(block[col].mean()),
                    "ci_low": low,
                    "ci_high": high,
                    "ci_contains_zero": bool(low <= 0 <= high),
                    "sign_change_w_editability": cross,
                    "n": len(block),
                    "capped_tasks": int(block["_capped"].sum()),
                    "paper": name in PAPER_VARIANTS,
                }
            )
    extra = [c for c in design if c not in SENSITIVITY_EFFECT_COLUMNS]
    effects = pd.DataFrame(eff_rows, columns=[*SENSITIVITY_EFFECT_COLUMNS, "n", "capped_tasks", "paper", *extra])
    paper = (
        "paper marks ReFigBench Table 21's twelve vectors (the editability sweep 0, 5, ..., 40 and "
        f"{', '.join(PAPER_NAMED_VARIANTS)}); the other rows are this app's extras."
    )
    variant_table.attrs["notes"] = [note, paper]
    effects.attrs["notes"] = [note, paper]
    return WeightSensitivity(variants=variant_table, effects=effects)
