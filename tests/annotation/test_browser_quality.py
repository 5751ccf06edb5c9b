"""A real browser on issue 15's screens: calibration with the expert's answer revealed, and the coordinator's quality
page (exclusion, adjudication). The gate-review and rating screens: test_task_screens_browser."""

import pytest
from django.conf import settings
from django.test import Client

from annotation import services
from annotation.models import CalibrationAnswer, Comparison
from annotation.services import quality as quality_services
from tests.annotation import test_browser
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator, next_lease, submit_vote
from tests.annotation.test_browser import forbidden_strings
from tests.annotation.test_task_screens_browser import SHOTS as SCREENSHOTS

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
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.keyboard.press("Enter")  # past the instructions
    page.wait_for_selector('.choice[data-choice="b"]:not([disabled])')
    _no_leaks(page, forbidden_strings(figures, configurations, artifacts))
    page.keyboard.press("2")  # B better
    page.keyboard.press("Enter")
    page.wait_for_selector("#expert:not([hidden])")
    page.screenshot(path=str(SCREENSHOTS / "calibration.png"))
    answer = CalibrationAnswer.objects.get()
    expert = "a" if answer.left_is_x else "b"
    assert page.text_content("#expert-answer") == f"{expert.upper()} better"
    assert "The first keeps every arrow attached." in page.text_content("#explanation")
    assert answer.correct == (expert == "b")
    assert Comparison.objects.filter(study=study).count() == 2  # calibration never becomes a vote
    page.keyboard.press("Enter")  # Next
    page.wait_for_selector("text=You have seen every practice item")
    assert "agreed with the expert on " + ("1" if expert == "b" else "0") in page.text_content("#summary-text")

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
    page.wait_for_selector("text=decided: slide 2 better, by coord-one")
    page.screenshot(path=str(SCREENSHOTS / "quality.png"), full_page=True)
    assert study.adjudications.get().label == "y"
    page.click("button.calibrate")
    page.wait_for_selector("text=Calibration item added")
    assert study.items.get(purpose="calibration").expected_label == "y"
    assert Comparison.objects.filter(study=study, excluded=True).count() == 1
