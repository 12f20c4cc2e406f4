"""Projects and their members (`/projects`, `/projects/{slug}/members`), as the project pages
and the settings page's members form."""

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.http import Http404
from ninja import Router, Status

from annotate.models import Project, Role
from annotate.selectors import project_list_for_user
from annotate.services.projects import (
    MembershipError,
    member_set_notice,
    membership_remove,
    membership_set,
)
from annotate.services.projects import project_create as project_create_service
from api import schemas as s
from api import selectors
from api.problems import Problem
from api.routes.access import (
    ERRORS,
    WRITE_ERRORS,
    invalid,
    project_get_for_request,
    validation_problem,
)

router = Router()


def _project_out(project: Project, role: str | None) -> dict:
    return {
        "slug": project.slug,
        "name": project.name,
        "description": project.description,
        "answers": project.answers_count,
        "role": role,
    }


@router.get("/projects", response={200: list[s.ProjectOut], **ERRORS}, tags=["projects"])
def projects_list(request):
    """The projects the token's user is a member of (only its project for a scoped token)."""
    projects = project_list_for_user(user=request.user)
    if request.auth.project_id is not None:
        projects = projects.filter(pk=request.auth.project_id)
    roles = selectors.roles_for_user(user=request.user)
    return [_project_out(project, roles.get(project.pk)) for project in projects]


@router.post("/projects", response={201: s.ProjectOut, **WRITE_ERRORS}, tags=["projects"])
def projects_create(request, payload: s.ProjectIn):
    """Create a project (staff only, as the new-project page); the token's user owns it."""
    if request.auth.project_id is not None:
        raise Problem(403, "A token scoped to one project cannot create projects.")
    if selectors.project_slug_taken(slug=payload.slug):
        raise invalid(f"A project with slug {payload.slug!r} already exists.", "slug", 409)
    try:
        project = project_create_service(
            slug=payload.slug,
            name=payload.name,
            owner=request.user,
            description=payload.description,
        )
    except PermissionDenied as error:
        raise Problem(403, str(error)) from None
    except DjangoValidationError as error:  # a description over the operator's limit
        raise validation_problem(error) from None
    except IntegrityError:
        raise invalid(
            f"A project with slug {payload.slug!r} already exists.", "slug", 409
        ) from None
    return Status(201, _project_out(project, Role.OWNER))


@router.get("/projects/{slug}", response={200: s.ProjectOut, **ERRORS}, tags=["projects"])
def projects_read(request, slug: str):
    project, membership = project_get_for_request(request, slug)
    return _project_out(project, membership.role)


@router.get(
    "/projects/{slug}/members", response={200: list[s.MemberOut], **ERRORS}, tags=["projects"]
)
def members_list(request, slug: str):
    """The project's members and roles (owners, as the settings page)."""
    project, _ = project_get_for_request(request, slug, Role.OWNER)
    return [
        {"username": m.user.username, "role": m.role}
        for m in selectors.members_for_project(project=project)
    ]


@router.put(
    "/projects/{slug}/members/{username}",
    response={200: s.MemberSetOut, **WRITE_ERRORS},
    tags=["projects"],
)
def members_set(request, slug: str, username: str, payload: s.MemberIn):
    """Give an existing, active user a role (adding them). The answer is the same, 200 with
    the same body, whether the user exists and was given the role, exists but cannot be
    added (deactivated), or does not exist: the reply tells nobody which usernames exist (as
    the settings page's members form). The owner sees who was added in the members list, as
    on the settings page; creating projects is staff-only in production."""
    project, _ = project_get_for_request(request, slug, Role.OWNER)
    try:
        membership_set(project=project, username=username, role=payload.role)
    except MembershipError as error:  # about an existing member: the list shows them anyway
        raise invalid(str(error), "role") from None
    return {
        "username": username,
        "role": payload.role,
        "detail": member_set_notice(username=username, role=payload.role),
    }


@router.delete(
    "/projects/{slug}/members/{username}", response={204: None, **WRITE_ERRORS}, tags=["projects"]
)
def members_remove(request, slug: str, username: str):
    project, _ = project_get_for_request(request, slug, Role.OWNER)
    membership = selectors.membership_get_by_username(project=project, username=username)
    if membership is None:
        raise Http404("No such member.")
    try:
        membership_remove(project=project, membership_id=membership.pk)
    except MembershipError as error:
        raise invalid(str(error), "username", 409) from None
    return Status(204, None)
