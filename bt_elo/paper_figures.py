"""The reproduction bundle's figures that bt_elo/plots.py does not already draw. Pure (matplotlib over DataFrames, no
Django); each returns the figure's bytes in `fmt` (the bundle asks for PDF)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .plots import _empty, _encode, _error_bars, plt

COMPONENTS = (  # the rubric's five axes, as paired-effects names their deltas (REFERENCE 3)
    ("d_text", "text T"),
    ("d_semantic_structure", "semantic structure S"),
    ("d_layout", "layout L"),
    ("d_editability", "editability E"),
    ("d_visual_detail", "visual detail V"),
)


def corpus_fields_plot(fields: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Tasks per source field and their share of the corpus (the `all` row left out)."""
    frame = fields[fields["field"] != "all"]
    if frame.empty:
        return _empty("No corpus figures yet", fmt)
    figure, axis = plt.subplots(figsize=(max(5, 0.9 * len(frame)), 3.6))
    bars = axis.bar(frame["field"], frame["tasks"], color="#4c72b0")
    for bar, share in zip(bars, frame["share"]):
        axis.annotate(f"{share:.1%}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom")
    axis.set_ylabel("tasks (source figures)")
    axis.set_title("Corpus: tasks per source field")
    axis.grid(axis="y", alpha=0.3)
    return _encode(figure, fmt)


def file_size_plot(images: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Image file size spread per field (box: P25–P75, whiskers 1.5 IQR), median as a line and mean as a diamond."""
    if images.empty:
        return _empty("No corpus figures yet", fmt)
    fields = sorted(images["field"].unique())
    data = [images.loc[images["field"] == f, "file_size"].to_numpy() / 1024 for f in fields]
    figure, axis = plt.subplots(figsize=(max(5, 0.9 * len(fields)), 3.8))
    axis.boxplot(
        data,
        showmeans=True,
        meanprops={"marker": "D", "markerfacecolor": "#dd8452", "markeredgecolor": "#dd8452"},
        medianprops={"color": "#4c72b0", "lw": 2},
    )
    axis.set_xticks(np.arange(1, len(fields) + 1), fields)
    axis.plot([], [], color="#4c72b0", lw=2, label="median")
    axis.plot([], [], "D", color="#dd8452", label="mean")
    axis.set_ylabel("image file size (KiB)")
    axis.set_title("Corpus: file size by source field")
    axis.legend(frameon=False)
    axis.grid(axis="y", alpha=0.3)
    return _encode(figure, fmt)


AREA_PERCENTILES = np.arange(0, 101)  # the curve's points: every whole percentile
AREA_MARKS = (("median", 50), ("P95", 95), ("max", 100))  # the points corpus-stats reports (Tables 1, 9)


def area_percentiles(images: pd.DataFrame) -> pd.DataFrame:
    """Decoded area (megapixels, width × height / 10⁶) at each whole percentile 0…100 of the corpus's figures, by
    numpy's default linear interpolation (corpus-stats' median and P95 are two points of it)."""
    areas = images["megapixels"].to_numpy(dtype=float)
    return pd.DataFrame({"percentile": AREA_PERCENTILES, "megapixels": np.percentile(areas, AREA_PERCENTILES)})


def area_percentile_plot(images: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """The decoded-area percentile curve, its median, P95 and maximum marked and labelled."""
    if images.empty:
        return _empty("No corpus figures yet", fmt)
    curve = area_percentiles(images).set_index("percentile")["megapixels"]
    figure, axis = plt.subplots(figsize=(6, 3.8))
    axis.plot(curve.index, curve.to_numpy(), color="#4c72b0", lw=2)
    for (label, percentile), marker in zip(AREA_MARKS, ("o", "s", "^")):
        value = float(curve[percentile])  # named in the legend: inline labels collide where P95 is near the max
        axis.plot([percentile], [value], marker, ls="none", color="#dd8452", label=f"{label} {value:.2f} MP")
    axis.legend(frameon=False, loc="upper left")
    axis.set_xlim(0, 100)
    axis.set_xlabel("percentile of figures")
    axis.set_ylabel("decoded area (megapixels)")
    axis.set_title(f"Corpus: decoded image area by percentile ({len(images)} figures)")
    axis.grid(alpha=0.3)
    return _encode(figure, fmt)


def _design_names(effects: pd.DataFrame) -> pd.Series:
    return effects["model"].astype(str) + " · " + effects["harness"].astype(str)


def workflow_effect_plot(effects: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Paired workflow effect Δ (specialized − direct) per model and harness with its 95 % CI: overall in the left
    panel, each rubric component's mean paired difference in the right."""
    if effects.empty:
        return _empty("No paired workflow effects (no configurations differing only in workflow)", fmt)
    frame = effects.reset_index(drop=True)
    names = _design_names(frame)
    y = np.arange(len(frame))
    figure, (overall, parts) = plt.subplots(
        1, 2, figsize=(11, max(2.8, 0.45 * len(frame) + 1.2)), sharey=True, gridspec_kw={"width_ratios": [1, 1.4]}
    )
    overall.errorbar(
        frame["delta"], y, xerr=_error_bars(frame["delta"], frame["ci_low"], frame["ci_high"]), fmt="o", capsize=3
    )
    overall.axvline(0, color="#999", lw=0.8)
    overall.set_yticks(y, names)
    overall.invert_yaxis()
    overall.set_xlabel("Δ final score (points, 95 % paired bootstrap CI)")
    overall.set_title("Overall")
    height = 0.8 / len(COMPONENTS)
    for index, (column, label) in enumerate(COMPONENTS):
        if column in frame:
            parts.barh(y + (index - (len(COMPONENTS) - 1) / 2) * height, frame[column], height=height, label=label)
    parts.axvline(0, color="#999", lw=0.8)
    parts.set_xlabel("mean paired difference (rubric points)")
    parts.set_title("By rubric component")
    parts.legend(frameon=False, fontsize=8, loc="best")
    figure.suptitle("Workflow effect, specialized − direct")
    return _encode(figure, fmt)


def gate_confusion_plot(reviews: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Human gate review against the automated gate: counts of (automated, human) verdicts over every review with an
    automated verdict. `reviews` has boolean columns `human_fail` and `automated_fail`."""
    if reviews.empty:
        return _empty("No gate reviews with an automated verdict", fmt)
    labels = ("pass", "fail")
    counts = np.zeros((2, 2), dtype=int)
    for automated, human in zip(reviews["automated_fail"].astype(bool), reviews["human_fail"].astype(bool)):
        counts[int(automated), int(human)] += 1
    figure, axis = plt.subplots(figsize=(4.6, 3.9))
    image = axis.imshow(counts, cmap="Blues")
    for i in range(2):
        for j in range(2):
            dark = counts[i, j] > counts.max() / 2
            axis.text(j, i, str(counts[i, j]), ha="center", va="center", color="white" if dark else "black")
    axis.set_xticks([0, 1], [f"human {label}" for label in labels])
    axis.set_yticks([0, 1], [f"automated {label}" for label in labels])
    figure.colorbar(image, ax=axis, label="reviews")
    agreement = np.trace(counts) / counts.sum()
    axis.set_title(f"Gate review vs automated gate (agreement {agreement:.1%})")
    return _encode(figure, fmt)


def rating_agreement_plot(agreement: pd.DataFrame, consistency: pd.DataFrame, fmt: str = "pdf") -> bytes:
    """Per rating axis and judge: human–judge Spearman and Pearson, and the judge's majority agreement over runs."""
    if agreement.empty:
        return _empty("No ratings by both humans and a judge", fmt)
    frame = agreement.merge(consistency[["axis", "judge", "majority_agreement"]], on=["axis", "judge"], how="left")
    names = frame["axis"].astype(str) + "\n" + frame["judge"].astype(str)
    x = np.arange(len(frame))
    series = (("spearman", "Spearman ρ (human–judge)"), ("pearson", "Pearson r (human–judge)"))
    series += (("majority_agreement", "judge majority agreement over runs"),)
    width = 0.8 / len(series)
    figure, axis = plt.subplots(figsize=(max(5.5, 2.2 * len(frame)), 3.8))
    for index, (column, label) in enumerate(series):
        axis.bar(x + (index - 1) * width, frame[column], width=width, label=label)
    axis.set_xticks(x, names, fontsize=8)
    axis.set_ylim(0, 1)
    axis.set_title("Ratings: judge validity and consistency")
    axis.legend(frameon=False, fontsize=8)
    axis.grid(axis="y", alpha=0.3)
    return _encode(figure, fmt)
