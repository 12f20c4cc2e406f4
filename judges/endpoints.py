"""The LLM endpoints a deployment may call: the operator's to declare, never a user's.

A judge names one of them (`Judge.endpoint`); the URL and the NAME of the variable holding its
key come from here, read from the settings at call time, never from the database, a form or
a stored run. So a project owner cannot point a judge at an address of their choosing, nor
have the deployment's own secrets (DJANGO_SECRET_KEY, DATABASE_URL, ...) sent as a key.

The operator declares them as a JSON list, in FAITHAUDIT_LLM_ENDPOINTS or in the file that
FAITHAUDIT_LLM_ENDPOINTS_FILE names:

    [{"name": "openai", "base_url": "https://api.openai.com/v1",
      "api_key_env": "OPENAI_API_KEY", "models": ["gpt-4o-mini"],
      "timeout_seconds": 30, "max_retries": 3, "max_concurrency": 8}]

Only `name` and `base_url` are required. `price_per_million_input_tokens`,
`price_per_million_output_tokens` and `price_currency` (optional) price the cost estimate a
lead sees before a generation starts (testsets/services/generate.py). `timeout_seconds`, `max_retries` and
`max_concurrency` are the endpoint's caps (default: FAITHAUDIT_LLM_TIMEOUT_SECONDS,
FAITHAUDIT_LLM_MAX_RETRIES, FAITHAUDIT_LLM_MAX_CONCURRENCY); a judge may ask for less, never
more. With `models` given, a judge's model must be one of them. With nothing declared only
the offline baseline judges. A bad declaration stops the process at start
(`JudgesConfig.ready`) with an error naming the entry and the field.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENDPOINT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
# The deployment's own secrets and settings: never an endpoint's key, whoever declares it.
RESERVED_KEY_VARIABLES = frozenset(
    {
        "DJANGO_SECRET_KEY",
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "REDIS_URL",
        "FAITHAUDIT_LLM_ENDPOINTS",
        "FAITHAUDIT_LLM_ENDPOINTS_FILE",
    }
)
FIELDS = (
    "name",
    "base_url",
    "api_key_env",
    "models",
    "timeout_seconds",
    "max_retries",
    "max_concurrency",
    "price_per_million_input_tokens",
    "price_per_million_output_tokens",
    "price_currency",
)
# Bounds on what an operator may declare at all (a typo of 3000 s is caught at start).
TIMEOUT_BOUNDS = (0.1, 600.0)
RETRIES_BOUNDS = (0, 20)
CONCURRENCY_BOUNDS = (1, 256)
PRICE_BOUNDS = (0.0, 100_000.0)

HOW_TO_DECLARE = (
    "The operator declares the LLM endpoints judges may call in FAITHAUDIT_LLM_ENDPOINTS "
    '(a JSON list such as [{"name": "local", "base_url": "http://127.0.0.1:8000/v1", '
    '"api_key_env": "LOCAL_LLM_KEY"}]) or in the file FAITHAUDIT_LLM_ENDPOINTS_FILE names, '
    "and restarts the web and worker processes."
)


class EndpointsError(ImproperlyConfigured):
    """The operator's endpoint declaration is invalid; the message names the entry."""


class EndpointNotDeclared(LookupError):
    """A judge or a run names an endpoint the operator has not declared (or no longer does)."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str
    api_key_env: str
    models: tuple[str, ...]
    timeout_seconds: float
    max_retries: int
    max_concurrency: int
    # What the operator says a million tokens cost here (None: not declared), for the cost
    # estimates shown before a job starts (testsets' generation).
    price_per_million_input_tokens: float | None = None
    price_per_million_output_tokens: float | None = None
    price_currency: str = ""

    def api_key(self) -> str | None:
        """The key, read from this process's environment now; "" when the endpoint needs
        none, None when its variable is not set here."""
        if not self.api_key_env:
            return ""
        return os.environ.get(self.api_key_env) or None

    def describe(self, *, with_url: bool = False) -> str:
        """What a project member may see: the name and its models, never the key's variable;
        `with_url`, where it points too (for the project's owners only: a declared base URL
        can name an internal host, which leads have no need to know)."""
        about = [self.base_url] if with_url else []
        if self.models:
            about.append(f"models {', '.join(self.models)}")
        return f"{self.name} ({'; '.join(about)})" if about else self.name


def url_check(url: str) -> str:
    """`url` if it is an http(s) URL with a host and nothing else; else ValueError."""
    if not isinstance(url, str) or not url:
        raise ValueError("give an http:// or https:// URL")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise ValueError("the URL contains whitespace or control characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"scheme {parts.scheme or '(none)'!r} is not allowed: use http or https")
    if not parts.hostname:
        raise ValueError("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("put no user or password in the URL: use api_key_env for the key")
    if parts.query or parts.fragment:
        raise ValueError("the URL may not have a query or a fragment")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError("the URL's port is not a number") from None
    return url.rstrip("/")


def _number(entry: dict, field: str, where: str, default, bounds, kind):
    value = entry.get(field, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EndpointsError(f"{where}, field {field!r}: give a number, not {value!r}")
    if kind is int and value != int(value):
        raise EndpointsError(f"{where}, field {field!r}: give a whole number, not {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise EndpointsError(f"{where}, field {field!r}: {value!r} is not in {low}–{high}")
    return kind(value)


def endpoint_entry_parse(
    index: int, entry, source: str, defaults: tuple[float, int, int]
) -> Endpoint:
    where = f"{source}, entry {index + 1}"
    if not isinstance(entry, dict):
        raise EndpointsError(f"{where}: expected an object with name and base_url")
    name = entry.get("name")
    if not isinstance(name, str) or not ENDPOINT_NAME.match(name):
        raise EndpointsError(
            f"{where}, field 'name': {name!r} is not a name (letters, digits, . _ -; up to 100)"
        )
    where = f"{source}, entry {index + 1} ({name!r})"
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        raise EndpointsError(
            f"{where}: unknown field {unknown[0]!r} (known: {', '.join(FIELDS)}; the key "
            "itself never goes here, only the NAME of its variable in api_key_env)"
        )
    try:
        base_url = url_check(entry.get("base_url"))
    except ValueError as exc:
        raise EndpointsError(f"{where}, field 'base_url': {exc}") from None
    key_env = entry.get("api_key_env", "") or ""
    if not isinstance(key_env, str) or (key_env and not ENV_NAME.match(key_env)):
        raise EndpointsError(
            f"{where}, field 'api_key_env': give the NAME of an environment variable "
            "(e.g. OPENAI_API_KEY), not the key"
        )
    if key_env.upper() in RESERVED_KEY_VARIABLES:
        raise EndpointsError(
            f"{where}, field 'api_key_env': {key_env} holds this deployment's own secret "
            "or settings and is never sent to an endpoint"
        )
    models = entry.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
        raise EndpointsError(f"{where}, field 'models': give a list of model names")
    prices = {
        field: _number(entry, field, where, 0.0, PRICE_BOUNDS, float) if field in entry else None
        for field in ("price_per_million_input_tokens", "price_per_million_output_tokens")
    }
    currency = entry.get("price_currency", "")
    if not isinstance(currency, str) or len(currency) > 8:
        raise EndpointsError(f"{where}, field 'price_currency': give a short code such as 'USD'")
    timeout, retries, concurrency = defaults
    return Endpoint(
        name=name,
        base_url=base_url,
        api_key_env=key_env,
        models=tuple(models),
        timeout_seconds=_number(entry, "timeout_seconds", where, timeout, TIMEOUT_BOUNDS, float),
        max_retries=_number(entry, "max_retries", where, retries, RETRIES_BOUNDS, int),
        max_concurrency=_number(
            entry, "max_concurrency", where, concurrency, CONCURRENCY_BOUNDS, int
        ),
        price_currency=currency,
        **prices,
    )


def endpoints_parse(
    declared,
    *,
    source: str = "FAITHAUDIT_LLM_ENDPOINTS",
    defaults=(60.0, 5, 16),
    entry_parse=None,
) -> dict[str, Endpoint]:
    """Endpoints by name from a JSON text (or an already parsed list); EndpointsError names
    the entry and the field that is wrong. Empty text: none declared. `entry_parse(index,
    entry, source, defaults)` reads one entry (default `endpoint_entry_parse`; testsets' RAG
    endpoints pass theirs, which adds its fields to it)."""
    entry_parse = entry_parse or endpoint_entry_parse
    if isinstance(declared, str):
        if not declared.strip():
            return {}
        try:
            declared = json.loads(declared)
        except ValueError as exc:
            raise EndpointsError(f"{source}: not valid JSON ({exc})") from None
    if isinstance(declared, dict):
        declared = [declared]
    if not isinstance(declared, list):
        raise EndpointsError(f"{source}: expected a JSON list of endpoints")
    endpoints: dict[str, Endpoint] = {}
    for index, entry in enumerate(declared):
        endpoint = entry_parse(index, entry, source, defaults)
        if endpoint.name in endpoints:
            raise EndpointsError(
                f"{source}, entry {index + 1}: the name {endpoint.name!r} is declared twice"
            )
        endpoints[endpoint.name] = endpoint
    return endpoints


def endpoint_defaults() -> tuple[float, int, int]:
    where = "settings"
    timeout = getattr(settings, "FAITHAUDIT_LLM_TIMEOUT_SECONDS", 60.0)
    retries = getattr(settings, "FAITHAUDIT_LLM_MAX_RETRIES", 5)
    concurrency = getattr(settings, "FAITHAUDIT_LLM_MAX_CONCURRENCY", 16)
    values = {
        "timeout_seconds": timeout,
        "max_retries": retries,
        "max_concurrency": concurrency,
    }
    return (
        _number(values, "timeout_seconds", where, None, TIMEOUT_BOUNDS, float),
        _number(values, "max_retries", where, None, RETRIES_BOUNDS, int),
        _number(values, "max_concurrency", where, None, CONCURRENCY_BOUNDS, int),
    )


@lru_cache(maxsize=8)
def _parsed(text: str, path: str, version: tuple, defaults: tuple) -> dict[str, Endpoint]:
    endpoints = endpoints_parse(text, defaults=defaults)
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                from_file = endpoints_parse(
                    handle.read(),
                    source=f"FAITHAUDIT_LLM_ENDPOINTS_FILE ({path})",
                    defaults=defaults,
                )
        except OSError as exc:
            raise EndpointsError(
                f"FAITHAUDIT_LLM_ENDPOINTS_FILE: cannot read {path}: {exc.strerror}"
            ) from None
        both = sorted(set(endpoints) & set(from_file))
        if both:
            raise EndpointsError(
                f"the endpoint {both[0]!r} is declared both in FAITHAUDIT_LLM_ENDPOINTS and "
                "in FAITHAUDIT_LLM_ENDPOINTS_FILE"
            )
        endpoints.update(from_file)
    return endpoints


def endpoints_declared() -> dict[str, Endpoint]:
    """The endpoints declared now, by name (validated; parsed again when the settings or the
    file change)."""
    raw = getattr(settings, "FAITHAUDIT_LLM_ENDPOINTS", "") or ""
    if not isinstance(raw, str):
        raw = json.dumps(raw)
    path = getattr(settings, "FAITHAUDIT_LLM_ENDPOINTS_FILE", "") or ""
    try:
        stat = os.stat(path) if path else None
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size) if stat else ()
    except OSError:
        version = ("missing",)
    return _parsed(raw, str(path), version, endpoint_defaults())


def endpoint_get(name: str) -> Endpoint:
    """The declared endpoint `name`; EndpointNotDeclared (naming the choices) otherwise."""
    endpoints = endpoints_declared()
    endpoint = endpoints.get(name or "")
    if endpoint is None:
        choices = ", ".join(sorted(endpoints)) or "none are declared"
        if not name:
            raise EndpointNotDeclared(f"no endpoint chosen (declared: {choices})")
        raise EndpointNotDeclared(
            f"endpoint {name!r} is not declared by the operator (declared: {choices})"
        )
    return endpoint
