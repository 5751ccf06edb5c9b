"""The coordinator's dashboard of a pairwise study: the coverage matrix of its configuration pairs, each cell with a
heat colour (a CSS hsl() from pale red to green as the pair nears its target), the figures covered, the overlap items,
the open leases, and each annotator's throughput, dwell, skip rate and left-side share. Pairs are counted as the
coverage table counts them (tables.coverage_frame), so the page and the table never disagree."""

from __future__ import annotations

import statistics

from django.db.models import Count, Q
from django.utils import timezone

from ..models import Item, Lease, Study
from .studies import _current, pair_target, study_configurations
from .tables import _pair_counts, sparse_threshold


def _heat(n: int, target: int) -> str:
    share = min(1.0, n / target) if target else 1.0
    return f"hsl({int(share * 130)}, 60%, {92 - int(share * 30)}%)"


def study_dashboard(*, study: Study) -> dict:
    configurations = study_configurations(study)
    counts = _pair_counts(study)
    target = pair_target(study)
    sparse = sparse_threshold(study)
    matrix = []
    for i, x in enumerate(configurations):
        cells = []
        for j, y in enumerate(configurations):
            if j <= i:
                cells.append(None)
                continue
            # Both orientations, as coverage_frame counts them (items keep the order of the day they were built).
            n = counts.get((x.pk, y.pk), 0) + counts.get((y.pk, x.pk), 0)
            cells.append({"n": n, "sparse": n < sparse, "colour": _heat(n, target), "y": y.slug})
        matrix.append({"configuration": x, "cells": cells})
    pairs = len(configurations) * (len(configurations) - 1) // 2

    current = _current(study).filter(counted=True)
    # The study's figures: those of its pool (its pairs × its figures, both artifacts present), covered when voted on.
    # (Imported votes sit on items outside the pool when the study's own pool never had them.)
    pool_figures = Item.objects.filter(study=study).filter(Q(in_pool=True) | Q(votes__gte=1)).values("figure_id")
    figures_total = pool_figures.distinct().count()
    covered = current.filter(item__figure_id__in=pool_figures).values("item__figure_id").distinct().count()
    items_voted = current.values("item_id").distinct().count()

    per = {}
    votes = _current(study).values_list("annotator_name", "outcome", "dwell_ms", "created_at", "counted")
    for name, outcome, dwell, created, counted in votes:
        entry = per.setdefault(
            name,
            {
                "annotator": name,
                "votes": 0,
                "counted": 0,
                "dwell": [],
                "first": created,
                "last": created,
                "left": 0,
                "decisive": 0,
                "skips": 0,
            },
        )
        entry["votes"] += 1
        entry["counted"] += int(counted)
        if dwell is not None:
            entry["dwell"].append(dwell)
        entry["first"], entry["last"] = min(entry["first"], created), max(entry["last"], created)
        if outcome in ("a", "b"):
            entry["decisive"] += 1
            entry["left"] += int(outcome == "a")
    for name, n in (
        Lease.objects.filter(study=study, state=Lease.State.SKIPPED)
        .values_list("annotator__username")
        .annotate(n=Count("id"))
    ):
        per.setdefault(
            name,
            {
                "annotator": name,
                "votes": 0,
                "counted": 0,
                "dwell": [],
                "first": None,
                "last": None,
                "left": 0,
                "decisive": 0,
            },
        )["skips"] = n
    annotators = []
    for entry in sorted(per.values(), key=lambda e: e["annotator"]):
        hours = (entry["last"] - entry["first"]).total_seconds() / 3600 if entry["first"] and entry["votes"] > 1 else 0
        skips = entry.get("skips", 0)
        annotators.append(
            {
                "annotator": entry["annotator"],
                "votes": entry["votes"],
                "counted": entry["counted"],
                "per_hour": round(entry["votes"] / hours, 1) if hours > 0 else None,
                "median_dwell_s": round(statistics.median(entry["dwell"]) / 1000, 1) if entry["dwell"] else None,
                "skip_rate": round(skips / (skips + entry["votes"]), 3) if skips + entry["votes"] else None,
                "left_share": round(entry["left"] / entry["decisive"], 3) if entry["decisive"] else None,
            }
        )
    decisive = sum(e["decisive"] for e in per.values())
    overlap_items = (
        Item.objects.filter(study=study)
        .annotate(
            raters=Count(
                "comparisons__annotator_name",
                filter=Q(comparisons__superseded=False, comparisons__withdrawn=False, comparisons__counted=True),
                distinct=True,
            )
        )
        .filter(raters__gte=2)
        .count()
    )
    total_votes = current.count()
    return {
        "configurations": configurations,
        "matrix": matrix,
        "pairs": pairs,
        "target": target,
        "pairs_at_target": sum(1 for row in matrix for c in row["cells"] if c and c["n"] >= target),
        "sparse_pairs": sum(1 for row in matrix for c in row["cells"] if c and c["sparse"]),
        "sparse_threshold": sparse,
        "votes": total_votes,
        "figures_covered": covered,
        "figures_total": figures_total,
        "annotators": annotators,
        "left_share": round(sum(e["left"] for e in per.values()) / decisive, 3) if decisive else None,
        "overlap_items": overlap_items,
        # Items, like overlap_items: the share overlap_rate of the distinct items voted on.
        "items_voted": items_voted,
        "overlap_target": int(round(study.overlap_rate * items_voted)),
        "open_leases": Lease.objects.filter(study=study, state=Lease.State.OPEN, expires_at__gt=timezone.now()).count(),
    }
