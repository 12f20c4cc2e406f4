"""Webhook destinations the operator declares, never a user: like the LLM endpoints.

FAITHAUDIT_MONITOR_WEBHOOKS is a JSON object {"name": "https://…"}; a stream names one. A URL
is never shown on a page or written to a log (it may carry a token).
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def webhooks_declared() -> dict[str, str]:
    raw = getattr(settings, "FAITHAUDIT_MONITOR_WEBHOOKS", "") or ""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(
            f"FAITHAUDIT_MONITOR_WEBHOOKS: not JSON (line {exc.lineno}, column {exc.colno})"
        ) from exc
    if not isinstance(data, dict):
        raise ImproperlyConfigured("FAITHAUDIT_MONITOR_WEBHOOKS: expected an object name → URL")
    for name, url in data.items():
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ImproperlyConfigured(
                f"FAITHAUDIT_MONITOR_WEBHOOKS: entry {name!r}, field url: not an http(s) URL"
            )
    return data
