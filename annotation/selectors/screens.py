"""What the annotator's screens read, blinded: items and leases with as much of their artifacts and figure as is shown,
the pairwise item payload (opaque token, image URLs by token, both audits with the same fields in the same order), the
vote an undo puts back, the annotator's progress and session summary, and the payloads of the single-artifact screens
(gate review, rating) with the annotator's place in them (and how many slides still wait for a rendering), of
calibration, and the coordinator's adjudication items. No annotator's payload names a configuration, artifact or
figure; the images behind the URLs are read in `images`."""

from __future__ import annotations

import statistics

from django.db.models import Count, QuerySet
from django.urls import reverse
from django.utils import timezone

from agents import selectors as agent_selectors
from core.querysets import select_narrow
from corpus.protocol import TIE_OUTCOMES

from ..models import ArtifactLease, CalibrationAnswer, Comparison, Item, Lease, Purpose, Study, StudyArtifact
from .images import ADJUDICATION_IMAGE_SIDES, ARTIFACT_IMAGE_SIDES, IMAGE_SIDES
from .pool import artifact_study_for_annotator
from .quality_tables import disagreements
from .studies import _current

# What annotator screens, images and votes read of an item's artifacts and figure: their rows are read narrowly
# (core.querysets.select_narrow), the rest of an artifact's sixty columns never leave the database on these paths.
SHOWN_ARTIFACT_FIELDS = ("gate_passed", "gate_reason", "audit_summary", "render_png", "render_sha256")
SHOWN_FIGURE_FIELDS = ("sha256", "image")

# A pairwise vote as its annotator gave it (a, b: their own sides), and a vote or decision relative to the item in the
# coordinator's words (x is shown as slide 1, y as slide 2): the adjudication form's choices, so that no configuration
# is named before the decision.
OUTCOME_WORDS = {
    "a": "A better",
    "b": "B better",
    "tie_success": "tie, shared success",
    "tie_failure": "tie, shared failure",
}
ADJUDICATION_CHOICES = (
    ("x", "slide 1 better"),
    ("y", "slide 2 better"),
    ("tie_success", "tie, shared success"),
    ("tie_failure", "tie, shared failure"),
)
LABEL_WORDS = dict(ADJUDICATION_CHOICES)


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


def lease_owned(*, token: str, user) -> Lease | None:
    return leases_shown(Lease.objects.filter(token=token, annotator=user), figure=True).first()


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


def study_of_kind_for_annotator(*, user, kind: str, name: str | None = None) -> Study | None:
    """The study of `kind` the annotator works in: the one named, else the one with work for them, each assigned
    study in its turn (pool.artifact_study_for_annotator; then a paused one, so they see why)."""
    studies = Study.objects.filter(annotators=user, kind=kind).exclude(status=Study.Status.CLOSED)
    if name:
        return studies.filter(name=name).first()
    return artifact_study_for_annotator(user=user, kind=kind)


def artifact_lease_owned(*, token: str, user):
    return (
        ArtifactLease.objects.select_related("artifact", "artifact__figure", "study")
        .filter(token=token, annotator=user)
        .first()
    )


def study_artifact_ids(*, study: Study, final_only: bool = False) -> list[int]:
    """The ids of a gate-review or rating study's artifacts (its configurations' on its figures; a study with a
    stratified sample: only its sampled artifacts among those); `final_only`: those with a final gate verdict, the only
    ones handed out (the others wait for their rendering)."""
    configuration_ids = list(study.configurations.values_list("pk", flat=True))
    figure_ids = list(study.figures.values_list("pk", flat=True)) or None
    keys = agent_selectors.artifact_keys(
        configuration_ids=configuration_ids, figure_ids=figure_ids, final_only=final_only
    )
    sampled = set(study.study_artifacts.filter(sampled=True).values_list("artifact_id", flat=True))
    return [pk for _, _, pk in keys if not sampled or pk in sampled]


def artifact_progress(*, study: Study, user) -> dict:
    """Where the annotator stands in a gate-review or rating study: judged, skipped, how many artifacts it has, and
    how many of those still wait for their rendering (never handed out until they have one)."""
    states = dict(study.artifact_leases.filter(annotator=user).values_list("state").annotate(n=Count("id")).order_by())
    total = len(study_artifact_ids(study=study))
    final = len(study_artifact_ids(study=study, final_only=True))
    done, skipped = states.get(ArtifactLease.State.SUBMITTED, 0), states.get(ArtifactLease.State.SKIPPED, 0)
    return {"done": done, "skipped": skipped, "total": total, "pending": total - final}


def artifact_lease_payload(*, lease, progress: dict) -> dict:
    """What a gate-review or rating page shows for one artifact: opaque token, its study (a screen serves the
    annotator's studies of its kind in turn), image URLs by token, the audit, the rating axes, the item's instruction
    and style target (task text from the rating import, empty when none), and the annotator's place in the study
    (`progress`, artifact_progress's)."""
    audit, _ = _audit_rows(lease.artifact.audit_summary, None)
    text = (
        StudyArtifact.objects.filter(study_id=lease.study_id, artifact_id=lease.artifact_id)
        .values("instruction", "style_target")
        .first()
    ) or {"instruction": "", "style_target": ""}
    return {
        "token": lease.token,
        "study": {"name": lease.study.name, "description": lease.study.description},
        "images": {
            side: reverse("annotation:artifact-image", kwargs={"token": lease.token, "side": side})
            for side in ARTIFACT_IMAGE_SIDES
        },
        "audit": audit,
        "rendered": bool(lease.artifact.render_png),
        "axes": list(lease.study.rating_axes),
        # the rating item's task text from the import (never configuration identity); empty: not shown
        "instruction": text["instruction"],
        "style_target": text["style_target"],
        "progress": {
            "position": progress["done"] + progress["skipped"] + 1,
            "total": progress["total"],
            "done": progress["done"],
        },
    }


def calibration_owned(*, token: str, user):
    return (
        CalibrationAnswer.objects.select_related("item", "item__figure", "item__artifact_x", "item__artifact_y")
        .filter(token=token, annotator=user)
        .first()
    )


def calibration_progress(*, study: Study, user) -> dict:
    """The study's practice items and how many of them the annotator answered or skipped."""
    answers = CalibrationAnswer.objects.filter(study=study, annotator=user)
    return {
        "items": study.items.filter(purpose=Purpose.CALIBRATION).count(),
        "answered": answers.exclude(outcome="").count(),
        "correct": answers.filter(correct=True).count(),
        "skipped": answers.filter(skipped=True).count(),
    }


def calibration_payload(*, answer, progress: dict | None = None) -> dict:
    """A practice item as shown: opaque token, images by token, both audits; once answered, the expert's answer in the
    annotator's own A / B terms and the explanation. `progress`: calibration_progress's, for "k of N"."""
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
    if progress is not None:
        handled = progress["answered"] + progress["skipped"]
        payload["progress"] = {"position": handled + (0 if answer.outcome else 1), "total": progress["items"]}
    if answer.outcome:
        expected = item.expected_label
        shown = expected if expected in TIE_OUTCOMES else ("a" if (expected == "x") == answer.left_is_x else "b")
        payload.update(
            {"outcome": answer.outcome, "expert": shown, "correct": answer.correct, "explanation": item.explanation}
        )
    return payload


def adjudication_rows(*, study: Study) -> list[dict]:
    """The adjudication page's items (quality_tables.disagreements) as the coordinator is shown them: the source and
    the two slides by URL, named "slide 1" (the item's x) and "slide 2" (y); each vote in its annotator's own A / B
    terms with the slide their A was, so that a reason saying "A" can be read against the right picture."""
    rows = disagreements(study=study)
    for row in rows:
        row["images"] = {
            side: reverse(
                "annotation:adjudication-image", kwargs={"name": study.name, "pk": row["item_id"], "side": side}
            )
            for side in ADJUDICATION_IMAGE_SIDES
        }
        for vote in row["votes"]:
            a_is_x = vote["artifact_a_id"] == vote["item__artifact_x_id"]
            vote["a_slide"], vote["b_slide"] = (1, 2) if a_is_x else (2, 1)
            vote["shown"] = OUTCOME_WORDS[vote["outcome"]]
            vote["means"] = LABEL_WORDS[vote["label"]]
        row["decision"] = LABEL_WORDS[row["adjudication"].label] if row["adjudication"] else None
    return rows
