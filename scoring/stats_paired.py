"""Paired effects of :mod:`scoring.stats`: ``paired-effects`` (the workflow effect, specialized −
direct) and ``harness-effects`` (harness_b − harness_a for a model run in several harnesses). Both
pair configurations equal in every other design attribute task by task (:func:`_pair`; configurations
identical in every attribute pair with nothing and are named in the notes), summarise the differences
(mean Δ, wins / ties / losses, subscore deltas, unpaired count) and bootstrap them with the draws every
table shares. Pure: no Django, DRF or Celery."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from agents.configurations import DESIGN_FIELDS
from corpus.protocol import SCORE_BOOTSTRAP_RESAMPLES, SCORE_BOOTSTRAP_SEED
from scoring.stats_base import AXES, _bootstrap_ci, _task_universe
from scoring.stats_scores import _run_order, _with_mean_runs

DELTA_AXES: tuple[str, ...] = tuple(f"d_{a}" for a in AXES)
# Two scores closer than this are a tie (exact for integer rubric points; absorbs float noise
# in means over runs).
TIE_TOLERANCE = 1e-9

PAIRED_COLUMNS = [
    "model",
    "harness",
    "judge",
    "run",
    "n",
    "delta",
    "ci_low",
    "ci_high",
    "wins",
    "ties",
    "losses",
    *DELTA_AXES,
]
HARNESS_COLUMNS = [
    "model",
    "workflow",
    "harness_a",
    "harness_b",
    "judge",
    "run",
    "n",
    "delta",
    "ci_low",
    "ci_high",
    "wins",
    "ties",
    "losses",
]


def _design_columns(frame: pd.DataFrame, varied: str) -> list[str]:
    """The design attributes a paired comparison holds equal: every one the frame has except the one it varies."""
    return [c for c in DESIGN_FIELDS if c != varied and c in frame.columns]


def _twins(part: pd.DataFrame, design: list[str]) -> set[str]:
    """Configurations of ``part`` identical to another one in every design attribute: no pairing can tell them apart."""
    designs = part.drop_duplicates("configuration")
    return {str(c) for c in designs.loc[designs.duplicated(design, keep=False), "configuration"]}


def _pair(both: pd.DataFrame, side: str, a: str, b: str) -> tuple[pd.DataFrame, list[str]]:
    """Join side a and side b task by task among configurations equal in every other design attribute (+ judge,
    run); diff = b − a. Configurations identical in every attribute cannot be told apart, so they pair with nothing:
    their slugs come back as the second value, for the table's note."""
    group = _design_columns(both, side)
    cols = ["score", *AXES]
    on = [*group, "judge", "run", "task_id"]
    sides = []
    ambiguous: set[str] = set()
    for value in (a, b):
        part = both[both[side] == value][[*on, *cols, "configuration"]]
        twins = _twins(part, group)
        ambiguous |= twins
        sides.append(part[~part["configuration"].astype(str).isin(twins)])
    merged = sides[0].merge(sides[1], on=on, how="outer", suffixes=("_a", "_b"))
    # Only comparisons where both sides exist at all (a workflow run in one harness only is no pair).
    gkeys = [merged[k] for k in on[:-1]]
    has_a = merged["configuration_a"].notna().groupby(gkeys, sort=False, observed=True).transform("any")
    has_b = merged["configuration_b"].notna().groupby(gkeys, sort=False, observed=True).transform("any")
    merged = merged[has_a & has_b].copy()
    merged["diff"] = merged["score_b"] - merged["score_a"]
    for ax in AXES:
        merged[f"d_{ax}"] = merged[f"{ax}_b"] - merged[f"{ax}_a"]
    return merged, sorted(ambiguous)


def _pairing_notes(
    scores: pd.DataFrame, side: str, a: str, b: str, merged: pd.DataFrame, twins: list[str]
) -> list[str]:
    """What a paired table compares, over which configurations, and what it leaves out."""
    held = ", ".join(c.replace("_", " ") for c in _design_columns(scores, side))
    notes = [f"{side} effect {b} − {a}, pairing configurations equal in {held} and differing only in {side}."]
    paired = set(merged["configuration_a"].dropna()) | set(merged["configuration_b"].dropna())
    candidates = set(scores.loc[scores[side].isin([a, b]), "configuration"].dropna())
    if not paired:
        notes.append(f"No two configurations differ only in {side} ({a} against {b}): this design has no such effect.")
    elif candidates - paired:
        notes.append(f"Without a counterpart, not in this table: {', '.join(sorted(map(str, candidates - paired)))}.")
    if twins:
        notes.append(f"Identical in every attribute, so not pairable: {', '.join(twins)}.")
    return notes


def _summarise_pairs(
    merged: pd.DataFrame, keys: list[str], universe: pd.Index, resamples: int, seed: int
) -> pd.DataFrame:
    paired_ok = merged["diff"].notna()
    unpaired = (~paired_ok).groupby([merged[k] for k in keys], sort=False).sum()
    present = merged[paired_ok]
    d = present["diff"]
    by = [present[k] for k in keys]
    table = pd.DataFrame(
        {
            "n": d.groupby(by, sort=False).size(),
            "delta": d.groupby(by, sort=False).mean(),
            "wins": (d > TIE_TOLERANCE).groupby(by, sort=False).sum(),
            "ties": (d.abs() <= TIE_TOLERANCE).groupby(by, sort=False).sum(),
            "losses": (d < -TIE_TOLERANCE).groupby(by, sort=False).sum(),
        }
    )
    table = table.join(present.groupby(keys, sort=False)[list(DELTA_AXES)].mean())
    table = table.reindex(unpaired.index)
    for c in ("n", "wins", "ties", "losses"):
        table[c] = table[c].fillna(0).astype(int)
    table["unpaired"] = unpaired.astype(int)
    table = table.reset_index()
    cis = _bootstrap_ci(present, keys, "diff", universe, resamples, seed)
    return table.merge(cis, on=keys, how="left")


def paired_effects(
    scores: pd.DataFrame,
    *,
    direct: str = "direct",
    specialized: str = "specialized",
    resamples: int = SCORE_BOOTSTRAP_RESAMPLES,
    seed: int = SCORE_BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Workflow effect per (model, harness, judge, run): Δ = mean over tasks of
    s(specialized) − s(direct) on tasks with a record on both sides (``unpaired`` counts the
    others), paired-bootstrap CI (one index draw applied to both sides = to the differences),
    wins / ties / losses from the specialized side, per-subscore mean deltas ``d_<axis>``."""
    both = _with_mean_runs(scores)
    merged, twins = _pair(both, "workflow", direct, specialized)
    design = _design_columns(both, "workflow")
    keys = [*design, "judge", "run"]
    table = _summarise_pairs(merged, keys, _task_universe(scores), resamples, seed)
    extra = [c for c in design if c not in PAIRED_COLUMNS]
    table = _run_order(table[[*PAIRED_COLUMNS, *extra, "unpaired"]], keys)
    table.attrs["notes"] = _pairing_notes(scores, "workflow", direct, specialized, merged, twins)
    return table


def harness_effects(
    scores: pd.DataFrame,
    *,
    harnesses: Sequence[str] | None = None,
    resamples: int = SCORE_BOOTSTRAP_RESAMPLES,
    seed: int = SCORE_BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """Harness effect for every model run in two (or more) harnesses, within each workflow:
    Δ = s(harness_b) − s(harness_a), paired over tasks like :func:`paired_effects`. Harness
    order is ``harnesses`` if given, else alphabetical; every ordered pair a before b."""
    both = _with_mean_runs(scores)
    order = list(harnesses) if harnesses is not None else sorted(both["harness"].dropna().unique())
    rank = {h: i for i, h in enumerate(order)}
    design = _design_columns(both, "harness")
    extra = [c for c in design if c not in HARNESS_COLUMNS]
    held = ", ".join(c.replace("_", " ") for c in design)
    notes = [f"harness effect harness_b − harness_a, pairing configurations equal in {held}."]
    parts = []
    for _model, sub in both.groupby("model", sort=True, observed=True):
        present = sorted((h for h in sub["harness"].unique() if h in rank), key=rank.get)
        for i, ha in enumerate(present):
            for hb in present[i + 1 :]:
                merged, twins = _pair(sub, "harness", ha, hb)
                if twins:
                    notes.append(f"Identical in every attribute, so not pairable: {', '.join(twins)}.")
                if merged.empty:
                    continue
                merged["harness_a"], merged["harness_b"] = ha, hb
                parts.append(merged)
    if not parts:
        table = pd.DataFrame(columns=[*HARNESS_COLUMNS, *extra, "unpaired"])
        table.attrs["notes"] = [*notes, "No model was run in two harnesses with everything else equal."]
        return table
    keys = [*design, "harness_a", "harness_b", "judge", "run"]
    table = _summarise_pairs(pd.concat(parts, ignore_index=True), keys, _task_universe(scores), resamples, seed)
    table = _run_order(table[[*HARNESS_COLUMNS, *extra, "unpaired"]], keys)
    table.attrs["notes"] = notes
    return table
