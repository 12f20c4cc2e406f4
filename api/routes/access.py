"""What every operation shares: the problems it can answer, the project as the screens see it
for the token's user and role, the judge or system a report is of, and a Django validation
error as a problem document."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404

from annotate.models import Membership, Project, Role
from annotate.selectors import project_get_for_user
from api import schemas as s
from api.problems import Problem
from judges.models import Judge
from metrics import selectors as metric_selectors
from metrics.services.compare import SystemNotFound, system_resolve

# Every operation can answer these problems (422: a parameter or body that does not validate;
# 429: the token's rate limit).
ERRORS = dict.fromkeys((400, 401, 403, 404, 422, 429), s.ProblemOut)
# 413: a JSON body over FAITHAUDIT_API_MAX_BODY_BYTES (api/strict_json.py).
WRITE_ERRORS = {**ERRORS, 409: s.ProblemOut, 413: s.ProblemOut}


def project_get_for_request(
    request, slug: str, role: str = Role.ANALYST
) -> tuple[Project, Membership]:
    """The project as the screens see it for this user and role; a token scoped to another
    project sees nothing (404, as for a non-member)."""
    token = request.auth
    project, membership = project_get_for_user(user=request.user, slug=slug, role=role)
    if token.project_id is not None and token.project_id != project.pk:
        raise Http404("No such project.")
    return project, membership


def judge_for_report(project: Project, name: str | None) -> Judge | None:
    """The `judge` parameter of a report: none, or a judge of the project (else a 404 problem
    naming the field)."""
    if not name:
        return None
    judge = metric_selectors.judge_get_by_name(project=project, name=name)
    if judge is None:
        raise Problem(
            404,
            f"This project has no judge named {name!r}.",
            errors=[{"field": "judge", "detail": "unknown judge"}],
        )
    return judge


def judge_get_or_404(project: Project, name: str) -> Judge:
    """The judge named in the path (404 "No such judge." otherwise)."""
    judge = metric_selectors.judge_get_by_name(project=project, name=name)
    if judge is None:
        raise Http404("No such judge.")
    return judge


def system_scope(project: Project, ref: str | None) -> dict:
    """The `system` parameter of a report: NAME@VERSION or NAME (one system's answers), "all"
    (every system's pooled), or none (the project's default: its first system of several)."""
    if not ref:
        return {"system": None, "all_systems": False}
    if ref.strip() == "all":
        return {"system": None, "all_systems": True}
    try:
        return {"system": system_resolve(project=project, ref=ref), "all_systems": False}
    except SystemNotFound as error:
        raise invalid(str(error), "system", status=404) from None


def invalid(detail: str, field: str = "", status: int = 422) -> Problem:
    return Problem(status, detail, slug="invalid", errors=[{"field": field, "detail": detail}])


def validation_problem(error: DjangoValidationError) -> Problem:
    errors = []
    if hasattr(error, "error_dict"):
        for field, messages in error.message_dict.items():
            errors += [{"field": field, "detail": message} for message in messages]
    else:
        errors = [{"field": "", "detail": message} for message in error.messages]
    return Problem(
        422,
        "; ".join(f"{e['field']}: {e['detail']}" if e["field"] else e["detail"] for e in errors),
        slug="invalid",
        errors=errors,
    )
