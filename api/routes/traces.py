"""OpenTelemetry traces pushed in (`POST /otlp/v1/traces`): one answer per trace with its pile
in rank order, through the same import as `POST …/answers`."""

import io
import json

from ninja import Router

from annotate.models import Role
from api import schemas as s
from api.otlp import TraceError, traces_to_records
from api.problems import Problem
from api.routes.access import WRITE_ERRORS, invalid, project_get_for_request
from api.routes.bodies import Named, issue_out
from api.strict_json import body_read, json_decode
from interchange.importers.issues import ImportFailed
from interchange.services.imports import answers_import

router = Router()

PROJECT_HEADER = "X-FaithAudit-Project"


@router.post(
    "/otlp/v1/traces",
    response={200: s.OtlpOut, **WRITE_ERRORS, 415: s.ProblemOut},
    tags=["answers"],
    openapi_extra={
        "parameters": [
            {
                "name": PROJECT_HEADER,
                "in": "header",
                "required": False,
                "schema": {"type": "string"},
                "description": "The project's slug (else the token's project scope).",
            }
        ],
        "requestBody": {
            "required": True,
            "description": "An OTLP/HTTP ExportTraceServiceRequest in the JSON encoding.",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    },
)
def otlp_traces(request):
    """OpenTelemetry traces (GenAI conventions or OpenInference) → one answer per trace with
    its pile in rank order, through the same import as POST …/answers (idempotent by trace id)."""

    slug = request.headers.get(PROJECT_HEADER) or (
        request.auth.project.slug if request.auth.project_id else ""
    )
    if not slug:
        raise invalid(
            f"Name the project: a token scoped to it, or the {PROJECT_HEADER} header.",
            PROJECT_HEADER,
        )
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    if (request.content_type or "application/json") != "application/json":
        raise Problem(415, "Send OTLP/HTTP traces in the JSON encoding (application/json).")
    payload = json_decode(body_read(request) or b"null")
    try:
        records, skipped = traces_to_records(payload)
    except TraceError as error:
        raise Problem(
            422,
            f"The traces are refused: {error}",
            slug="invalid",
            errors=[{"field": field, "detail": detail} for field, detail in error.problems],
        ) from None
    out = {"partialSuccess": {"rejectedSpans": 0, "errorMessage": "; ".join(skipped)}}
    out.update(created=0, existing=0, skipped=len(skipped))
    if not records:
        return out
    try:
        result = answers_import(
            project=project,
            path_or_file=Named(io.BytesIO(json.dumps(records).encode()), "traces.json"),
            format="native",
            user=request.user,
            idempotent=True,
        )
    except ImportFailed as error:
        errors = []
        for issue in error.issues:
            item = issue_out(issue)
            if "index" in item and item["index"] < len(records):
                item["location"] = f"trace {records[item['index']]['id']}"
            errors.append(item)
        raise Problem(
            422,
            "Nothing was written: "
            + "; ".join(f"{e['location']} {e['field']}: {e['detail']}" for e in errors),
            slug="answers-refused",
            errors=errors,
        ) from None
    out.update(created=result.answers, existing=result.existing)
    return out
