"""The one decorator every project view goes through, so a role check cannot be forgotten."""

from collections.abc import Callable
from contextvars import ContextVar
from functools import wraps

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.utils import timezone

from annotate.models import Role
from annotate.selectors import project_get_for_user
from annotate.sql import session_membership_get, user_membership_get

# The user `project_view` read with the membership, while its view runs (`user_read_ahead`).
_user_read: ContextVar = ContextVar("project_view_user_read", default=None)


def project_view(role: str = Role.ANALYST) -> Callable:
    """Wrap a view taking (request, project, membership, **kwargs) from a URL with `<slug>`.

    Anonymous users go to the login page; members below `role` and non-members get 404.
    The session's user and their membership are read in one statement, before Django loads
    the user (`user_read_ahead`); Django's checks of the user are unchanged.
    """

    def decorator(view: Callable) -> Callable:
        @login_required
        @wraps(view)
        def checked(request, slug: str, *args, **kwargs):
            try:
                project, membership = project_get_for_user(
                    user=request.user, slug=slug, role=role, read=request.membership_read
                )
            except Http404:
                # The same words for a page above one's role and for a project one is not in
                # (or that does not exist): the page names the role, never the project.
                raise Http404(_role_needed(role)) from None
            request.project = project
            request.membership = membership
            return view(request, project, membership, *args, **kwargs)

        @wraps(view)
        def wrapped(request, slug: str, *args, **kwargs):
            user = _membership_read(request, slug)
            token = _user_read.set(user)
            try:
                return checked(request, slug, *args, **kwargs)
            finally:
                _user_read.reset(token)

        wrapped.required_role = role
        return wrapped

    return decorator


def _membership_read(request, slug: str):
    """Read the session's user with their membership in project `slug` (one statement), set
    `request.membership_read` to (their id, the membership or None) and return the user; None
    and nothing read without a signed-in session.

    When the session itself is not read yet and its store can take a row read elsewhere
    (config.auth.SessionStore's `preload`), the session comes in the same statement, joined to
    the user its row names; that user is taken only if it is the one the session's signed data
    names (else, as for a session saved before the row named its user, the user is read by that
    id in a second statement).
    """
    request.membership_read = None
    session = request.session
    joined = joined_membership = None
    if session.session_key and hasattr(session, "preload") and not session.loaded:
        data, joined, joined_membership = session_membership_get(
            session_key=session.session_key, slug=slug, now=timezone.now()
        )
        session.preload(data)
    user_id = session_user_id(session.get(SESSION_KEY))
    if user_id is None:
        return None
    if joined is not None and joined.pk == user_id:
        user, membership = joined, joined_membership
    else:
        user, membership = user_membership_get(slug=slug, user_id=user_id)
    if user is not None:
        request.membership_read = (user.pk, membership)
    return user


def session_user_id(value):
    """The user id a session's data names (`_auth_user_id`), as the user model's key; None for
    none or a malformed one (nobody is signed in: Django's own reading of such a session)."""
    if value is None:
        return None
    try:
        return get_user_model()._meta.pk.to_python(value)
    except ValidationError:
        return None


def user_read_ahead(user_id):
    """The user `project_view` read with the membership for the view it is running, if that is
    user `user_id`; else None. For the authentication backend (config.auth.UserBackend), which
    then makes Django's checks of it (active, the session's password hash) as of a user it read."""
    user = _user_read.get()
    return user if user is not None and user.pk == user_id else None


def _role_needed(role: str) -> str:
    needed = Role(role).label.lower()
    if role == Role.ANALYST:
        return "This page is for members of its project: you are not a member of it."
    higher = " or an owner" if role == Role.LEAD else ""
    return (
        f"This page needs the role of {needed}{higher} in its project: your role there is "
        "lower, or you are not a member of it. Ask the project's owner."
    )
