"""Every read of the corpus app."""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.db.models import QuerySet

from .models import Figure

IMAGE_COLUMNS = ("task_id", "field", "image_format", "width", "height", "megapixels", "orientation", "file_size")


def figure_list(*, field: str | None = None, search: str | None = None) -> QuerySet[Figure]:
    figures = Figure.objects.all()
    if field:
        figures = figures.filter(field=field)
    if search:
        figures = figures.filter(title__icontains=search) | figures.filter(task_id__icontains=search)
    return figures.order_by("task_id")


def figure_fields() -> list[str]:
    return list(Figure.objects.order_by("field").values_list("field", flat=True).distinct())


def figure_task_ids() -> dict[str, int]:
    return dict(Figure.objects.values_list("task_id", "id"))


def image_frame() -> pd.DataFrame:
    rows = list(Figure.objects.order_by("task_id").values_list(*IMAGE_COLUMNS))
    return pd.DataFrame(rows, columns=list(IMAGE_COLUMNS))


def corpus_stats() -> pd.DataFrame:
    """Paper Tables 1 and 9 in long form. Percentiles use numpy's default (linear interpolation)."""
    images = image_frame()
    rows: list[tuple[str, object]] = [("figures", len(images))]
    if images.empty:
        return pd.DataFrame(rows, columns=["statistic", "value"])
    for fmt, count in images["image_format"].value_counts().sort_index().items():
        rows.append((f"format_{fmt.lower()}", int(count)))
    rows += [
        ("distinct_resolutions", int(images[["width", "height"]].drop_duplicates().shape[0])),
        ("median_width", float(np.median(images["width"]))),
        ("median_height", float(np.median(images["height"]))),
        ("min_width", int(images["width"].min())),
        ("max_width", int(images["width"].max())),
        ("min_height", int(images["height"].min())),
        ("max_height", int(images["height"].max())),
        ("area_mp_median", float(np.median(images["megapixels"]))),
        ("area_mp_p95", float(np.percentile(images["megapixels"], 95))),
        ("area_mp_max", float(images["megapixels"].max())),
    ]
    for orientation in ("landscape", "portrait", "square"):
        rows.append((orientation, int((images["orientation"] == orientation).sum())))
    return pd.DataFrame(rows, columns=["statistic", "value"])


def _size_row(label: str, sizes: pd.Series, total_tasks: int) -> dict:
    return {
        "field": label,
        "tasks": len(sizes),
        "share": len(sizes) / total_tasks if total_tasks else float("nan"),
        "total_bytes": int(sizes.sum()),
        "mean_bytes": float(sizes.mean()),
        "p25_bytes": float(np.percentile(sizes, 25)),
        "p50_bytes": float(np.percentile(sizes, 50)),
        "p75_bytes": float(np.percentile(sizes, 75)),
    }


def corpus_fields() -> pd.DataFrame:
    """Paper Tables 1 and 10: tasks, share and file sizes per field, then an `all` row."""
    images = image_frame()
    columns = ["field", "tasks", "share", "total_bytes", "mean_bytes", "p25_bytes", "p50_bytes", "p75_bytes"]
    if images.empty:
        return pd.DataFrame([], columns=columns)
    total = len(images)
    rows = [_size_row(name, group["file_size"], total) for name, group in images.groupby("field", sort=True)]
    rows.append(_size_row("all", images["file_size"], total))
    return pd.DataFrame(rows, columns=columns)


def figure_ids(*, task_ids=None, fields=None) -> dict[str, int]:
    """task_id → id of the figures with these task ids and/or in these source fields (all when neither is given)."""
    figures = Figure.objects.all()
    if task_ids is not None:
        figures = figures.filter(task_id__in=list(task_ids))
    if fields is not None:
        figures = figures.filter(field__in=list(fields))
    return dict(figures.values_list("task_id", "id"))
