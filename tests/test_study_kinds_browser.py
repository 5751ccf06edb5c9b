"""Every study kind in a real browser, on the demo plus an effort sweep (issue 26).

The coordinator creates a pairwise effort-sweep study, a gate-review and a rating study from the web, assigns the
sample annotator, and later pauses, resumes and closes each; the annotator, assigned to all of them, works through
each kind keyboard only at 1366×768; the researcher opens every results page and plot of every study. No response is
a 4xx or 5xx, no page logs a console error, and nothing is fetched from another host. The task screens' screenshots
go to docs/screenshots under `make screenshots` (tests.browser.screenshot_folder), to a scratch folder otherwise.
"""

from __future__ import annotations

import io
import re
from urllib.parse import urlparse

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from agents.models import Artifact, Configuration
from annotation.models import Comparison, GateReview, Rating, Study
from tests.browser import chromium, screenshot_folder, session_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1366, "height": 768}
SHOTS = screenshot_folder("screenshots")
PASSWORD = "refig-sample"
BASE = "synth-alpha-codex-direct"
SWEEP = "synth-alpha-codex-direct-low"


def effort_sweep_configuration() -> None:
    """The demo's alpha·codex·direct again at low effort: the same decks and renderings under a second configuration
    that differs only in reasoning effort (what an effort sweep imports)."""
    base = Configuration.objects.get(slug=BASE)
    low = Configuration.objects.create(
        slug=SWEEP,
        model=base.model,
        harness=base.harness,
        workflow=base.workflow,
        reasoning_effort="low",
        effort_rank=2,
        label=f"{base.label} (low effort)",
        position=99,
    )
    for artifact in Artifact.objects.filter(configuration=base):
        artifact.pk, artifact.configuration = None, low
        artifact.save()


@pytest.fixture
def site(live_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("load_sample_data", stdout=io.StringIO())
    effort_sweep_configuration()
    return live_server


@pytest.fixture
def browser():
    with chromium() as opened:
        yield opened


def session_page(browser, live_server, username: str, problems: list[str]):
    """A page logged in as `username` (the test client's session handed over), watching every answer and request."""
    context = browser.new_context(viewport=VIEWPORT, bypass_csp=True)  # bypass: eval for wait_for_function
    page = context.new_page()
    session_login(page, live_server.url, username=username, password=PASSWORD)
    host = urlparse(live_server.url).netloc
    page.on("console", lambda m: m.type == "error" and problems.append(f"{username} console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{username} page error: {e}"))
    page.on(
        "request",
        lambda r: (
            urlparse(r.url).netloc not in (host, "")
            and not r.url.startswith("data:")
            and problems.append(f"{username} request to another host: {r.url}")
        ),
    )
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{username} HTTP {r.status} for {r.url}"))
    return page


def create_studies(page, base: str, annotator_pk: int) -> None:
    page.goto(f"{base}/coordinate/")
    pairwise = page.locator("form.study-form:not(#artifact-study-form)")
    pairwise.locator("input[name=name]").fill("sweep")
    for slug in (BASE, SWEEP):
        pairwise.locator(f"input[name=configurations][value='{slug}']").check()
    pairwise.locator("button[type=submit]").click()
    page.wait_for_url("**/coordinate/sweep/**")
    assign(page, annotator_pk)
    for name, kind in (("sweep-gates", "gate_review"), ("sweep-ratings", "rating")):
        page.goto(f"{base}/coordinate/")
        form = page.locator("#artifact-study-form")
        form.locator("input[name=name]").fill(name)
        form.locator("select[name=kind]").select_option(kind)
        for slug in (BASE, SWEEP):
            form.locator(f"input[name=configurations][value='{slug}']").check()
        form.locator("textarea[name=figures]").fill("demo-001\ndemo-002")
        form.locator("button[type=submit]").click()
        page.wait_for_url(f"**/coordinate/{name}/**")
        assign(page, annotator_pk)


def assign(page, annotator_pk: int) -> None:
    # The live leaderboard and stability panels above fill in from their first fetch and push the forms down: click
    # once they have (as a coordinator would, after the page settles), not while the layout is still moving.
    page.wait_for_load_state("networkidle")
    form = page.locator("form:has(input[name=action][value=annotators])")
    form.locator(f"input[name=annotators][value='{annotator_pk}']").check()
    form.locator("button[type=submit]").click()
    page.wait_for_load_state()


def set_status(page, base: str, study: str, label: str) -> None:
    page.goto(f"{base}/coordinate/{study}/")
    page.locator(f"form:has(input[name=action][value=status]) button:has-text('{label}')").click()
    page.wait_for_load_state()


def vote_pairwise(page, base: str, votes: int) -> None:
    page.goto(f"{base}/annotate/sweep/")
    if page.is_visible("#instructions"):
        page.keyboard.press("Enter")
    for n in range(votes):
        page.wait_for_selector('.choice[data-choice="a"]:not([disabled])', timeout=15_000)
        if n == 0:
            page.screenshot(path=str(SHOTS / "task-pairwise-1366x768.png"))
        page.keyboard.press("1" if n % 2 == 0 else "2")
        page.keyboard.press("Enter")
        page.wait_for_function(
            f"() => !document.querySelector('#progress') || !document.querySelector('#progress').textContent"
            f".startsWith('{n + 1} of')",
            timeout=15_000,
        )


def judge_artifacts(page, base: str, study: str, keys: tuple[str, ...], shot: str, done) -> None:
    """Open the study by name (it goes to its kind's screen, which serves the annotator's studies of that kind in
    turn) and work keyboard only until `done()` says every artifact of this study is judged."""
    page.goto(f"{base}/annotate/{study}/")
    if page.is_visible("#instructions"):
        page.keyboard.press("Enter")
    for n in range(40):
        page.wait_for_selector(".choice:not([disabled]), .rate:not([disabled]), #summary:not([hidden])")
        if done() or page.is_visible("#summary"):
            return
        if n == 0:
            page.screenshot(path=str(SHOTS / shot))
        progress = page.text_content("#progress")
        for key in keys:
            page.keyboard.press(key)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "p => document.querySelector('#progress').textContent !== p || !document.querySelector('#summary').hidden",
            arg=progress,
            timeout=15_000,
        )
    counts = list(GateReview.objects.values_list("study__name", "reviewer").order_by().distinct())
    raise AssertionError(f"{study}: not done after 40 items {counts} {GateReview.objects.count()}")


def test_every_study_kind_from_the_web_keyboard_only_with_every_results_page(site, browser):
    base = site.url
    problems: list[str] = []
    annotator = get_user_model().objects.get(username="annotator")

    coordinator = session_page(browser, site, "coordinator", problems)
    create_studies(coordinator, base, annotator.pk)
    assert set(Study.objects.filter(name__startswith="sweep").values_list("name", "kind")) == {
        ("sweep", "pairwise"),
        ("sweep-gates", "gate_review"),
        ("sweep-ratings", "rating"),
    }
    for name in ("sweep-gates", "sweep-ratings"):
        assert Study.objects.get(name=name).figures.count() == 2
    for name in ("sweep", "sweep-gates", "sweep-ratings"):
        assert annotator in Study.objects.get(name=name).annotators.all()
        set_status(coordinator, base, name, "Pause")
        assert Study.objects.get(name=name).status == "paused"
        set_status(coordinator, base, name, "Resume")
        assert Study.objects.get(name=name).status == "active"

    worker = session_page(browser, site, "annotator", problems)
    vote_pairwise(worker, base, votes=3)
    assert Comparison.objects.filter(study__name="sweep").count() == 3
    # two configurations × two figures: four artifacts in each artifact study
    reviewed = GateReview.objects.filter(study__name="sweep-gates")
    judge_artifacts(worker, base, "sweep-gates", ("1",), "task-gate-review-1366x768.png", lambda: reviewed.count() == 4)
    rated = Rating.objects.filter(study__name="sweep-ratings").values("artifact").distinct()
    judge_artifacts(worker, base, "sweep-ratings", ("4", "3"), "task-rating-1366x768.png", lambda: rated.count() == 4)
    assert reviewed.count() == 4 and rated.count() == 4
    worker.goto(f"{base}/annotate/calibration/")
    if worker.is_visible("#instructions"):
        worker.keyboard.press("Enter")
    worker.wait_for_selector(".choice:not([disabled]), #summary:not([hidden])")
    worker.screenshot(path=str(SHOTS / "task-calibration-1366x768.png"))

    researcher = session_page(browser, site, "researcher", problems)
    for study in ("demo", "sweep", "demo-gate-review", "demo-ratings", "sweep-gates", "sweep-ratings"):
        for page in ("/results/", "/results/elo", "/results/agreement"):
            researcher.goto(f"{base}{page}?study={study}")
            researcher.wait_for_load_state("networkidle")  # every plot image on the page loads
            html = researcher.content()
            assert "Traceback" not in html
            for plot in sorted(set(re.findall(r'href="(/results/plot/[^"]+\.pdf[^"]*)"', html)))[:6]:
                response = researcher.request.get(f"{base}{plot.replace('&amp;', '&')}")
                assert response.status < 400, plot
    researcher.goto(f"{base}/results/?study=sweep")
    assert "effort-sweep" in researcher.content() or "Effort sweeps" in researcher.content()

    for name in ("sweep", "sweep-gates", "sweep-ratings"):
        set_status(coordinator, base, name, "Close")
        assert Study.objects.get(name=name).status == "closed"
    assert problems == []
