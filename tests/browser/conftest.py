"""Real headless Chromium (Debian's, driven by Playwright) against pytest-django's live_server.

`browser_page(user)` returns a Playwright page logged in as `user` through the real login form.
Tests using it get live_server's transactional database, so this works on SQLite and on
PostgreSQL alike. Screenshots go to tests/artifacts/ (git-ignored): the `screenshot` fixture is
`screenshot(page, "name.png") -> Path`.

Every page it opens is watched for Content-Security-Policy violations (`watch_csp`): the
`securitypolicyviolation` events and Chromium's console reports of a refusal. Any violation
fails the test that caused it (at its teardown, listing them); `page.csp_violations` is the
list, for a test that provokes one on purpose.
"""

import os
import threading
import time
from pathlib import Path

import pytest

from tests.factories import PASSWORD
from tests.services import CHROMIUM, require

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make around
# it are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


# Module scope, not session: Playwright's sync API allows one instance per thread at a time,
# and other test modules start their own; closing ours after each module leaves them room.
@pytest.fixture(scope="module")
def chromium():
    require("browser")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolation({
    directive: event.violatedDirective,
    blocked: event.blockedURI,
    sample: event.sample,
    where: `${event.sourceFile}:${event.lineNumber}`,
  });
});
"""


def watch_csp(context) -> list[dict]:
    """Collect every CSP violation of `context`'s pages into the returned list."""
    violations: list[dict] = []
    context.expose_binding(
        "__cspViolation",
        lambda source, report: violations.append({**report, "page": source["page"].url}),
    )
    context.add_init_script(CSP_LISTENER)

    def on_console(message):
        if "Content Security Policy" in message.text:
            violations.append({"console": message.text, "page": message.page and message.page.url})

    context.on("console", on_console)
    return violations


@pytest.fixture
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def browser_page(chromium, live_server, fast_passwords):
    """A factory: `browser_page(user, width=1366, height=800)` -> a logged-in Playwright page.

    `user` must have been created with tests.factories' PASSWORD (UserFactory does that).
    """
    contexts = []

    def open_page(user, *, width: int = 1366, height: int = 800):
        user.set_password(PASSWORD)  # hashed with the fast test hasher
        user.save(update_fields=["password"])
        context = chromium.new_context(viewport={"width": width, "height": height})
        violations = watch_csp(context)
        # Generous: six engineers share two cores, and a slow page is not a failing one.
        context.set_default_timeout(30_000)
        context.set_default_navigation_timeout(60_000)
        page = context.new_page()
        page.base_url = live_server.url
        page.csp_violations = violations
        contexts.append((context, violations))
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", user.get_username())
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        return page

    yield open_page
    found = []
    for context, violations in contexts:
        context.close()
        found += violations
    _live_requests_finish()
    assert not found, f"Content-Security-Policy violations: {found}"


def _live_requests_finish(timeout: float = 30.0) -> None:
    """Wait until the live server has answered every request the closed pages had sent.

    A page that reads ahead (the labelling screen fetches the next claim once one is shown) can
    leave a request running in the live server's thread when the test ends; the database flush
    that follows then waits on that request's row locks and fails, the next test finds the last
    one's rows (the CI failure of the prefetch browser tests at 0faa959). The live server
    (socketserver.ThreadingMixIn) answers each request in a thread running
    `process_request_thread`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [t for t in threading.enumerate() if "process_request_thread" in t.name]
        if not busy:
            return
        busy[0].join(timeout=0.1)


@pytest.fixture
def screenshot():
    def save(page, name: str, *, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return save
