"""Every read of the annotation app: studies, the blinded item payload, tables and the dashboard."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import statistics
from dataclasses import dataclass

import pandas as pd
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, Mod
from django.urls import reverse
from django.utils import timezone
from PIL import Image, ImageDraw

from agents import selectors as agent_selectors
from core.errors import Invalid, NotFound
from core.png import clean_png, png_is_plain
from corpus import services as corpus_services
from corpus.protocol import SPARSE_PAIR_THRESHOLD, TIE_OUTCOMES

from .models import Comparison, Item, Lease, Study

BATTLE_COLUMNS = [
    "comparison_id",
    "study",
    "task_id",
    "annotator",
    "config_a",
    "config_b",
    "left_config",
    "outcome",
    "reason",
    "created_at",
    "dwell_ms",
    "render_sha256_a",
    "render_sha256_b",
    "audit_sha256_a",
    "audit_sha256_b",
]
COMPARISON_COLUMNS = BATTLE_COLUMNS + ["artifact_a_id", "artifact_b_id", "matchup", "decision_ms"]
COVERAGE_COLUMNS = ["config_x", "config_y", "n", "target", "kind", "sparse"]
IMAGE_SIDES = ("source", "a", "b")


# --- studies ----------------------------------------------------------------------------------
def study_list() -> QuerySet[Study]:
    return Study.objects.order_by("-created_at", "name")


def study_resolve(*, study: str | None) -> Study:
    """The study named `study`, or the only study when None; NotFound / Invalid otherwise."""
    if study:
        found = Study.objects.filter(name=study).first()
        if found is None:
            known = ", ".join(Study.objects.values_list("name", flat=True)) or "none yet"
            raise NotFound(f"no study named {study!r} (known: {known})")
        return found
    names = list(Study.objects.order_by("name").values_list("name", flat=True)[:11])
    if not names:
        raise NotFound("there is no study yet: create one on /coordinate/ or with import_comparisons")
    if len(names) > 1:
        raise Invalid(f"there are several studies ({', '.join(names[:10])}); name one with --study / ?study=")
    return Study.objects.get(name=names[0])


def study_configurations(study: Study):
    return list(study.configurations.order_by("position", "slug"))


def scalar_subquery(queryset, function: str, field: str):
    """A one-row aggregate as a subquery expression (COUNT / SUM / MAX over the queryset, no GROUP BY)."""
    return Subquery(
        queryset.order_by()
        .annotate(v=Func(F(field), function=function, output_field=BigIntegerField()))
        .values("v")[:1],
        output_field=BigIntegerField(),
    )


SIGNATURE_PRIME = 2147483647  # 2**31 − 1: every product below stays under 2**63, every sum of terms far below it


def _set_fingerprint(through, key, name: str) -> dict:
    """Annotations fingerprinting the multiset of integer `key`s of a study's rows in a link table: their count and
    their power sums Σk, Σk², Σk³ modulo a prime (no overflow on either database). Unlike a sum alone ({1, 4} and
    {2, 3} share one), count and the first three power sums tell apart any two sets of up to three elements (Newton's
    identities) and larger ones unless they collide in three sums at once."""
    p = Value(SIGNATURE_PRIME)

    def mod(value):
        return Mod(value, p, output_field=BigIntegerField())

    def total(value):
        return Sum(value, output_field=BigIntegerField())

    k = mod(key)
    terms = {"n": Count("pk"), "s1": mod(total(k)), "s2": mod(total(mod(k * k))), "s3": mod(total(mod(mod(k * k) * k)))}
    rows = through.objects.filter(study_id=OuterRef("pk")).order_by().values("study_id")
    return {
        f"sig_{name}_{t}": Coalesce(
            Subquery(rows.annotate(v=term).values("v")[:1]), Value(0), output_field=BigIntegerField()
        )
        for t, term in terms.items()
    }


def _pool_signature() -> dict:
    """What a study's assignment pool is built from, as annotations over the study row: the seed, its configurations
    (ids, and each id with its position: moving configurations changes the pairs' x / y order), its figures (ids)
    and the newest artifact. Cheap: index reads over the study's link tables."""
    configurations, figures = Study.configurations.through, Study.figures.through
    placed = ExpressionWrapper(
        Mod(F("configuration_id"), Value(SIGNATURE_PRIME)) * Value(1000003) + F("configuration__position"),
        output_field=BigIntegerField(),
    )
    return {
        "sig_seed": F("seed"),
        **_set_fingerprint(configurations, F("configuration_id"), "configurations"),
        **_set_fingerprint(configurations, placed, "placed"),
        **_set_fingerprint(figures, F("figure_id"), "figures"),
        "sig_artifact": agent_selectors.artifact_newest_id_expression(),
    }


_SIGNATURE_PARTS = tuple(_pool_signature())


@dataclass(frozen=True)
class StudyState:
    """A study as the engine needs it, read in one query: whether its pool is current, and whether any of its open
    leases are past their time."""

    study: Study
    signature: str
    leases_due: bool

    @property
    def pool_current(self) -> bool:
        return self.signature == self.study.pool_signature


def _with_state(studies: QuerySet[Study]) -> QuerySet[Study]:
    due = Lease.objects.filter(study_id=OuterRef("pk"), state=Lease.State.OPEN, expires_at__lte=timezone.now())
    return studies.annotate(**_pool_signature(), leases_due_now=Exists(due))


def _state(study: Study) -> StudyState:
    parts = [str(getattr(study, name)) for name in _SIGNATURE_PARTS]
    return StudyState(study=study, signature="v4:" + ":".join(parts), leases_due=study.leases_due_now)


def study_state(*, study_id: int) -> StudyState:
    return _state(_with_state(Study.objects.all()).get(pk=study_id))


def study_for_annotator(*, user) -> StudyState | None:
    """The first active study the annotator is assigned to (then paused ones, so they see why), with its state, so
    that the engine need not read it again."""
    studies = _with_state(Study.objects.filter(annotators=user).exclude(status=Study.Status.CLOSED))
    found = (
        studies.filter(status=Study.Status.ACTIVE).order_by("created_at").first()
        or studies.order_by("created_at").first()
    )
    return _state(found) if found is not None else None


def lease_owned(*, token: str, user) -> Lease | None:
    return (
        Lease.objects.select_related("item", "item__figure", "item__artifact_x", "item__artifact_y", "study")
        .filter(token=token, annotator=user)
        .first()
    )


# --- the blinded item payload -------------------------------------------------------------------
def _audit_rows(a: dict | None, b: dict | None) -> tuple[list, list]:
    """The same fields in the same order for both sides; values only (no identities in the summary)."""
    a, b = a or {}, b or {}
    keys = agent_selectors.audit_summary_keys(a, b)
    return [[k, a.get(k, "–")] for k in keys], [[k, b.get(k, "–")] for k in keys]


def annotator_progress(*, study: Study, user) -> dict:
    done = _current(study).filter(annotator=user, lease__isnull=False).count()
    return {"done": done, "quota": study.quota_per_annotator}


def lease_payload(*, lease: Lease, done: int) -> dict:
    """What the annotator's page needs for one item, `done` items into their session. Opaque token and relative image
    URLs only."""
    item, study = lease.item, lease.study
    a, b = (item.artifact_x, item.artifact_y) if lease.left_is_x else (item.artifact_y, item.artifact_x)
    audit_a, audit_b = _audit_rows(a.audit_summary, b.audit_summary)
    progress = {"done": done, "quota": study.quota_per_annotator}
    return {
        "token": lease.token,
        "images": {
            side: reverse("annotation:lease-image", kwargs={"token": lease.token, "side": side}) for side in IMAGE_SIDES
        },
        "audit_a": audit_a,
        "audit_b": audit_b,
        "rendered_a": bool(a.render_png),
        "rendered_b": bool(b.render_png),
        "progress": {"done": progress["done"], "quota": progress["quota"], "position": progress["done"] + 1},
        "rules": {"min_dwell_ms": study.min_dwell_ms, "reason_decisive": study.require_reason_decisive},
        "expires_in_s": max(0, int((lease.expires_at - timezone.now()).total_seconds())),
    }


NO_RENDERING = "No rendering: this deck could not be opened or rendered."


@functools.cache
def _placeholder_png(text: str) -> bytes:
    """Drawn once per text per process: the same bytes for every artifact without a rendering."""
    image = Image.new("RGB", (800, 450), (236, 238, 241))
    ImageDraw.Draw(image).text((24, 24), text, fill=(60, 60, 60))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def lease_image(*, lease: Lease, side: str) -> bytes:
    """The bytes of one of the lease's images, as stored: renders are written with pixel chunks only, and corpus figures
    get a metadata-free copy at import, so serving is a read, not a re-encode. Bytes that are not plain (stored before
    that, or put there by hand) are cleaned once and the result cached."""
    item = lease.item
    if side == "source":
        name = corpus_services.figure_clean_image(figure=item.figure)
    else:
        a, b = (item.artifact_x, item.artifact_y) if lease.left_is_x else (item.artifact_y, item.artifact_x)
        name = (a if side == "a" else b).render_png.name
        if not name:
            return _placeholder_png(NO_RENDERING)
    with default_storage.open(name, "rb") as handle:
        data = handle.read()
    if png_is_plain(data):
        return data
    key = "annotation:png:" + hashlib.sha256(data).hexdigest()
    clean = cache.get(key)
    if clean is None:
        clean = clean_png(data)
        cache.set(key, clean, 3600)
    return clean


def annotator_summary(*, study: Study, user) -> dict:
    votes = list(
        _current(study).filter(annotator=user, lease__isnull=False).values_list("outcome", "dwell_ms", "counted")
    )
    skipped = Lease.objects.filter(study=study, annotator=user, state=Lease.State.SKIPPED).count()
    dwell = [d for _, d, _ in votes if d is not None]
    outcomes = {o: sum(1 for v in votes if v[0] == o) for o in ("a", "b", "tie_success", "tie_failure")}
    return {
        "votes": len(votes),
        "counted": sum(1 for v in votes if v[2]),
        "skipped": skipped,
        "outcomes": outcomes,
        "median_dwell_s": round(statistics.median(dwell) / 1000, 1) if dwell else None,
    }


# --- tables -----------------------------------------------------------------------------------
def _current(study: Study):
    return Comparison.objects.filter(study=study, superseded=False, withdrawn=False)


def audit_digest(summary: dict | None) -> str:
    """SHA-256 of the object audit shown to the annotator (canonical JSON), '' when there was none."""
    if not summary:
        return ""
    return hashlib.sha256(json.dumps(summary, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _pair_kinds(slugs: list[str]) -> dict[frozenset, str]:
    pairs = agent_selectors.configuration_pairs_frame(slugs=slugs)
    return {frozenset((r.config_x, r.config_y)): r.kind for r in pairs.itertuples()}


def comparisons_frame(*, study: str | None = None) -> pd.DataFrame:
    """Current (not superseded, not withdrawn, counted) votes as battle rows (DESIGN 5) plus artifact ids and matchup."""
    resolved = study_resolve(study=study)
    rows = list(
        _current(resolved)
        .filter(counted=True)
        .order_by("created_at", "pk")
        .values_list(
            "comparison_id",
            "study__name",
            "item__figure__task_id",
            "annotator_name",
            "artifact_a__configuration__slug",
            "artifact_b__configuration__slug",
            "left_config__slug",
            "outcome",
            "reason",
            "created_at",
            "dwell_ms",
            "render_sha256_a",
            "render_sha256_b",
            "audit_sha256_a",
            "audit_sha256_b",
            "artifact_a_id",
            "artifact_b_id",
            "decision_ms",
        )
    )
    kinds = _pair_kinds([c.slug for c in study_configurations(resolved)])
    out = []
    for r in rows:
        record = dict(zip(BATTLE_COLUMNS[:13], r[:13]))
        record["created_at"] = r[9].isoformat()
        record["audit_sha256_a"], record["audit_sha256_b"] = r[13], r[14]
        record["artifact_a_id"], record["artifact_b_id"], record["decision_ms"] = r[15], r[16], r[17]
        record["matchup"] = kinds.get(frozenset((r[4], r[5])), "across")
        out.append(record)
    frame = pd.DataFrame(out, columns=COMPARISON_COLUMNS)
    frame["dwell_ms"] = frame["dwell_ms"].astype("Int64")
    frame["decision_ms"] = frame["decision_ms"].astype("Int64")
    return frame


def overlap_labels_frame(*, study: str | None = None) -> pd.DataFrame:
    """Votes on items rated by >= 2 annotators, labelled relative to the item's configurations:
    "left" = x (the earlier-declared configuration) better, "right" = y better, "tie" either tie."""
    resolved = study_resolve(study=study)
    rows = list(
        _current(resolved)
        .filter(counted=True)
        .order_by("created_at", "pk")
        .values_list("item_id", "annotator_name", "outcome", "artifact_a_id", "item__artifact_x_id")
    )
    records = []
    for item_id, annotator, outcome, a_id, x_id in rows:
        if outcome in TIE_OUTCOMES:
            label = "tie"
        else:
            a_is_x = a_id == x_id
            label = "left" if (outcome == "a") == a_is_x else "right"
        records.append((item_id, annotator, label))
    frame = pd.DataFrame(records, columns=["item_id", "annotator", "label"]).drop_duplicates(
        ["item_id", "annotator"], keep="last"
    )
    raters = frame.groupby("item_id")["annotator"].transform("nunique") if len(frame) else pd.Series([], dtype=int)
    return frame[raters >= 2].reset_index(drop=True)


def _pair_counts(study: Study) -> dict[tuple[int, int], int]:
    rows = (
        _current(study)
        .filter(counted=True)
        .values_list("item__config_x_id", "item__config_y_id")
        .annotate(n=Count("id"))
    )
    return {(x, y): n for x, y, n in rows}


def coverage_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `coverage` table: counted current comparisons per configuration pair against the target."""
    resolved = study_resolve(study=study)
    configurations = study_configurations(resolved)
    counts = _pair_counts(resolved)
    kinds = _pair_kinds([c.slug for c in configurations])
    rows = []
    for i, x in enumerate(configurations):
        for y in configurations[i + 1 :]:
            n = counts.get((x.pk, y.pk), 0) + counts.get((y.pk, x.pk), 0)
            rows.append(
                (
                    x.slug,
                    y.slug,
                    n,
                    resolved.target_per_pair,
                    kinds.get(frozenset((x.slug, y.slug)), "across"),
                    n < SPARSE_PAIR_THRESHOLD,
                )
            )
    return pd.DataFrame(rows, columns=COVERAGE_COLUMNS)


# --- the coordinator dashboard ------------------------------------------------------------------
def _heat(n: int, target: int) -> str:
    share = min(1.0, n / target) if target else 1.0
    return f"hsl({int(share * 130)}, 60%, {92 - int(share * 30)}%)"


def study_dashboard(*, study: Study) -> dict:
    configurations = study_configurations(study)
    counts = _pair_counts(study)
    target = study.target_per_pair
    matrix = []
    for i, x in enumerate(configurations):
        cells = []
        for j, y in enumerate(configurations):
            if j <= i:
                cells.append(None)
                continue
            # Both orientations, as coverage_frame counts them (items keep the order of the day they were built).
            n = counts.get((x.pk, y.pk), 0) + counts.get((y.pk, x.pk), 0)
            cells.append({"n": n, "sparse": n < SPARSE_PAIR_THRESHOLD, "colour": _heat(n, target), "y": y.slug})
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
        "pairs_at_target": sum(1 for row in matrix for c in row["cells"] if c and c["n"] >= target),
        "sparse_pairs": sum(1 for row in matrix for c in row["cells"] if c and c["sparse"]),
        "sparse_threshold": SPARSE_PAIR_THRESHOLD,
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


def comparisons_state(*, study: str | None = None) -> tuple:
    """What the study's votes look like now, for caching analyses of them: the study, its configurations in order,
    and the count and newest id of its comparison records (a vote, an undo or a revision adds one). Raises what
    study_resolve raises."""
    resolved = study_resolve(study=study)
    votes = Comparison.objects.filter(study=resolved).aggregate(n=Count("id"), newest=Max("id"))
    configurations = tuple(resolved.configurations.order_by("position", "slug").values_list("pk", flat=True))
    return (resolved.pk, configurations, votes["n"], votes["newest"])
