"""Screening studies' reads: a study's candidate figures, the screening study an annotator works in and where they
stand in it, the next figure for them, the signed token that addresses a served figure (its image and its decision),
the screen's payload, the accepted set that seeds another study, and the `screening-decisions`, `screening-summary`
and `screening-agreement` tables (the rules are annotation.screening's).

Figures are not configuration outputs, so a screening screen shows the figure's title, caption, field and licence;
its image is still served through the app's image view, addressed by token, never by file name."""

from __future__ import annotations

import pandas as pd
from django.core import signing
from django.db.models import Count, Q
from django.urls import reverse

from corpus import selectors as corpus_selectors

from .. import assignment, screening
from ..models import ScreeningDecision, Study, StudyKind
from . import pool
from .studies import study_of_kind

TOKEN_SALT = "annotation.screening"  # a token is [study id, figure id, annotator id], signed
# The screen of a screening study, beside those of the other kinds: pool.annotator_study_list links each study to it.
pool.SCREENS.setdefault(StudyKind.SCREENING, "annotation:screening")


def screening_candidates(study: Study) -> dict[int, str]:
    """figure id → task id of the study's candidates: its figures, or every figure of the corpus when it has none."""
    chosen = dict(study.figures.values_list("pk", "task_id"))
    return chosen or {pk: task_id for task_id, pk in corpus_selectors.figure_ids().items()}


def _decisions(study: Study):
    """The study's rows on its candidates (decisions and skips)."""
    rows = ScreeningDecision.objects.filter(study=study)
    return rows.filter(figure__in=study.figures.all()) if study.figures.exists() else rows


def screening_progress(*, study: Study, user) -> dict:
    """Where the annotator stands: decided, skipped, the study's candidates, and those still to be shown to them."""
    counts = (
        _decisions(study)
        .filter(annotator=user)
        .aggregate(
            done=Count("id", filter=Q(accepted__isnull=False)), skipped=Count("id", filter=Q(accepted__isnull=True))
        )
    )
    total = len(screening_candidates(study))
    return counts | {"total": total, "left": max(0, total - counts["done"] - counts["skipped"])}


def screening_handled(*, study: Study, annotator_ids: list[int], since) -> list[tuple[int, int, int, int]]:
    """(annotator id, decisions, decisions since `since`, decisions and skips) of these annotators in the study."""
    decided = Q(accepted__isnull=False)
    return list(
        _decisions(study)
        .filter(annotator_id__in=annotator_ids)
        .values_list("annotator_id")
        .annotate(n=Count("id", filter=decided), day=Count("id", filter=decided & Q(decided_at__gte=since)))
        .annotate(handled=Count("id"))
        .order_by()
    )


def screening_study_for_annotator(*, user, name: str | None = None) -> Study | None:
    """The screening study the annotator works in: the one named (assigned, not closed); else the oldest active one
    with a figure left to them, else the oldest active one (all done), else a paused one (so they see why)."""
    studies = Study.objects.filter(annotators=user, kind=StudyKind.SCREENING).exclude(status=Study.Status.CLOSED)
    if name:
        return studies.filter(name=name).first()
    studies = list(studies.order_by("created_at", "name"))
    active = [s for s in studies if s.status == Study.Status.ACTIVE]
    with_work = next((s for s in active if screening_progress(study=s, user=user)["left"]), None)
    return with_work or (active[0] if active else (studies[0] if studies else None))


def screening_next_figure(*, study: Study, user) -> int | None:
    """The id of the next figure for the annotator: one they have neither decided nor skipped, the fewest decisions
    so far first, then a seeded order (the study's seed, per annotator). None when none is left."""
    candidates = screening_candidates(study)
    rows = ScreeningDecision.objects.filter(study=study)
    seen = set(rows.filter(annotator=user).values_list("figure_id", flat=True))
    left = [pk for pk in candidates if pk not in seen]
    if not left:
        return None
    decided = dict(
        rows.filter(accepted__isnull=False, figure_id__in=left).values_list("figure_id").annotate(n=Count("id"))
    )
    return min(left, key=lambda pk: (decided.get(pk, 0), assignment.seeded_rank(study.seed, "screen", user.pk, pk)))


def screening_token(*, study: Study, figure_id: int, user) -> str:
    return signing.dumps([study.pk, figure_id, user.pk], salt=TOKEN_SALT)


def screening_token_read(*, token: str, user) -> tuple[Study, int] | None:
    """The (study, figure id) a token addresses, when it was signed for this annotator, the study is a screening study
    still assigned to them and not closed, and the figure is one of its candidates; None otherwise."""
    try:
        study_id, figure_id, user_id = signing.loads(token, salt=TOKEN_SALT)
    except (signing.BadSignature, TypeError, ValueError):
        return None
    if user_id != user.pk:
        return None
    study = (
        Study.objects.filter(pk=study_id, kind=StudyKind.SCREENING, annotators=user)
        .exclude(status=Study.Status.CLOSED)
        .first()
    )
    if study is None or figure_id not in screening_candidates(study):
        return None
    return study, figure_id


def screening_figure(*, figure_id: int):
    return corpus_selectors.figure_list().filter(pk=figure_id).first()


def screening_payload(*, study: Study, figure_id: int, user) -> dict:
    """What the screening screen shows of one candidate: its token, study, image URL (by token), the figure's title,
    caption, field and licence, and the annotator's place in the study."""
    token = screening_token(study=study, figure_id=figure_id, user=user)
    figure = screening_figure(figure_id=figure_id)
    progress = screening_progress(study=study, user=user)
    return {
        "token": token,
        "study": {"name": study.name, "description": study.description},
        "images": {"source": reverse("annotation:screening-image", kwargs={"token": token})},
        "figure": {
            "title": figure.title,
            "caption": figure.caption,
            "field": figure.field,
            "license": figure.license,
            "license_url": figure.license_url,
        },
        "progress": {
            "position": progress["done"] + progress["skipped"] + 1,
            "total": progress["total"],
            "done": progress["done"],
        },
    }


def screening_previous(decision: ScreeningDecision) -> dict:
    """A decision in the screen's terms, to put back after an undo."""
    return {"decision": screening.ACCEPT if decision.accepted else screening.REJECT, "reason": decision.reason}


def annotator_study_list(*, user) -> list[dict]:
    """pool.annotator_study_list, with each screening study's progress counted in its figures (decided of its
    candidates, and those left to the annotator)."""
    rows = pool.annotator_study_list(user=user)
    named = {s.name: s for s in Study.objects.filter(annotators=user, kind=StudyKind.SCREENING)}
    for row in rows:
        if row["kind"] == StudyKind.SCREENING:
            counts = screening_progress(study=named[row["name"]], user=user)
            row.update(done=counts["done"], quota=counts["total"], left=counts["left"], waiting=0, waiting_note="")
    return rows


# --- the tables -------------------------------------------------------------------------------------------------------
def _decision_rows(study: Study) -> pd.DataFrame:
    rows = (
        _decisions(study)
        .filter(accepted__isnull=False)
        .order_by("decided_at", "pk")
        .values_list("figure__task_id", "annotator__username", "accepted", "reason", "decided_at")
    )
    return pd.DataFrame(list(rows), columns=[*screening.DECISION_COLUMNS, "reason", "decided_at"])


def _notes(study: Study, decisions: pd.DataFrame) -> list[str]:
    skipped = _decisions(study).filter(accepted__isnull=True).count()
    return [
        f"screening study {study.name}: {len(decisions)} decisions by {decisions['annotator'].nunique()} screeners on "
        f"{len(screening_candidates(study))} candidate figures; {skipped} skips (set aside, not decisions) left out",
        screening.MAJORITY_RULE,
    ]


def screening_decisions_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `screening-decisions` table: every decision, rejections with their reasons kept for audit."""
    resolved = study_of_kind(study=study, kind=StudyKind.SCREENING)
    rows = _decision_rows(resolved)
    frame = pd.DataFrame(
        {
            "task_id": rows["task_id"],
            "annotator": rows["annotator"],
            "decision": [screening.ACCEPT if a else screening.REJECT for a in rows["accepted"]],
            "reason": rows["reason"],
            "decided_at": [t.isoformat() for t in rows["decided_at"]],
        },
        columns=["task_id", "annotator", "decision", "reason", "decided_at"],
    )
    frame.attrs["notes"] = _notes(resolved, rows)
    return frame


def screening_summary_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `screening-summary` table: every candidate figure with its accepts, rejects and majority status."""
    resolved = study_of_kind(study=study, kind=StudyKind.SCREENING)
    rows = _decision_rows(resolved)
    frame = screening.screening_summary(rows, sorted(screening_candidates(resolved).values()))
    frame.attrs["notes"] = _notes(resolved, rows)
    return frame


def screening_agreement_frame(*, study: str | None = None) -> pd.DataFrame:
    """The `screening-agreement` table: per pair of screeners, the figures both decided, raw agreement and κ."""
    resolved = study_of_kind(study=study, kind=StudyKind.SCREENING)
    rows = _decision_rows(resolved)
    frame = screening.screening_agreement(rows)
    frame.attrs["notes"] = [
        *_notes(resolved, rows)[:1],
        "each pair of screeners over the figures both decided; Cohen's κ (scikit-learn) with accept and reject as the "
        "two labels, empty where undefined (both gave one and the same decision throughout)",
    ]
    return frame


def screening_accepted_task_ids(*, study: str) -> list[str]:
    """The task ids of the screening study's figures accepted by majority (screening-summary's status accepted)."""
    summary = screening_summary_frame(study=study)
    return list(summary.loc[summary["status"] == screening.ACCEPTED, "task_id"])
