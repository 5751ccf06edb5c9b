"""Pool and queue state: whether a study's pool of items is current (a signature over what it is built from: the
study's seed and links, the order of its configurations and the state of their artifacts), whether any of its open
leases are past their time, and which pairwise studies an annotator is offered, in what order. The assignment engine
(annotation.services.engine and .pool) reads these on every next-item request."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.db.models import BigIntegerField, Count, Exists, F, Func, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Mod
from django.urls import reverse
from django.utils import timezone

from agents import selectors as agent_selectors

from .. import progress
from ..models import ArtifactLease, Comparison, Item, Lease, Study, StudyKind


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
    signature = "v8:" + ":".join(str(getattr(study, name)) for name in _LINK_PARTS)
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


def studies_for_annotator(*, user, with_progress: bool = True) -> list[StudyState]:
    """Every study the annotator may work in, in the order they are offered: active ones first, least done (relative
    to the quota) first, so that no study starves behind an older one; then paused ones. Each study's
    `annotator_done` is set, unless `with_progress` is False and there is only one study (nothing to order)."""
    states = [_state(s) for s in _with_state(_annotator_studies(user))]
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


# The screen of each kind of study: a pairwise study's is addressed by its name, a gate-review or rating screen serves
# from the annotator's studies of its kind in turn (artifact_study_for_annotator).
SCREENS = {StudyKind.GATE_REVIEW: "annotation:gate-review", StudyKind.RATING: "annotation:rating"}
WAITING_NOTE = "{n} item{s} waiting for their renderings; come back later"


def waiting_note(waiting: int) -> str:
    """What an annotator is told about items they cannot be shown yet ('' when there are none)."""
    return WAITING_NOTE.format(n=waiting, s=" is" if waiting == 1 else "s are") if waiting else ""


def pairwise_waiting(study: Study) -> int:
    """How many of a pairwise study's items wait for their renderings: (pair, figure) with both artifacts, not both
    with a final verdict (the pool holds only items whose artifacts have one)."""
    ids = list(study.configurations.values_list("pk", flat=True))
    figure_ids = list(study.figures.values_list("pk", flat=True)) or None
    present: dict[int, set[int]] = {}
    final: dict[int, set[int]] = {}
    for by, final_only in ((present, False), (final, True)):
        for configuration_id, figure_id, _ in agent_selectors.artifact_keys(
            configuration_ids=ids, figure_ids=figure_ids, final_only=final_only
        ):
            by.setdefault(configuration_id, set()).add(figure_id)
    return progress.items_waiting(list(itertools.combinations(ids, 2)), present, final)


def _artifact_progress(study: Study, user) -> dict:
    """screens.artifact_progress (done, skipped, total, pending), with `left`: the artifacts still to be shown to the
    annotator (ready, neither judged nor skipped by them; an open one counts)."""
    from .screens import artifact_progress  # screens reads this module (the study an artifact screen serves from)

    counts = artifact_progress(study=study, user=user)
    return counts | {"left": max(0, counts["total"] - counts["pending"] - counts["done"] - counts["skipped"])}


def _artifact_studies(user, kind: str | None = None) -> QuerySet[Study]:
    studies = Study.objects.filter(annotators=user).exclude(kind=StudyKind.PAIRWISE)
    return (studies.filter(kind=kind) if kind else studies).exclude(status=Study.Status.CLOSED)


def artifact_study_for_annotator(*, user, kind: str) -> Study | None:
    """The gate-review or rating study (of `kind`) an unnamed screen serves from: the one where the annotator holds an
    open item, else the oldest active one with an artifact left to them, else the oldest active one with artifacts
    waiting for their renderings (the screen says so), else the oldest active one (all done), else a paused one (so
    they see why). Each assigned study is served in its turn, never only the oldest."""
    studies = list(_artifact_studies(user, kind).order_by("created_at", "name"))
    active = [s for s in studies if s.status == Study.Status.ACTIVE]
    holding = set(
        ArtifactLease.objects.filter(annotator=user, state=ArtifactLease.State.OPEN, study__in=active).values_list(
            "study_id", flat=True
        )
    )
    if held := next((s for s in active if s.pk in holding), None):
        return held
    counts: dict[int, dict] = {}  # read as needed: the next-item path asks on every item

    def has(study: Study, wanted: str) -> bool:
        if study.pk not in counts:
            counts[study.pk] = _artifact_progress(study, user)
        return bool(counts[study.pk][wanted])

    for wanted in ("left", "pending"):
        if found := next((s for s in active if has(s, wanted)), None):
            return found
    return active[0] if active else (studies[0] if studies else None)


def _listed(study: Study, *, done: int, quota: int, left: int, waiting: int, url: str) -> dict:
    return {
        "name": study.name,
        "description": study.description,
        "kind": study.kind,
        "status": study.status,
        "done": done,
        "quota": quota,
        "left": left,
        "waiting": waiting,
        "waiting_note": waiting_note(waiting),
        "url": url,
    }


def annotator_study_list(*, user) -> list[dict]:
    """The annotator's 'my studies' list, every kind: name, description, kind, status, their progress (done of quota),
    the items left to them, the items waiting for their renderings and the URL of the study's screen. Pairwise studies
    first, in the order they are served (studies_for_annotator); then gate-review and rating studies, active first."""
    rows = []
    for state in studies_for_annotator(user=user):
        study = state.study
        seen = Lease.objects.filter(study=study, annotator=user).exclude(
            state__in=(Lease.State.EXPIRED, Lease.State.RELEASED)
        )
        unseen = Item.objects.filter(study=study, in_pool=True).exclude(pk__in=seen.values("item_id")).count()
        left = min(max(0, study.quota_per_annotator - study.annotator_done), unseen)
        url = reverse("annotation:annotate-study", kwargs={"name": study.name})
        done, quota = study.annotator_done, study.quota_per_annotator
        rows.append(_listed(study, done=done, quota=quota, left=left, waiting=pairwise_waiting(study), url=url))
    studies = _artifact_studies(user).order_by("created_at", "name")
    for study in sorted(studies, key=lambda s: s.status != Study.Status.ACTIVE):
        counts = _artifact_progress(study, user)
        url = f"{reverse(SCREENS[study.kind])}?{urlencode({'study': study.name})}"  # this study's items first
        rows.append(
            _listed(
                study,
                done=counts["done"],
                quota=counts["total"],
                left=counts["left"],
                waiting=counts["pending"],
                url=url,
            )
        )
    return rows
