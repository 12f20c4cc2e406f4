"""The claims export streamed (`GET /projects/{slug}/claims.ndjson`): the claims export page's
native JSON Lines."""

from django.http import StreamingHttpResponse
from ninja import Router

from annotate.models import Role
from api.routes.access import ERRORS, project_get_for_request
from api.strict_json import NDJSON
from interchange.services.exports import claims_export_chunks

router = Router()


@router.get(
    "/projects/{slug}/claims.ndjson",
    tags=["claims"],
    response={200: None, **ERRORS},
    openapi_extra={
        "responses": {
            "200": {
                "description": "One native answer per line (what `export_claims --format jsonl` writes)",
                "content": {NDJSON: {"schema": {"type": "string"}}},
            }
        }
    },
)
def claims_export(request, slug: str):
    """Every answer with its claims, labels, gold and judge verdicts as NDJSON, streamed
    (constant memory): the claims export page's native JSON Lines."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    chunks = claims_export_chunks(project=project, format="jsonl")
    response = StreamingHttpResponse((chunk.encode() for chunk in chunks), content_type=NDJSON)
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-claims.ndjson"'
    return response
