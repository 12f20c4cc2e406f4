"""Every error of the API is an RFC 9457 problem document (`application/problem+json`).

    {"type": "https://faithaudit.dev/problems/<slug>", "title", "status", "detail",
     "instance": the request path, "errors"?: [{"field", "detail", "index"?, "location"?}]}

`errors` names each bad field; for a batch, `index` is the 0-based position of the item in the
request's array (or NDJSON line order) and `location` the import's own "record 3 (line 40)".
"""

import json
import logging
import re

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpResponse
from ninja.errors import AuthenticationError, HttpError, ValidationError

logger = logging.getLogger(__name__)

PROBLEM_TYPE = "application/problem+json"
TYPE_BASE = "https://faithaudit.dev/problems/"
TITLES = {
    400: "Bad request",
    401: "Not authenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request too large",
    415: "Unsupported media type",
    422: "Invalid request",
    429: "Too many requests",
    500: "Server error",
}


class Problem(Exception):
    def __init__(
        self,
        status: int,
        detail: str,
        *,
        slug: str | None = None,
        title: str | None = None,
        errors: list[dict] | None = None,
        headers: dict | None = None,
        extra: dict | None = None,
    ):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.slug = slug or re.sub(r"[^a-z]+", "-", TITLES.get(status, "error").lower()).strip("-")
        self.title = title or TITLES.get(status, "Error")
        self.errors = errors
        self.headers = headers or {}
        self.extra = extra or {}


def problem_response(request, problem: Problem) -> HttpResponse:
    body = {
        "type": TYPE_BASE + problem.slug,
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
        "instance": request.path,
        **problem.extra,
    }
    if problem.errors is not None:
        body["errors"] = problem.errors
    response = HttpResponse(
        json.dumps(body, ensure_ascii=False, allow_nan=False),
        status=problem.status,
        content_type=PROBLEM_TYPE,
    )
    for name, value in problem.headers.items():
        response[name] = value
    return response


def _location_field(loc) -> str:
    parts = [str(part) for part in loc]
    if parts and parts[0] in ("body", "query", "path", "header", "form"):
        parts = parts[1:]
        if parts and parts[0] == "payload":  # the operation's body parameter, not a field
            parts = parts[1:]
    return ".".join(parts)


def problem_handlers(api) -> None:
    """Route every exception the API can meet to a problem document."""

    def on_problem(request, exc: Problem):
        return problem_response(request, exc)

    def on_validation(request, exc: ValidationError):
        errors = [
            {"field": _location_field(error.get("loc", ())), "detail": error.get("msg", "")}
            for error in exc.errors
        ]
        fields = ", ".join(error["field"] or "(body)" for error in errors)
        return problem_response(
            request,
            Problem(422, f"The request is not valid: {fields}.", slug="invalid", errors=errors),
        )

    def on_auth(request, exc: AuthenticationError):
        return problem_response(
            request,
            Problem(
                401,
                "Send a valid, unrevoked and unexpired personal API token as "
                "`Authorization: Bearer <token>`.",
                slug="not-authenticated",
                headers={"WWW-Authenticate": 'Bearer realm="faithaudit"'},
            ),
        )

    def on_http(request, exc: HttpError):
        # ninja wraps whatever the body parser raised (api.strict_json): keep its Problem.
        if isinstance(exc.__cause__, Problem):
            return problem_response(request, exc.__cause__)
        return problem_response(request, Problem(exc.status_code, str(exc)))

    def on_too_big(request, exc: RequestDataTooBig):
        return problem_response(
            request, Problem(413, "The request body is larger than this server reads.")
        )

    def on_404(request, exc: Http404):
        return problem_response(
            request, Problem(404, str(exc) or "No such resource (or you may not see it).")
        )

    def on_any(request, exc: Exception):
        logger.exception("API error on %s %s", request.method, request.path)
        return problem_response(
            request, Problem(500, "The server failed on this request; it has been logged.")
        )

    api.add_exception_handler(Problem, on_problem)
    api.add_exception_handler(ValidationError, on_validation)
    api.add_exception_handler(AuthenticationError, on_auth)
    api.add_exception_handler(HttpError, on_http)
    api.add_exception_handler(RequestDataTooBig, on_too_big)
    api.add_exception_handler(Http404, on_404)
    api.add_exception_handler(Exception, on_any)
