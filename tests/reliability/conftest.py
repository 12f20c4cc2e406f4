import pytest

from tests.reliability.figures import Figures


@pytest.fixture
def figures(request) -> Figures:
    """`figures.add(area, **counts)`: what this test did, for tests/RELIABILITY.md."""
    return Figures(request.node.nodeid)


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """These tests make hundreds of users; the production hasher would dominate their time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# The colleagues' headless-Chromium fixtures (tests/browser/conftest.py), for the XSS check.
from tests.browser.conftest import browser_page, chromium, fast_passwords  # noqa: E402, F401
