"""A real browser on the gate-review and rating screens at 1366×768, keyboard only: every choice by its key, Enter
submits (Shift+Enter is a new line in the reason), undo puts the judgement back, skip sets a slide aside, a slide
without a rendering shows its placeholder; the page fits the window (Submit in view) and logs no console error."""

import tempfile
from pathlib import Path

import pytest

from annotation.models import ArtifactLease, GateReview, Rating, StudyKind
from annotation.services import artifact_studies
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus
from tests.annotation.test_browser import forbidden_strings
from tests.browser import outside_window, session_login, watched_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# Screenshots to look at, outside the repository (the README's task-screen shots come from test_study_kinds_browser).
SHOTS = Path(tempfile.gettempdir()) / "refig-task-screens"
VIEWPORT = {"width": 1366, "height": 768}
# What must be in the window, whole, at 1366×768 with no page scrolling.
IN_VIEW = (".bar", ".panes", "#audit-a", ".vote", "#submit")


@pytest.fixture
def page(live_server):
    with watched_page(viewport=VIEWPORT) as opened:
        yield opened


def login(page, live_server, user):
    session_login(page, live_server.url, username=user.username, password=PASSWORD)


def outside(page, selectors=IN_VIEW) -> list[str]:
    return outside_window(page, selectors)


def wait_item(page, position: int, total: int) -> int:
    """Wait for item `position` of `total` to be ready for a choice; the natural width of its slide image."""
    page.wait_for_function(f"() => document.querySelector('#progress').textContent === '{position} of {total}'")
    page.wait_for_selector(".choice:not([disabled]), .rate:not([disabled])", timeout=10_000)
    return page.evaluate("document.querySelector('img[data-img=a]').naturalWidth")


def test_gate_review_and_rating_with_the_keyboard_at_1366x768(live_server, page):
    figures, configurations, artifacts = build_corpus(figures=2, configurations=SLUGS[:2], failed=((SLUGS[1], 1),))
    user = annotator("rev-keys")
    artifact_studies.artifact_study_create(
        name="gates", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[user]
    )
    artifact_studies.artifact_study_create(
        name="ratings", kind=StudyKind.RATING, configurations=SLUGS[:2], figures=["task-fig-0000"], annotators=[user]
    )
    forbidden = forbidden_strings(figures, configurations, artifacts)
    SHOTS.mkdir(parents=True, exist_ok=True)
    login(page, live_server, user)

    # --- gate review -------------------------------------------------------------------------------------------
    page.goto(f"{live_server.url}/annotate/review/")
    assert page.is_visible("#instructions")  # the first visit starts with the instructions; Enter starts
    page.screenshot(path=str(SHOTS / "gate-review-instructions.png"))
    page.keyboard.press("Enter")
    widths = [wait_item(page, 1, 4)]
    assert outside(page) == [], outside(page)
    page.screenshot(path=str(SHOTS / "gate-review-1366x768.png"))
    # 1: passes
    page.keyboard.press("1")
    assert "selected" in page.get_attribute('.choice[data-choice="pass"]', "class")
    page.keyboard.press("Enter")
    # 2: fails the semantic gate; the key moves to the reason box, Shift+Enter is a new line, Enter submits
    widths.append(wait_item(page, 2, 4))
    page.keyboard.press("2")
    page.wait_for_function("() => document.activeElement.id === 'reason'")
    page.keyboard.type("labels 1 2 3 lost")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("u k r")
    assert outside(page) == []
    page.keyboard.press("Enter")
    wait_item(page, 3, 4)
    assert GateReview.objects.get(gate="semantic").reason == "labels 1 2 3 lost\nu k r"
    # undo: the second slide again, its verdict and reason back; change it to a rendering failure
    page.keyboard.press("u")
    wait_item(page, 2, 4)
    page.wait_for_function("() => document.querySelector('#reason').value === 'labels 1 2 3 lost\\nu k r'")
    assert "selected" in page.get_attribute('.choice[data-choice="semantic"]', "class")
    assert GateReview.objects.count() == 1  # withdrawn
    page.keyboard.press("Escape")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    # 3: skip, with a reason
    widths.append(wait_item(page, 3, 4))
    page.keyboard.press("k")
    page.wait_for_function("() => document.activeElement.id === 'skip-reason'")
    page.keyboard.type("too small to judge")
    page.keyboard.press("Enter")
    # 4: zoom moves both images together; one of the four had no rendering and showed its placeholder (1600 wide)
    widths.append(wait_item(page, 4, 4))
    page.mouse.move(400, 300)
    page.mouse.wheel(0, -300)
    transforms = page.eval_on_selector_all(".viewport .frame", "els => els.map(e => e.style.transform)")
    assert len(transforms) == 2 and len(set(transforms)) == 1 and "scale(1)" not in transforms[0]
    page.screenshot(path=str(SHOTS / "gate-review-zoomed.png"))
    page.keyboard.press("0")
    assert page.text_content("#zoom-level") == "zoom 100 %"
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#summary:not([hidden])")
    assert "All done" in page.text_content("#summary-heading")
    assert "You reviewed 3 slides and skipped 1." in page.text_content("#summary-text")
    page.screenshot(path=str(SHOTS / "gate-review-done.png"))
    assert sorted(widths).count(1600) == 1, widths
    reviews = sorted(GateReview.objects.values_list("gate_fail", "gate", "reason"))
    assert reviews == [(False, "", ""), (False, "", ""), (True, "rendering", "labels 1 2 3 lost\nu k r")]
    assert ArtifactLease.objects.get(state="skipped").skip_reason == "too small to judge"
    html = page.content().lower()
    assert not [s for s in forbidden if s in html]

    # --- rating --------------------------------------------------------------------------------------------------
    page.goto(f"{live_server.url}/annotate/rate/")
    page.keyboard.press("Enter")  # past the instructions
    wait_item(page, 1, 2)
    assert outside(page) == [], outside(page)
    assert page.get_attribute("#ratings tr.current", "data-axis") == "instruction_following"
    page.keyboard.press("4")
    assert page.get_attribute("#ratings tr.current", "data-axis") == "visual_quality"
    page.keyboard.press("2")
    page.screenshot(path=str(SHOTS / "rating-1366x768.png"))
    page.keyboard.press("Enter")
    wait_item(page, 2, 2)
    page.keyboard.press("5")
    page.keyboard.press("ArrowUp")  # back to instruction following
    page.keyboard.press("1")
    page.keyboard.press("0")
    page.keyboard.press("Enter")
    page.wait_for_selector("#summary:not([hidden])")
    # undo from the summary: the ratings come back, change one and submit again
    page.keyboard.press("u")
    wait_item(page, 2, 2)
    page.wait_for_function("() => document.querySelectorAll('#ratings .rate.selected').length === 2")
    assert Rating.objects.count() == 2  # the first artifact's; the second's withdrawn
    page.keyboard.press("ArrowDown")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_selector("#summary:not([hidden])")
    got = {}
    for artifact, axis, value in Rating.objects.values_list("artifact_id", "axis", "rating"):
        got.setdefault(artifact, {})[axis] = value
    assert sorted(got.values(), key=lambda r: r["instruction_following"]) == [
        {"instruction_following": 1, "visual_quality": 3},
        {"instruction_following": 4, "visual_quality": 2},
    ]
    assert page.errors == []
