"""Debian's chromium through Playwright, for the browser tests (`playwright install` cannot download a browser here)."""

import contextlib
import os
import tempfile
from pathlib import Path

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make beside it are plain sync calls.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium():
    """A headless chromium, closed on exit together with the database connections opened while it ran."""
    from django.db import connections
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # With Playwright's event loop running, Django keeps a connection per context: the one the test's ORM
            # calls opened in here is not the one pytest-django closes, and left open it kept PostgreSQL from dropping
            # the test database at the end of the session ("being accessed by other users").
            connections.close_all()


DOCS = Path(__file__).resolve().parent.parent / "docs"


def screenshot_folder(name: str = "") -> Path:
    """Where a browser test writes its screenshots: under docs/ for `make screenshots` (REFIG_SCREENSHOTS=1), else a
    scratch folder, so `make test` leaves the checkout as it found it."""
    if os.environ.get("REFIG_SCREENSHOTS") == "1":
        folder = DOCS / name
    else:
        folder = Path(tempfile.gettempdir()) / "refig-screenshots" / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def watched_page(*, viewport: dict):
    """A page in a fresh context of a fresh chromium, collecting console and page errors in `page.errors`. CSP is
    bypassed for Playwright's own evaluation (wait_for_function), not for the app's scripts."""
    with chromium() as browser:
        context = browser.new_context(viewport=viewport, bypass_csp=True)
        page = context.new_page()
        page.errors = []
        page.on("console", lambda message: message.type == "error" and page.errors.append(message.text))
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        try:
            yield page
        finally:
            context.close()


def session_login(page, base_url: str, *, username: str, password: str) -> None:
    """Log in through Django's test client and hand its session to the browser: under the site's no-referrer policy
    the browser's own login POST carries "Origin: null", which Django's CSRF check refuses."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    assert client.login(username=username, password=password)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": base_url}])


def outside_window(page, selectors) -> list[str]:
    """The selectors whose box is not wholly inside the window, and 'scroll' when the page scrolls."""
    found = page.evaluate(
        """sels => sels.filter(s => { const b = document.querySelector(s).getBoundingClientRect();
            return b.width === 0 || b.top < 0 || b.left < 0 || b.bottom > innerHeight || b.right > innerWidth; })""",
        list(selectors),
    )
    return found + (["scroll"] if page.evaluate("document.documentElement.scrollHeight > innerHeight") else [])
