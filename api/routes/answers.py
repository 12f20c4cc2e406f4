"""Answers with their pile pushed in (`POST /projects/{slug}/answers`), through the same
import as the import page and `manage.py import_answers`."""

import io

from ninja import Router, Status

from annotate.models import Role
from api import schemas as s
from api.problems import Problem
from api.routes.access import WRITE_ERRORS, invalid, project_get_for_request
from api.routes.bodies import Named, Rewindable, issue_out
from api.strict_json import NDJSON, body_read
from interchange.importers.issues import ImportFailed
from interchange.services.imports import answers_import

# A JSON array request holds at most this many answers; more go as NDJSON (streamed).
JSON_ANSWERS_MAX = 1000

router = Router()

# The request body's schema in the OpenAPI: a JSON array of native answers, or NDJSON.
_ANSWERS_BODY = {
    "requestBody": {
        "required": True,
        "description": (
            "Answers in the native import schema (the same objects as a line of a native "
            "JSON Lines file: id, question, answer, pile, and optionally claims with "
            f"labels, gold and judge verdicts). A JSON array of at most {JSON_ANSWERS_MAX}, "
            "or any number as NDJSON (`Content-Type: application/x-ndjson`, one answer "
            "per line, read as a stream)."
        ),
        "content": {
            "application/json": {
                "schema": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": JSON_ANSWERS_MAX,
                    "items": {"$ref": "#/components/schemas/NativeAnswer"},
                }
            },
            NDJSON: {"schema": {"$ref": "#/components/schemas/NativeAnswer"}},
        },
    }
}


@router.post(
    "/projects/{slug}/answers",
    response={
        200: s.AnswersOut,
        201: s.AnswersOut,
        **WRITE_ERRORS,
        413: s.ProblemOut,
        415: s.ProblemOut,
    },
    tags=["answers"],
    openapi_extra=_ANSWERS_BODY,
)
def answers_create(request, slug: str):
    """Create answers with their pile, all or nothing. Idempotent by the answer's id: an
    answer already there with the same content is counted in `existing` and left alone; one
    whose content differs is refused, naming its id, index and field. 201 when anything was
    created, 200 when everything was already there."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    content_type = request.content_type or ""
    if content_type == NDJSON:
        name, most = "request.jsonl", None
    elif content_type in ("application/json", ""):
        name, most = (
            "request.json",
            (JSON_ANSWERS_MAX, "per JSON request (send more as application/x-ndjson)"),
        )
    else:
        raise Problem(415, f"Send application/json (an array) or {NDJSON}, not {content_type!r}.")
    if content_type == NDJSON:
        body = Rewindable(request)
    else:  # a JSON array is capped (FAITHAUDIT_API_MAX_BODY_BYTES): read it whole
        body = io.BytesIO(body_read(request))
        if not body.getvalue().lstrip().startswith(b"["):
            raise invalid("The body must be a JSON array of answers (or send NDJSON).", "")
    try:
        result = answers_import(
            project=project,
            path_or_file=Named(body, name),
            format="native",
            user=request.user,
            idempotent=True,
            most=most,
        )
    except ImportFailed as error:
        errors = [issue_out(issue) for issue in error.issues]
        first = errors[0] if errors else {}
        where = f"item {first['index']}" if "index" in first else first.get("location", "")
        raise Problem(
            422,
            f"Nothing was written: {len(errors)} problem(s){' (stopped early)' if error.truncated else ''}; "
            f"first at {where}{', field ' + first['field'] if first.get('field') else ''}: {first.get('detail', '')}",
            slug="answers-refused",
            title="Answers refused",
            errors=errors,
        ) from None
    out = {
        "created": result.answers,
        "existing": result.existing,
        "passages": result.passages,
        "claims": result.claims,
        "labels": result.labels,
        "gold": result.gold,
        "judge_verdicts": result.judge_verdicts,
    }
    return Status(201 if result.answers else 200, out)
