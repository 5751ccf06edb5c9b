"""PPTBench's figures (issue 29), drawn from the registered PPTBench tables (scoring.pptbench_tables): Figure 4
(left), 5, 6 and 11. Pure (matplotlib over DataFrames, no Django); each returns the figure's bytes in `fmt` (png, svg
or pdf) and carries PPTBench's attribution below its lower right corner."""

from __future__ import annotations

import numpy as np
import pandas as pd

from corpus.protocol import PPTBENCH_ATTRIBUTION
from scoring.pptbench_tables import MEAN_EFFORT

from .plots import _empty, _encode, plt

OUTCOME_COLOURS = {"artifact_failure": "#c44e52", "gate_failure": "#dd8452", "pass": "#55a868"}
OUTCOME_LABELS = {"artifact_failure": "artifact failure", "gate_failure": "gate failure", "pass": "pass"}
TOP_SETS = (
    ("top1_exact_probability", "top 1"),
    ("top2_exact_set_probability", "top 2 set"),
    ("top3_exact_set_probability", "top 3 set"),
    ("top5_exact_set_probability", "top 5 set"),
)


def _attributed(figure, fmt: str) -> bytes:
    # Below the axes and their labels (bbox_inches="tight" keeps it in the file).
    figure.text(0.995, -0.03, PPTBENCH_ATTRIBUTION, ha="right", va="top", fontsize=6, color="#666")
    return _encode(figure, fmt)


def gate_rounds_plot(rounds: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Figure 4 (left): how many of the three judge rounds triggered a hard gate, share of every (task, candidate)."""
    if rounds.empty:
        return _empty("No PPTBench scores imported", fmt)
    figure, axis = plt.subplots(figsize=(4.2, 3.2))
    bars = axis.bar(rounds["rounds"].astype(str), rounds["share"], color="#4c72b0")
    for bar, cases, share in zip(bars, rounds["cases"], rounds["share"]):
        axis.annotate(
            f"{share:.1%}\n({cases:,})", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom"
        )
    axis.set_xlabel("judge rounds triggering a hard gate")
    axis.set_ylabel("share of (task, candidate) cases")
    axis.set_ylim(0, min(1.0, float(rounds["share"].max()) * 1.25 + 0.02))
    axis.grid(axis="y", alpha=0.3)
    return _attributed(figure, fmt)


def effort_sweep_plot(sweep: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Figure 5: per family run at several efforts, the mean score, the gate-pass rate and the mean on passed tasks
    against effort (efforts in REFERENCE 10's order)."""
    counts = sweep.groupby("family")["effort"].nunique() if len(sweep) else pd.Series(dtype=int)
    families = sorted(counts[counts > 1].index)
    if not families:
        return _empty("No family run at more than one effort", fmt)
    panels = (
        ("mean_score", "mean score"),
        ("gate_pass_rate", "gate-pass rate (%)"),
        ("mean_on_passed", "mean on passed"),
    )
    # One x position per effort present, lowest first (strings would be placed in order of first appearance).
    efforts = sweep.drop_duplicates("effort").sort_values(["effort_rank", "effort"])["effort"].tolist()
    position = {effort: index for index, effort in enumerate(efforts)}
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for family in families:
        rows = sweep[sweep["family"] == family].sort_values("effort_rank")
        for axis, (column, _) in zip(axes, panels):
            values = rows[column] * (100 if column == "gate_pass_rate" else 1)
            axis.plot(rows["effort"].map(position), values, marker="o", label=family)
    for axis, (_, label) in zip(axes, panels):
        axis.set_xticks(range(len(efforts)), efforts)
        axis.set_title(label)
        axis.set_xlabel("reasoning effort")
        axis.grid(alpha=0.3)
    axes[0].legend(frameon=False, fontsize=7)
    return _attributed(figure, fmt)


def outcomes_plot(outcomes: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Figure 6: per model, stacked shares of artifact failure, gate failure and pass averaged over its efforts, each
    configuration's pass rate marked on the bar."""
    means = outcomes[outcomes["effort"] == MEAN_EFFORT].sort_values("pass", kind="stable")
    if means.empty:
        return _empty("No PPTBench scores imported", fmt)
    figure, axis = plt.subplots(figsize=(7.5, max(3.0, 0.45 * len(means) + 1)))
    y = np.arange(len(means))
    left = np.zeros(len(means))
    for column in ("pass", "gate_failure", "artifact_failure"):
        values = means[column].fillna(0).to_numpy(float) * 100
        axis.barh(y, values, left=left, color=OUTCOME_COLOURS[column], label=OUTCOME_LABELS[column])
        left += values
    configs = outcomes[outcomes["effort"] != MEAN_EFFORT]
    for index, family in enumerate(means["family"]):
        rates = configs.loc[configs["family"] == family, "pass"].to_numpy(float) * 100
        axis.plot(rates, np.full(len(rates), index), "k|", markersize=12, mew=1.5)
    axis.plot([], [], "k|", markersize=10, mew=1.5, label="pass rate of each configuration")
    axis.set_yticks(y, means["family"])
    axis.set_xlim(0, 100)
    axis.set_xlabel("share of tasks (%), averaged over efforts")
    axis.legend(frameon=False, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=4)
    return _attributed(figure, fmt)


def stability_plot(stability: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Figure 11: Kendall τ to the full ranking with its 5–95 % band, and the probability of recovering the exact top
    k, over task sample sizes."""
    if stability.empty:
        return _empty("No PPTBench scores imported", fmt)
    frame = stability.sort_values("sample_size")
    figure, (tau, top) = plt.subplots(1, 2, figsize=(10, 3.6))
    tau.fill_between(
        frame["sample_size"], frame["kendall_tau_p05"], frame["kendall_tau_p95"], alpha=0.25, label="5–95 %"
    )
    tau.plot(frame["sample_size"], frame["kendall_tau_mean"], marker="o", label="mean")
    tau.set_xlabel("tasks sampled")
    tau.set_ylabel("Kendall τ to the full ranking")
    tau.legend(frameon=False)
    tau.grid(alpha=0.3)
    for column, label in TOP_SETS:
        if column in frame:
            top.plot(frame["sample_size"], frame[column], marker="o", label=label)
    top.set_xlabel("tasks sampled")
    top.set_ylabel("probability of the exact top k")
    top.set_ylim(0, 1)
    top.legend(frameon=False)
    top.grid(alpha=0.3)
    return _attributed(figure, fmt)
