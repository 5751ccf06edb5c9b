"""PPTArena's per-system, per-category figure: for each rating axis and each source (the human raters, each judge
family), a heatmap of the mean 0–5 rating of every system (configuration) overall and in each category, drawn from
the `rating-system-means` table. Pure (matplotlib over DataFrames, no Django)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotation.quality import HUMAN_SOURCE, OVERALL

from .plots import _empty, _encode, plt

SCALE = (0, 5)  # PPTArena's ordinal rating scale (REFERENCE 9)


def rating_category_grid(means: pd.DataFrame, *, axis: str, source: str) -> pd.DataFrame:
    """One panel's cells: every system of `means` (rows, sorted) by every category of it (columns: OVERALL first, then
    the others sorted), the mean rating of that axis and source; NaN where the system has no rated artifact there.
    Every panel has the same rows and columns, so panels read side by side."""
    part = means[(means["axis"] == axis) & (means["source"] == source)]
    grid = part.pivot(index="configuration", columns="category", values="mean")
    categories = [OVERALL, *sorted(c for c in set(means["category"]) if c != OVERALL)]
    return grid.reindex(index=sorted(set(means["configuration"])), columns=categories)


def _sources(means: pd.DataFrame) -> list[str]:
    """Humans first, then the judge families in name order."""
    names = set(means["source"].astype(str))
    return [s for s in (HUMAN_SOURCE,) if s in names] + sorted(names - {HUMAN_SOURCE})


def rating_categories_plot(means: pd.DataFrame, fmt: str = "pdf") -> bytes:
    if means.empty:
        return _empty("No ratings yet", fmt)
    axes = sorted(means["axis"].astype(str).unique())
    sources = _sources(means)
    grids = {(a, s): rating_category_grid(means, axis=a, source=s) for a in axes for s in sources}
    rows, columns = grids[axes[0], sources[0]].shape
    figure, panels = plt.subplots(
        len(axes),
        len(sources),
        figsize=(0.9 * columns * len(sources) + 3, max(2.6, 0.4 * rows + 1.4) * len(axes)),
        sharey=True,
        squeeze=False,
    )
    image = None
    for i, axis_name in enumerate(axes):
        for j, source in enumerate(sources):
            panel, grid = panels[i][j], grids[axis_name, source]
            if grid.isna().all(axis=None):
                panel.axis("off")
                panel.set_title(f"{axis_name} · {source}: no ratings", fontsize=9)
                continue
            values = grid.to_numpy(dtype=float)
            image = panel.imshow(values, cmap="viridis", vmin=SCALE[0], vmax=SCALE[1], aspect="auto")
            for (r, c), value in np.ndenumerate(values):
                if np.isfinite(value):
                    colour = "black" if value > (SCALE[0] + SCALE[1]) / 2 else "white"
                    panel.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=7, color=colour)
            panel.set_xticks(np.arange(len(grid.columns)), grid.columns, rotation=30, ha="right", fontsize=8)
            if j == 0:  # the rows are every panel's: named once per row of panels
                panel.set_yticks(np.arange(len(grid.index)), grid.index, fontsize=8)
            panel.set_title(f"{axis_name.replace('_', ' ')} · {source}", fontsize=9)
    if image is not None:
        figure.colorbar(image, ax=panels, label="mean rating (0–5)", shrink=0.8)
    figure.suptitle("Mean rating per system, overall and per category")
    return _encode(figure, fmt)
