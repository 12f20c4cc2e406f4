"""The one decorator every project view goes through, so a role check cannot be forgotten."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404

from annotate.models import Role
from annotate.selectors import project_get_for_user


def project_view(role: str = Role.ANALYST) -> Callable:
    """Wrap a view taking (request, project, membership, **kwargs) from a URL with `<slug>`.

    Anonymous users go to the login page; members below `role` and non-members get 404.
    """

    def decorator(view: Callable) -> Callable:
        @login_required
        @wraps(view)
        def wrapped(request, slug: str, *args, **kwargs):
            try:
                project, membership = project_get_for_user(user=request.user, slug=slug, role=role)
            except Http404:
                # The same words for a page above one's role and for a project one is not in
                # (or that does not exist): the page names the role, never the project.
                raise Http404(_role_needed(role)) from None
            request.project = project
            request.membership = membership
            return view(request, project, membership, *args, **kwargs)

        wrapped.required_role = role
        return wrapped

    return decorator


def _role_needed(role: str) -> str:
    needed = Role(role).label.lower()
    if role == Role.ANALYST:
        return "This page is for members of its project: you are not a member of it."
    higher = " or an owner" if role == Role.LEAD else ""
    return (
        f"This page needs the role of {needed}{higher} in its project: your role there is "
        "lower, or you are not a member of it. Ask the project's owner."
    )
