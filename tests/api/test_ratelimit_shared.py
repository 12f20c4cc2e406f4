"""The API's rate limit counts in a cache every web process shares (issue 34: each process
counted its own, so N processes granted a token N times its limit): `CACHES[API_RATE_LIMIT_CACHE]`
is Redis when the deployment has one (the Celery broker's by default), local memory otherwise.

The Redis tests carry the suite's `redis` marker (tests/services.py): they need CELERY_BROKER_URL
to name a reachable Redis, and skip without one unless REQUIRE_SERVICES=1 (then they fail)."""

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
from django.core.cache import caches

from api.ratelimit import rate_check
from tests.reliability.figures import ROOT

REDIS_URL = os.environ.get("CELERY_BROKER_URL", "")
WINDOW = 10**6  # one window for the whole test


@pytest.fixture
def shared_cache(settings):
    """The rate limit's cache on Redis as the settings configure it for a deployment with
    FAITHAUDIT_RATE_LIMIT_CACHE_URL: 5 requests per token in one window. Each test's token
    keys are its own (other test runs may share the server); they expire with their window."""
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "faithaudit",
        },
    }
    settings.API_RATE_LIMIT_CACHE = "ratelimit"
    settings.API_RATE_LIMIT = 5
    settings.API_RATE_WINDOW = WINDOW


def _settings_in_a_fresh_process(**env: str) -> dict:
    code = (
        "import json; from django.conf import settings; "
        "print(json.dumps([settings.API_RATE_LIMIT_CACHE, "
        "settings.CACHES[settings.API_RATE_LIMIT_CACHE]]))"
    )
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CELERY_BROKER_URL", "FAITHAUDIT_RATE_LIMIT_CACHE_URL")
    }
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    alias, cache = json.loads(result.stdout)
    return {"alias": alias, **cache}


def test_the_rate_limit_cache_is_the_brokers_redis_when_there_is_one_else_local_memory():
    with_redis = _settings_in_a_fresh_process(CELERY_BROKER_URL="redis://10.1.2.3:6379/4")
    assert with_redis == {
        "alias": "ratelimit",
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://10.1.2.3:6379/4",
        "KEY_PREFIX": "faithaudit",
    }
    own = _settings_in_a_fresh_process(
        CELERY_BROKER_URL="redis://10.1.2.3:6379/4",
        FAITHAUDIT_RATE_LIMIT_CACHE_URL="redis://10.9.9.9:6379/2",
    )
    assert own["LOCATION"] == "redis://10.9.9.9:6379/2"
    demo = _settings_in_a_fresh_process()
    assert demo["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_the_count_is_kept_in_the_configured_cache_not_the_default(settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "d"},
        "counting": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "c"},
    }
    settings.API_RATE_LIMIT_CACHE = "counting"
    settings.API_RATE_LIMIT = 2
    settings.API_RATE_WINDOW = WINDOW
    assert [rate_check("tok1") for _ in range(2)] == [None, None]
    assert rate_check("tok1") is not None  # the third in the window
    # The count sits in "counting" (what another process on a shared cache would read) ...
    start = int(time.time() // WINDOW) * WINDOW
    assert caches["counting"].get(f"api-rate:tok1:{start}") == 3
    # ... and the default cache has none of it: clearing it does not reset the budget.
    assert caches["default"].get(f"api-rate:tok1:{start}") is None
    caches["default"].clear()
    assert rate_check("tok1") is not None


@pytest.mark.redis
def test_two_processes_on_redis_share_one_tokens_budget(shared_cache):
    """Another process (a second web server, configured from the environment as deployed)
    spends 3 of the token's 5 requests; this one then gets 2."""
    token = f"tok-{uuid.uuid4().hex}"
    code = (
        "import django; django.setup(); from api.ratelimit import rate_check; "
        f"print([rate_check({token!r}) for _ in range(3)])"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "FAITHAUDIT_RATE_LIMIT_CACHE_URL": REDIS_URL,
            "FAITHAUDIT_API_RATE_LIMIT": "5",
            "FAITHAUDIT_API_RATE_WINDOW": str(WINDOW),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "[None, None, None]"
    here = [rate_check(token) for _ in range(3)]
    assert here[:2] == [None, None]
    assert here[2] is not None  # the sixth request of the window: wait ...
    assert 1 <= here[2] <= WINDOW  # ... until the window ends


@pytest.mark.django_db
@pytest.mark.redis
def test_with_redis_the_limit_holds_across_two_clients(shared_cache, api_world):
    """Two clients (two browsers, two CI jobs) with one token: 5 requests between them."""
    first, second = api_world.client("analyst"), api_world.client("analyst")
    statuses = [
        (first if number % 2 else second).get("/api/v1/projects").status_code for number in range(7)
    ]
    assert statuses == [200, 200, 200, 200, 200, 429, 429]
    # Another token has its own budget.
    assert api_world.client("lead").get("/api/v1/projects").status_code == 200


def test_an_unreachable_shared_cache_lets_requests_through_with_a_warning(settings, caplog):
    """Redis down stops judge runs, not labelling: the API keeps answering, unthrottled."""
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
        },
    }
    settings.API_RATE_LIMIT_CACHE = "ratelimit"
    settings.API_RATE_LIMIT = 1
    assert [rate_check("tok-down") for _ in range(3)] == [None, None, None]
    assert "API rate limit not checked: its cache is unreachable" in caplog.text
