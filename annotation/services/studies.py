"""Studies: create one, change its status, assign and invite its annotators."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from agents import selectors as agent_selectors
from core.errors import Invalid
from core.roles import ANNOTATOR
from core.services import Invitation, user_invite
from corpus import selectors as corpus_selectors

from .. import assignment
from ..models import ArtifactLease, Lease, Study, StudyKind
from .pool import leases_close, study_lock, study_pool_sync, study_share

# The settings a study is created with; their defaults and limits are the model's fields (one place).
STUDY_SETTINGS = (
    "description",
    "target_per_pair",
    "overlap_rate",
    "seed",
    "include_gate_failed",
    "require_reason_decisive",
    "min_dwell_ms",
    "lease_seconds",
    "quota_per_annotator",
    "attention_rate",
    "repeat_rate",
    "allocation",
    "adaptive_floor",
    "stop_when_flip_below",
)
# The settings a gate-review or rating study has (besides its rating axes): each annotator judges each artifact once, so
# targets, overlap, quotas, leases and quality controls are the pairwise studies' only.
ARTIFACT_STUDY_SETTINGS = ("description", "seed")


def study_figures_choose(
    *,
    task_ids: Iterable[str] | None = None,
    fields: Iterable[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[str] | None:
    """The task ids a study compares: the listed ones (or the whole corpus), within the given source fields, then a
    seeded sample of `sample` of them. None when nothing narrows the corpus (the study then follows the corpus)."""
    task_ids = [t for t in (task_ids or []) if t]
    fields = [f for f in (fields or []) if f]
    if not task_ids and not fields and not sample:
        return None
    if task_ids:
        known = corpus_selectors.figure_ids(task_ids=task_ids)
        missing = [t for t in dict.fromkeys(task_ids) if t not in known]
        if missing:
            raise Invalid(f"unknown figures: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}")
    if fields:
        unknown = sorted(set(fields) - set(corpus_selectors.figure_fields()))
        if unknown:
            raise Invalid(f"no figures in field(s): {', '.join(unknown)}")
    chosen = list(corpus_selectors.figure_ids(task_ids=task_ids or None, fields=fields or None))
    if not chosen:
        raise Invalid("no figure matches this selection")
    if sample:
        if sample > len(chosen):
            raise Invalid(f"a sample of {sample} figures is larger than the {len(chosen)} figures selected")
        return assignment.figure_sample(chosen, sample, seed=seed)
    return sorted(chosen)


@transaction.atomic
def study_create(
    *,
    name: str,
    configurations: Iterable[str] = (),
    figures: Iterable[str] | None = None,
    figure_fields: Iterable[str] | None = None,
    figure_sample: int | None = None,
    annotators: Iterable | None = None,
    kind: str = StudyKind.PAIRWISE,
    rating_axes: Iterable[str] | None = None,
    from_screening: str | None = None,
    stratify: str | None = None,
    **settings,
) -> Study:
    """Create a study of any kind from configuration slugs; its figures are the whole corpus unless task ids, source
    fields or a seeded sample size narrow them (study_figures_choose), or `from_screening` names a screening study
    whose figures accepted by majority it takes, exactly. A gate-review or rating study is made by
    artifact_studies.artifact_study_create, with ARTIFACT_STUDY_SETTINGS and (rating) its axes; a screening study (no
    configurations) by screening.screening_study_create, with the same settings. `stratify` (gate-review and rating
    studies: "field" or "configuration") makes `figure_sample` a stratified sample of that many artifacts."""
    if kind not in StudyKind.values:
        raise Invalid(f"kind must be one of {', '.join(StudyKind.values)}")
    unknown = set(settings) - set(STUDY_SETTINGS)
    if unknown:
        raise Invalid(f"unknown study settings: {', '.join(sorted(unknown))}")
    if from_screening:
        if figures or figure_fields or figure_sample:
            raise Invalid("a study seeded from a screening study takes exactly its accepted figures: no other choice")
        from .screening import screening_seed_figures  # it builds on study_figures_choose, above

        figures = screening_seed_figures(screening_study=from_screening)
    if stratify and kind not in (StudyKind.GATE_REVIEW, StudyKind.RATING):
        raise Invalid("a stratified sample of artifacts is for gate-review and rating studies")
    if kind != StudyKind.PAIRWISE:
        pairwise_only = sorted(set(settings) - set(ARTIFACT_STUDY_SETTINGS))
        if pairwise_only:
            raise Invalid(f"{', '.join(pairwise_only)}: settings of pairwise studies only, not of a {kind} study")
        if kind == StudyKind.SCREENING:
            from .screening import screening_study_create

            return screening_study_create(
                name=name,
                configurations=configurations,
                figures=figures,
                figure_fields=figure_fields,
                figure_sample=figure_sample,
                annotators=annotators,
                rating_axes=rating_axes,
                **settings,
            )
        from .artifact_studies import artifact_study_create  # it builds on study_figures_choose, above

        return artifact_study_create(
            name=name,
            kind=kind,
            configurations=configurations,
            figures=figures,
            figure_fields=figure_fields,
            figure_sample=figure_sample,
            stratify=stratify,
            annotators=annotators,
            rating_axes=rating_axes,
            **settings,
        )
    if rating_axes:
        raise Invalid("rating axes belong to rating studies")
    slugs = list(dict.fromkeys(configurations))
    found = agent_selectors.configurations_by_slugs(slugs=slugs)
    missing = sorted(set(slugs) - {c.slug for c in found})
    if missing:
        raise Invalid(f"unknown configurations: {', '.join(missing)}")
    if len(found) < 2:
        raise Invalid("a study needs at least two configurations")
    if not 0 <= settings.get("overlap_rate", 0) <= 1:
        raise Invalid("overlap_rate must lie in [0, 1]")
    if Study.objects.filter(name=name).exists():
        raise Invalid(f"a study named {name!r} exists already")
    task_ids = study_figures_choose(
        task_ids=figures, fields=figure_fields, sample=figure_sample, seed=settings.get("seed", 0)
    )
    study = Study.objects.create(name=name, **settings)
    study.configurations.set(found)
    if task_ids is not None:
        study.figures.set(list(corpus_selectors.figure_ids(task_ids=task_ids).values()))
    if annotators is not None:
        study.annotators.set(list(annotators))
    return study_pool_sync(study=study)


def study_status_set(*, study: Study, status: str) -> Study:
    """Pause, resume or close a study of any kind. Paused or closed, it hands out nothing new; closing also gives a
    pairwise study's open items back (a gate-review or rating study's open items are refused their judgement)."""
    if status not in Study.Status.values:
        raise Invalid(f"status must be one of {', '.join(Study.Status.values)}")
    with transaction.atomic():
        study_lock(study)
        study.status = status
        study.save(update_fields=["status"])
        if status == Study.Status.CLOSED:
            leases_close(
                study=study,
                leases=Lease.objects.filter(study=study, state=Lease.State.OPEN),
                state=Lease.State.RELEASED,
                now=timezone.now(),
            )
    return study


def study_annotators_set(*, study: Study, users: Iterable) -> Study:
    """Assign exactly these annotators, in a study of any kind. Someone taken off the study loses their open item at
    once (a pairwise item goes back to the pool; a gate-review or rating item, judged by no one, is given up), so they
    can neither vote on it nor fetch its images any more."""
    users = list(users)
    with transaction.atomic():
        study_share(study)
        study.annotators.set(users)
        removed = Lease.objects.filter(study=study, state=Lease.State.OPEN).exclude(annotator__in=users)
        leases_close(study=study, leases=removed, state=Lease.State.RELEASED, now=timezone.now())
        ArtifactLease.objects.filter(study=study, state=ArtifactLease.State.OPEN).exclude(annotator__in=users).delete()
    return study


def annotator_invite(*, study: Study, username: str, email: str = "") -> Invitation:
    """Invite someone to annotate this study: an annotator account (new, or an existing one gaining the role) assigned
    to the study, with a one-time link to choose a password when the account has none yet."""
    invitation = user_invite(username=username, role=ANNOTATOR, email=email)
    study.annotators.add(invitation.user)
    return invitation
