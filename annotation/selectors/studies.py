"""Which study a read is about: a study by name, or the only study (of a kind) when none is named, the list and kinds
of studies, a study's configurations in their order and the votes each of its pairs is promised, and its current votes
(neither superseded nor withdrawn), which every table, summary and the dashboard count from. The other selector
modules build on these."""

from __future__ import annotations

from django.db.models import QuerySet

from core.errors import Invalid, NotFound
from corpus.protocol import ALLOCATION_ADAPTIVE

from ..models import Comparison, Study


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


def _current(study: Study):
    return Comparison.objects.filter(study=study, superseded=False, withdrawn=False)
