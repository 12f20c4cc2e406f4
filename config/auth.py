"""Every page's first two reads, the session and its user, without compiling an ORM query.

Django's database session store and its model backend each fetch one row by key through the
ORM, which spends more time compiling the query than PostgreSQL spends answering it (~0.6 ms
of a page's Python per request, measured with bench/profile_save_next.py: the labelling
screen's save-and-next is budgeted in milliseconds). The same row reads, written as SQL and
built into model instances with the ORM's own converters (config/sql.py `row_by`). Nothing
else changes: sessions are the same rows, and Django's checks (expiry here, `is_active` and
the session's password hash in django.contrib.auth) still run.

And the sign-in lockout's glue to django-axes (settings: AXES_*, LOGIN_*).
"""

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_client_username, get_cool_off
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Max, Q
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from config.sql import row_by


class SessionStore(db.SessionStore):
    """Django's database session store (SESSION_ENGINE = "config.auth"), reading by SQL."""

    def _get_session_from_db(self):
        session = row_by(
            self.model,
            "session_key",
            self.session_key,
            extra=" AND t.expire_date > %s",
            params=[connection.ops.adapt_datetimefield_value(timezone.now())],
        )
        if session is None:
            self._session_key = None
        return session


class UserBackend(ModelBackend):
    """Django's model backend; only the per-request load of the logged-in user is SQL."""

    def get_user(self, user_id):
        model = get_user_model()
        try:
            user_id = model._meta.pk.to_python(user_id)
        except ValidationError:  # a session holding a malformed id: nobody is logged in
            return None
        user = row_by(model, model._meta.pk.column, user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


class SignInLockoutBackend(AxesStandaloneBackend):
    """Axes' lockout check (first in AUTHENTICATION_BACKENDS), for sign-ins that come with a
    request: the login page's and the admin's.

    Code that authenticates without one (Django's test client, a management command) is not a
    client guessing passwords and has no address to count: it is let through to UserBackend.
    Any future HTTP sign-in (an API's) must pass its request to `authenticate()`.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def client_ip(request) -> str | None:
    """The client's address for the lockout: REMOTE_ADDR, or behind a proxy the address the
    proxy appended last to LOGIN_CLIENT_IP_HEADER (the ones before it the client can forge)."""
    header = settings.LOGIN_CLIENT_IP_HEADER
    if header:
        meta_key = "HTTP_" + header.upper().replace("-", "_")
        forwarded = [part.strip() for part in request.META.get(meta_key, "").split(",")]
        if forwarded and forwarded[-1]:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR")


def lockout_response(request, original_response=None, credentials=None):
    """The page a locked-out sign-in gets: 429 Too Many Requests, saying when to try again
    (also in Retry-After), on the login page or the admin's.

    The lockout ends a cool-off after the last failure that counted, of the username or of
    the address, whichever is later (attempts while locked out do not count).
    """
    from axes.models import AccessAttempt

    cool_off = get_cool_off(request) or settings.AXES_COOLOFF_TIME
    username = get_client_username(request, credentials)
    address = getattr(request, "axes_ip_address", None)
    last = AccessAttempt.objects.filter(Q(username=username) | Q(ip_address=address)).aggregate(
        last=Max("attempt_time")
    )["last"]
    now = timezone.now()
    retry_at = max((last or now) + cool_off, now)
    seconds = max(1, int((retry_at - now).total_seconds()))
    context = {
        "minutes": max(1, -(-seconds // 60)),
        "retry_at": retry_at,
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cool_off_minutes": round(cool_off.total_seconds() / 60),
        "admin": request.path.startswith(reverse("admin:index")),
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response
