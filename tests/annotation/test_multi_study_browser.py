"""Issue 14 in a real browser: two active studies and an annotator assigned to both, the researcher's results pages
through the study picker with every download, the coordinator's live leaderboard against /api/tables/elo/, and no
page that logs a console error, fails a request, answers 4xx/5xx or contacts another host."""

import json
import math
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.test import Client

from annotation import services
from annotation.models import Comparison
from core.services import user_create_with_role
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus
from tests.browser import chromium, screenshot_folder

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DOCS = screenshot_folder()
QUOTA = 3


class Watch:
    """Everything that went wrong in one browser context."""

    def __init__(self, base_url: str):
        self.host = urlparse(base_url).netloc
        self.problems: list[str] = []

    def attach(self, page):
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        # A request the browser itself aborts because the page moved on (the favicon of a page left at once) is not
        # a failure of the app; anything else is.
        page.on(
            "requestfailed",
            lambda r: None if r.failure == "net::ERR_ABORTED" else self.problems.append(f"failed: {r.url} {r.failure}"),
        )
        page.on("request", lambda r: self.external(r.url))
        page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))

    def external(self, url: str):
        parsed = urlparse(url)
        if parsed.scheme in ("http", "https") and parsed.netloc != self.host:
            self.problems.append(f"other host: {url}")


@pytest.fixture
def browser(live_server):
    with chromium() as launched:
        yield launched


def open_as(browser, live_server, user, watch: Watch):
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    # bypass_csp: the page's CSP forbids eval, which Playwright's wait_for_function polling needs; the header itself is
    # checked in tests/bt_elo/test_live_leaderboard.py.
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True, bypass_csp=True)
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    page = context.new_page()
    watch.attach(page)
    return context, page


def vote_session(page, study: str):
    """Vote QUOTA items by keyboard only: 1 or 2, Enter (focus moves to Submit)."""
    for position in range(1, QUOTA + 1):
        page.wait_for_function(
            f"() => document.querySelector('#progress').textContent.startsWith('{position} of {QUOTA}')"
        )
        page.wait_for_selector('.choice[data-choice="a"]:not([disabled])', timeout=10_000)
        assert page.inner_text("#study-name") == study
        page.keyboard.press("1" if position % 2 else "2")
        assert page.evaluate("document.activeElement.id") == "submit"
        page.keyboard.press("Enter")
    page.wait_for_selector("#summary:not([hidden])")
    assert f"You compared {QUOTA} pairs" in page.inner_text("#summary")


def test_two_studies_annotator_results_and_live_leaderboard(live_server, browser):
    slugs = SLUGS[:3]
    build_corpus(figures=4, configurations=slugs)
    older = services.study_create(
        name="pilot-one",
        configurations=slugs,
        min_dwell_ms=300,
        quota_per_annotator=QUOTA,
        overlap_rate=0,
        target_per_pair=6,
        description="First pilot",
    )
    newer = services.study_create(
        name="pilot-two",
        configurations=slugs,
        min_dwell_ms=300,
        quota_per_annotator=QUOTA,
        overlap_rate=0,
        target_per_pair=6,
        description="Second pilot",
    )
    worker = annotator("ann-both")
    older.annotators.add(worker)
    newer.annotators.add(worker)
    researcher, _ = user_create_with_role(username="res-one", password=PASSWORD, role="researcher")
    coordinator, _ = user_create_with_role(username="coord-one", password=PASSWORD, role="coordinator")
    watch = Watch(live_server.url)

    # --- the annotator: "my studies", then both studies in turn -----------------------------------------------
    context, page = open_as(browser, live_server, worker, watch)
    page.goto(f"{live_server.url}/")
    page.wait_for_url("**/annotate/")
    rows = page.locator("table.my-studies tbody tr")
    assert rows.count() == 2 and "0 of 3" in rows.nth(0).inner_text()
    page.screenshot(path=str(DOCS / "my-studies.png"))
    page.keyboard.press("Enter")  # the first study's link has the focus
    page.wait_for_url("**/annotate/pilot-one/")
    page.wait_for_selector("#instructions:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "start"
    page.keyboard.press("Enter")
    vote_session(page, "pilot-one")
    # the summary offers the other study; it has not starved
    page.click("ul.my-studies a:has-text('pilot-two')")
    page.wait_for_url("**/annotate/pilot-two/")
    page.wait_for_selector('.choice[data-choice="a"]:not([disabled])', timeout=10_000)
    page.screenshot(path=str(DOCS / "annotate-study.png"))
    vote_session(page, "pilot-two")
    context.close()
    for study in (older, newer):
        votes = Comparison.objects.filter(study=study, annotator=worker, withdrawn=False, superseded=False)
        assert votes.count() == QUOTA

    # --- the researcher: every results page and plot of each study through the picker, every download -----------
    context, page = open_as(browser, live_server, researcher, watch)
    page.goto(f"{live_server.url}/")
    for label in ("Automated scores", "Elo", "Judge–human agreement"):
        assert page.locator(f"main a:has-text('{label}')").count() >= 1
    page.click("main a:has-text('Elo')")
    page.wait_for_selector("#study-picker")
    # two studies: the page opens on the latest with votes, never on an empty "choose a study"
    assert "Choose a study above" not in page.inner_text("main")
    assert page.locator("#study-select").input_value() in ("pilot-one", "pilot-two")
    for study in ("pilot-one", "pilot-two"):
        page.select_option("#study-select", study)
        page.click("#study-picker button[type=submit]")
        page.wait_for_url(f"**study={study}**")
        for label in ("Automated scores", "Elo", "Judge–human agreement"):
            page.click(f"nav.subnav a:has-text('{label}')")
            page.wait_for_load_state("networkidle")
            assert f"study={study}" in page.url
            assert page.eval_on_selector("#study-select", "s => s.value") == study
            # every plot on the page drew
            images = page.locator("img.plot")
            for i in range(images.count()):
                images.nth(i).scroll_into_view_if_needed()
                page.wait_for_function(
                    "img => img.complete && img.naturalWidth > 0", arg=images.nth(i).element_handle()
                )
            # the plots' own links answer with an image
            for link in page.locator("a.plot-link").all():
                href = link.get_attribute("href")
                response = page.request.get(f"{live_server.url}{href}")
                assert response.ok and response.headers["content-type"].startswith("image/"), href
        if study == "pilot-two":
            page.screenshot(path=str(DOCS / "results-agreement.png"), full_page=False)
        page.click("nav.subnav a:has-text('Elo')")
        page.wait_for_load_state("networkidle")
        page.wait_for_function(
            "() => [...document.querySelectorAll('img.plot')].every((i) => i.complete && i.naturalWidth)"
        )
        if study == "pilot-one":
            page.screenshot(path=str(DOCS / "results-elo.png"), full_page=True)
        block = page.locator("section#elo")
        for label, check in (
            ("CSV", lambda text: text.splitlines()[0].startswith("configuration,elo,ci_low,ci_high")),
            ("JSON", lambda text: json.loads(text)["table"] == "elo" and len(json.loads(text)["rows"]) == 3),
            ("LaTeX", lambda text: "\\begin{tabular}" in text and "cfg-alpha-direct" in text),
        ):
            with page.expect_download() as info:
                block.locator(f"a.download:text-is('{label}')").click()
            download = info.value
            assert download.suggested_filename.startswith(f"elo-{study}.")
            assert check(Path(download.path()).read_text()), label
        # the coverage table counts this study's votes only (3 votes over the 3 pairs)
        coverage = page.request.get(f"{live_server.url}/api/tables/coverage/?format=json&study={study}").json()
        assert sum(row["n"] for row in coverage["rows"]) == QUOTA
    context.close()

    # --- the coordinator: the live leaderboard equals /api/tables/elo/ for the same study ------------------------
    context, page = open_as(browser, live_server, coordinator, watch)
    page.goto(f"{live_server.url}/coordinate/pilot-one/")
    page.wait_for_function(
        "() => document.querySelector('#live-status').textContent.startsWith('as of')", timeout=60_000
    )
    assert f"{QUOTA} votes" in page.inner_text("#live-status")
    # three votes over three configurations: it says so rather than ranking
    assert page.is_visible("#live-note") and "Too few votes" in page.inner_text("#live-note")
    page.screenshot(path=str(DOCS / "dashboard-leaderboard.png"), full_page=True)
    live = page.request.get(f"{live_server.url}/results/elo/live.json?study=pilot-one").json()
    table = page.request.get(f"{live_server.url}/api/tables/elo/?format=json&study=pilot-one").json()
    by_configuration = {row["configuration"]: row for row in table["rows"]}
    assert {r["configuration"] for r in live["rows"]} == set(by_configuration) == set(slugs)
    for row in live["rows"]:
        expected = by_configuration[row["configuration"]]
        for column in ("elo", "ci_low", "ci_high", "n"):
            assert math.isclose(row[column], expected[column], rel_tol=0, abs_tol=1e-9), (row, expected)
    assert live["votes"] == QUOTA and live["status"] == "insufficient"
    # the API docs render from this site alone
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info", timeout=20_000)
    context.close()

    assert not watch.problems, "\n".join(watch.problems[:30])


def test_every_action_has_a_key_and_the_frames_line_up(live_server, browser):
    """Skip (K), reason (R), undo that restores the choice and reason (U), Enter on a focused Skip button, '?' for
    the instructions; the three images framed alike so one zoom shows the same region; the figure page fits the
    window; a styled 404."""
    from tests.factories import png_bytes, store

    figures, _, _ = build_corpus(figures=3, configurations=SLUGS[:2])
    for figure in figures:  # wide sources (4:1) beside 16:9 slides
        figure.image.name = store(png_bytes(size=(1280, 320), colour=(200, 220, 240), text="wide"), "corpus")[0]
        figure.save(update_fields=["image"])
    study = services.study_create(
        name="keys", configurations=SLUGS[:2], min_dwell_ms=300, quota_per_annotator=3, overlap_rate=0
    )
    worker = annotator("ann-keys")
    study.annotators.add(worker)
    watch = Watch(live_server.url)
    context, page = open_as(browser, live_server, worker, watch)
    page.goto(f"{live_server.url}/annotate/")
    page.keyboard.press("Enter")  # Start comparing has the focus

    def ready(position):
        page.wait_for_function(f"() => document.querySelector('#progress').textContent.startsWith('{position} of 3')")
        page.wait_for_selector('.choice[data-choice="a"]:not([disabled])', timeout=10_000)

    ready(1)
    # framing: three equal frames of the slides' aspect ratio; after a zoom, still equal and equally transformed
    rects = page.eval_on_selector_all(
        ".viewport .frame", "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })"
    )
    assert len({(round(w, 1), round(h, 1)) for w, h in rects}) == 1 and abs(rects[0][0] / rects[0][1] - 16 / 9) < 0.01
    page.mouse.move(300, 400)
    page.mouse.wheel(0, -600)
    zoomed = page.eval_on_selector_all(
        ".viewport .frame",
        "els => els.map(e => { const r = e.getBoundingClientRect(), v = e.parentElement.getBoundingClientRect();"
        " return [e.style.transform, Math.round(r.left - v.left), Math.round(r.top - v.top), Math.round(r.width)]; })",
    )
    assert len({tuple(z) for z in zoomed}) == 1 and "scale(1)" not in zoomed[0][0]
    page.screenshot(path=str(DOCS / "annotate-framing-zoomed.png"))
    page.keyboard.press("0")
    # R to the reason, Enter sends; U brings the item back with its choice and reason
    page.keyboard.press("2")
    page.keyboard.press("r")
    assert page.evaluate("() => document.activeElement.id") == "reason"
    page.keyboard.type("labels legible")
    page.keyboard.press("Enter")
    ready(2)
    page.keyboard.press("u")
    ready(1)
    page.wait_for_function("() => document.querySelector('.choice[data-choice=\"b\"]').classList.contains('selected')")
    assert page.input_value("#reason") == "labels legible"
    page.keyboard.press("Enter")  # focus is on Submit
    ready(2)
    # K opens the skip box with the focus in it; Enter skips
    page.keyboard.press("k")
    assert page.evaluate("() => document.activeElement.id") == "skip-reason"
    page.keyboard.type("cannot read the source")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#status').textContent === 'item skipped'")
    ready(2)
    # Enter on the focused Skip button opens the box (not swallowed as a vote); Esc closes it, focus back on Skip
    page.focus("#skip-open")
    page.keyboard.press("Enter")
    assert page.is_visible("#skip-box") and page.evaluate("() => document.activeElement.id") == "skip-reason"
    page.keyboard.press("Escape")
    assert page.is_hidden("#skip-box") and page.evaluate("() => document.activeElement.id") == "skip-open"
    page.keyboard.press("?")
    assert page.is_visible("#instructions") and page.evaluate("() => document.activeElement.id") == "start"
    page.keyboard.press("Enter")
    assert page.is_hidden("#instructions")
    context.close()
    first = Comparison.objects.filter(study=study, withdrawn=False, superseded=False).order_by("created_at").first()
    assert first.outcome == "b" and first.reason == "labels legible"
    assert Comparison.objects.filter(study=study, withdrawn=True).count() == 1

    # staff: the figure page fits the window; a 404 is a styled page with navigation
    researcher, _ = user_create_with_role(username="res-keys", password=PASSWORD, role="researcher")
    context, page = open_as(browser, live_server, researcher, watch)
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{live_server.url}/corpus/{figures[0].task_id}/")
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    before = len(watch.problems)
    response = page.goto(f"{live_server.url}/no/such/page")
    assert response.status == 404 and page.is_visible("header.top nav a:has-text('Results')")
    page.screenshot(path=str(DOCS / "error-404.png"))
    expected = watch.problems[before:]  # the 404 asked for (the response and the console's note of it), nothing else
    assert len(expected) == 2 and all("404" in p for p in expected), expected
    del watch.problems[before:]
    context.close()
    assert not watch.problems, "\n".join(watch.problems[:30])
