"""The pairwise tables, as pandas frames: the comparisons (battle rows, DESIGN 5, with artifact ids and matchup), the
votes on items rated by two or more annotators (for agreement), the coverage of the configuration pairs against their
target, and the notes saying what each leaves out and why. Also the signatures analyses of the votes are cached by
(votes_signature, comparisons_state) and the digest of the audit shown with a vote. bt_elo and the registered tables
(annotation.apps) read these through annotation.selectors."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
from django.db.models import Count, Exists, Max, OuterRef, Value
from django.db.models.functions import Coalesce

from agents import selectors as agent_selectors
from corpus import protocol
from corpus.protocol import SPARSE_PAIR_THRESHOLD, TIE_OUTCOMES

from .. import quality
from ..models import AnnotatorExclusion, Comparison, GateReview, ImportedBattle, Rating, Study
from . import battles
from .studies import _current, pair_target, study_configurations, study_resolve

BATTLE_COLUMNS = list(protocol.BATTLE_COLUMNS)
COMPARISON_COLUMNS = BATTLE_COLUMNS + ["artifact_a_id", "artifact_b_id", "matchup", "decision_ms"]
COVERAGE_COLUMNS = ["config_x", "config_y", "n", "target", "kind", "sparse"]


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
    if battles.has_imported_battles(resolved):  # a votes-only study: its votes are its imported battles
        return resolved.name, *battles.imported_state(resolved), ()
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
    if battles.has_imported_battles(resolved):
        return battles.imported_frame(resolved, COMPARISON_COLUMNS)
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
    counts = {(x, y): n for x, y, n in rows}
    for pair, n in battles.imported_pair_counts(study).items():
        counts[pair] = counts.get(pair, 0) + n
    return counts


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
                    battles.configuration_name(x),
                    battles.configuration_name(y),
                    n,
                    pair_target(resolved),
                    kinds.get(frozenset((x.slug, y.slug)), "across"),
                    n < sparse_threshold(resolved),
                )
            )
    frame = pd.DataFrame(rows, columns=COVERAGE_COLUMNS)
    imported = battles.has_imported_battles(resolved)
    frame.attrs["notes"] = battles.imported_notes(resolved) if imported else exclusion_notes(study=resolved)
    return frame


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
    return (notes or ["nothing excluded"]) + renderer_notes(study=study)


def renderer_notes(*, study: Study) -> list[str]:
    """A warning when the renderings the study's counted votes were made on (as each vote recorded them) come from
    more than one LibreOffice version or font set (agents.selectors.renderer_mix_notes)."""
    shown = _current(study).filter(counted=True, excluded=False)
    return agent_selectors.renderer_mix_notes(
        render_sha256_in=[shown.values("render_sha256_a"), shown.values("render_sha256_b")]
    )


def comparisons_state(*, study: str | None = None) -> tuple:
    """What the study's votes look like now, for caching analyses of them: the study, its configurations in order,
    the count and newest id of its comparison records (a vote, an undo or a revision adds one) and its exclusions.
    Raises what study_resolve raises."""
    resolved = study_resolve(study=study)
    votes = Comparison.objects.filter(study=resolved).aggregate(n=Count("id"), newest=Max("id"))
    configurations = tuple(resolved.configurations.order_by("position", "slug").values_list("pk", flat=True))
    return (
        resolved.pk,
        configurations,
        votes["n"],
        votes["newest"],
        _exclusions(resolved),
        battles.imported_state(resolved),
    )


def study_with_data(*, kinds: tuple[str, ...] | None = None) -> str | None:
    """The study a results page opens on when none is named: the most recently created study (of these kinds) that has
    votes, reviews or ratings; else the only study of these kinds; else None (the page asks)."""
    studies = Study.objects.order_by("-created_at", "-pk")
    if kinds is not None:
        studies = studies.filter(kind__in=kinds)
    with_data = studies.filter(
        Exists(Comparison.objects.filter(study=OuterRef("pk"), superseded=False, withdrawn=False))
        | Exists(GateReview.objects.filter(study=OuterRef("pk")))
        | Exists(Rating.objects.filter(study=OuterRef("pk")))
        | Exists(ImportedBattle.objects.filter(study=OuterRef("pk")))
    )
    found = with_data.values_list("name", flat=True).first()
    if found is None:
        names = list(studies.values_list("name", flat=True)[:2])
        found = names[0] if len(names) == 1 else None
    return found


def pair_votes(*, study: Study) -> dict[tuple[int, int], int]:
    """Counted votes per configuration pair (config_x id, config_y id), as the pool's counters hold them."""
    return {(x, y): votes for x, y, votes in study.pool_pairs.values_list("config_x_id", "config_y_id", "votes")}


def study_by_id(*, study_id: int) -> Study | None:
    return Study.objects.filter(pk=study_id).first()
