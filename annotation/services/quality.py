"""Quality control of pairwise studies: attention and calibration items, annotator exclusion, adjudication.

Attention and calibration items are Item rows beside the pool (in_pool False, their own purpose) with a known answer
relative to the item's configurations (`expected_label`: x, y, tie_success, tie_failure). The engine mixes attention
items and swapped repeats into a session at the study's rates (engine._quality_lease); calibration items are only
served on the calibration page and never count. Exclusion flags an annotator's votes (kept, never deleted) so every
analysis leaves them out and says how many and why.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.errors import Invalid, NotFound
from corpus.protocol import OUTCOMES, TIE_OUTCOMES

from .. import assignment
from ..errors import LeaseClosed, StudyUnavailable
from ..models import Adjudication, AnnotatorExclusion, CalibrationAnswer, Comparison, Item, Lease, Purpose, Study
from .engine import TOKEN_BYTES

LABELS = ("x", "y", "tie_success", "tie_failure")  # a vote relative to the item's configurations


def _label(value: str) -> str:
    if value not in LABELS:
        raise Invalid(f"label must be one of {', '.join(LABELS)}")
    return value


def attention_candidates(*, study: Study):
    """Pool items whose answer is known from the audit: one side a pasted full-slide raster (capped), the other a
    native reconstruction that passed the gate with no cap — the native side is the expected winner."""
    pool = Item.objects.filter(study=study, in_pool=True, purpose=Purpose.REGULAR)
    native_x = pool.filter(artifact_y__capped=True, artifact_x__capped=False, artifact_x__gate_passed=True)
    native_y = pool.filter(artifact_x__capped=True, artifact_y__capped=False, artifact_y__gate_passed=True)
    return [(item, "x") for item in native_x] + [(item, "y") for item in native_y]


@transaction.atomic
def attention_items_add(*, study: Study, count: int) -> list[Item]:
    """Add up to `count` attention items drawn (seeded) from attention_candidates; idempotent per (figure, pair)."""
    if count < 0:
        raise Invalid("count must be zero or more")
    candidates = sorted(
        attention_candidates(study=study), key=lambda c: assignment.seeded_rank(study.seed, "attention", c[0].pk)
    )
    return [
        _special_item(study=study, base=item, purpose=Purpose.ATTENTION, label=label)
        for item, label in candidates[:count]
    ]


@transaction.atomic
def calibration_item_add(*, study: Study, item: Item, label: str, explanation: str) -> Item:
    """A calibration item over the same figure and artifacts as `item`, with the expert's answer and explanation."""
    if not explanation.strip():
        raise Invalid("a calibration item needs the expert's explanation")
    return _special_item(
        study=study, base=item, purpose=Purpose.CALIBRATION, label=_label(label), explanation=explanation.strip()
    )


def _special_item(*, study: Study, base: Item, purpose: str, label: str, explanation: str = "") -> Item:
    item, _ = Item.objects.update_or_create(
        study=study,
        figure_id=base.figure_id,
        config_x_id=base.config_x_id,
        config_y_id=base.config_y_id,
        purpose=purpose,
        defaults={
            "artifact_x_id": base.artifact_x_id,
            "artifact_y_id": base.artifact_y_id,
            "expected_label": _label(label),
            "explanation": explanation,
            "in_pool": False,
            "rank": assignment.seeded_rank(study.seed, purpose, base.pk)[:64],
        },
    )
    return item


@transaction.atomic
def annotator_exclude(*, study: Study, annotator: str, reason: str, decided_by: str = "") -> int:
    """Leave every vote of `annotator` in `study` out of the analysis (flagged, kept). Returns how many votes."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid("say why this annotator's votes are excluded")
    if not Comparison.objects.filter(study=study, annotator_name=annotator).exists():
        raise NotFound(f"{annotator!r} has no votes in study {study.name}")
    AnnotatorExclusion.objects.update_or_create(
        study=study, annotator_name=annotator, defaults={"reason": reason[:300], "decided_by": decided_by}
    )
    return Comparison.objects.filter(study=study, annotator_name=annotator).update(
        excluded=True, exclusion_reason=reason[:300]
    )


@transaction.atomic
def annotator_include(*, study: Study, annotator: str) -> int:
    """Undo an exclusion: the annotator's votes count again."""
    AnnotatorExclusion.objects.filter(study=study, annotator_name=annotator).delete()
    return Comparison.objects.filter(study=study, annotator_name=annotator).update(excluded=False, exclusion_reason="")


def adjudication_save(*, study: Study, item_id: int, label: str, note: str, decided_by: str) -> Adjudication:
    """Store a coordinator's decision on an overlap item (the votes are not altered)."""
    item = Item.objects.filter(study=study, pk=item_id).first()
    if item is None:
        raise NotFound("no such item in this study")
    adjudication, _ = Adjudication.objects.update_or_create(
        study=study, item=item, defaults={"label": _label(label), "note": note.strip(), "decided_by": decided_by}
    )
    return adjudication


def calibration_next(*, study: Study, annotator):
    """The annotator's unanswered calibration item, or a new one they have not seen; None when all are answered."""
    open_answer = CalibrationAnswer.objects.filter(study=study, annotator=annotator, outcome="", skipped=False).first()
    if open_answer is not None:
        return open_answer
    seen = CalibrationAnswer.objects.filter(study=study, annotator=annotator).values("item_id")
    ids = list(
        Item.objects.filter(study=study, purpose=Purpose.CALIBRATION).exclude(pk__in=seen).values_list("pk", flat=True)
    )
    if not ids:
        return None
    pk = min(ids, key=lambda i: assignment.seeded_rank(study.seed, "calibration", annotator.pk, i))
    left = int(assignment.seeded_rank(study.seed, "calibration-side", annotator.pk, pk)[-1], 16) % 2 == 0
    answer, _ = CalibrationAnswer.objects.get_or_create(
        study=study,
        item_id=pk,
        annotator=annotator,
        defaults={"token": secrets.token_urlsafe(TOKEN_BYTES), "left_is_x": left},
    )
    return answer


def calibration_answer(*, token: str, annotator, outcome: str):
    """Record the annotator's answer to a calibration item (once) and whether it matches the expert's."""
    if outcome not in OUTCOMES:
        raise Invalid(f"outcome must be one of {', '.join(OUTCOMES)}")
    with transaction.atomic():
        answer = (
            CalibrationAnswer.objects.select_for_update()
            .select_related("item")
            .filter(token=token, annotator=annotator)
            .first()
        )
        if answer is None:
            raise NotFound("no such item: the link is unknown")
        if answer.outcome:
            return answer
        if answer.skipped:
            raise LeaseClosed("this practice item was skipped")
        label = outcome if outcome in TIE_OUTCOMES else ("x" if (outcome == "a") == answer.left_is_x else "y")
        answer.outcome, answer.correct, answer.answered_at = (
            outcome,
            label == answer.item.expected_label,
            timezone.now(),
        )
        answer.save(update_fields=["outcome", "correct", "answered_at"])
        return answer


def calibration_skip(*, token: str, annotator) -> CalibrationAnswer:
    """Set an unanswered practice item aside: it is not served to the annotator again. Idempotent."""
    with transaction.atomic():
        answer = CalibrationAnswer.objects.select_for_update().filter(token=token, annotator=annotator).first()
        if answer is None:
            raise NotFound("no such item: the link is unknown")
        if answer.outcome:
            raise LeaseClosed("this practice item is answered already; it cannot be skipped")
        if not answer.skipped:
            answer.skipped = True
            answer.save(update_fields=["skipped"])
        return answer


def calibration_undo(*, study: Study, annotator) -> tuple[CalibrationAnswer, str]:
    """Take back the annotator's last practice answer, as the comparison screen's undo does: the item is open again
    and its answer returned (as shown, a / b / tie_…) for the screen to put back. The item they had open meanwhile,
    answered by no one, is given back to be served in its turn."""
    if study.status == Study.Status.CLOSED:
        raise StudyUnavailable("this study is closed")
    with transaction.atomic():
        answers = CalibrationAnswer.objects.select_for_update().filter(study=study, annotator=annotator)
        last = answers.exclude(outcome="").order_by("-answered_at", "-pk").first()
        if last is None:
            raise LeaseClosed("there is no practice answer to undo")
        answers.filter(outcome="", skipped=False).delete()
        previous = last.outcome
        last.outcome, last.correct, last.answered_at = "", None, None
        last.save(update_fields=["outcome", "correct", "answered_at"])
        return last, previous


@dataclass(frozen=True)
class AttentionItems:
    """What attention_items_set left: the study's attention items, and how many of them stayed only because they
    were served already (more than the count asked for)."""

    items: int
    served_kept: int


@transaction.atomic
def attention_items_set(*, study: Study, count: int) -> AttentionItems:
    """Make the study's attention items `count`: add candidates in the seeded order (attention_items_add's) while
    there are fewer and candidates remain; remove the last ones in that order while there are more. An item already
    served to an annotator is never removed (its votes measure their attention), so a count below the served items
    leaves those. 0 removes every attention item nobody has seen."""
    if count < 0:
        raise Invalid("count must be zero or more")
    existing = list(Item.objects.filter(study=study, purpose=Purpose.ATTENTION))
    if count > len(existing):
        have = {(i.figure_id, i.config_x_id, i.config_y_id) for i in existing}
        candidates = sorted(
            attention_candidates(study=study), key=lambda c: assignment.seeded_rank(study.seed, "attention", c[0].pk)
        )
        fresh = [
            (item, label)
            for item, label in candidates
            if (item.figure_id, item.config_x_id, item.config_y_id) not in have
        ]
        for item, label in fresh[: count - len(existing)]:
            _special_item(study=study, base=item, purpose=Purpose.ATTENTION, label=label)
    elif count < len(existing):
        served = set(Lease.objects.filter(item__in=existing).values_list("item_id", flat=True)) | set(
            Comparison.objects.filter(item__in=existing).values_list("item_id", flat=True)
        )
        removable = sorted((i for i in existing if i.pk not in served), key=lambda i: i.rank, reverse=True)
        Item.objects.filter(pk__in=[i.pk for i in removable[: len(existing) - count]]).delete()
    items = Item.objects.filter(study=study, purpose=Purpose.ATTENTION).count()
    return AttentionItems(items=items, served_kept=max(0, items - count))
