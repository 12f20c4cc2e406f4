"""Real headless Chromium (Debian's, driven by Playwright) against pytest-django's live_server.

`browser_page(user)` returns a Playwright page logged in as `user` through the real login form.
Tests using it get live_server's transactional database, so this works on SQLite and on
PostgreSQL alike. Screenshots go to tests/artifacts/ (git-ignored): the `screenshot` fixture is
`screenshot(page, "name.png") -> Path`.
"""

import os
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
        # Generous: six engineers share two cores, and a slow page is not a failing one.
        context.set_default_timeout(30_000)
        context.set_default_navigation_timeout(60_000)
        contexts.append(context)
        page = context.new_page()
        page.base_url = live_server.url
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", user.get_username())
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot():
    def save(page, name: str, *, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return save
