"""The RAG endpoints (systems under test) a deployment may call: the operator's to declare.

Declared like the LLM endpoints (judges/endpoints.py, whose entry parser, URL check and key
rules are reused here), as a JSON list in FAITHAUDIT_RAG_ENDPOINTS or in the file
FAITHAUDIT_RAG_ENDPOINTS_FILE names; each entry may add `contract` ("native", the default, or
"openai") and `min_interval_seconds` (a rate cap: at least this long between two calls):

    [{"name": "prod-rag", "base_url": "https://rag.internal/answer", "api_key_env": "RAG_KEY",
      "contract": "native", "timeout_seconds": 20, "max_retries": 3}]

The name "reference" is reserved: the built-in reference system (testsets/reference.py),
called in-process, so the demo runs offline and no route or loopback URL is needed.

The native contract. POST `base_url` with JSON

    {"question": "...", "history": [{"role": "user", "content": "..."}, ...], "id": "<item id>"}

(history optional) and `Authorization: Bearer <key>` when a key is declared; the response is

    {"answer": "...", "passages": [{"id": "...", "text": "...", "title": "..."}, ...]}

`answer` a string; `passages` the retrieved passages in rank order (first = best), each with
a non-empty string `id` and a non-empty string `text`, `title` an optional string.

The OpenAI-compatible contract. POST `base_url` + "/chat/completions" with
{"model": <first declared model>, "messages": [history..., {"role": "user", "content": q}]};
the answer is `choices[0].message.content` and the sources are
`choices[0].message.context.passages`, a list shaped like the native `passages`.

Anything else is a `ResponseInvalid` whose message names the field, listed on the item.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

from judges.endpoints import (
    Endpoint,
    EndpointNotDeclared,
    EndpointsError,
    endpoint_defaults,
    endpoint_entry_parse,
    endpoints_parse,
)

REFERENCE = "reference"
CONTRACTS = ("native", "openai")
EXTRA_FIELDS = ("contract", "min_interval_seconds")


class ResponseInvalid(ValueError):
    """The endpoint answered something the contract does not allow; the message names the
    field."""


@dataclass(frozen=True)
class RagEndpoint:
    endpoint: Endpoint
    contract: str = "native"
    min_interval_seconds: float = 0.0

    @property
    def name(self) -> str:
        return self.endpoint.name


def _rag_entry(index: int, entry, source: str, defaults) -> RagEndpoint:
    where = f"{source}, entry {index + 1}"
    if not isinstance(entry, dict):
        raise EndpointsError(f"{where}: expected an object with name and base_url")
    rest = {k: v for k, v in entry.items() if k not in EXTRA_FIELDS}
    endpoint = endpoint_entry_parse(index, rest, source, defaults)
    where = f"{where} ({endpoint.name!r})"
    if endpoint.name == REFERENCE:
        raise EndpointsError(f"{where}, field 'name': {REFERENCE!r} is the built-in system")
    contract = entry.get("contract", "native")
    if contract not in CONTRACTS:
        raise EndpointsError(f"{where}, field 'contract': give one of {', '.join(CONTRACTS)}")
    interval = entry.get("min_interval_seconds", 0.0)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)):
        raise EndpointsError(f"{where}, field 'min_interval_seconds': give a number")
    if not 0 <= interval <= 60:
        raise EndpointsError(f"{where}, field 'min_interval_seconds': {interval!r} not in 0–60")
    return RagEndpoint(endpoint, contract, float(interval))


def rag_endpoints_parse(text: str, *, source: str = "FAITHAUDIT_RAG_ENDPOINTS", defaults=None):
    """RAG endpoints by name from a JSON text; EndpointsError names the entry and field."""
    return endpoints_parse(
        text, source=source, defaults=defaults or (60.0, 5, 16), entry_parse=_rag_entry
    )


@lru_cache(maxsize=8)
def _declared(text: str, file_text: str, defaults: tuple) -> dict[str, RagEndpoint]:
    found = rag_endpoints_parse(text, defaults=defaults)
    more = rag_endpoints_parse(file_text, source="FAITHAUDIT_RAG_ENDPOINTS_FILE", defaults=defaults)
    if both := sorted(set(found) & set(more)):
        raise EndpointsError(f"the RAG endpoint {both[0]!r} is declared twice")
    return {**found, **more}


def rag_endpoints_declared() -> dict[str, RagEndpoint]:
    raw = getattr(settings, "FAITHAUDIT_RAG_ENDPOINTS", "") or ""
    if not isinstance(raw, str):
        raw = json.dumps(raw)
    path = getattr(settings, "FAITHAUDIT_RAG_ENDPOINTS_FILE", "") or ""
    file_text = ""
    if path:
        try:
            with open(os.fspath(path), encoding="utf-8") as handle:
                file_text = handle.read()
        except OSError as exc:
            raise EndpointsError(
                f"FAITHAUDIT_RAG_ENDPOINTS_FILE: cannot read: {exc.strerror}"
            ) from None
    return _declared(raw, file_text, endpoint_defaults())


def rag_endpoint_get(name: str) -> RagEndpoint:
    """The declared RAG endpoint `name`; EndpointNotDeclared naming the choices otherwise."""
    found = rag_endpoints_declared()
    if name in found:
        return found[name]
    choices = ", ".join([REFERENCE, *sorted(found)])
    raise EndpointNotDeclared(f"RAG endpoint {name!r} is not declared (declared: {choices})")


def passages_parse(value, field: str) -> list[dict]:
    """The retrieved passages, validated one field at a time."""
    if not isinstance(value, list):
        raise ResponseInvalid(f"field {field!r}: expected a list of passages")
    passages = []
    for rank, passage in enumerate(value):
        where = f"{field}[{rank}]"
        if not isinstance(passage, dict):
            raise ResponseInvalid(f"field {where!r}: expected an object with id and text")
        for key in ("id", "text"):
            if not isinstance(passage.get(key), str) or not passage[key].strip():
                raise ResponseInvalid(f"field '{where}.{key}': expected a non-empty string")
        title = passage.get("title", "")
        if not isinstance(title, str):
            raise ResponseInvalid(f"field '{where}.title': expected a string")
        passages.append({"id": passage["id"], "text": passage["text"], "title": title})
    return passages


def native_response_parse(body) -> tuple[str, list[dict]]:
    if not isinstance(body, dict):
        raise ResponseInvalid("the response is not a JSON object")
    if not isinstance(body.get("answer"), str):
        raise ResponseInvalid("field 'answer': expected a string")
    return body["answer"], passages_parse(body.get("passages"), "passages")


def openai_response_parse(body) -> tuple[str, list[dict]]:
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ResponseInvalid("field 'choices[0].message': missing") from None
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise ResponseInvalid("field 'choices[0].message.content': expected a string")
    context = message.get("context")
    if not isinstance(context, dict):
        raise ResponseInvalid("field 'choices[0].message.context': expected an object")
    field = "choices[0].message.context.passages"
    return message["content"], passages_parse(context.get("passages"), field)
