"""Creating, revoking and checking personal API tokens.

A token is `fa_<prefix>_<secret>`: 8 random hex characters that find its row, and 32 random
bytes (URL-safe base64) that only the holder knows. The row keeps the SHA-256 of the whole
token, never the token; it is shown once, by `token_create`'s caller.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotate.models import Project
from api.models import ApiToken

TOKEN_PREFIX = "fa_"
# last_used_at is written at most this often per token (a write per request would be a hot row).
LAST_USED_EVERY = timedelta(seconds=30)


class TokenError(ValueError):
    """A token that cannot be created or revoked as asked; the message says why."""


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    secret: str  # the token itself: show it once, store it nowhere


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@transaction.atomic
def token_create(
    *,
    user,
    name: str,
    read_only: bool = False,
    project: Project | None = None,
    expires_days: int | None = None,
) -> NewToken:
    name = (name or "").strip()
    if not name:
        raise TokenError("Give the token a name (what it is for, e.g. “nightly CI”).")
    if len(name) > 100:
        raise TokenError("A token's name has at most 100 characters.")
    if expires_days is not None and expires_days < 1:
        raise TokenError("A token expires after 1 day or more (or never).")
    if project is not None and not project.memberships.filter(user=user).exists():
        raise TokenError(f"{user.username} is no member of project {project.slug!r}.")
    while True:
        prefix = secrets.token_hex(4)
        if not ApiToken.objects.filter(prefix=prefix).exists():
            break
    raw = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=prefix,
        secret_hash=_hash(raw),
        read_only=read_only,
        project=project,
        expires_at=timezone.now() + timedelta(days=expires_days) if expires_days else None,
    )
    return NewToken(token=token, secret=raw)


def token_revoke(*, token: ApiToken) -> bool:
    """Revoke `token` (from now on every request with it is refused); False if it already was."""
    return bool(
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def tokens_for_user(*, user):
    return ApiToken.objects.filter(user=user).select_related("project")


def token_get_for_user(*, user, token_id: int) -> ApiToken | None:
    return ApiToken.objects.filter(user=user, pk=token_id).first()


def user_get_by_name(username: str):
    return get_user_model().objects.filter(username=username).first()


def token_authenticate(raw: str) -> ApiToken | None:
    """The active token `raw` is, with its user; None for anything else (unknown, malformed,
    revoked, expired, inactive user) — the caller says the same thing for all of them."""
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    prefix, _, secret = raw[len(TOKEN_PREFIX) :].partition("_")
    if not prefix or not secret:
        return None
    token = ApiToken.objects.select_related("user").filter(prefix=prefix).first()
    if token is None or not hmac.compare_digest(token.secret_hash, _hash(raw)):
        return None
    if not token.active or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token
