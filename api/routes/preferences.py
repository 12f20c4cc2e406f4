"""People's pairwise preferences pushed in (`POST /projects/{slug}/preferences`), through the
same import as the preferences import page."""

from ninja import Router, Status

from annotate.models import Role
from api import schemas as s
from api.problems import Problem
from api.routes.access import WRITE_ERRORS, invalid, project_get_for_request
from api.routes.bodies import Named, Rewindable, issue_out
from api.strict_json import NDJSON
from interchange.importers.issues import ImportFailed
from interchange.services.preference_imports import preferences_import

router = Router()


@router.post(
    "/projects/{slug}/preferences",
    response={200: s.PreferencesOut, 201: s.PreferencesOut, **WRITE_ERRORS, 415: s.ProblemOut},
    tags=["reports"],
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": (
                "People's pairwise preferences between two systems' answers to a question, "
                "as the native preferences file holds them (question_id, system_a, system_b, "
                "annotator, preference A/B/tie and/or strength −2..2, note): a JSON array, "
                "NDJSON, or CSV (`text/csv`) with those columns. RAGChecker's human-study "
                "records (query_id, model1, model2, overall_label) are read too. Both systems' "
                "answers must already be in the project."
            ),
            "content": {
                "application/json": {
                    "schema": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"$ref": "#/components/schemas/NativePreference"},
                    }
                },
                NDJSON: {"schema": {"$ref": "#/components/schemas/NativePreference"}},
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    },
)
def preferences_create(request, slug: str):
    """Import pairwise preferences, all or nothing; the compare report's "Pairwise, analysts"
    block reads them with the blind screen's marks. Idempotent: a mark already imported (the
    same annotator on the same pair) is replaced, so sending the same body twice changes
    nothing (201 when anything was created, 200 otherwise). Leads and owners."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    content_type = request.content_type or ""
    names = {NDJSON: "request.jsonl", "text/csv": "request.csv", "application/json": "request.json"}
    if content_type not in names and content_type != "":
        raise Problem(
            415, f"Send application/json (an array), {NDJSON} or text/csv, not {content_type!r}."
        )
    body = Rewindable(request)
    if content_type in ("application/json", "") and not body.head.lstrip().startswith(b"["):
        raise invalid("The body must be a JSON array of preferences (or send NDJSON).", "")
    try:
        result = preferences_import(
            project=project, path_or_file=Named(body, names.get(content_type, "request.json"))
        )
    except ImportFailed as error:
        errors = [issue_out(issue) for issue in error.issues]
        first = errors[0] if errors else {}
        where = f"item {first['index']}" if "index" in first else first.get("location", "")
        field = f", field {first['field']}" if first.get("field") else ""
        raise Problem(
            422,
            f"Nothing was written: {len(errors)} problem(s); first at {where}{field}: "
            f"{first.get('detail', '')}",
            slug="preferences-refused",
            title="Preferences refused",
            errors=errors,
        ) from None
    out = {
        key: getattr(result, key)
        for key in ("created", "updated", "unchanged", "pairs", "annotators")
    }
    return Status(201 if result.created else 200, out)
