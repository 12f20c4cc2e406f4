"""A fixed-window request budget per token, kept in Django's cache (use a shared cache such as
Redis in production so every web process counts the same window).

`API_RATE_LIMIT` (requests) per `API_RATE_WINDOW` (seconds), both settings; over it a request
gets 429 with `Retry-After`, the seconds until the window ends.
"""

import time

from django.conf import settings
from django.core.cache import cache


def rate_check(token_key: str) -> int | None:
    """None if the token may make this request, else the seconds to wait before the next."""
    limit = int(getattr(settings, "API_RATE_LIMIT", 600))
    window = int(getattr(settings, "API_RATE_WINDOW", 60))
    if limit <= 0:
        return None
    now = time.time()
    start = int(now // window) * window
    key = f"api-rate:{token_key}:{start}"
    if cache.add(key, 1, timeout=window + 1):
        count = 1
    else:
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=window + 1)
            count = 1
    if count > limit:
        return max(1, int(start + window - now + 0.999))
    return None
