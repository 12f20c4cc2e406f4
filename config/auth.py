"""Every page's first two reads, the session and its user, without compiling an ORM query.

Django's database session store and its model backend each fetch one row by key through the
ORM, which spends more time compiling the query than PostgreSQL spends answering it (~0.6 ms
of a page's Python per request, measured with bench/profile_save_next.py: the labelling
screen's save-and-next is budgeted in milliseconds). The same row reads, written as SQL and
built into model instances with the ORM's own converters (annotate.batch.ModelRows). Nothing
else changes: sessions are the same rows, and Django's checks (expiry here, `is_active` and
the session's password hash in django.contrib.auth) still run.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from annotate.batch import model_rows


def _row_by(model, column: str, value, *, extra: str = "", params=()):
    rows = model_rows(model)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {rows.columns('t')} FROM {model._meta.db_table} t"
            f" WHERE t.{connection.ops.quote_name(column)} = %s{extra}",
            [value, *params],
        )
        row = cursor.fetchone()
    return rows.instance(row) if row is not None else None


class SessionStore(db.SessionStore):
    """Django's database session store (SESSION_ENGINE = "config.auth"), reading by SQL."""

    def _get_session_from_db(self):
        session = _row_by(
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
        user = _row_by(model, model._meta.pk.column, user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
