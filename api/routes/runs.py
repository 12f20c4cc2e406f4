"""A judge's runs (`/projects/{slug}/judges/{name}/runs`, `/projects/{slug}/runs/{run_id}`):
start, poll, cancel and resume, as the judge page's Run."""

from django.core.exceptions import ValidationError as DjangoValidationError
from ninja import Router, Status

from annotate.models import Role
from api import schemas as s
from api import selectors
from api.routes.access import (
    ERRORS,
    WRITE_ERRORS,
    invalid,
    judge_get_or_404,
    project_get_for_request,
    validation_problem,
)
from judges import selectors as judge_selectors
from judges.models import Backend, JudgeRun
from judges.services import judge_run_cancel, judge_run_resume, judge_run_start

router = Router()


def _run_out(run: JudgeRun) -> dict:
    return {
        "id": run.pk,
        "judge": run.judge.name,
        "kind": run.kind,
        "scope": run.scope,
        "status": run.status,
        "total": run.total,
        "done": run.done,
        "failed": run.failed,
        "unparseable": run.unparseable,
        "remaining": max(run.total - run.done - run.failed - run.unparseable, 0),
        "error": run.error,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


@router.get(
    "/projects/{slug}/judges/{name}/runs", response={200: list[s.RunOut], **ERRORS}, tags=["judges"]
)
def runs_list(request, slug: str, name: str):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    judge = judge_get_or_404(project, name)
    return [_run_out(run) for run in selectors.runs_for_judge(judge=judge, limit=100)]


@router.post(
    "/projects/{slug}/judges/{name}/runs", response={202: s.RunOut, **WRITE_ERRORS}, tags=["judges"]
)
def runs_start(request, slug: str, name: str, payload: s.RunIn):
    """Start a run on all, unjudged or gold claims (as the judge page's Run); poll its status."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    judge = judge_get_or_404(project, name)
    if judge.backend == Backend.IMPORTED:
        raise invalid(
            "An imported judge's verdicts come from files; it cannot be run.", "name", 409
        )
    try:
        run = judge_run_start(
            judge=judge, kind=payload.kind, scope=payload.scope, user=request.user
        )
    except DjangoValidationError as error:
        raise validation_problem(error) from None
    run.refresh_from_db()
    return Status(202, _run_out(run))


def _run(request, slug: str, run_id: int) -> JudgeRun:
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    return judge_selectors.judge_run_get_for_project(project=project, run_id=run_id)


@router.get("/projects/{slug}/runs/{run_id}", response={200: s.RunOut, **ERRORS}, tags=["judges"])
def runs_read(request, slug: str, run_id: int):
    return _run_out(_run(request, slug, run_id))


@router.post(
    "/projects/{slug}/runs/{run_id}/cancel",
    response={200: s.RunOut, **WRITE_ERRORS},
    tags=["judges"],
)
def runs_cancel(request, slug: str, run_id: int):
    run = _run(request, slug, run_id)
    if not judge_run_cancel(run=run):
        raise invalid(f"Run {run.pk} has already finished ({run.status}).", "run_id", 409)
    return _run_out(run)


@router.post(
    "/projects/{slug}/runs/{run_id}/resume",
    response={202: s.RunOut, **WRITE_ERRORS},
    tags=["judges"],
)
def runs_resume(request, slug: str, run_id: int):
    run = _run(request, slug, run_id)
    if not judge_run_resume(run=run):
        raise invalid(
            f"Run {run.pk} is live or has nothing left to do ({run.status}).", "run_id", 409
        )
    run.refresh_from_db()
    return Status(202, _run_out(run))
