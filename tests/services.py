"""Which real services this test run has, and what to do when a test needs a missing one.

Without them (`make test` on a bare machine) such tests are skipped with the reason; with
REQUIRE_SERVICES=1 (CI) a missing service fails the test instead, so CI always runs everything.
"""

import os
import shutil
import socket
from functools import cache
from urllib.parse import urlparse

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def _reachable(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), 2
        ):
            return True
    except OSError:
        return False


@cache
def have_postgres() -> bool:
    url = os.environ.get("DATABASE_URL", "")
    return url.startswith(("postgres://", "postgresql://")) and _reachable(url, 5432)


@cache
def have_redis() -> bool:
    url = os.environ.get("CELERY_BROKER_URL", "")
    return url.startswith("redis://") and _reachable(url, 6379)


@cache
def have_chromium() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return shutil.which(CHROMIUM) is not None or os.path.exists(CHROMIUM)


REASONS = {
    "postgres": ("DATABASE_URL does not point at a reachable PostgreSQL", have_postgres),
    "redis": ("CELERY_BROKER_URL does not point at a reachable Redis", have_redis),
    "worker": (
        "a Celery worker needs PostgreSQL (DATABASE_URL) and Redis (CELERY_BROKER_URL)",
        lambda: have_postgres() and have_redis(),
    ),
    "browser": (f"no headless Chromium at {CHROMIUM} or no playwright package", have_chromium),
}


def require(marker: str) -> None:
    reason, check = REASONS[marker]
    if check():
        return
    if os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}", pytrace=False)
    pytest.skip(reason)
