"""The gate-review, rating and calibration screens' API (next / submit / skip / undo, as the comparison screen's), the
placeholder served for a slide without a rendering, and the coordinator's adjudication items (both slides and the
source, the votes in their annotators' own A / B terms, configurations named only once decided)."""

import io
import json

import pytest
from django.conf import settings
from django.test import Client
from PIL import Image

from agents.models import Artifact
from annotation import selectors, services
from annotation.models import ArtifactLease, CalibrationAnswer, GateReview, Rating, StudyKind
from annotation.selectors.images import _placeholder_png
from annotation.services import artifact_studies
from annotation.services import quality as quality_services
from core.png import png_is_plain
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator, next_lease, submit_vote
from tests.annotation.test_browser import forbidden_strings, json_keys
from tests.pages import without_csrf_tokens

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def post(client, path: str, body: dict | None = None):
    return client.post(f"/api/annotate/{path}/", json.dumps(body or {}), content_type="application/json")


def stored(response) -> bool:
    return response.status_code == 200


def artifact_study(kind, *, figures=2, failed=(), user=None, **kwargs):
    world = build_corpus(figures=figures, configurations=SLUGS[:2], failed=failed)
    user = user or annotator("rev-one")
    study = artifact_studies.artifact_study_create(
        name=f"s-{kind}", kind=kind, configurations=SLUGS[:2], annotators=[user], **kwargs
    )
    return study, user, world


def no_identity(body: bytes, forbidden) -> list[str]:
    text = without_csrf_tokens(body.decode("latin-1")).lower()
    return [s for s in forbidden if s in text]


# --- the placeholder -----------------------------------------------------------------------------------------------
def test_a_slide_that_failed_the_gate_without_rendering_gets_a_legible_blind_placeholder():
    """Measured on main: every such slide answered 500 (the placeholder was called with one argument of two)."""
    study, user, world = artifact_study(StudyKind.GATE_REVIEW, figures=1, failed=((SLUGS[0], 0), (SLUGS[1], 0)))
    failed = Artifact.objects.filter(gate_passed=False)
    assert failed.count() == 2 and not any(a.render_png for a in failed)  # the factory's: gate_reason "corrupt"
    client = login(user)
    item = post(client, "review/next").json()["item"]
    assert item["rendered"] is False
    response = client.get(item["images"]["a"])
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response["Cache-Control"] == "private, no-store"
    body = response.content
    assert body == _placeholder_png("No rendering", "The deck failed the gate: corrupt file, it cannot be opened.")
    # pixels only (no text, EXIF or ICC chunk), and nothing of the artifact in the bytes
    assert png_is_plain(body) and b"tEXt" not in body and b"iTXt" not in body and b"zTXt" not in body
    assert not no_identity(body, forbidden_strings(*world))
    with Image.open(io.BytesIO(body)) as image:
        assert image.size == selectors.PLACEHOLDER_SIZE and not image.info  # no metadata read back either
    # the source beside it is served as well, and the rating screen's and calibration's images use the same drawing
    assert client.get(item["images"]["source"]).status_code == 200


def test_calibration_and_rating_images_of_a_failed_slide_are_served_too():
    world = build_corpus(figures=2, configurations=SLUGS[:2], failed=((SLUGS[0], 0), (SLUGS[0], 1)))
    study = services.study_create(name="qc", configurations=SLUGS[:2], min_dwell_ms=0, include_gate_failed=True)
    user = annotator("ann-cal")
    study.annotators.add(user)
    lease = next_lease(study=study, annotator=user)
    quality_services.calibration_item_add(study=study, item=lease.item, label="y", explanation="the other is blank")
    rating = artifact_studies.artifact_study_create(
        name="rate", kind=StudyKind.RATING, configurations=[SLUGS[0]], annotators=[user]
    )
    client = login(user)
    calibration = post(client, "calibration/next").json()["item"]
    rated = post(client, "rate/next", {"study": rating.name}).json()["item"]
    forbidden = forbidden_strings(*world)
    for url in (*calibration["images"].values(), *rated["images"].values()):
        response = client.get(url)
        assert response.status_code == 200 and png_is_plain(response.content), url
        assert not no_identity(response.content, forbidden)


# --- gate review: next, submit, skip, undo -------------------------------------------------------------------------
def test_gate_review_submit_undo_puts_the_verdict_back_and_skip_sets_an_artifact_aside():
    study, user, world = artifact_study(StudyKind.GATE_REVIEW, figures=2)  # 4 artifacts
    client = login(user)
    first = post(client, "review/next").json()
    assert first["state"] == "item" and first["item"]["progress"] == {"position": 1, "total": 4, "done": 0}
    token = first["item"]["token"]
    # a failure needs a reason; then it is stored
    refused = post(client, "review/submit", {"token": token, "verdict": "semantic", "reason": " "})
    assert refused.status_code == 400 and "reason" in refused.json()["detail"]
    assert stored(post(client, "review/submit", {"token": token, "verdict": "semantic", "reason": "labels lost"}))
    second = post(client, "review/next").json()["item"]
    assert second["progress"]["position"] == 2 and second["token"] != token

    # undo: the first artifact again, its verdict and reason to put back; the decision is withdrawn, the open lease
    # given back (served again in its turn)
    undone = post(client, "review/undo").json()
    assert undone["item"]["token"] == token and undone["previous"] == {"verdict": "semantic", "reason": "labels lost"}
    assert GateReview.objects.count() == 0
    assert not ArtifactLease.objects.filter(token=second["token"]).exists()
    assert post(client, "review/next").json()["item"]["token"] == token  # the reopened one is the open one
    assert stored(post(client, "review/submit", {"token": token, "verdict": "pass"}))
    assert list(GateReview.objects.values_list("gate_fail", "gate", "reason")) == [(False, "", "")]

    # skip: a reason is needed; the skipped artifact is not served again and cannot be judged
    skipped = post(client, "review/next").json()["item"]["token"]
    assert post(client, "review/skip", {"token": skipped, "reason": ""}).status_code == 400
    assert stored(post(client, "review/skip", {"token": skipped, "reason": "cannot read it"}))
    assert ArtifactLease.objects.get(token=skipped).skip_reason == "cannot read it"
    assert post(client, "review/submit", {"token": skipped, "verdict": "pass"}).status_code == 409
    third = post(client, "review/next").json()["item"]["token"]
    assert third != skipped
    assert stored(post(client, "review/submit", {"token": third, "verdict": "rendering", "reason": "blank"}))
    last = post(client, "review/next").json()["item"]
    assert stored(post(client, "review/submit", {"token": last["token"], "verdict": "pass"}))
    done = post(client, "review/next").json()
    assert done["state"] == "done" and done["summary"] == {"done": 3, "skipped": 1, "total": 4, "pending": 0}
    # undo reaches the last judgement, not the skip
    assert post(client, "review/undo").json()["item"]["token"] == last["token"]
    # another annotator's token is unknown to them
    other = annotator("rev-two")
    study.annotators.add(other)
    assert post(login(other), "review/skip", {"token": last["token"], "reason": "not mine"}).status_code == 404


def test_slides_waiting_for_their_rendering_are_said_so_not_all_done():
    study, user, world = artifact_study(StudyKind.GATE_REVIEW, figures=2)
    waiting = [a.pk for a in world[2][:3]]
    Artifact.objects.filter(pk__in=waiting).update(gate_passed=None, render_png="")
    client = login(user)
    token = post(client, "review/next").json()["item"]["token"]
    assert stored(post(client, "review/submit", {"token": token, "verdict": "pass"}))
    answer = post(client, "review/next").json()
    assert answer["state"] == "waiting" and answer["summary"]["pending"] == 3 and answer["summary"]["done"] == 1
    Artifact.objects.filter(pk=waiting[0]).update(gate_passed=True)  # one rendered meanwhile
    assert post(client, "review/next").json()["state"] == "item"


def test_rating_undo_puts_the_ratings_back_and_the_payloads_are_blind():
    study, user, world = artifact_study(StudyKind.RATING, figures=1)
    client = login(user)
    item = post(client, "rate/next").json()["item"]
    assert item["axes"] == ["instruction_following", "visual_quality"]
    bad = post(client, "rate/submit", {"token": item["token"], "ratings": {"visual_quality": 9}})
    assert bad.status_code == 400
    ratings = {"instruction_following": 4, "visual_quality": 1}
    assert stored(post(client, "rate/submit", {"token": item["token"], "ratings": ratings}))
    bodies = [post(client, "rate/next").content]
    undone = post(client, "rate/undo")
    bodies.append(undone.content)
    assert undone.json()["previous"] == {"ratings": ratings} and Rating.objects.count() == 0
    forbidden = forbidden_strings(*world)
    for body in bodies:
        assert not no_identity(body, forbidden)
        keys = list(json_keys(json.loads(body)))
        assert not [k for k in keys if "artifact" in k.lower() or k.lower() == "id" or k.lower().endswith("_id")]
    # the page itself carries the API's URLs and the study's name, nothing of the slides
    page = client.get("/annotate/rate/")
    assert page.status_code == 200 and page["Cache-Control"] == "private, no-store"
    assert 'data-api-undo="/api/annotate/rate/undo/"' in page.content.decode()
    assert not no_identity(page.content, forbidden)


# --- calibration -------------------------------------------------------------------------------------------------
def test_calibration_says_when_the_study_has_no_practice_items():
    build_corpus(figures=2, configurations=SLUGS[:2])
    study = services.study_create(name="no-practice", configurations=SLUGS[:2], min_dwell_ms=0)
    user = annotator("ann-new")
    study.annotators.add(user)
    client = login(user)
    answer = post(client, "calibration/next").json()
    assert answer["state"] == "done"
    assert answer["summary"] == {"items": 0, "answered": 0, "correct": 0, "skipped": 0}
    page = client.get("/annotate/calibration/").content.decode()
    assert 'data-api-next="/api/annotate/calibration/next/"' in page
    # the screen words the two ends apart: no practice items at all, and every one seen
    script = (settings.BASE_DIR / "templates" / "static" / "review.js").read_text()
    assert "if (!s.items)" in script and "This study has no practice items" in script


def test_calibration_answer_reveal_undo_and_skip():
    build_corpus(figures=3, configurations=SLUGS[:3])
    study = services.study_create(name="qc", configurations=SLUGS[:3], min_dwell_ms=0, overlap_rate=0)
    user = annotator("ann-cal")
    study.annotators.add(user)
    items = []
    for _ in range(2):
        lease = next_lease(study=study, annotator=user)
        submit_vote(token=lease.token, annotator=user, outcome="a", reason="r", dwell_ms=4000)
        items.append(lease.item)
    for item in items:
        quality_services.calibration_item_add(study=study, item=item, label="x", explanation="x keeps every arrow")
    client = login(user)
    first = post(client, "calibration/next").json()["item"]
    assert first["answered"] is False and first["progress"] == {"position": 1, "total": 2}
    answered = post(client, "calibration/answer", {"token": first["token"], "outcome": "tie_failure"}).json()["item"]
    assert answered["answered"] and answered["correct"] is False and answered["explanation"] == "x keeps every arrow"
    assert answered["expert"] in ("a", "b")
    second = post(client, "calibration/next").json()["item"]
    undone = post(client, "calibration/undo").json()
    assert undone["item"]["token"] == first["token"] and undone["previous"] == {"outcome": "tie_failure"}
    assert undone["item"]["answered"] is False and not CalibrationAnswer.objects.filter(token=second["token"]).exists()
    assert post(client, "calibration/answer", {"token": first["token"], "outcome": answered["expert"]}).json()["item"][
        "correct"
    ]
    again = post(client, "calibration/next").json()["item"]
    assert stored(post(client, "calibration/skip", {"token": again["token"]}))
    assert post(client, "calibration/answer", {"token": again["token"], "outcome": "a"}).status_code == 409
    done = post(client, "calibration/next").json()
    assert done["state"] == "done" and done["summary"] == {"items": 2, "answered": 1, "correct": 1, "skipped": 1}


# --- adjudication ------------------------------------------------------------------------------------------------
def test_adjudication_shows_the_item_in_the_annotators_terms_and_names_configurations_once_decided():
    build_corpus(figures=3, configurations=SLUGS[:3])
    study = services.study_create(name="qc", configurations=SLUGS[:3], min_dwell_ms=0, overlap_rate=1.0)
    first, second = annotator("ann-first"), annotator("ann-second")
    study.annotators.add(first, second)
    lease = next_lease(study=study, annotator=first)
    submit_vote(token=lease.token, annotator=first, outcome="a", reason="A keeps the arrows", dwell_ms=4000)
    other = next_lease(study=study, annotator=second)
    flip = "b" if other.left_is_x == lease.left_is_x else "a"
    submit_vote(token=other.token, annotator=second, outcome=flip, reason="its labels are right", dwell_ms=4000)
    item = lease.item
    coordinating = login(coordinator())
    page = coordinating.get("/coordinate/qc/quality/").content.decode()
    slugs = (item.config_x.slug, item.config_y.slug)
    adjudication = page[page.index('id="adjudication"') :]
    assert not [s for s in slugs if s in adjudication]  # hidden until decided
    first_a = 1 if lease.left_is_x else 2
    assert f"A = slide {first_a}, B = slide {3 - first_a}" in adjudication
    assert "A better" in adjudication and "A keeps the arrows" in adjudication and "slide 1 better" in adjudication
    for side in ("source", "x", "y"):
        url = f"/coordinate/qc/quality/img/{item.pk}/{side}"
        assert url in adjudication
        response = coordinating.get(url)
        assert response.status_code == 200 and png_is_plain(response.content)
        assert login(first).get(url).status_code == 403  # annotators never reach it
    assert coordinating.get(f"/coordinate/qc/quality/img/{item.pk}/a").status_code == 404
    coordinating.post("/coordinate/qc/quality/", {"action": "adjudicate", "item": item.pk, "label": "y", "note": "ok"})
    decided = coordinating.get("/coordinate/qc/quality/").content.decode()
    assert f"decided: slide 2 better, by coord-one. Slide 1 is {slugs[0]}, slide 2 is {slugs[1]}." in decided
