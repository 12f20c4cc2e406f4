"""Personal API tokens: stored as the SHA-256 of the token, looked up by its public prefix."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotate.models import Project


class ApiToken(models.Model):
    name = models.CharField(max_length=100)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    # The token is "fa_<prefix>_<secret>"; the prefix finds the row, the hash proves the secret.
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    read_only = models.BooleanField(default=False)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:  # never the secret
        return f"{self.name} (fa_{self.prefix}_…)"

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def active(self) -> bool:
        return self.revoked_at is None and not self.expired

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expired:
            return "expired"
        return "active"
