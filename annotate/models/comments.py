"""Comments on a claim: a thread a lead and the analysts read after their own label."""

from django.conf import settings
from django.db import models

from annotate.models.claims import Claim

COMMENT_LENGTH_MAX = 2000


class ClaimComment(models.Model):
    """One comment in a claim's thread (issue 32): why a claim is hard, what a guideline
    misses. An analyst reads colleagues' comments only once their own label is saved (they
    may name a verdict), and that reading counts as a reveal; leads read them all, on
    adjudication too."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="claim_comments"
    )
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["claim", "created_at"], name="comment_claim_time")]
        constraints = [
            models.CheckConstraint(condition=~models.Q(text=""), name="comment_text_not_empty"),
        ]

    def __str__(self) -> str:
        return f"comment on claim {self.claim_id} by {self.author_id}"
