"""Studies that judge one artifact at a time — gate review (PPTBench) and rating (PPTArena): create one, hand out its
artifacts by opaque token, and find a row's artifact for the importers.

The artifacts of such a study are its configurations' artifacts on its figures (a seeded sample of figures, every
configuration on each: a subset stratified by configuration), or a stratified sample of those artifacts (by a figure
attribute — field, orientation, image format, licence — or by configuration: artifact_sample_stratified) kept as StudyArtifact rows. Each annotator sees each artifact once; artifacts with
the fewest reviews so far come first, then a seeded order.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from agents import selectors as agent_selectors
from core.errors import Invalid, NotFound
from core.imports import RowError
from corpus import selectors as corpus_selectors

from .. import assignment, quality, selectors
from ..errors import LeaseClosed, StudyUnavailable
from ..models import ArtifactLease, Study, StudyArtifact, StudyKind
from .studies import study_figures_choose

TOKEN_BYTES = 24
AXIS_MAX_LENGTH = 60
# What a stratified artifact sample keeps the shares of: a categorical attribute of the figure, or the configuration.
STRATA = {
    "field": "figure__field",
    "orientation": "figure__orientation",
    "image_format": "figure__image_format",
    "license": "figure__license",
    "configuration": "configuration__slug",
}


@dataclass(frozen=True)
class Undone:
    """An undo's result: the reopened lease and the judgement withdrawn from it, in the screen's own terms, to put back
    on screen (gate review: verdict and reason; rating: the axes' ratings)."""

    lease: ArtifactLease
    previous: dict


def artifact_study_create(
    *,
    name: str,
    kind: str,
    configurations: Iterable[str],
    figures: Iterable[str] | None = None,
    figure_fields: Iterable[str] | None = None,
    figure_sample: int | None = None,
    stratify: str | None = None,
    annotators: Iterable | None = None,
    rating_axes: Iterable[str] | None = None,
    description: str = "",
    seed: int = 0,
) -> Study:
    """A gate-review or rating study over the configurations' artifacts on the chosen figures (task ids, source
    fields, a seeded sample: study_figures_choose; none: the whole corpus). With `stratify` (a name in STRATA),
    `figure_sample` is instead the size of a seeded sample of those artifacts whose strata keep the
    population's proportions (artifact_sample_stratified)."""
    if kind not in (StudyKind.GATE_REVIEW, StudyKind.RATING):
        raise Invalid(f"kind must be {StudyKind.GATE_REVIEW} or {StudyKind.RATING}")
    if Study.objects.filter(name=name).exists():
        raise Invalid(f"a study named {name!r} exists already")
    axes = rating_axes_clean(rating_axes) if kind == StudyKind.RATING else []
    found = _configurations(configurations)
    if stratify and stratify not in STRATA:
        raise Invalid(f"stratify by {' or '.join(STRATA)}, not {stratify!r}")
    if stratify and not figure_sample:
        raise Invalid("a stratified sample needs its size")
    sampled: list[int] = []
    if stratify:
        population = study_figures_choose(task_ids=figures, fields=figure_fields, seed=seed)
        sampled = artifact_sample_stratified(
            configuration_ids=[c.pk for c in found], task_ids=population, size=figure_sample, by=stratify, seed=seed
        )
        task_ids = sorted(
            agent_selectors.artifact_list().filter(pk__in=sampled).values_list("figure__task_id", flat=True).distinct()
        )
    else:
        task_ids = study_figures_choose(task_ids=figures, fields=figure_fields, sample=figure_sample, seed=seed)
    with transaction.atomic():
        study = Study.objects.create(name=name, kind=kind, description=description, seed=seed, rating_axes=axes)
        artifact_study_links_set(study=study, configurations=[c.slug for c in found], figures=task_ids)
        StudyArtifact.objects.bulk_create([StudyArtifact(study=study, artifact_id=pk, sampled=True) for pk in sampled])
        if annotators is not None:
            study.annotators.set(list(annotators))
    return study


def artifact_sample_stratified(
    *, configuration_ids: list[int], task_ids: list[str] | None, size: int, by: str, seed: int
) -> list[int]:
    """A seeded sample of `size` of the configurations' artifacts on these figures (None: the whole corpus) whose
    strata (STRATA: a figure attribute such as its source field, or the configuration) keep the population's proportions (largest-remainder
    rounding: annotation.quality.stratified_sample). The artifact ids, sorted."""
    artifacts = agent_selectors.artifact_list().filter(configuration_id__in=configuration_ids)
    if task_ids is not None:
        artifacts = artifacts.filter(figure__task_id__in=task_ids)
    strata = dict(artifacts.values_list("pk", STRATA[by]))
    if not strata:
        raise Invalid("no artifact matches this selection")
    if size > len(strata):
        raise Invalid(f"a sample of {size} artifacts is larger than the {len(strata)} artifacts selected")
    return quality.stratified_sample(strata, size, seed=seed)


def _configurations(slugs: Iterable[str]) -> list:
    slugs = list(dict.fromkeys(slugs))
    found = agent_selectors.configurations_by_slugs(slugs=slugs)
    missing = sorted(set(slugs) - {c.slug for c in found})
    if missing or not found:
        raise Invalid(f"unknown configurations: {', '.join(missing) or 'none given'}")
    return found


def artifact_study_links_set(*, study: Study, configurations: Iterable[str], figures: Iterable[str] | None) -> Study:
    """Set a gate-review or rating study's configurations (slugs) and figures (task ids; None: the whole corpus). A
    study an import created has none, and hands nothing out until it has them."""
    if study.kind not in (StudyKind.GATE_REVIEW, StudyKind.RATING):
        raise Invalid(f"study {study.name} is a {study.kind} study")
    found = _configurations(configurations)
    with transaction.atomic():
        study.configurations.set(found)
        study.figures.set([] if figures is None else list(corpus_selectors.figure_ids(task_ids=figures).values()))
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
    return agent_selectors.artifact_list().filter(pk__in=selectors.study_artifact_ids(study=study, final_only=True))


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
    if lease.state == ArtifactLease.State.SKIPPED:
        raise LeaseClosed("this item was skipped; it cannot be judged")
    if lease.study.status == Study.Status.CLOSED:
        raise StudyUnavailable("this study is closed; judgements are no longer taken")
    return lease


class ArtifactsOfRows:
    """The artifacts an import's rows name, each (task_id, configuration) looked up once per import: a ratings file
    names one artifact on many rows (raters x axes x runs), and nothing an import reads changes while it runs."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], int | RowError] = {}
        self._fields: dict[int, str] = {}

    def __call__(self, row: dict) -> int:
        """The artifact id of the row's task_id and configuration, or RowError naming the field."""
        key = (row["task_id"], row["configuration"])
        if key not in self._found:
            try:
                self._found[key] = _artifact_for(*key)
            except RowError as error:
                self._found[key] = error
        found = self._found[key]
        if isinstance(found, RowError):
            raise RowError(found.field, found.reason)
        return found

    def figure_field(self, artifact_id: int) -> str:
        if artifact_id not in self._fields:
            self._fields[artifact_id] = artifact_figure_field(artifact_id)
        return self._fields[artifact_id]


def artifact_figure_field(artifact_id: int) -> str:
    """An artifact's figure's corpus field (a rating's category when none is given)."""
    return agent_selectors.artifact_list().filter(pk=artifact_id).values_list("figure__field", flat=True).first() or ""


def _artifact_for(task_id: str, slug: str) -> int:
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


def artifact_lease_skip(*, token: str, annotator, reason: str) -> ArtifactLease:
    """Set the annotator's open artifact lease aside with their reason, as the comparison screen's skip does: the
    artifact is not served to them again. Skipping a skipped lease again changes nothing."""
    reason = (reason or "").strip()
    with transaction.atomic():
        lease = ArtifactLease.objects.select_for_update().filter(token=token, annotator=annotator).first()
        if lease is None:
            raise NotFound("no such item: the link is unknown")
        if lease.state == ArtifactLease.State.SKIPPED:
            return lease
        if lease.state != ArtifactLease.State.OPEN:
            raise LeaseClosed(f"this item was {lease.state}; it cannot be skipped")
        if not reason:
            raise Invalid("say briefly why you skip this item")
        lease.state, lease.skip_reason, lease.closed_at = ArtifactLease.State.SKIPPED, reason[:2000], timezone.now()
        lease.save(update_fields=["state", "skip_reason", "closed_at"])
        return lease


def artifact_lease_reopen(*, study: Study, annotator) -> ArtifactLease:
    """Reopen the annotator's last judged artifact lease for an undo (in the caller's transaction, which withdraws the
    judgement). Their open lease, judged by no one, is given back: its artifact is served again in its turn."""
    if study.status == Study.Status.CLOSED:
        raise StudyUnavailable("this study is closed; judgements can no longer be changed")
    leases = ArtifactLease.objects.select_for_update().filter(study=study, annotator=annotator)
    last = leases.filter(state=ArtifactLease.State.SUBMITTED).order_by("-closed_at", "-pk").first()
    if last is None:
        raise LeaseClosed("there is nothing to undo")
    leases.filter(state=ArtifactLease.State.OPEN).delete()
    last.state, last.closed_at = ArtifactLease.State.OPEN, None
    last.save(update_fields=["state", "closed_at"])
    return last
