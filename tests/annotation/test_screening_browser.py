"""A real browser on the screening screen at 1366×768, keyboard only: three candidate figures, each shown with its
title, caption, field and licence; A accepts, R rejects (a rejection needs its reason, an acceptance may have one),
Enter submits and Shift+Enter is a new line, ? shows the instructions, U takes the last decision back (it returns to
be changed); the page fits the window and logs no console error. Its screenshot is docs/screenshots/screening.png
under `make screenshots`."""

import pytest

from annotation import services
from annotation.models import ScreeningDecision, StudyKind
from corpus.models import Figure
from tests.annotation.data import PASSWORD, annotator, build_corpus
from tests.browser import outside_window, screenshot_folder, session_login, watched_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
VIEWPORT = {"width": 1366, "height": 768}
# What must be in the window, whole, at 1366×768 with no page scrolling.
IN_VIEW = (".bar", ".pane", ".figure-facts", ".vote", "#submit")


@pytest.fixture
def page(live_server):
    with watched_page(viewport=VIEWPORT) as opened:
        yield opened


def login(page, live_server, user):
    session_login(page, live_server.url, username=user.username, password=PASSWORD)


def outside(page) -> list[str]:
    return outside_window(page, IN_VIEW)


def wait_figure(page, position: int) -> str:
    """Wait for candidate `position` of 3, its image loaded and the choices enabled; its title as shown."""
    page.wait_for_function(f"() => document.querySelector('#progress').textContent === '{position} of 3'")
    page.wait_for_selector(".choice:not([disabled])", timeout=10_000)
    assert page.evaluate("document.querySelector('img[data-img=source]').naturalWidth") > 0
    return page.text_content("#figure-title")


def test_screening_three_figures_with_the_keyboard_at_1366x768(live_server, page):
    figures, _, _ = build_corpus(figures=3, configurations=())
    for figure in figures:
        Figure.objects.filter(pk=figure.pk).update(
            caption=f"Overview of the pipeline of {figure.task_id}: encoder, retriever and decoder.",
            license_url="https://creativecommons.org/licenses/by/4.0/",
        )
    user = annotator("scr-keys")
    services.study_create(name="corpus-screen", kind=StudyKind.SCREENING, annotators=[user])
    login(page, live_server, user)

    page.goto(f"{live_server.url}/annotate/corpus-screen/")  # by name: to the screening screen
    assert page.url.startswith(f"{live_server.url}/annotate/screen/")
    assert page.is_visible("#instructions")  # the first visit starts with the instructions; Enter starts
    page.keyboard.press("Enter")
    titles = [wait_figure(page, 1)]
    assert outside(page) == [], outside(page)
    assert page.text_content("#figure-field") == "cs.CV" and "CC BY 4.0" in page.text_content("#figure-license")
    assert "encoder, retriever and decoder" in page.text_content("#figure-caption")
    source = page.get_attribute("img[data-img=source]", "src")
    assert source.startswith("/annotate/screen/img/") and ".png" not in source  # no file name in the URL
    page.keyboard.press("?")
    assert page.is_visible("#instructions")
    page.keyboard.press("Enter")  # Start, focused: back to the figure
    page.wait_for_selector("#instructions", state="hidden")
    page.screenshot(path=str(screenshot_folder("screenshots") / "screening.png"))

    # 1: A accepts; the reason is optional, Enter sends it empty
    page.keyboard.press("a")
    page.wait_for_function("() => document.activeElement.id === 'reason'")
    assert "selected" in page.get_attribute('.choice[data-choice="accept"]', "class")
    page.keyboard.press("Enter")
    titles.append(wait_figure(page, 2))
    # 2: R rejects; Enter without a reason is refused, Shift+Enter is a new line, Enter submits
    page.keyboard.press("r")
    page.wait_for_function("() => document.activeElement.id === 'reason'")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('needs a short reason')")
    assert page.text_content("#progress") == "2 of 3"
    page.keyboard.type("a results plot")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("not an overview")
    assert outside(page) == []
    page.keyboard.press("Enter")
    titles.append(wait_figure(page, 3))
    assert ScreeningDecision.objects.get(accepted=False).reason == "a results plot\nnot an overview"
    # undo: the second figure again with its decision and reason back; accept it instead, with a reason
    page.keyboard.press("u")
    assert wait_figure(page, 2) == titles[1]
    page.wait_for_function("() => document.querySelector('#reason').value === 'a results plot\\nnot an overview'")
    assert "selected" in page.get_attribute('.choice[data-choice="reject"]', "class")
    assert not ScreeningDecision.objects.filter(accepted=False).exists()  # deleted
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.keyboard.press("Control+a")
    page.keyboard.type("an overview after all")
    page.keyboard.press("Enter")
    # 3: rejected with a reason
    assert wait_figure(page, 3) == titles[2]
    page.keyboard.press("r")
    page.keyboard.type("duplicate of another paper's figure")
    page.keyboard.press("Enter")
    page.wait_for_selector("#summary:not([hidden])")
    assert "All done" in page.text_content("#summary-heading")
    assert "You screened 3 figures." in page.text_content("#summary-text")
    decisions = {d.figure.title: (d.accepted, d.reason) for d in ScreeningDecision.objects.select_related("figure")}
    assert decisions == {
        titles[0]: (True, ""),
        titles[1]: (True, "an overview after all"),
        titles[2]: (False, "duplicate of another paper's figure"),
    }
    assert len(set(titles)) == 3
    assert page.errors == []
