"""A real browser on issue 15's screens: gate review and rating (keyboard first), calibration with the expert's answer
revealed, and the coordinator's quality page (exclusion, adjudication)."""

import pytest
from django.conf import settings
from django.test import Client

from annotation import services
from annotation.models import CalibrationAnswer, Comparison, GateReview, Rating, StudyKind
from annotation.services import artifact_studies
from annotation.services import quality as quality_services
from tests.annotation import test_browser
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator, next_lease, submit_vote
from tests.annotation.test_browser import OUTPUT, forbidden_strings

browser_page = test_browser.browser_page  # the project's Playwright fixture (Debian's chromium)


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _login(page, live_server, user):
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )


def _no_leaks(page, forbidden):
    html = page.content().lower()
    assert not [s for s in forbidden if s in html]


def test_gate_review_with_the_keyboard(live_server, browser_page):
    figures, configurations, artifacts = build_corpus(figures=2, configurations=SLUGS[:2])
    user = annotator("rev-browser")
    artifact_studies.artifact_study_create(
        name="gates", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[user]
    )
    forbidden = forbidden_strings(figures, configurations, artifacts)
    page = browser_page
    _login(page, live_server, user)
    page.goto(f"{live_server.url}/annotate/review/")
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "gate_review.png"))
    _no_leaks(page, forbidden)
    # 1: passes (P, Enter)
    page.keyboard.press("p")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Reviewed so far: 1")
    # 2: fails the semantic gate without a reason -> refused, then with a reason (S focuses the box, Ctrl+Enter)
    page.keyboard.press("s")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=a gate failure needs a short reason")
    page.keyboard.press("s")
    page.keyboard.type("half the labels are missing")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Reviewed so far: 2")
    # 3 and 4: rendering failure, pass
    page.keyboard.press("r")
    page.keyboard.type("blank slide")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Reviewed so far: 3")
    page.keyboard.press("p")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=All done")
    reviews = sorted(GateReview.objects.values_list("gate_fail", "gate", "reason"))
    assert reviews == [
        (False, "", ""),
        (False, "", ""),
        (True, "rendering", "blank slide"),
        (True, "semantic", "half the labels are missing"),
    ]
    assert set(GateReview.objects.values_list("reviewer", flat=True)) == {"rev-browser"}


def test_rating_with_the_keyboard(live_server, browser_page):
    figures, configurations, artifacts = build_corpus(figures=1, configurations=SLUGS[:2])
    user = annotator("rater-browser")
    artifact_studies.artifact_study_create(
        name="ratings", kind=StudyKind.RATING, configurations=SLUGS[:2], annotators=[user]
    )
    page = browser_page
    _login(page, live_server, user)
    page.goto(f"{live_server.url}/annotate/rate/")
    _no_leaks(page, forbidden_strings(figures, configurations, artifacts))
    page.keyboard.press("4")  # instruction following
    assert page.locator("tr.current").get_attribute("data-axis") == "visual_quality"
    page.keyboard.press("2")
    page.screenshot(path=str(OUTPUT / "rating.png"))
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Rated so far: 1")
    page.keyboard.press("5")
    page.keyboard.press("Backspace")  # back to instruction following, stays 5, visual quality set next
    page.keyboard.press("1")
    page.keyboard.press("0")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=All done")
    ratings = sorted(Rating.objects.values_list("artifact_id", "axis", "rating"))
    first, second = sorted({a for a, _, _ in ratings})
    got = {(a, axis): r for a, axis, r in ratings}
    assert {got[(first, "instruction_following")], got[(second, "instruction_following")]} == {4, 1}
    assert {got[(first, "visual_quality")], got[(second, "visual_quality")]} == {2, 0}
    assert set(Rating.objects.values_list("rater_kind", flat=True)) == {"human"}


def test_calibration_reveals_the_expert_and_coordinator_excludes_and_adjudicates(live_server, browser_page):
    figures, configurations, artifacts = build_corpus(figures=3, configurations=SLUGS[:3])
    study = services.study_create(name="qc", configurations=SLUGS[:3], min_dwell_ms=0, overlap_rate=1.0)
    first, second = annotator("ann-first"), annotator("ann-second")
    study.annotators.add(first, second)
    lease = next_lease(study=study, annotator=first)
    submit_vote(token=lease.token, annotator=first, outcome="a", reason="sharper", dwell_ms=4000)
    other = next_lease(study=study, annotator=second)
    assert other.item_id == lease.item_id
    flip = "b" if other.left_is_x == lease.left_is_x else "a"
    submit_vote(token=other.token, annotator=second, outcome=flip, reason="cleaner", dwell_ms=4000)
    quality_services.calibration_item_add(
        study=study, item=lease.item, label="x", explanation="The first keeps every arrow attached."
    )

    page = browser_page
    _login(page, live_server, first)
    page.goto(f"{live_server.url}/annotate/calibration/")
    _no_leaks(page, forbidden_strings(figures, configurations, artifacts))
    page.keyboard.press("2")  # B better
    page.wait_for_selector("#expert")
    page.screenshot(path=str(OUTPUT / "calibration.png"))
    answer = CalibrationAnswer.objects.get()
    expert = "a" if answer.left_is_x else "b"
    assert page.text_content("#expert-answer") == expert
    assert "The first keeps every arrow attached." in page.text_content("#explanation")
    assert answer.correct == (expert == "b")
    assert Comparison.objects.filter(study=study).count() == 2  # calibration never becomes a vote
    page.keyboard.press("n")
    page.wait_for_selector("text=No calibration items left")

    page.context.clear_cookies()
    _login(page, live_server, coordinator())
    page.goto(f"{live_server.url}/coordinate/qc/")
    page.click("#quality-link")
    page.wait_for_selector("#quality-table table")
    page.select_option("#exclude-form select", "ann-second")
    page.fill("#exclude-form input[name=reason]", "failed the attention items")
    page.click("#exclude-form button")
    page.wait_for_selector("text=1 votes excluded")
    assert "excluded 1 votes of annotator ann-second: failed the attention items" in page.text_content("#quality-notes")
    block = page.locator("section.adjudicate")
    assert block.count() == 1
    block.locator("select").select_option("y")
    block.locator("input[name=note]").fill("second reading is right")
    block.locator("button").click()
    page.wait_for_selector("text=decided y by coord-one")
    page.screenshot(path=str(OUTPUT / "quality.png"), full_page=True)
    assert study.adjudications.get().label == "y"
    page.click("button.calibrate")
    page.wait_for_selector("text=Calibration item added")
    assert study.items.get(purpose="calibration").expected_label == "y"
    assert Comparison.objects.filter(study=study, excluded=True).count() == 1
