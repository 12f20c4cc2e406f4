"""The one decorator every project view goes through, so a role check cannot be forgotten."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required

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
            project, membership = project_get_for_user(user=request.user, slug=slug, role=role)
            request.project = project
            request.membership = membership
            return view(request, project, membership, *args, **kwargs)

        wrapped.required_role = role
        return wrapped

    return decorator
