"""Plots drawn from the same DataFrames as the tables. Pure (matplotlib, no Django)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}


def _encode(figure, fmt: str) -> bytes:
    buffer = io.BytesIO()
    # metadata=None-ish: no software/date stamps, so the bytes depend only on the data.
    metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    figure.savefig(buffer, format=fmt, bbox_inches="tight", dpi=150, metadata=metadata)
    plt.close(figure)
    return buffer.getvalue()


def _error_bars(point, low, high) -> np.ndarray:
    """(2, n) distances from the point to its interval ends, for errorbar(). A point a rounding error outside a
    zero-width interval (1e-12 above it, say) would give a negative distance, which matplotlib refuses: clip to 0."""
    distances = np.vstack(
        [np.asarray(point, float) - np.asarray(low, float), np.asarray(high, float) - np.asarray(point, float)]
    )
    return np.clip(distances, 0.0, None)


def _empty(message: str, fmt: str) -> bytes:
    figure, axis = plt.subplots(figsize=(6, 1.5))
    axis.axis("off")
    axis.text(0.5, 0.5, message, ha="center", va="center")
    return _encode(figure, fmt)


def elo_plot(elo: pd.DataFrame, configurations: pd.DataFrame, fmt: str = "png") -> bytes:
    """Elo with 95 % CI bars; the workflows of each design (model, harness and whatever else varies) side by side
    (paper Fig. 5)."""
    if elo.empty:
        return _empty("No human comparisons yet", fmt)
    meta = (
        configurations.set_index("configuration")
        if "configuration" in configurations
        else configurations.set_index("slug")
    )
    held = [c for c in ("model", "harness", "reasoning_effort", "attributes") if c in meta]
    frame = elo.join(meta[[*held, "workflow", "label"]], on="configuration")
    # A design's label names only the attributes that vary across the plotted configurations.
    varying = [c for c in held if frame[c].nunique(dropna=False) > 1] or held[:1]
    frame["group"] = frame[varying].fillna("").astype(str).agg(" · ".join, axis=1)
    unknown = frame[varying].isna().all(axis=1)  # a configuration the frame does not describe: its own name
    frame.loc[unknown, "group"] = frame.loc[unknown, "configuration"]
    twins = frame.duplicated(["group", "workflow"], keep=False)
    frame.loc[twins, "group"] = frame.loc[twins, "configuration"]  # identical designs: one column each
    order = frame.groupby("group")["elo"].max().sort_values(ascending=False).index.tolist()
    workflows = sorted(frame["workflow"].fillna("").unique())
    width = 0.8 / max(len(workflows), 1)
    figure, axis = plt.subplots(figsize=(max(6, 1.3 * len(order)), 4.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for w_index, workflow in enumerate(workflows):
        part = frame[frame["workflow"].fillna("") == workflow].set_index("group").reindex(order)
        x = np.arange(len(order)) + (w_index - (len(workflows) - 1) / 2) * width
        err = _error_bars(part["elo"], part["ci_low"], part["ci_high"])
        axis.errorbar(
            x, part["elo"], yerr=err, fmt="o", capsize=4, color=colours[w_index % len(colours)], label=workflow or "—"
        )
    axis.axhline(1000, color="#999", lw=0.8, ls="--")
    axis.set_xticks(np.arange(len(order)), order, rotation=20, ha="right")
    axis.set_ylabel("Bradley–Terry Elo (95 % cluster-bootstrap CI)")
    axis.set_title("Human preference Elo by configuration")
    axis.legend(title="workflow", frameon=False)
    axis.grid(axis="y", alpha=0.3)
    return _encode(figure, fmt)


def agreement_plot(margin: pd.DataFrame, human_baseline: float | None, fmt: str = "png") -> bytes:
    """Direction agreement by |margin| bucket with CIs, one series per run; human–human line."""
    if margin.empty:
        return _empty("No judged comparisons yet", fmt)
    figure, axis = plt.subplots(figsize=(7, 4))
    buckets = [b for b in margin["bucket"].unique()]
    for index, ((judge, run), group) in enumerate(margin.groupby(["judge", "run"], sort=True)):
        group = group.set_index("bucket").reindex(buckets)
        x = np.arange(len(buckets)) + (index - 0.5) * 0.08
        err = _error_bars(group["agreement"], group["ci_low"], group["ci_high"])
        axis.errorbar(x, group["agreement"], yerr=np.nan_to_num(err), fmt="o-", capsize=3, label=f"{judge} · run {run}")
    if human_baseline is not None and np.isfinite(human_baseline):
        axis.axhline(human_baseline, color="#333", ls="--", lw=1, label=f"human–human {human_baseline:.1%}")
    axis.axhline(0.5, color="#bbb", lw=0.8)
    axis.set_xticks(np.arange(len(buckets)), buckets)
    axis.set_xlabel("|judge margin| (points)")
    axis.set_ylabel("agreement with the human direction")
    axis.set_ylim(0, 1)
    axis.set_title("Judge–human direction agreement by margin")
    axis.legend(frameon=False, fontsize=8)
    axis.grid(axis="y", alpha=0.3)
    return _encode(figure, fmt)


def score_distribution_plot(scores: pd.DataFrame, fmt: str = "png") -> bytes:
    """Final-score distribution per configuration (mean over runs per task)."""
    if scores.empty or scores["score"].notna().sum() == 0:
        return _empty("No judge scores yet", fmt)
    per_task = scores.groupby(["configuration", "task_id"], sort=False)["score"].mean().reset_index()
    order = list(dict.fromkeys(scores["configuration"]))
    data = [per_task.loc[per_task["configuration"] == c, "score"].dropna().to_numpy() for c in order]
    figure, axis = plt.subplots(figsize=(max(6, 0.9 * len(order)), 4))
    axis.boxplot(data, showmeans=True)
    axis.set_xticks(np.arange(1, len(order) + 1), order, rotation=25, ha="right")
    axis.set_ylabel("final score s = g·min(Q, c)")
    axis.set_ylim(-2, 102)
    axis.set_title("Score distribution per configuration")
    return _encode(figure, fmt)


def paired_effects_plot(effects: pd.DataFrame, fmt: str = "png") -> bytes:
    if effects.empty:
        return _empty("No paired effects yet", fmt)
    frame = effects.copy()
    frame["name"] = (
        frame["model"]
        + " · "
        + frame["harness"]
        + " · "
        + frame["judge"].astype(str)
        + " run "
        + frame["run"].astype(str)
    )
    figure, axis = plt.subplots(figsize=(7, max(2.5, 0.35 * len(frame))))
    y = np.arange(len(frame))
    axis.errorbar(
        frame["delta"],
        y,
        xerr=_error_bars(frame["delta"], frame["ci_low"], frame["ci_high"]),
        fmt="o",
        capsize=3,
    )
    axis.axvline(0, color="#999", lw=0.8)
    axis.set_yticks(y, frame["name"])
    axis.set_xlabel("Δ specialized − direct (points, 95 % paired bootstrap CI)")
    axis.set_title("Workflow effect per model")
    return _encode(figure, fmt)


def judge_runs_plot(runs: pd.DataFrame, fmt: str = "png") -> bytes:
    """Each configuration's mean under every judge run, with the ICC(2,1) across runs in the label."""
    run_columns = [c for c in runs.columns if c.startswith("run_")] if not runs.empty else []
    if not run_columns:
        return _empty("No repeated judge runs yet", fmt)
    figure, axis = plt.subplots(figsize=(max(6, 0.9 * len(runs)), 4))
    x = np.arange(len(runs))
    for offset, column in enumerate(run_columns):
        axis.plot(x + (offset - (len(run_columns) - 1) / 2) * 0.12, runs[column], "o", label=column.replace("_", " "))
    labels = [
        f"{c}\nICC {icc:.2f}" if np.isfinite(icc) else c
        for c, icc in zip(runs["configuration"] + " · " + runs["judge"].astype(str), runs["icc_2_1"])
    ]
    axis.set_xticks(x, labels, rotation=25, ha="right", fontsize=8)
    axis.set_ylabel("configuration mean score")
    axis.set_title("Judge run agreement: configuration means per run")
    axis.legend(frameon=False)
    axis.grid(axis="y", alpha=0.3)
    return _encode(figure, fmt)


def study_plan_plot(summary: pd.DataFrame, swaps: pd.DataFrame, fmt: str = "png") -> bytes:
    """The planner's curves per vote budget: expected 95 % CI half-width, and P(true order) with each adjacent swap.
    One colour per allocation for the study-wide curves; one colour per pair (and a dash per allocation) for swaps."""
    if summary.empty:
        return _empty("Nothing planned", fmt)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    allocations = list(dict.fromkeys(summary["allocation"]))
    dashes = {a: style for a, style in zip(allocations, (":", "-.", "--"))}
    figure, (width_axis, order_axis) = plt.subplots(1, 2, figsize=(11, 4))
    for n, (allocation, group) in enumerate(summary.groupby("allocation", sort=False)):
        colour = colours[n % len(colours)]
        width_axis.plot(
            group["budget"], group["mean_ci_half_width"], "o-", color=colour, label=f"{allocation}: expected"
        )
        width_axis.plot(
            group["budget"],
            group["empirical_ci_half_width"],
            "x--",
            color=colour,
            label=f"{allocation}: across studies",
        )
        order_axis.plot(
            group["budget"],
            group["order_recovered_probability"],
            "o-",
            lw=2.5,
            color=colour,
            label=f"{allocation}: P(true order)",
        )
    pair_colours = colours[len(allocations) :] or colours
    for n, ((upper, lower), pair) in enumerate(swaps.groupby(["upper", "lower"], sort=False)):
        for allocation, group in pair.groupby("allocation", sort=False):
            order_axis.plot(
                group["budget"],
                group["swap_probability"],
                dashes.get(allocation, ":"),
                lw=1,
                color=pair_colours[n % len(pair_colours)],
                label=f"{allocation}: P({lower} above {upper})",
            )
    width_axis.set_xlabel("votes")
    width_axis.set_ylabel("mean 95 % CI half-width (Elo)")
    width_axis.set_title("Precision")
    width_axis.grid(alpha=0.3)
    width_axis.legend(frameon=False, fontsize=8)
    order_axis.set_xlabel("votes")
    order_axis.set_ylabel("probability")
    order_axis.set_ylim(0, 1)
    order_axis.set_title("Order recovered; adjacent swaps")
    order_axis.grid(alpha=0.3)
    order_axis.legend(frameon=False, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _encode(figure, fmt)


def message_plot(message: str, fmt: str = "png") -> bytes:
    """A plot that says why there is nothing to draw (no votes yet, no judge scores yet)."""
    return _empty(message, fmt)


def coverage_plot(coverage: pd.DataFrame, fmt: str = "png") -> bytes:
    """Counted comparisons per configuration pair (the `coverage` table) as a heatmap, cells annotated `n`, coloured
    by the share of the study's target per pair."""
    if coverage.empty:
        return _empty("No configuration pairs in this study", fmt)
    names = list(dict.fromkeys([*coverage["config_x"], *coverage["config_y"]]))
    index = {name: i for i, name in enumerate(names)}
    k = len(names)
    counts = np.full((k, k), np.nan)
    for row in coverage.itertuples():
        i, j = index[row.config_x], index[row.config_y]
        counts[i, j] = counts[j, i] = row.n
    target = float(coverage["target"].iloc[0]) or 1.0
    figure, axis = plt.subplots(figsize=(max(4.5, 0.7 * k + 2), max(3.5, 0.6 * k + 1.5)))
    image = axis.imshow(np.minimum(counts / target, 1.0), cmap="YlGn", vmin=0, vmax=1)
    for i in range(k):
        for j in range(k):
            if i != j:
                axis.text(j, i, f"{int(counts[i, j])}", ha="center", va="center", fontsize=8)
    axis.set_xticks(range(k), names, rotation=40, ha="right", fontsize=8)
    axis.set_yticks(range(k), names, fontsize=8)
    figure.colorbar(image, ax=axis, label=f"share of target ({int(target)} per pair)")
    axis.set_title("Coverage: counted comparisons per pair")
    return _encode(figure, fmt)
