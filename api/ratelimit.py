"""A fixed-window request budget per token, counted in the cache `API_RATE_LIMIT_CACHE` names
(config/settings.py): Redis wherever the deployment has one (FAITHAUDIT_RATE_LIMIT_CACHE_URL, by
default the Celery broker's), so every web process and machine counts the same window; this
process's memory otherwise (the demo's single process).

`API_RATE_LIMIT` (requests) per `API_RATE_WINDOW` (seconds), both settings; over it a request
gets 429 with `Retry-After`, the seconds until the window ends.
"""

import logging
import time

from django.conf import settings
from django.core.cache import caches
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


def rate_check(token_key: str) -> int | None:
    """None if the token may make this request, else the seconds to wait before the next.

    With the shared cache unreachable the request is let through (and a warning logged): a
    Redis outage must not stop labelling through the API, as it does not stop the screens.
    """
    limit = int(getattr(settings, "API_RATE_LIMIT", 600))
    window = int(getattr(settings, "API_RATE_WINDOW", 60))
    if limit <= 0:
        return None
    cache = caches[getattr(settings, "API_RATE_LIMIT_CACHE", "default")]
    now = time.time()
    start = int(now // window) * window
    key = f"api-rate:{token_key}:{start}"
    try:
        count = _count(cache, key, timeout=window + 1)
    except (RedisError, OSError) as error:
        logger.warning("API rate limit not checked: its cache is unreachable (%s)", error)
        return None
    if count > limit:
        return max(1, int(start + window - now + 0.999))
    return None


def _count(cache, key: str, *, timeout: int) -> int:
    """This request's number in the window: the key's counter, created at 1 or incremented
    (both atomic in Redis, so concurrent processes never share a number)."""
    if cache.add(key, 1, timeout=timeout):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1
