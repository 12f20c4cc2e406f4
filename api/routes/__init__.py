"""The API's operations (`/api/v1/…`): each checks the role as the screens do, through
`annotate.selectors.project_get_for_user` (a member below the role, or no member, gets 404),
then calls the screens' service. The schema at `/api/v1/openapi.json` documents them.

One module per resource, each with its own `Router`: `projects` (and members), `answers`,
`reports` (report, snapshots, audit card, gate, compare), `preferences`, `judges`, `runs`,
`claims`, `labels` (and gold), `exports` (the claims NDJSON), `traces` (OTLP). `access` holds
what they share (the project for the token, the problems every operation can answer),
`bodies` the request body read as an import file; their reads are in `api.selectors`. This
module builds the `NinjaAPI` (`from api.routes import api`, mounted by config/urls.py) and
adds the routers in the order the schema lists them.
"""

from ninja import NinjaAPI
from ninja.security import HttpBearer

from api import schemas as s
from api.problems import Problem, problem_handlers
from api.ratelimit import rate_check
from api.routes import (
    answers,
    claims,
    exports,
    judge_versions,
    judges,
    labels,
    preferences,
    projects,
    reports,
    runs,
    traces,
)
from api.strict_json import StrictParser, StrictRenderer, body_size_check
from api.tokens import token_authenticate

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# The schema's paths in this order (a router's paths come after the previous router's).
ROUTERS = (
    projects,
    answers,
    reports,
    preferences,
    judges,
    judge_versions,
    runs,
    claims,
    labels,
    exports,
    traces,
)


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>`: the request then acts as the token's user."""

    openapi_scheme = "bearer"

    def authenticate(self, request, token: str):
        api_token = token_authenticate(token)
        if api_token is None:
            return None
        wait = rate_check(api_token.prefix)
        if wait is not None:
            raise Problem(
                429,
                f"This token made more requests than its rate limit allows; retry in {wait} s.",
                slug="rate-limited",
                headers={"Retry-After": str(wait)},
            )
        if api_token.read_only and request.method not in SAFE_METHODS:
            raise Problem(
                403, "This token is read-only: it cannot change anything.", slug="read-only"
            )
        body_size_check(request)  # 413 before the operation reads the body
        request.user = api_token.user
        request.api_token = api_token
        return api_token


def _responses_by_code(responses: dict) -> dict:
    """One entry per status code, keyed by its string. Ninja keys the declared responses by
    integer and `openapi_extra` by string, so a route that refines its 200 in `openapi_extra`
    got both — two "200" keys in the JSON, which YAML-minded readers (the docs page's Swagger
    UI) refuse as a duplicated mapping key. The refinement wins, merged over the declared one."""
    merged: dict[str, dict] = {}
    for code, response in responses.items():
        merged[str(code)] = {**merged.get(str(code), {}), **response}
    return merged


class _Api(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        """`api_routes_<function>`, as when every operation lived in api/routes.py: clients
        generated from the schema keep their method names."""
        return f"api_routes_{operation.view_func.__name__}"

    def get_openapi_schema(self, *args, **kwargs):
        schema = super().get_openapi_schema(*args, **kwargs)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        native = s.NativeAnswer.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(native.pop("$defs", {}))
        components["NativeAnswer"] = native
        components["NativePreference"] = s.NativePreference.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                operation["responses"] = _responses_by_code(operation.get("responses") or {})
                # Error responses are problem documents: say so in their media type.
                for response in operation["responses"].values():
                    content = response.get("content") or {}
                    body = content.get("application/json")
                    if body and body.get("schema", {}).get("$ref", "").endswith("/ProblemOut"):
                        content["application/problem+json"] = content.pop("application/json")
        return schema


api = _Api(
    title="FaithAudit API",
    version="1",
    description=(
        "Push answers with their pile, run judges, pull audited figures (with their method "
        "and intervals) and gate releases. Authenticate with a personal API token: "
        "`Authorization: Bearer <token>`. Every error is an RFC 9457 problem document "
        "(`application/problem+json`)."
    ),
    auth=TokenAuth(),
    urls_namespace="api",
    openapi_url="/openapi.json",
    docs_url="/docs",
    parser=StrictParser(),
    renderer=StrictRenderer(),
)
problem_handlers(api)
for module in ROUTERS:
    api.add_router("", module.router)
