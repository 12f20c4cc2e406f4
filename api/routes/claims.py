"""Claims (`/projects/{slug}/claims`, an answer's split and added claims), as the claims and
answer pages. Leads: no verdicts here."""

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from ninja import Query, Router, Status

from annotate.models import Claim, Role
from annotate.selectors import claim_get_for_project
from annotate.services.claims import ClaimsError, claim_add, claim_edit, claims_split
from api import schemas as s
from api import selectors
from api.routes.access import (
    ERRORS,
    WRITE_ERRORS,
    invalid,
    judge_get_or_404,
    project_get_for_request,
)
from judges.split_jobs import split_job_start

router = Router()


def _claim_out(claim: Claim, external_id: str | None = None) -> dict:
    return {
        "id": claim.pk,
        "answer": external_id if external_id is not None else claim.answer.external_id,
        "position": claim.position,
        "text": claim.text,
        "origin": claim.origin,
        "tags": claim.tags or [],
    }


@router.get("/projects/{slug}/claims", response={200: s.ClaimPage, **ERRORS}, tags=["claims"])
def claims_list(request, slug: str, after: int = 0, limit: int = Query(500, ge=1, le=5000)):
    """Claims in id order, a page at a time: pass the page's `next` as `after` (a cursor, so
    constant memory on both sides however large the project). Leads: no verdicts here."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    rows = selectors.claim_rows_for_project(project=project)
    return selectors.keyset_page(
        rows, after, limit, answer="answer__external_id", tags=lambda r: r["tags"] or []
    )


@router.get(
    "/projects/{slug}/claims/{claim_id}",
    response={200: s.ClaimDetailOut, **ERRORS},
    tags=["claims"],
)
def claims_read(request, slug: str, claim_id: int):
    """A claim with its answer and pile, as the labelling screen shows it (no verdicts)."""
    project, _ = project_get_for_request(request, slug)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    answer = claim.answer
    return {
        **_claim_out(claim, answer.external_id),
        "answer_text": answer.text,
        "question": answer.question,
        "pile": [
            {"rank": p.rank, "id": p.source_id, "title": p.title, "text": p.text}
            for p in selectors.pile_for_answer(answer=answer)
        ],
    }


@router.post(
    "/projects/{slug}/answers/{external_id}/split",
    response={201: list[s.ClaimOut], 202: s.SplitJobOut, **WRITE_ERRORS},
    tags=["claims"],
)
def answers_split(request, slug: str, external_id: str, payload: s.SplitIn):
    """Split an answer into claims by rule (now) or by an LLM judge's decompose prompt (a job)."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    answer = selectors.answer_get_by_external_id(project=project, external_id=external_id)
    if payload.method == "llm":
        if not payload.judge:
            raise invalid(
                "Splitting by LLM needs the judge whose decompose prompt to use.", "judge"
            )
        judge = judge_get_or_404(project, payload.judge)
        try:
            job = split_job_start(
                judge=judge, answer=answer, user=request.user, force=payload.force
            )
        except (ClaimsError, DjangoValidationError, ValueError) as error:
            raise invalid(str(getattr(error, "message", error)), "method", 409) from None
        return Status(202, {"id": job.pk, "status": job.status})
    try:
        claims = claims_split(answer=answer, method="rule", user=request.user, force=payload.force)
    except ClaimsError as error:
        raise invalid(str(error), "force", 409) from None
    return Status(201, [_claim_out(c, external_id) for c in claims])


@router.post(
    "/projects/{slug}/answers/{external_id}/claims",
    response={201: s.ClaimOut, **WRITE_ERRORS},
    tags=["claims"],
)
def claims_create(request, slug: str, external_id: str, payload: s.ClaimIn):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    answer = selectors.answer_get_by_external_id(project=project, external_id=external_id)
    try:
        claim = claim_add(answer=answer, text=payload.text, user=request.user)
    except (ClaimsError, PermissionDenied) as error:
        raise invalid(str(error), "text") from None
    return Status(201, _claim_out(claim, external_id))


@router.patch(
    "/projects/{slug}/claims/{claim_id}",
    response={200: s.ClaimOut, **WRITE_ERRORS},
    tags=["claims"],
)
def claims_edit(request, slug: str, claim_id: int, payload: s.ClaimIn):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    try:
        claim = claim_edit(claim=claim, text=payload.text, user=request.user)
    except (ClaimsError, PermissionDenied) as error:
        raise invalid(str(error), "text") from None
    return _claim_out(claim)
