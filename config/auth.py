"""Every page's first two reads, the session and its user, without compiling an ORM query
(on a project page one statement reads both, with the membership: annotate.access).

Django's database session store and its model backend each fetch one row by key through the
ORM, which spends more time compiling the query than PostgreSQL spends answering it (~0.6 ms
of a page's Python per request, measured with bench/profile_save_next.py: the labelling
screen's save-and-next is budgeted in milliseconds). The same row reads, written as SQL and
built into model instances with the ORM's own converters (config/sql.py `row_by`). Nothing
else changes: sessions are the same rows, and Django's checks (expiry here, `is_active` and
the session's password hash in django.contrib.auth) still run.

And the sign-in lockout's glue to django-axes (settings: AXES_*, LOGIN_*): its limits per
username and address, and the password-change form's old password counted as a sign-in.
"""

from axes.attempts import get_cool_off_threshold
from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django import forms
from django.conf import settings
from django.contrib.auth import SESSION_KEY, authenticate, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.views import PasswordChangeView
from django.contrib.sessions.backends import db
from django.db import connection
from django.db.models import Max, Sum
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from annotate.access import session_user_id, user_read_ahead
from annotate.models import UserSession
from config.sql import row_by


class SessionStore(db.SessionStore):
    """Django's database session store (SESSION_ENGINE = "config.auth"), reading by SQL, on the
    table that keeps the signed-in user's id beside the data (annotate.models.UserSession), so a
    project page reads the session with its user and membership in one statement
    (annotate.access). `preload` takes a session row read that way."""

    @classmethod
    def get_model_class(cls):
        return UserSession

    def create_model_instance(self, data):
        instance = super().create_model_instance(data)
        instance.user_id = session_user_id(data.get(SESSION_KEY))
        return instance

    @property
    def loaded(self) -> bool:
        """Whether the session's data has been read (or set) in this request."""
        return hasattr(self, "_session_cache")

    def preload(self, session_data: str | None) -> None:
        """Take the session's data as read by another statement (its live row's `session_data`,
        None when it has no live row), as `load()` would have read it."""
        self.accessed = True
        if session_data is None:
            self._session_key = None
            self._session_cache = {}
        else:
            self._session_cache = self.decode(session_data)

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
    """Django's model backend; only the per-request load of the logged-in user is SQL. On a
    project page the user comes from the project's membership read (one statement for both,
    `annotate.access.user_read_ahead`); Django's checks of it are the same either way."""

    def get_user(self, user_id):
        model = get_user_model()
        user_id = session_user_id(user_id)
        if user_id is None:  # a session holding a malformed id: nobody is logged in
            return None
        user = user_read_ahead(user_id) or row_by(model, model._meta.pk.column, user_id)
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


def lockout_groups(*, username: str | None, address: str | None) -> list[tuple[dict, int]]:
    """The failure counts that lock a sign-in out, each as (filter on AccessAttempt, limit):
    the username from this address (LOGIN_FAILURE_LIMIT), the username from anywhere
    (LOGIN_USERNAME_FAILURE_LIMIT) and the address for any username (LOGIN_ADDRESS_FAILURE_LIMIT,
    high: an office's colleagues share one address, and one of them mistyping must not lock
    out the others)."""
    groups = []
    if username is not None:
        groups.append(({"username": username, "ip_address": address}, settings.AXES_FAILURE_LIMIT))
        groups.append(({"username": username}, settings.LOGIN_USERNAME_FAILURE_LIMIT))
    if address is not None:
        groups.append(({"ip_address": address}, settings.LOGIN_ADDRESS_FAILURE_LIMIT))
    return groups


class SignInLockoutHandler(AxesDatabaseHandler):
    """Axes' database handler (AXES_HANDLER) with a limit of its own for each group of
    `lockout_groups`; axes compares one number with one limit (AXES_FAILURE_LIMIT)."""

    def get_failures(self, request, credentials=None) -> int:
        """The failures in the cool-off on the scale of AXES_FAILURE_LIMIT: that limit when a
        group is at its own, else the username's failures from this address (below it)."""
        recent = AccessAttempt.objects.filter(attempt_time__gte=get_cool_off_threshold(request))
        username = get_client_username(request, credentials)
        address = getattr(request, "axes_ip_address", None)
        limit = settings.AXES_FAILURE_LIMIT
        pair = 0
        for number, (where, most) in enumerate(lockout_groups(username=username, address=address)):
            failures = recent.filter(**where).aggregate(n=Sum("failures_since_start"))["n"] or 0
            if failures >= most:
                return limit
            if number == 0 and username is not None:
                pair = failures
        return min(pair, limit - 1)

    def reset_user_attempts(self, request, credentials=None) -> int:
        """On a successful sign-in, forgive that username's failures only: a colleague's
        success must not clear the failures counted against their shared address."""
        username = get_client_username(request, credentials)
        if username is None:
            return 0
        count, _ = AccessAttempt.objects.filter(username=username).delete()
        return count


class OldPasswordLockoutForm(PasswordChangeForm):
    """Django's password-change form, its old password checked as a sign-in (`authenticate`
    with the request): a wrong one counts towards the lockout like a failed sign-in, and a
    locked-out username is refused even the right one (the view then answers the lockout
    page, 429). Without it the form allowed unlimited guesses of a signed-in user's password."""

    def __init__(self, user, *args, request=None, **kwargs):
        super().__init__(user, *args, **kwargs)
        self.request = request

    def clean_old_password(self):
        old_password = self.cleaned_data["old_password"]
        user = authenticate(self.request, username=self.user.get_username(), password=old_password)
        if user is None or user.pk != self.user.pk:
            raise forms.ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old_password


class OldPasswordLockoutView(PasswordChangeView):
    form_class = OldPasswordLockoutForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}


def lockout_response(request, original_response=None, credentials=None):
    """The page a locked-out sign-in gets: 429 Too Many Requests, saying when to try again
    (also in Retry-After), on the login page, the admin's or the password-change form.

    The lockout ends a cool-off after the last failure that counted in each group at its limit
    (`lockout_groups`), whichever is later (attempts while locked out do not count).
    """
    cool_off = get_cool_off(request) or settings.AXES_COOLOFF_TIME
    username = get_client_username(request, credentials)
    address = getattr(request, "axes_ip_address", None)
    now = timezone.now()
    recent = AccessAttempt.objects.filter(attempt_time__gte=now - cool_off)
    last = None
    for where, most in lockout_groups(username=username, address=address):
        counted = recent.filter(**where).aggregate(
            n=Sum("failures_since_start"), last=Max("attempt_time")
        )
        if (counted["n"] or 0) >= most and (last is None or counted["last"] > last):
            last = counted["last"]
    retry_at = max((last or now) + cool_off, now)
    seconds = max(1, int((retry_at - now).total_seconds()))
    context = {
        "minutes": max(1, -(-seconds // 60)),
        "retry_at": retry_at,
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cool_off_minutes": round(cool_off.total_seconds() / 60),
        "admin": request.path.startswith(reverse("admin:index")),
        "password_change": request.path == reverse("password_change"),
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response
