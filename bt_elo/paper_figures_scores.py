"""The rubric-means figure: each rubric axis's mean per model and harness, the workflows (direct, specialized) side
by side with their 95 % bootstrap CIs, one panel per axis on its own 0…maximum scale. Drawn from the `rubric-means`
table (scoring.stats_rubric) of one judge and run. Pure (matplotlib over DataFrames, no Django)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .plots import _empty, _encode, _error_bars, plt

AXIS_LABELS = {  # the rubric's five axes (REFERENCE 3), in its order
    "text": "text T",
    "semantic_structure": "semantic structure S",
    "layout": "layout L",
    "editability": "editability E",
    "visual_detail": "visual detail V",
}
DESIGN = ("model", "harness", "reasoning_effort")


def rubric_means_data(means: pd.DataFrame) -> pd.DataFrame:
    """The plotted points: per design, workflow and axis the mean and its CI. A design is model · harness, with the
    effort added where the rows' efforts differ; two configurations that would share a design and workflow are shown
    under their own names. Designs in order of first appearance, axes in the rubric's order. One judge and run are
    drawn: given several, the first judge by name and its run "mean" (else its first run)."""
    frame = means.reset_index(drop=True).copy()
    if "judge" in frame and frame["judge"].nunique() > 1:
        frame = frame[frame["judge"] == sorted(frame["judge"].astype(str).unique())[0]]
    if "run" in frame and frame["run"].nunique() > 1:
        runs = frame["run"].astype(str)
        frame = frame[runs == ("mean" if (runs == "mean").any() else runs.iloc[0])]
    held = [c for c in DESIGN if c in frame]
    shown = [c for c in held if c != "reasoning_effort" or frame[c].nunique(dropna=False) > 1]
    frame["design"] = frame[shown].fillna("").astype(str).agg(" · ".join, axis=1) if shown else frame["configuration"]
    twins = frame.duplicated(["design", "workflow", "axis"], keep=False)
    frame.loc[twins, "design"] = frame.loc[twins, "configuration"]
    order = {axis: i for i, axis in enumerate(AXIS_LABELS)}
    frame["_axis"] = frame["axis"].map(order)
    designs = {d: i for i, d in enumerate(dict.fromkeys(frame["design"]))}
    frame["_design"] = frame["design"].map(designs)
    frame = frame.sort_values(["_design", "workflow", "_axis"], kind="stable")
    columns = ["design", "workflow", "axis", "maximum", "mean", "ci_low", "ci_high"]
    return frame[columns].reset_index(drop=True)


def rubric_means_plot(means: pd.DataFrame, fmt: str = "pdf") -> bytes:
    if means.empty:
        return _empty("No rubric scores yet", fmt)
    data = rubric_means_data(means)
    designs = list(dict.fromkeys(data["design"]))
    workflows = sorted(data["workflow"].fillna("").astype(str).unique())
    axes = [a for a in AXIS_LABELS if a in set(data["axis"])]
    figure, panels = plt.subplots(
        1, len(axes), figsize=(2.6 * len(axes) + 1.5, max(2.8, 0.5 * len(designs) + 1.4)), sharey=True, squeeze=False
    )
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.7 / max(len(workflows), 1)
    y = np.arange(len(designs))
    for panel, axis_name in zip(panels[0], axes):
        part = data[data["axis"] == axis_name]
        for index, workflow in enumerate(workflows):
            rows = part[part["workflow"].fillna("").astype(str) == workflow].set_index("design").reindex(designs)
            offset = (index - (len(workflows) - 1) / 2) * step
            panel.errorbar(
                rows["mean"],
                y + offset,
                xerr=np.nan_to_num(_error_bars(rows["mean"], rows["ci_low"], rows["ci_high"])),
                fmt="o",
                capsize=3,
                color=colours[index % len(colours)],
                label=workflow or "—",
            )
        maximum = float(part["maximum"].max())
        panel.set_xlim(0, maximum * 1.02)
        panel.set_title(f"{AXIS_LABELS[axis_name]} (max {maximum:g})", fontsize=9)
        panel.grid(axis="x", alpha=0.3)
    panels[0][0].set_yticks(y, designs)
    panels[0][0].invert_yaxis()
    panels[0][0].legend(title="workflow", frameon=False, fontsize=8)
    figure.supxlabel("mean subscore (rubric points, 95 % bootstrap CI over tasks)")
    figure.suptitle("Rubric means per model and harness, direct and specialized side by side")
    return _encode(figure, fmt)
