"""JSON in and out of the API, strictly: bodies capped and decoded with the importers' guards,
responses that are JSON (no NaN, no Infinity).

In: a body declared larger than `FAITHAUDIT_API_MAX_BODY_BYTES` is refused (413) before a byte
of it is read, and one read is never longer than that (a missing or lying Content-Length).
NDJSON answers are streamed (constant memory) and are not capped. A body is decoded by the
importers' `SafeDecoder`: nesting deeper than Python can follow, NaN, Infinity, 1e999 or a
5,000-digit number is a 422 problem naming the field (`payload[0].claims[1].confidence`),
not a RecursionError or a ValueError (a 500).

Out: `json.dumps(..., allow_nan=False)`. A figure that could not be computed is None, with its
reason, where it is computed (`metrics.services.common.json_safe`, the gate): a NaN that
reaches a response is a bug, and it fails loudly (a logged 500 problem, which is JSON) rather
than writing `NaN`, which no JSON parser reads.
"""

import json
from typing import Any

from django.conf import settings
from ninja.parser import Parser
from ninja.renderers import JSONRenderer

from api.problems import Problem
from interchange.importers.jsondecode import (
    MAX_DEPTH,
    NestingTooDeep,
    SafeDecoder,
    depth_exceeds,
    nesting_message,
    path_text,
    refused_in,
    run_start,
)

NDJSON = "application/x-ndjson"


def body_limit() -> int:
    return settings.FAITHAUDIT_API_MAX_BODY_BYTES


def _too_large(size: str) -> Problem:
    most = body_limit()
    return Problem(
        413,
        f"The request body is {size} bytes; this server takes at most {most:,} bytes per JSON "
        "request (FAITHAUDIT_API_MAX_BODY_BYTES). Send answers in several requests, or as "
        f"{NDJSON} (streamed, not capped).",
        slug="too-large",
        extra={"max_bytes": most},
    )


def body_size_check(request) -> None:
    """413 for a body whose Content-Length is over the cap, before anything reads it (called
    once the token is known, ahead of the operation's body parsing). NDJSON is streamed."""
    if request.method in ("GET", "HEAD", "OPTIONS") or request.content_type == NDJSON:
        return
    declared = request.META.get("CONTENT_LENGTH") or "0"
    try:
        length = int(declared) if declared.isascii() and declared.isdigit() else -1
    except ValueError:
        length = -1
    if length > body_limit():
        raise _too_large(f"{length:,}")


def body_read(request) -> bytes:
    """The whole body, never more than the cap read (413 past it)."""
    body_size_check(request)
    most = body_limit()
    data = request.read(most + 1)
    if len(data) > most:
        raise _too_large(f"more than {most:,}")
    return data


def _refused(errors: list[tuple[list, str]], prefix: str) -> Problem:
    items = [{"field": path_text(path, prefix), "detail": message} for path, message in errors]
    fields = ", ".join(item["field"] or "(body)" for item in items)
    return Problem(422, f"The request body is refused: {fields}.", slug="invalid", errors=items)


def json_decode(data: bytes, *, prefix: str = "") -> Any:
    """`data` decoded as JSON with the importers' guards; a Problem naming the field otherwise.
    Nesting is bounded by MAX_DEPTH, as for stored JSON."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        detail = f"The request body is not UTF-8 (byte {error.start})."
        raise Problem(400, detail, errors=[{"field": "", "detail": detail}]) from None
    decoder = SafeDecoder()
    try:
        value = decoder.loads(text)
    except NestingTooDeep as error:
        raise _refused([(error.path, str(error))], prefix) from None
    except json.JSONDecodeError as error:
        detail = f"The request body is not JSON: {error.msg} (line {error.lineno}, column {error.colno})."
        raise Problem(400, detail, errors=[{"field": "", "detail": detail}]) from None
    if decoder.flagged:
        raise _refused(refused_in(value), prefix)
    deep = depth_exceeds(value)
    if deep is not None:
        raise _refused([(run_start(deep), nesting_message(MAX_DEPTH))], prefix)
    return value


class StrictParser(Parser):
    """The operations' JSON bodies through `json_decode` (ninja wraps a parser's exception in
    a 400 HttpError; `api.problems` answers with the Problem it wraps)."""

    def parse_body(self, request):
        return json_decode(body_read(request))


class StrictRenderer(JSONRenderer):
    json_dumps_params = {"allow_nan": False}
