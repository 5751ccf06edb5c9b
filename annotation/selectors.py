"""Every read of the annotation app: studies, the blinded item payload, tables and the dashboard."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

import pandas as pd
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
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
from core.compiled_sql import CompiledQuery
from core.errors import Invalid, NotFound
from core.png import clean_png, png_is_plain
from core.querysets import select_narrow
from corpus import services as corpus_services
from corpus.protocol import ALLOCATION_ADAPTIVE, SPARSE_PAIR_THRESHOLD, TIE_OUTCOMES

from . import quality
from .models import AnnotatorExclusion, ArtifactLease, CalibrationAnswer, Comparison, Item, Lease, Study, StudyKind

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
# What annotator screens, images and votes read of an item's artifacts and figure: their rows are read narrowly
# (core.querysets.select_narrow), the rest of an artifact's sixty columns never leave the database on these paths.
SHOWN_ARTIFACT_FIELDS = ("gate_passed", "gate_reason", "audit_summary", "render_png", "render_sha256")
SHOWN_FIGURE_FIELDS = ("sha256", "image")


def items_shown(items: QuerySet[Item]) -> QuerySet[Item]:
    """Items with their two artifacts, as much of them as annotators are shown."""
    return select_narrow(items, {"artifact_x": SHOWN_ARTIFACT_FIELDS, "artifact_y": SHOWN_ARTIFACT_FIELDS})


def leases_shown(leases: QuerySet[Lease], *, figure: bool = False) -> QuerySet[Lease]:
    """Leases with their study, item and the item's artifacts (and figure), as much of them as annotators are shown."""
    relations = {
        "study": None,
        "item": None,
        "item__artifact_x": SHOWN_ARTIFACT_FIELDS,
        "item__artifact_y": SHOWN_ARTIFACT_FIELDS,
    }
    return select_narrow(leases, {**relations, **({"item__figure": SHOWN_FIGURE_FIELDS} if figure else {})})


# --- studies ----------------------------------------------------------------------------------
def study_kind(*, study: str) -> str | None:
    """The kind of the named study (pairwise, gate_review, rating); None when there is no such study."""
    return Study.objects.filter(name=study).values_list("kind", flat=True).first()


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


def pair_target(study: Study) -> int:
    """The votes every pair is promised: its target under coverage, the floor under adaptive allocation (beyond it,
    votes go where the ranking is least settled, so the coverage table does not claim a target nobody serves)."""
    return study.adaptive_floor if study.allocation == ALLOCATION_ADAPTIVE else study.target_per_pair


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


SIGNATURE_PRIME = 2147483647  # 2**31 − 1: squares of residues stay below 2**62, sums of them far below 2**63


def _configuration_order():
    """A fingerprint of the order of the study's configurations (it decides each pair's x and y): Σ k² mod p over
    k = (configuration id · 1000003 + position) mod p. Swapping two positions changes it (by 2·1000003·Δid·Δposition),
    and so does any reorder unless it collides mod p; read from the link table, so no way of moving a configuration
    escapes it."""
    p = Value(SIGNATURE_PRIME)
    placed = Mod(
        F("configuration_id") * Value(1000003) + F("configuration__position"), p, output_field=BigIntegerField()
    )
    square = Mod(placed * placed, p, output_field=BigIntegerField())
    rows = Study.configurations.through.objects.filter(study_id=OuterRef("pk")).order_by().values("study_id")
    total = Mod(Sum(square, output_field=BigIntegerField()), p, output_field=BigIntegerField())
    return Coalesce(Subquery(rows.annotate(v=total).values("v")[:1]), Value(0), output_field=BigIntegerField())


def _pool_signature_links() -> dict:
    """What a study's pool is built from that its own row says, as annotations over it: the seed, whether it shows
    gate-failed artifacts and the version of its links (configurations and figures added or removed: bumped by
    annotation.signals). Compared on every next-item request, so no subquery here."""
    return {
        "sig_seed": F("seed"),
        "sig_include_gate_failed": F("include_gate_failed"),
        "sig_links": F("links_version"),
    }


def _pool_signature_artifacts() -> dict:
    """What the pool is built from beyond the study's row: the order of its configurations and the state of their
    artifacts (how many, newest id, how many final, how many pass: of its configurations only, in one scan).
    Compared when the pool is synced and every POOL_ARTIFACTS_RECHECK on the next-item path, which never serves an item
    whose artifacts fail the pool's rules meanwhile (services.engine); items served between a reorder and the recheck
    keep counting for their pair (services.pool)."""
    return {
        "sig_order": _configuration_order(),
        "sig_artifacts": agent_selectors.artifact_state_expression(
            Study.configurations.through.objects.filter(study_id=OuterRef(OuterRef("pk"))).values("configuration_id")
        ),
    }


_LINK_PARTS, _ARTIFACT_PARTS = tuple(_pool_signature_links()), tuple(_pool_signature_artifacts())
POOL_ARTIFACTS_RECHECK = timedelta(seconds=10)


@dataclass(frozen=True)
class StudyState:
    """A study as the engine needs it, read in one query: whether its pool is current, and whether any of its open
    leases are past their time. `complete` False (the next-item path): the signature leaves the configurations' order and
    the artifacts out, and `artifacts_due` says when to look at them again."""

    study: Study
    signature: str
    leases_due: bool
    complete: bool = True

    @property
    def pool_current(self) -> bool:
        stored = self.study.pool_signature
        return self.signature == (stored if self.complete else stored.split("|")[0])

    @property
    def artifacts_due(self) -> bool:
        checked = self.study.pool_checked_at
        return checked is None or timezone.now() - checked >= POOL_ARTIFACTS_RECHECK


def _with_state(studies: QuerySet[Study], *, complete: bool = False, now: datetime | None = None) -> QuerySet[Study]:
    due = Lease.objects.filter(study_id=OuterRef("pk"), state=Lease.State.OPEN, expires_at__lte=now or timezone.now())
    artifacts = _pool_signature_artifacts() if complete else {}
    return studies.annotate(**_pool_signature_links(), **artifacts, leases_due_now=Exists(due))


def _state(study: Study, *, complete: bool = False) -> StudyState:
    signature = "v7:" + ":".join(str(getattr(study, name)) for name in _LINK_PARTS)
    if complete:
        signature += "|" + ":".join(str(getattr(study, name)) for name in _ARTIFACT_PARTS)
    return StudyState(study=study, signature=signature, leases_due=study.leases_due_now, complete=complete)


def study_state(*, study_id: int, complete: bool = True) -> StudyState:
    """The study's state; `complete`: its artifacts included (else as the next-item path reads it)."""
    return _state(_with_state(Study.objects.all(), complete=complete).get(pk=study_id), complete=complete)


def _annotator_studies(user) -> QuerySet[Study]:
    """The pairwise studies the annotator is assigned to (gate-review and rating studies have screens of their own)."""
    return Study.objects.filter(annotators=user, kind=StudyKind.PAIRWISE).exclude(status=Study.Status.CLOSED)


def study_for_annotator(*, user, name: str | None = None) -> StudyState | None:
    """The study the annotator works in, with its state, so that the engine need not read it again: the one named
    (None when they are not assigned to it or it is closed); unnamed, the first active study (then paused ones, so
    they see why) -- callers serving several studies use `studies_for_annotator`."""
    studies = _with_state(_annotator_studies(user))
    if name is not None:
        found = studies.filter(name=name).first()
    else:
        found = (
            studies.filter(status=Study.Status.ACTIVE).order_by("created_at").first()
            or studies.order_by("created_at").first()
        )
    return _state(found) if found is not None else None


# Read on every next-item request: compiled once (core.compiled_sql).
_ANNOTATOR_STUDIES = CompiledQuery(
    lambda user, now: _with_state(_annotator_studies(user), now=now), user=int, now=datetime
)


def studies_for_annotator(*, user, with_progress: bool = True) -> list[StudyState]:
    """Every study the annotator may work in, in the order they are offered: active ones first, least done (relative
    to the quota) first, so that no study starves behind an older one; then paused ones. Each study's
    `annotator_done` is set, unless `with_progress` is False and there is only one study (nothing to order)."""
    states = [_state(s) for s in _ANNOTATOR_STUDIES.rows(user=user.pk, now=timezone.now())]
    if len(states) < 2 and not with_progress:
        return states  # nothing to order: the next-item path saves the progress query
    done = dict(
        Comparison.objects.filter(
            study__in=[s.study for s in states], annotator=user, superseded=False, withdrawn=False, lease__isnull=False
        )
        .values_list("study_id")
        .annotate(n=Count("id"))
    )
    for state in states:
        state.study.annotator_done = done.get(state.study.pk, 0)

    def order(state: StudyState):
        study = state.study
        share = study.annotator_done / study.quota_per_annotator if study.quota_per_annotator else 1.0
        return (study.status != Study.Status.ACTIVE, share >= 1.0, share, study.created_at, study.name)

    return sorted(states, key=order)


def annotator_study_list(*, user) -> list[dict]:
    """The annotator's 'my studies' list: name, description, status and their progress in each."""
    return [
        {
            "name": s.study.name,
            "description": s.study.description,
            "status": s.study.status,
            "done": s.study.annotator_done,
            "quota": s.study.quota_per_annotator,
        }
        for s in studies_for_annotator(user=user)
    ]


# Read for each of an item's three images, so compiled once (core.compiled_sql): compiling it took about a third of
# the image request (image p50 6.3 ms before, 4.0 after, against 4.0 ms for the authenticated no-op request).
_LEASE_OWNED = CompiledQuery(
    lambda token, user: leases_shown(Lease.objects.filter(token=token, annotator=user), figure=True),
    token=str,
    user=int,
)


def lease_owned(*, token: str, user) -> Lease | None:
    found = _LEASE_OWNED.rows(token=token, user=user.pk)  # a token names one lease (unique)
    return found[0] if found else None


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
        "study": {"name": study.name, "description": study.description},
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


def lease_previous_vote(*, lease: Lease) -> dict | None:
    """The choice and reason the annotator gave on this lease before withdrawing it (undo), to put back on screen;
    the lease keeps its sides, so 'a' is still the slide shown as A."""
    withdrawn = (
        Comparison.objects.filter(lease=lease, withdrawn=True)
        .order_by("-created_at", "-pk")
        .values("outcome", "reason")
    ).first()
    return dict(withdrawn) if withdrawn else None


# What the annotator reads in place of a slide that has no rendering, by gate reason (never the file's name or detail).
PLACEHOLDER_TEXT = {
    "missing": ("No slide", "The agent produced no deck for this figure (the file is missing)."),
    "not_a_zip": ("No slide", "The deck failed: the file is not a PowerPoint file."),
    "corrupt": ("No slide", "The deck failed: the file is corrupt and cannot be opened."),
    "no_slides": ("No slide", "The deck failed: it has no slide."),
    "multiple_slides": ("No slide", "The deck failed: it has more than one slide."),
    "too_large": ("No slide", "The deck failed: the file is too large to open safely."),
    "audit_timeout": ("No slide", "The deck failed: reading it took too long."),
    "render_failed": ("No rendering", "The deck opened but could not be rendered to an image."),
    "render_timeout": ("No rendering", "The deck opened but rendering it took too long."),
}
PLACEHOLDER_DEFAULT = ("No rendering", "This slide has no rendering yet.")
PLACEHOLDER_SIZE = (1600, 900)  # a 16:9 slide, so the placeholder frames like the slides beside it


def _placeholder_font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


@functools.cache
def _placeholder_png(title: str, text: str) -> bytes:
    """Drawn once per text per process: the same bytes for every artifact without a rendering for the same reason."""
    image = Image.new("RGB", PLACEHOLDER_SIZE, (236, 238, 241))
    draw = ImageDraw.Draw(image)
    width, height = PLACEHOLDER_SIZE
    draw.rectangle((12, 12, width - 13, height - 13), outline=(150, 156, 164), width=6)
    big, small = _placeholder_font(110), _placeholder_font(52)
    draw.text((width / 2, height / 2 - 70), title, fill=(40, 44, 52), font=big, anchor="mm")
    words, lines = text.split(), [""]
    for word in words:  # wrap to the width
        trial = f"{lines[-1]} {word}".strip()
        if draw.textlength(trial, font=small) > width - 200 and lines[-1]:
            lines.append(word)
        else:
            lines[-1] = trial
    for i, line in enumerate(lines):
        draw.text((width / 2, height / 2 + 60 + i * 68), line, fill=(60, 64, 72), font=small, anchor="mm")
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
        artifact = a if side == "a" else b
        name = artifact.render_png.name
        if not name:
            return _placeholder_png(*PLACEHOLDER_TEXT.get(artifact.gate_reason, PLACEHOLDER_DEFAULT))
    return stored_png(name)


def stored_png(name: str) -> bytes:
    """A stored image as the annotator gets it: served as stored when it already carries pixels only (renderings and
    the clean copies of source figures are written that way), otherwise re-encoded once (clean_png) and cached."""
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
        # Dwell only: whether a vote counts also depends on its purpose, which the annotator must not learn.
        "counted": sum(1 for _, d, _ in votes if d is not None and d >= study.min_dwell_ms),
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


def votes_signature(*, study: str | None = None) -> tuple[str, int, int, tuple[int, ...]]:
    """(study name, counted current votes, newest vote id, the study's exclusions): changes whenever the votes behind
    the Elo do, so analyses can be cached by it."""
    resolved = study_resolve(study=study)
    agg = _current(resolved).filter(counted=True).aggregate(n=Count("pk"), newest=Coalesce(Max("pk"), Value(0)))
    return resolved.name, int(agg["n"]), int(agg["newest"]), _exclusions(resolved)


def _exclusions(study: Study) -> tuple[int, ...]:
    """The ids of the study's annotator exclusions in force. Excluding an annotator (or undoing it) flags votes
    without adding one, so the vote count and newest id alone would not change; ids are never reused, so the same
    ids mean the same exclusions."""
    return tuple(AnnotatorExclusion.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))


def comparisons_frame(*, study: str | None = None) -> pd.DataFrame:
    """Current (not superseded, not withdrawn, counted, not excluded) regular votes as battle rows (DESIGN 5) plus artifact ids and matchup."""
    resolved = study_resolve(study=study)
    rows = list(
        _current(resolved)
        .filter(counted=True, excluded=False)
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
    frame.attrs["notes"] = exclusion_notes(study=resolved)
    return frame


def overlap_labels_frame(*, study: str | None = None) -> pd.DataFrame:
    """Votes on items rated by >= 2 annotators, labelled relative to the item's configurations:
    "left" = x (the earlier-declared configuration) better, "right" = y better, "tie" either tie."""
    resolved = study_resolve(study=study)
    rows = list(
        _current(resolved)
        .filter(counted=True, excluded=False)
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
        .filter(counted=True, excluded=False)
        .values_list("item__config_x_id", "item__config_y_id")
        .annotate(n=Count("id"))
    )
    return {(x, y): n for x, y, n in rows}


def sparse_threshold(study: Study) -> int:
    """A pair is sparse below the protocol's threshold, or below the study's own target when that is smaller (a
    pilot aiming at 6 votes per pair is not sparse at 6)."""
    return min(SPARSE_PAIR_THRESHOLD, pair_target(study))


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
                    pair_target(resolved),
                    kinds.get(frozenset((x.slug, y.slug)), "across"),
                    n < sparse_threshold(resolved),
                )
            )
    frame = pd.DataFrame(rows, columns=COVERAGE_COLUMNS)
    frame.attrs["notes"] = exclusion_notes(study=resolved)
    return frame


# --- the coordinator dashboard ------------------------------------------------------------------
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


# --- quality control, gate review and rating studies (issue 15) -----------------------------------
def exclusion_notes(*, study: Study) -> list[str]:
    """What the human tables of a pairwise study leave out, and why: excluded annotators' votes (with the
    coordinator's reason), attention / swapped-repeat votes (quality checks), and votes faster than the minimum dwell."""
    current = _current(study)
    notes = []
    for name, reason in study.exclusions.order_by("annotator_name").values_list("annotator_name", "reason"):
        n = current.filter(annotator_name=name).count()
        notes.append(f"excluded {n} votes of annotator {name}: {reason}")
    checks = current.exclude(purpose=quality.REGULAR).values_list("purpose").annotate(n=Count("id")).order_by()
    for purpose, n in checks:
        notes.append(f"left out {n} {purpose} votes (quality checks, never counted)")
    fast = current.filter(purpose=quality.REGULAR, counted=False).count()
    if fast:
        notes.append(f"left out {fast} votes made faster than the study's minimum dwell ({study.min_dwell_ms} ms)")
    return notes or ["nothing excluded"]


def _label_of(outcome: str, a_id: int, x_id: int) -> str:
    """A vote relative to the item's configurations: x, y, tie_success or tie_failure."""
    if outcome in TIE_OUTCOMES:
        return outcome
    return "x" if (outcome == "a") == (a_id == x_id) else "y"


def quality_votes_frame(*, study: Study) -> pd.DataFrame:
    """One row per current vote of the study, as annotation.quality.annotator_quality takes them."""
    rows = (
        _current(study)
        .filter(lease__isnull=False)
        .exclude(purpose=quality.CALIBRATION)
        .order_by("created_at", "pk")
        .values_list(
            "annotator_name",
            "item_id",
            "purpose",
            "outcome",
            "artifact_a_id",
            "item__artifact_x_id",
            "lease__left_is_x",
            "item__expected_label",
        )
    )
    records = [
        (name, item, purpose, _label_of(outcome, a, x), left, expected)
        for name, item, purpose, outcome, a, x, left, expected in rows
    ]
    return pd.DataFrame(records, columns=["annotator", "item", "purpose", "label", "left_is_x", "expected"])


def annotator_quality_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `annotator-quality` table (annotation.quality.annotator_quality) plus each exclusion's reason."""
    resolved = study_of_kind(study=study, kind=StudyKind.PAIRWISE)
    reasons = dict(resolved.exclusions.values_list("annotator_name", "reason"))
    frame = quality.annotator_quality(quality_votes_frame(study=resolved), excluded=list(reasons))
    frame["exclusion_reason"] = [reasons.get(name, "") for name in frame["annotator"]]
    frame.attrs["notes"] = [
        "all current votes made in the browser (imported votes have no lease and no sides); calibration answers are kept apart and never appear here"
    ] + exclusion_notes(study=resolved)
    return frame


def disagreements(*, study: Study) -> list[dict]:
    """Overlap items where annotators' counted votes disagree, with each vote (relative to the item's x / y and as
    shown) and the coordinator's adjudication if any: the adjudication page's rows."""
    votes = list(
        _current(study)
        .filter(counted=True, purpose=quality.REGULAR)
        .order_by("item_id", "created_at", "pk")
        .values(
            "item_id",
            "annotator_name",
            "outcome",
            "reason",
            "artifact_a_id",
            "item__artifact_x_id",
            "item__figure__task_id",
            "item__config_x__slug",
            "item__config_y__slug",
        )
    )
    by_item: dict[int, list[dict]] = {}
    for vote in votes:
        vote["label"] = _label_of(vote["outcome"], vote["artifact_a_id"], vote["item__artifact_x_id"])
        by_item.setdefault(vote["item_id"], []).append(vote)
    decided = {a.item_id: a for a in study.adjudications.all()}
    rows = []
    for item_id, item_votes in by_item.items():
        latest = {v["annotator_name"]: v for v in item_votes}
        if len(latest) < 2 or len({v["label"] for v in latest.values()}) < 2:
            continue
        first = item_votes[0]
        rows.append(
            {
                "item_id": item_id,
                "task_id": first["item__figure__task_id"],
                "config_x": first["item__config_x__slug"],
                "config_y": first["item__config_y__slug"],
                "votes": list(latest.values()),
                "adjudication": decided.get(item_id),
            }
        )
    return rows


def study_of_kind(*, study: str | None, kind: str) -> Study:
    """The study named `study` (which must be of `kind`), or the only study of that kind."""
    if study:
        found = study_resolve(study=study)
        if found.kind != kind:
            raise Invalid(f"study {found.name!r} is a {found.kind} study, not a {kind} study")
        return found
    names = list(Study.objects.filter(kind=kind).order_by("name").values_list("name", flat=True)[:11])
    if not names:
        raise NotFound(f"there is no {kind} study yet")
    if len(names) > 1:
        raise Invalid(f"there are several {kind} studies ({', '.join(names[:10])}); name one with --study / ?study=")
    return Study.objects.get(name=names[0])


def gate_reviews_frame(*, study: Study) -> pd.DataFrame:
    rows = study.gate_reviews.order_by("pk").values_list("artifact_id", "reviewer", "gate_fail")
    return pd.DataFrame(list(rows), columns=["artifact", "reviewer", "gate_fail"])


def _reviews_notes(study: Study, frame: pd.DataFrame) -> list[str]:
    return [
        f"study {study.name}: {len(frame)} human gate reviews by {frame['reviewer'].nunique()} reviewers; gate failure "
        "is the positive class; each pair is compared over the artifacts both reviewed, nothing else is excluded"
    ]


def gate_review_agreement_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `gate-review-agreement` table: reviewer pairs' raw agreement and Cohen's κ, and Fleiss' κ over all."""
    resolved = study_of_kind(study=study, kind=StudyKind.GATE_REVIEW)
    reviews = gate_reviews_frame(study=resolved)
    frame = quality.gate_review_agreement(reviews)
    frame.attrs["notes"] = _reviews_notes(resolved, reviews)
    return frame


def gate_review_vs_automated_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `gate-review-vs-automated` table: each reviewer against the automated gate (gate_passed false = failure);
    artifacts still waiting for their automated verdict are left out."""
    resolved = study_of_kind(study=study, kind=StudyKind.GATE_REVIEW)
    reviews = gate_reviews_frame(study=resolved)
    automated = dict(
        resolved.gate_reviews.filter(artifact__gate_passed__isnull=False)
        .values_list("artifact_id", "artifact__gate_passed")
        .distinct()
    )
    reference = pd.Series({pk: not passed for pk, passed in automated.items()}, dtype=bool)
    frame = quality.agreement_with_reference(reviews, reference)
    pending = reviews["artifact"].nunique() - len(automated)
    frame.attrs["notes"] = _reviews_notes(resolved, reviews) + [
        f"left out {pending} reviewed artifacts with no automated gate verdict yet"
    ]
    return frame


def ratings_frame(*, study: Study) -> pd.DataFrame:
    rows = study.ratings.order_by("pk").values_list("artifact_id", "axis", "rater", "rater_kind", "run", "rating")
    return pd.DataFrame(list(rows), columns=["artifact", "axis", "rater", "rater_kind", "run", "rating"])


def rating_agreement_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `rating-agreement` table: human mean rating per artifact against each judge's mean over its runs."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    ratings = ratings_frame(study=resolved)
    frame = quality.rating_agreement(ratings)
    humans = ratings[ratings["rater_kind"] == "human"]
    frame.attrs["notes"] = [
        f"study {resolved.name}: {len(humans)} human ratings by {humans['rater'].nunique()} raters; per axis and judge "
        "only artifacts rated by both humans and that judge"
    ]
    return frame


def rating_consistency_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `rating-consistency` table: each judge against its own repeated runs."""
    resolved = study_of_kind(study=study, kind=StudyKind.RATING)
    frame = quality.rating_consistency(ratings_frame(study=resolved))
    frame.attrs["notes"] = [f"study {resolved.name}: judge ratings only; artifacts rated in fewer than 2 runs left out"]
    return frame


# --- the single-artifact screens (gate review, rating) and calibration ------------------------------------------------
def study_of_kind_for_annotator(*, user, kind: str) -> Study | None:
    """The first active study of `kind` the annotator is assigned to (then a paused one, so they see why)."""
    studies = Study.objects.filter(annotators=user, kind=kind).exclude(status=Study.Status.CLOSED)
    return (
        studies.filter(status=Study.Status.ACTIVE).order_by("created_at").first()
        or studies.order_by("created_at").first()
    )


def artifact_lease_owned(*, token: str, user):
    return (
        ArtifactLease.objects.select_related("artifact", "artifact__figure", "study")
        .filter(token=token, annotator=user)
        .first()
    )


def artifact_lease_payload(*, lease) -> dict:
    """What a gate-review or rating page shows for one artifact: opaque token, image URLs by token, the audit."""
    audit, _ = _audit_rows(lease.artifact.audit_summary, None)
    done = lease.study.artifact_leases.filter(annotator_id=lease.annotator_id, state="submitted").count()
    return {
        "token": lease.token,
        "images": {
            side: reverse("annotation:artifact-image", kwargs={"token": lease.token, "side": side})
            for side in ARTIFACT_IMAGE_SIDES
        },
        "audit": audit,
        "axes": list(lease.study.rating_axes),
        "done": done,
    }


ARTIFACT_IMAGE_SIDES = ("source", "a")


def artifact_lease_image(*, lease, side: str) -> bytes:
    artifact = lease.artifact
    if side == "source":
        return stored_png(artifact.figure.image.name)
    if not artifact.render_png.name:
        return _placeholder_png("No rendering: this deck could not be opened or rendered.")
    return stored_png(artifact.render_png.name)


def calibration_owned(*, token: str, user):
    return (
        CalibrationAnswer.objects.select_related("item", "item__figure", "item__artifact_x", "item__artifact_y")
        .filter(token=token, annotator=user)
        .first()
    )


def calibration_image(*, answer, side: str) -> bytes:
    item = answer.item
    if side == "source":
        return stored_png(item.figure.image.name)
    a, b = (item.artifact_x, item.artifact_y) if answer.left_is_x else (item.artifact_y, item.artifact_x)
    name = (a if side == "a" else b).render_png.name
    if not name:
        return _placeholder_png("No rendering: this deck could not be opened or rendered.")
    return stored_png(name)


def calibration_payload(*, answer) -> dict:
    item = answer.item
    a, b = (item.artifact_x, item.artifact_y) if answer.left_is_x else (item.artifact_y, item.artifact_x)
    audit_a, audit_b = _audit_rows(a.audit_summary, b.audit_summary)
    payload = {
        "token": answer.token,
        "images": {
            side: reverse("annotation:calibration-image", kwargs={"token": answer.token, "side": side})
            for side in IMAGE_SIDES
        },
        "audit_a": audit_a,
        "audit_b": audit_b,
        "answered": bool(answer.outcome),
    }
    if answer.outcome:
        expected = item.expected_label
        shown = expected if expected in TIE_OUTCOMES else ("a" if (expected == "x") == answer.left_is_x else "b")
        payload.update(
            {"outcome": answer.outcome, "expert": shown, "correct": answer.correct, "explanation": item.explanation}
        )
    return payload


def comparisons_state(*, study: str | None = None) -> tuple:
    """What the study's votes look like now, for caching analyses of them: the study, its configurations in order,
    the count and newest id of its comparison records (a vote, an undo or a revision adds one) and its exclusions.
    Raises what study_resolve raises."""
    resolved = study_resolve(study=study)
    votes = Comparison.objects.filter(study=resolved).aggregate(n=Count("id"), newest=Max("id"))
    configurations = tuple(resolved.configurations.order_by("position", "slug").values_list("pk", flat=True))
    return (resolved.pk, configurations, votes["n"], votes["newest"], _exclusions(resolved))
