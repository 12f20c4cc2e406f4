"""The queue's per-claim state: reveals, reservations and skips."""

from django.conf import settings
from django.db import models

from annotate.models.choices import Verdict
from annotate.models.claims import Claim


class Reveal(models.Model):
    """The judge's verdicts or colleagues' labels on a claim were shown to a user, once their
    own label existed (`claim_reveal_for_user`, recorded when the screen renders them).

    `verdict` is the user's verdict at the first reveal, their blind judgement: a later label
    of theirs with another verdict is `changed_after_reveal`.
    """

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reveals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    verdict = models.CharField(max_length=12, choices=Verdict.choices)
    revealed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "user"], name="reveal_unique"),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id} revealed to {self.user_id} (was {self.verdict})"


class Reservation(models.Model):
    """A claim handed to an analyst by the queue and not yet labelled; it expires."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reservations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField()
    ahead = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Taken for the screen the labelling page renders ahead (the claim the next "
        "save-and-next will serve), not served yet: a label saved on it first, reached by j/k, "
        "is outside the queue. Serving it clears this.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "user"], name="reservation_unique"),
        ]
        indexes = [models.Index(fields=["user", "expires_at"], name="reservation_user_idx")]

    def __str__(self) -> str:
        return f"claim {self.claim_id} for {self.user_id} until {self.expires_at}"


class ClaimSkip(models.Model):
    """An analyst's skip of a claim, with the reason: out of their queue, into the leads'
    list of skipped claims (`annotate:skipped`) until a lead sends it back."""

    class Reason(models.TextChoices):
        NOT_CHECKABLE = "not_checkable", "Not checkable against a pile"
        NOT_ATOMIC = "not_atomic", "Not atomic: badly split (for the claims editor)"
        NEEDS_EXPERTISE = "needs_expertise", "Needs expertise I do not have"

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="skips")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "user"], name="claimskip_once_per_user")
        ]

    def __str__(self) -> str:
        return f"skip of claim {self.claim_id} by user {self.user_id} ({self.reason})"
