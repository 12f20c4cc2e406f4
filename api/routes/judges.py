"""A project's judges (`/projects/{slug}/judges`), as the judges page."""

from django.core.exceptions import ValidationError as DjangoValidationError
from ninja import Router, Status

from annotate.models import Role
from api import schemas as s
from api import selectors
from api.routes.access import (
    ERRORS,
    WRITE_ERRORS,
    invalid,
    project_get_for_request,
    validation_problem,
)
from judges import selectors as judge_selectors
from judges.backends.registry import backend_names
from judges.models import Judge
from judges.services import judge_create

router = Router()


def _judge_out(judge: Judge) -> dict:
    return {
        "id": judge.pk,
        "name": judge.name,
        "backend": judge.backend,
        "model": judge.model,
        "endpoint": judge.endpoint,
    }


@router.get("/projects/{slug}/judges", response={200: list[s.JudgeOut], **ERRORS}, tags=["judges"])
def judges_list(request, slug: str):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    return [_judge_out(j) for j in judge_selectors.judge_list_for_project(project=project)]


@router.post("/projects/{slug}/judges", response={201: s.JudgeOut, **WRITE_ERRORS}, tags=["judges"])
def judges_create(request, slug: str, payload: s.JudgeIn):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    offered = backend_names(selectable=True)
    if payload.backend not in offered:
        raise invalid(f"backend: use {', '.join(offered)}", "backend")
    if selectors.judge_name_taken(project=project, name=payload.name):
        raise invalid(f"This project already has a judge named {payload.name!r}.", "name", 409)
    try:
        judge = judge_create(
            project=project,
            name=payload.name,
            backend=payload.backend,
            model=payload.model,
            endpoint=payload.endpoint,
            temperature=payload.temperature,
        )
    except DjangoValidationError as error:
        raise validation_problem(error) from None
    return Status(201, _judge_out(judge))
