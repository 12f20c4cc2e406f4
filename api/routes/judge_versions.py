"""Judge versions (`/projects/{slug}/judges/{name}/versions`, `…/compare`), as the judge
versions page: a new version with few-shot examples from development gold (held-out refused),
and two versions compared on held-out gold."""

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from ninja import Field, Router, Schema, Status

from annotate.models import Role
from api.routes.access import (
    ERRORS,
    WRITE_ERRORS,
    judge_get_or_404,
    project_get_for_request,
    validation_problem,
)
from judges.versions import judge_version_create, judge_version_label
from metrics.services.judge_compare import judge_compare

router = Router()


class JudgeVersionIn(Schema):
    name: str = Field("", max_length=100, description="Blank: “<judge> vN”.")
    model: str = Field("", max_length=200, description="Blank: the same model.")
    verify_prompt: str = Field("", description="Blank: the same prompt.")
    few_shot: list[int] = Field(
        default_factory=list, description="Claim ids of development gold claims (held-out refused)."
    )


class JudgeVersionOut(Schema):
    id: int
    name: str
    parent: str
    version: str
    prompt_version: str
    few_shot: list[dict[str, Any]]


@router.post(
    "/projects/{slug}/judges/{name}/versions",
    response={201: JudgeVersionOut, **WRITE_ERRORS},
    tags=["judges"],
)
def judge_versions_create(request, slug: str, name: str, payload: JudgeVersionIn):
    """A new version of the judge: its edits and few-shot examples (development gold only)."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    judge = judge_get_or_404(project, name)
    try:
        version = judge_version_create(
            judge=judge,
            name=payload.name,
            model=payload.model or None,
            verify_prompt=payload.verify_prompt or None,
            few_shot_claim_ids=payload.few_shot,
        )
    except DjangoValidationError as error:
        raise validation_problem(error) from None
    return Status(
        201,
        {
            "id": version.pk,
            "name": version.name,
            "parent": judge.name,
            "version": judge_version_label(version),
            "prompt_version": version.prompt_version,
            "few_shot": version.few_shot,
        },
    )


@router.get(
    "/projects/{slug}/judges/{name}/compare",
    response={200: dict[str, Any], **ERRORS},
    tags=["judges"],
)
def judge_versions_compare(request, slug: str, name: str, against: str):
    """The judge (B) against version `against` (A) on held-out gold: each version's figures,
    the paired differences B − A with intervals and McNemar's exact test, by risk category and
    stratum, the PPI break-even and the recommendation; with a gold split, `abstain`: per
    version the threshold chosen on development gold, its coverage and error bound certified
    on held-out gold."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    b = judge_get_or_404(project, name)
    a = judge_get_or_404(project, against)
    return judge_compare(project=project, a=a, b=b)
