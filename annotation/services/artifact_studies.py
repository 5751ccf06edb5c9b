"""Studies that judge one artifact at a time — gate review (PPTBench) and rating (PPTArena): create one, hand out its
artifacts by opaque token, and find a row's artifact for the importers.

The artifacts of such a study are its configurations' artifacts on its figures (a seeded sample of figures, every
configuration on each: a subset stratified by configuration). Each annotator sees each artifact once; artifacts with
the fewest reviews so far come first, then a seeded order.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import Count

from agents import selectors as agent_selectors
from core.errors import Invalid, NotFound
from core.imports import RowError
from corpus import selectors as corpus_selectors

from .. import assignment, quality
from ..errors import StudyUnavailable
from ..models import ArtifactLease, Study, StudyKind
from .studies import study_figures_choose

TOKEN_BYTES = 24
AXIS_MAX_LENGTH = 60


def artifact_study_create(
    *,
    name: str,
    kind: str,
    configurations: Iterable[str],
    figures: Iterable[str] | None = None,
    figure_sample: int | None = None,
    annotators: Iterable | None = None,
    rating_axes: Iterable[str] | None = None,
    description: str = "",
    seed: int = 0,
) -> Study:
    """A gate-review or rating study over the configurations' artifacts on the chosen figures."""
    if kind not in (StudyKind.GATE_REVIEW, StudyKind.RATING):
        raise Invalid(f"kind must be {StudyKind.GATE_REVIEW} or {StudyKind.RATING}")
    slugs = list(dict.fromkeys(configurations))
    found = agent_selectors.configurations_by_slugs(slugs=slugs)
    missing = sorted(set(slugs) - {c.slug for c in found})
    if missing or not found:
        raise Invalid(f"unknown configurations: {', '.join(missing) or 'none given'}")
    if Study.objects.filter(name=name).exists():
        raise Invalid(f"a study named {name!r} exists already")
    axes = rating_axes_clean(rating_axes) if kind == StudyKind.RATING else []
    task_ids = study_figures_choose(task_ids=figures, sample=figure_sample, seed=seed)
    with transaction.atomic():
        study = Study.objects.create(name=name, kind=kind, description=description, seed=seed, rating_axes=axes)
        study.configurations.set(found)
        if task_ids is not None:
            study.figures.set(list(corpus_selectors.figure_ids(task_ids=task_ids).values()))
        if annotators is not None:
            study.annotators.set(list(annotators))
    return study


def rating_axes_clean(axes: Iterable[str] | None) -> list[str]:
    cleaned = [a.strip() for a in (axes or quality.DEFAULT_RATING_AXES) if a and a.strip()]
    if not cleaned:
        raise Invalid("a rating study needs at least one axis")
    for axis in cleaned:
        if len(axis) > AXIS_MAX_LENGTH or not axis.replace("_", "").isalnum():
            raise Invalid(f"axis {axis!r}: letters, digits and _ only, up to {AXIS_MAX_LENGTH} characters")
    return list(dict.fromkeys(cleaned))


def study_artifacts(study: Study):
    """The study's artifacts with a final gate verdict (an annotator never sees one still waiting for its render)."""
    configuration_ids = list(study.configurations.values_list("pk", flat=True))
    figure_ids = list(study.figures.values_list("pk", flat=True)) or None
    ids = [pk for _, _, pk in agent_selectors.artifact_keys(configuration_ids=configuration_ids, figure_ids=figure_ids)]
    return agent_selectors.artifact_list().filter(pk__in=ids, gate_passed__isnull=False)


def artifact_next(*, study: Study, annotator) -> ArtifactLease | None:
    """The annotator's open artifact lease, or a new one: an artifact they have not judged, fewest judgements first."""
    if study.kind not in (StudyKind.GATE_REVIEW, StudyKind.RATING):
        raise Invalid(f"study {study.name} is a {study.kind} study")
    if study.status != Study.Status.ACTIVE:
        raise StudyUnavailable(f"this study is {study.status}; no new items are handed out")
    existing = ArtifactLease.objects.filter(study=study, annotator=annotator, state=ArtifactLease.State.OPEN).first()
    if existing is not None:
        return existing
    seen = ArtifactLease.objects.filter(study=study, annotator=annotator).values("artifact_id")
    rows = list(study_artifacts(study).exclude(pk__in=seen).values_list("pk", flat=True))
    if not rows:
        return None
    judged = dict(
        ArtifactLease.objects.filter(study=study, artifact_id__in=rows)
        .values_list("artifact_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    pk = min(rows, key=lambda a: (judged.get(a, 0), assignment.seeded_rank(study.seed, "artifact", annotator.pk, a)))
    try:
        with transaction.atomic():
            return ArtifactLease.objects.create(
                token=secrets.token_urlsafe(TOKEN_BYTES), study=study, artifact_id=pk, annotator=annotator
            )
    except IntegrityError:  # two tabs at once: one open lease per annotator
        return ArtifactLease.objects.get(study=study, annotator=annotator, state=ArtifactLease.State.OPEN)


def artifact_lease_open(*, token: str, annotator, kind: str) -> ArtifactLease:
    """The annotator's open lease with this token, locked for the vote."""
    lease = (
        ArtifactLease.objects.select_for_update(of=("self",))
        .select_related("study")
        .filter(token=token, annotator=annotator, study__kind=kind)
        .first()
    )
    if lease is None:
        raise NotFound("no such item: the link is unknown")
    return lease


def artifact_for_row(*, row: dict) -> int:
    """The artifact id of an import row's task_id and configuration, or RowError naming the field."""
    task_id, slug = row["task_id"], row["configuration"]
    figure_id = corpus_selectors.figure_ids(task_ids=[task_id]).get(task_id)
    if figure_id is None:
        raise RowError("task_id", f"unknown figure {task_id!r}")
    found = agent_selectors.configurations_by_slugs(slugs=[slug])
    if not found:
        raise RowError("configuration", f"unknown configuration {slug!r}")
    artifacts = agent_selectors.artifacts_for_figures(figure_ids=[figure_id], configuration_ids=[found[0].pk])
    artifact = artifacts.get((found[0].pk, figure_id))
    if artifact is None:
        raise RowError("configuration", f"no artifact of {slug} for figure {task_id}")
    return artifact.pk


def import_study(*, name: str, kind: str, report) -> Study:
    """The study an import writes to: the named one (of this kind) or a new one."""
    study = Study.objects.filter(name=name).first()
    if study is None:
        study = Study.objects.create(name=name, kind=kind, description=f"created by the {kind} import")
        report.notes.append(f"created {kind} study {name}")
    elif study.kind != kind:
        raise Invalid(f"study {name!r} is a {study.kind} study, not a {kind} study")
    return study
