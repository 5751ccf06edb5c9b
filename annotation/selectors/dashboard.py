"""The coordinator's dashboards. A pairwise study's: the coverage matrix of its configuration pairs, each cell with a
heat colour (a CSS hsl() from pale red to green as the pair nears its target), the figures covered, the overlap items,
the open leases, and each annotator's throughput, dwell, skip rate and left-side share. Pairs are counted as the
coverage table counts them (tables.coverage_frame), so the page and the table never disagree. A gate-review or rating
study's: its artifacts, the judgements so far by rater and the agreement tables. A screening study's: its candidate
figures accepted, rejected and undecided by majority, each screener's decisions, the latest rejections with their
reasons and the screeners' agreement. Every kind's: what is left
(study_progress: votes still needed, the time to finish at the last day's pace, items waiting for their renderings,
who is behind; the arithmetic is annotation.progress)."""

from __future__ import annotations

import itertools
import statistics
from datetime import datetime, timedelta

import pandas as pd
from django.db.models import Count, Q
from django.utils import timezone

from .. import progress, screening
from ..models import ArtifactLease, Item, Lease, Rating, ScreeningDecision, Study, StudyKind
from .pool import pairwise_waiting
from .quality_tables import (
    gate_review_agreement_frame,
    gate_review_vs_automated_frame,
    rating_agreement_frame,
    rating_consistency_frame,
)
from .screening import screening_agreement_frame, screening_candidates, screening_handled, screening_summary_frame
from .screens import study_artifact_ids
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


def _pair_votes(study: Study) -> list[int]:
    """Counted votes per configuration pair, both orientations together (as coverage_frame counts them)."""
    counts = _pair_counts(study)
    return [
        counts.get((x.pk, y.pk), 0) + counts.get((y.pk, x.pk), 0)
        for x, y in itertools.combinations(study_configurations(study), 2)
    ]


def study_progress(*, study: Study, now: datetime | None = None) -> dict:
    """What is left of a study of any kind: the votes still needed to reach its target, the votes of the last day and
    the time to finish at that pace, the items waiting for their renderings, and each assigned annotator's votes, what
    is left to them and their last day, those behind the others flagged.

    Pairwise: every pair's target is pair_target; still needed is Σ over pairs of max(0, target − counted votes), the
    pace is the counted votes of the last day, and an annotator's left is their quota less their votes. Gate review and
    rating: every assigned annotator judges every artifact of the study once; still needed is Σ over them (or over one
    annotator yet to be assigned) of max(0, artifacts − artifacts they judged or set aside), the pace their judgements
    of the last day. Screening: the same over the study's candidate figures and the screeners' decisions. `noun`
    names what a non-pairwise study's target counts (artifacts, figures)."""
    since = (now or timezone.now()) - timedelta(hours=progress.PACE_WINDOW_HOURS)
    assigned = list(study.annotators.order_by("username").values_list("pk", "username"))
    ids = [pk for pk, _ in assigned]
    noun = "figures" if study.kind == StudyKind.SCREENING else "artifacts"
    if study.kind == StudyKind.PAIRWISE:
        target, unit = pair_target(study), "pair"
        needed = progress.votes_still_needed(_pair_votes(study), target=target)
        last_day = _current(study).filter(counted=True, excluded=False, created_at__gte=since).count()
        rows = (
            _current(study)
            .filter(annotator_id__in=ids, lease__isnull=False)
            .values_list("annotator_id")
            .annotate(n=Count("id"), day=Count("id", filter=Q(created_at__gte=since)))
            .order_by()
        )
        per = {pk: (n, day) for pk, n, day in rows}
        handled = {pk: per.get(pk, (0, 0))[0] for pk in ids}
        left = {pk: max(0, study.quota_per_annotator - handled[pk]) for pk in ids}
        waiting = pairwise_waiting(study)
    elif study.kind == StudyKind.SCREENING:
        target, unit, waiting = len(screening_candidates(study)), "annotator", 0
        rows = screening_handled(study=study, annotator_ids=ids, since=since)
    else:
        every = study_artifact_ids(study=study)
        target, unit = len(every), "annotator"
        waiting = target - len(study_artifact_ids(study=study, final_only=True))
        rows = (
            ArtifactLease.objects.filter(study=study, annotator_id__in=ids)
            .exclude(state=ArtifactLease.State.OPEN)
            .values_list("annotator_id")
            .annotate(
                n=Count("id", filter=Q(state=ArtifactLease.State.SUBMITTED)),
                day=Count("id", filter=Q(state=ArtifactLease.State.SUBMITTED, closed_at__gte=since)),
                handled=Count("id"),
            )
            .order_by()
        )
    if study.kind != StudyKind.PAIRWISE:
        per = {pk: (n, day) for pk, n, day, _ in rows}
        handled = {pk: 0 for pk in ids} | {pk: h for pk, _, _, h in rows}
        left = {pk: max(0, target - handled[pk]) for pk in ids}
        # Before anyone is assigned, the study still needs one annotator's judgement of every artifact.
        needed = progress.votes_still_needed(list(handled.values()) or [0], target=target)
        last_day = sum(day for _, day in per.values())
    done = {name: per.get(pk, (0, 0))[0] for pk, name in assigned}
    behind = progress.annotators_behind(done)
    finish = progress.time_to_finish(needed=needed, votes_last_day=last_day)
    return {
        "target": target,
        "unit": unit,
        "noun": noun,
        "needed": needed,
        "votes_last_day": last_day,
        "finish": finish,
        "finish_text": finish.text,
        "waiting": waiting,
        "annotators": [
            {
                "annotator": name,
                "done": done[name],
                "left": left[pk],
                "last_day": per.get(pk, (0, 0))[1],
                "behind": name in behind,
            }
            for pk, name in assigned
        ],
        "behind": behind,
    }


def _agreement_tables(study: Study) -> list[tuple[str, str, pd.DataFrame]]:
    """(title, table name, frame) of the agreement tables of a gate-review or rating study, as far as its judgements
    go (the same frames as /api/tables/<name>/?study=...)."""
    if study.kind == StudyKind.GATE_REVIEW:
        return [
            ("Reviewers with each other", "gate-review-agreement", gate_review_agreement_frame(study=study.name)),
            (
                "Reviewers with the automated gate",
                "gate-review-vs-automated",
                gate_review_vs_automated_frame(study=study.name),
            ),
        ]
    return [
        ("Human raters with each judge", "rating-agreement", rating_agreement_frame(study=study.name)),
        ("Each judge with its own repeated runs", "rating-consistency", rating_consistency_frame(study=study.name)),
    ]


def artifact_judgements(*, study: Study) -> list[tuple[str, int, bool | None, bool]]:
    """A gate-review or rating study's judgements, imported ones included: (rater, artifact id, gate_fail, imported)
    per gate review, or per human's ratings of one artifact (gate_fail None)."""
    if study.kind == StudyKind.GATE_REVIEW:
        return list(study.gate_reviews.values_list("reviewer", "artifact_id", "gate_fail", "imported"))
    rows = (
        study.ratings.filter(rater_kind=Rating.RaterKind.HUMAN)
        .values_list("rater", "artifact_id", "imported")
        .distinct()
        .order_by()
    )
    return [(rater, artifact, None, imported) for rater, artifact, imported in rows]


def artifact_study_dashboard(*, study: Study) -> dict:
    """A gate-review or rating study's dashboard: its artifacts (ready, waiting for their renderings), the judgements
    so far (a gate review, or a human's ratings of one artifact on the study's axes) by rater, the artifacts judged by
    at least two raters (what agreement is computed over), the open items and the agreement tables."""
    every = study_artifact_ids(study=study)
    ready = len(study_artifact_ids(study=study, final_only=True))
    judgements = artifact_judgements(study=study)
    raters: dict[str, dict] = {}
    raters_of: dict[int, set[str]] = {}
    for rater, artifact, gate_fail, imported in judgements:
        entry = raters.setdefault(rater, {"rater": rater, "judgements": 0, "failures": 0, "imported": 0})
        entry["judgements"] += 1
        entry["failures"] += int(bool(gate_fail))
        entry["imported"] += int(imported)
        raters_of.setdefault(artifact, set()).add(rater)
    return {
        "artifacts": len(every),
        "ready": ready,
        "judgements": len(judgements),
        "artifacts_judged": len(raters_of),
        "artifacts_overlap": sum(1 for names in raters_of.values() if len(names) >= 2),
        "raters": [
            entry
            | {
                "fail_share": round(entry["failures"] / entry["judgements"], 3)
                if study.kind == StudyKind.GATE_REVIEW
                else None
            }
            for entry in sorted(raters.values(), key=lambda e: e["rater"])
        ],
        "open_leases": ArtifactLease.objects.filter(study=study, state=ArtifactLease.State.OPEN).count(),
        "axes": list(study.rating_axes) if study.kind == StudyKind.RATING else [],
        "agreement": _agreement_tables(study),
    }


# The latest rejections a screening dashboard lists with their reasons (every one is in the screening-decisions table).
SCREENING_REJECTIONS_SHOWN = 20


def screening_dashboard(*, study: Study) -> dict:
    """A screening study's dashboard: its candidate figures accepted, rejected and undecided by majority
    (screening-summary), those decided by at least one and by at least two screeners (agreement is computed over the
    latter), each screener's accepts, rejects and skips, the latest rejections with their reasons, and the agreement
    table (title, table name, frame), as a gate-review or rating dashboard lists its own."""
    summary = screening_summary_frame(study=study.name)
    statuses = summary["status"].value_counts()
    decided = summary["accepts"] + summary["rejects"]
    rows = ScreeningDecision.objects.filter(study=study)
    screeners = (
        rows.values_list("annotator__username")
        .annotate(
            accepts=Count("id", filter=Q(accepted=True)),
            rejects=Count("id", filter=Q(accepted=False)),
            skips=Count("id", filter=Q(accepted__isnull=True)),
        )
        .order_by("annotator__username")
    )
    rejections = (
        rows.filter(accepted=False)
        .order_by("-decided_at", "-pk")
        .values("figure__task_id", "annotator__username", "reason", "decided_at")[:SCREENING_REJECTIONS_SHOWN]
    )
    return {
        "candidates": len(summary),
        "accepted": int(statuses.get(screening.ACCEPTED, 0)),
        "rejected": int(statuses.get(screening.REJECTED, 0)),
        "undecided": int(statuses.get(screening.UNDECIDED, 0)),
        "decided": int((decided >= 1).sum()),
        "overlap": int((decided >= 2).sum()),
        "decisions": int(decided.sum()),
        "screeners": [{"screener": name, "accepts": a, "rejects": r, "skips": k} for name, a, r, k in screeners],
        "rejections": list(rejections),
        "agreement": [
            ("Screeners with each other", "screening-agreement", screening_agreement_frame(study=study.name))
        ],
        "tables": ("screening-summary", "screening-decisions", "screening-agreement"),
        "rule": screening.MAJORITY_RULE,
    }
