"""Screening studies (how both papers screened their corpora): create one over candidate figures, and the screeners'
writes — accept or reject a figure (a rejection needs its reason), set one aside, take back the last decision. A figure
is addressed by the signed token the screen was given (selectors.screening_token_read), never by a file name.
Rejections stay on record; the accepted set (by majority, annotation.screening) can seed another study.

screening_decisions_import reads the decisions back from CSV in the `screening-decisions` table's columns (task_id,
annotator, decision, reason, decided_at), where decision is accept, reject or skip (a figure set aside)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from core.errors import Invalid, NotFound
from core.imports import ImportReport, Progress, RowError, import_rows
from core.readers import read_csv
from core.roles import ANNOTATOR
from core.services import user_invite
from corpus import selectors as corpus_selectors

from .. import screening, selectors
from ..errors import LeaseClosed, StudyUnavailable
from ..models import ScreeningDecision, Study, StudyKind
from .artifact_studies import import_study
from .importer import row_time
from .studies import study_figures_choose

REASON_MAX = 4000
SCREENING_DECISION_COLUMNS = ("task_id", "annotator", "decision", "reason", "decided_at")
SKIP = "skip"  # a figure set aside without a decision
ACCEPTED_BY_DECISION = {screening.ACCEPT: True, screening.REJECT: False, SKIP: None}
DEFAULT_SCREENING_STUDY = "screening"


@dataclass(frozen=True)
class ScreeningUndone:
    """An undo's result: the figure whose decision was deleted, in its study, and the decision in the screen's terms
    (screening_previous) to put back on screen."""

    study: Study
    figure_id: int
    previous: dict


def screening_study_create(
    *,
    name: str,
    figures: Iterable[str] | None = None,
    figure_fields: Iterable[str] | None = None,
    figure_sample: int | None = None,
    annotators: Iterable | None = None,
    configurations: Iterable[str] = (),
    rating_axes: Iterable[str] | None = None,
    description: str = "",
    seed: int = 0,
) -> Study:
    """A screening study whose candidates are the chosen figures (task ids, source fields, a seeded sample:
    study_figures_choose; none: the whole corpus). It has no configurations: figures are screened, not artifacts."""
    if list(configurations or ()):
        raise Invalid("a screening study screens figures: it takes no configurations")
    if rating_axes:
        raise Invalid("rating axes belong to rating studies")
    if Study.objects.filter(name=name).exists():
        raise Invalid(f"a study named {name!r} exists already")
    task_ids = study_figures_choose(task_ids=figures, fields=figure_fields, sample=figure_sample, seed=seed)
    with transaction.atomic():
        study = Study.objects.create(name=name, kind=StudyKind.SCREENING, description=description, seed=seed)
        if task_ids is not None:
            study.figures.set(list(corpus_selectors.figure_ids(task_ids=task_ids).values()))
        if annotators is not None:
            study.annotators.set(list(annotators))
    return study


def screening_seed_figures(*, screening_study: str) -> list[str]:
    """The task ids a study seeded from `screening_study` gets: exactly its figures accepted by majority."""
    accepted = selectors.screening_accepted_task_ids(study=screening_study)
    if not accepted:
        raise Invalid(f"screening study {screening_study!r} has no figure accepted by majority yet")
    return accepted


def _served(token: str, annotator) -> tuple[Study, int]:
    found = selectors.screening_token_read(token=token, user=annotator)
    if found is None:
        raise NotFound("no such figure: the link is unknown, or the study is closed or no longer yours")
    return found


def _store(*, token: str, annotator, accepted: bool | None, reason: str) -> ScreeningDecision:
    study, figure_id = _served(token, annotator)
    try:
        with transaction.atomic():
            return ScreeningDecision.objects.create(
                study=study, figure_id=figure_id, annotator=annotator, accepted=accepted, reason=reason[:REASON_MAX]
            )
    except IntegrityError:  # one per screener and figure: a second tab, or a figure already set aside
        raise LeaseClosed("you have already decided or skipped this figure") from None


def screening_decide(*, token: str, annotator, accepted: bool, reason: str = "") -> ScreeningDecision:
    """Store the screener's decision on the figure the token addresses. A rejection needs a reason."""
    reason = (reason or "").strip()
    if not accepted and not reason:
        raise Invalid("a rejection needs a short reason")
    return _store(token=token, annotator=annotator, accepted=accepted, reason=reason)


def screening_skip(*, token: str, annotator, reason: str) -> ScreeningDecision:
    """Set the figure aside without a decision, with the screener's reason: it is not served to them again and counts
    towards neither side."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid("say briefly why you skip this figure")
    return _store(token=token, annotator=annotator, accepted=None, reason=reason)


def screening_undo(*, annotator, study: Study | None = None) -> ScreeningUndone:
    """Delete the screener's last decision (in `study`, or in any of their screening studies) so that its figure is
    served again; skips are not decisions and stay. Refused once the study is closed."""
    with transaction.atomic():
        decisions = ScreeningDecision.objects.select_for_update(of=("self",)).filter(
            annotator=annotator, accepted__isnull=False, study__kind=StudyKind.SCREENING, study__annotators=annotator
        )
        if study is not None:
            decisions = decisions.filter(study=study)
        last = decisions.select_related("study").order_by("-decided_at", "-pk").first()
        if last is None:
            raise LeaseClosed("there is nothing to undo")
        if last.study.status == Study.Status.CLOSED:
            raise StudyUnavailable("this study is closed; decisions can no longer be changed")
        previous = selectors.screening_previous(last)
        last.delete()
        return ScreeningUndone(study=last.study, figure_id=last.figure_id, previous=previous)


def _screener(name: str):
    """The account a decision row names: an existing one, else a new annotator account without a password (the name
    of an imported decision, e.g. a pseudonym; nobody can sign in as it until a coordinator invites them)."""
    found = get_user_model().objects.filter(username=name).first()
    if found is not None:
        return found
    try:
        return user_invite(username=name, role=ANNOTATOR).user
    except Invalid as error:
        raise RowError("annotator", error.detail) from None


def _decision_store(study: Study, row: dict) -> bool:
    row = {k: ("" if v is None else str(v).strip()) for k, v in row.items() if k is not None}
    for name in SCREENING_DECISION_COLUMNS[:3]:
        if not row.get(name):
            raise RowError(name, "missing or empty")
    decision = row["decision"].lower()
    if decision not in ACCEPTED_BY_DECISION:
        raise RowError("decision", f"must be {', '.join(ACCEPTED_BY_DECISION)}, got {row['decision']!r}")
    accepted, reason = ACCEPTED_BY_DECISION[decision], row.get("reason", "")[:REASON_MAX]
    if accepted is not True and not reason:  # as on the screen: a rejection or a skip says why
        raise RowError("reason", f"a {decision} needs a reason")
    figure_id = corpus_selectors.figure_ids(task_ids=[row["task_id"]]).get(row["task_id"])
    if figure_id is None:
        raise RowError("task_id", f"unknown figure {row['task_id']!r}")
    try:
        decided_at = row_time(row.get("decided_at", ""))
    except RowError as error:
        raise RowError("decided_at", error.reason) from None
    screener = _screener(row["annotator"])
    stored = ScreeningDecision.objects.filter(study=study, figure_id=figure_id, annotator=screener).first()
    if stored is not None:
        if (stored.accepted, stored.reason) == (accepted, reason):
            return False
        raise RowError("decision", f"{row['annotator']} already decided this figure differently; not overwritten")
    created = ScreeningDecision.objects.create(
        study=study, figure_id=figure_id, annotator=screener, accepted=accepted, reason=reason
    )
    # decided_at is stamped on creation (auto_now_add); the row's own time replaces it.
    ScreeningDecision.objects.filter(pk=created.pk).update(decided_at=decided_at)
    return True


def screening_decisions_import(
    *, path: Path, study: str = DEFAULT_SCREENING_STUDY, progress: Progress | None = None
) -> ImportReport:
    """Import screening decisions from CSV (SCREENING_DECISION_COLUMNS; decided_at optional: now) into the screening
    study `study` (created when new); idempotent (a row stored already is counted, not written again)."""
    report = ImportReport(source=str(path), noun="decisions")
    target = import_study(name=study, kind=StudyKind.SCREENING, report=report)
    return import_rows(
        rows=read_csv(path, required=SCREENING_DECISION_COLUMNS[:3]),
        store=lambda row, line: _decision_store(target, row),
        report=report,
        progress=progress,
    )
