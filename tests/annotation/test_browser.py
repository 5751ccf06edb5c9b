"""A real browser on the comparison screen: keyboard and mouse votes, undo, skip, and the blinding crawl."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from annotation import services
from annotation.models import Comparison, Lease
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus
from tests.browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
OUTPUT = Path(__file__).resolve().parent.parent / "output"


def forbidden_strings(figures, configurations, artifacts) -> set[str]:
    """Everything that could identify a configuration, an artifact or a figure's provenance."""
    found = set()
    for c in configurations:
        found |= {c.slug, c.label, c.model, c.harness}
    for f in figures:
        found |= {
            f.task_id,
            f.arxiv_id,
            f.title,
            f.sha256,
            f.image.name,
            Path(f.image.name).name,
            f.source_path,
            f.abs_url,
        }
    for a in artifacts:
        found |= {a.render_sha256, a.render_png.name, Path(a.render_png.name).name}
    return {s.lower() for s in found if s and len(s) >= 4}


def json_keys(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from json_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from json_keys(inner)


@pytest.fixture
def browser_page(live_server):
    with chromium() as browser:
        context = browser.new_context(
            viewport={"width": 1440, "height": 900}, bypass_csp=True
        )  # eval for wait_for_function
        try:
            yield context.new_page()
        finally:
            context.close()


def test_vote_with_keyboard_and_mouse_undo_skip_and_nothing_leaks(live_server, browser_page):
    figures, configurations, artifacts = build_corpus(figures=4, configurations=SLUGS)
    study = services.study_create(
        name="browser", configurations=SLUGS, min_dwell_ms=600, quota_per_annotator=4, overlap_rate=0
    )
    user = annotator("ann-browser")
    study.annotators.add(user)
    forbidden = forbidden_strings(figures, configurations, artifacts)

    seen = []  # (url, headers, body bytes)

    def record(response):
        try:
            body = response.body()
        except Exception:  # redirects have no body
            body = b""
        seen.append((response.url, dict(response.headers), body))

    page = browser_page
    page.on("response", record)
    # Log in through Django's test client and hand the session to the browser. (The site-wide
    # no-referrer policy makes browsers send "Origin: null" on the login form's POST, which Django's
    # CSRF check refuses; the comparison screen's own requests set a same-origin policy.)
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
    page.goto(f"{live_server.url}/")
    page.wait_for_url("**/annotate/")

    # instructions come before the first item
    assert page.is_visible("#instructions")
    page.click("#start")
    vote_a = page.locator('.choice[data-choice="a"]')

    def wait_ready(position: int):
        page.wait_for_function(f"() => document.querySelector('#progress').textContent.startsWith('{position} of 4')")
        page.wait_for_selector('.choice[data-choice="a"]:not([disabled])', timeout=10_000)

    # 1. keyboard: 1 then Enter
    wait_ready(1)
    assert page.is_hidden("#instructions")
    page.keyboard.press("1")
    assert "selected" in vote_a.get_attribute("class")
    page.keyboard.press("Enter")

    # 2. keyboard: 3, S, a reason typed with keys that must not act, Enter
    wait_ready(2)
    page.keyboard.press("3")
    page.keyboard.press("s")
    page.wait_for_function("() => document.activeElement.id === 'reason'")
    page.keyboard.type("both fine 1 2 3 f u 0")
    assert "selected" in page.get_attribute('.choice[data-choice="tie_success"]', "class")
    assert "selected" not in vote_a.get_attribute("class")
    page.mouse.move(700, 300)
    page.mouse.wheel(0, -400)  # zoom: all three images share one transform
    transforms = page.eval_on_selector_all(".viewport .frame", "els => els.map(e => e.style.transform)")
    assert len(set(transforms)) == 1 and "scale(1)" not in transforms[0]
    # at 1440 x 900 the panes, their audit tables and the whole vote bar fit without page scrolling
    outside = page.evaluate("""() => ['.bar', '.panes', '#audit-a', '#audit-b', '.choices', '#reason', '#submit'].filter(s => {
        const b = document.querySelector(s).getBoundingClientRect();
        return b.top < 0 || b.left < 0 || b.bottom > innerHeight || b.right > innerWidth; })""")
    assert outside == [] and page.evaluate("document.documentElement.scrollHeight <= innerHeight")
    page.screenshot(path=str(OUTPUT / "annotate-1440x900.png"), full_page=False)
    page.keyboard.press("Enter")

    # 3. mouse: B better, submit
    wait_ready(3)
    page.click('.choice[data-choice="b"]')
    page.click("#submit")
    wait_ready(4)

    # 4. undo the last vote (B): the item returns, vote A with the mouse instead
    page.click("#undo")
    wait_ready(3)
    page.click('.choice[data-choice="a"]')
    page.click("#submit")

    # 5. skip the next item with a reason
    wait_ready(4)
    page.click("#skip-open")
    page.fill("#skip-reason", "unreadable at this size")
    page.click("#skip-confirm")
    page.wait_for_function("() => document.querySelector('#status').textContent === 'item skipped'")

    # 6. last item: keyboard, Esc leaves the reason box so keys work again
    wait_ready(4)
    page.click("#reason")
    page.keyboard.type("2")  # typed, not a vote
    page.keyboard.press("Escape")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_selector("#summary:not([hidden])")
    assert "You compared 4 pairs and skipped 1" in page.inner_text("#summary")

    current = Comparison.objects.filter(study=study, superseded=False, withdrawn=False).order_by("created_at")
    assert [c.outcome for c in current] == ["a", "tie_success", "a", "b"]
    assert current[1].reason == "both fine 1 2 3 f u 0" and current[3].reason == "2"
    assert all(c.counted and c.dwell_ms >= 600 and c.decision_ms is not None for c in current)
    withdrawn = Comparison.objects.get(withdrawn=True)
    assert withdrawn.outcome == "b" and withdrawn.supersedes.superseded and current[2].supersedes_id == withdrawn.pk
    assert Lease.objects.get(state="skipped").skip_reason == "unreadable at this size"
    assert (OUTPUT / "annotate-1440x900.png").stat().st_size > 10_000

    # the blinding crawl: every URL, header and body the annotator's browser received
    assert any("/annotate/img/" in url for url, _, _ in seen) and any(
        "/api/annotate/submit/" in url for url, _, _ in seen
    )
    leaks = []
    for url, headers, body in seen:
        texts = {"url": url.lower(), "headers": json.dumps(headers).lower(), "body": body.decode("latin-1").lower()}
        for where, text in texts.items():
            for secret in forbidden:
                if secret in text:
                    leaks.append(f"{url} {where}: {secret}")
        if "content-disposition" in headers and "/static/" not in url:  # static files carry their own public names
            leaks.append(f"{url} has a Content-Disposition header")
        if headers.get("content-type", "").startswith("application/json") and body:
            for key in json_keys(json.loads(body)):
                if "artifact" in key.lower() or key.lower() == "id" or key.lower().endswith("_id"):
                    leaks.append(f"{url} JSON key {key}")
        if "/annotate/img/" in url:
            assert headers.get("cache-control") == "private, no-store"
            assert (
                body[:8] == b"\x89PNG\r\n\x1a\n" and b"tEXt" not in body and b"iTXt" not in body and b"eXIf" not in body
            )
    assert not leaks, "\n".join(leaks[:20])
