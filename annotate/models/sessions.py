"""The session row, with its signed-in user's id beside the data (SESSION_ENGINE: config.auth)."""

from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class UserSession(AbstractBaseSession):
    """Django's database session (key, signed data, expiry) and `user`: the id the data names
    as signed in (`_auth_user_id`), or null. Written by config.auth.SessionStore at every save.

    Why the column: a project page reads its session, the session's user and their membership
    in one statement instead of two (`annotate.sql.session_membership_get`), on every
    save-and-next and its read-ahead. The signed data stays the truth: a reader uses the column
    only when it names the user the data names, and Django's checks of that user (active, the
    session's password hash) still run. No database constraint: a session may outlive its user
    (the join then finds none, as Django's own read would); deleting a user through the ORM
    deletes their sessions.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        db_constraint=False,
        related_name="+",
    )

    class Meta(AbstractBaseSession.Meta):
        db_table = "annotate_user_session"

    @classmethod
    def get_session_store_class(cls):
        return DatabaseSessionStore  # decoding only (`get_decoded`): the same signed format
