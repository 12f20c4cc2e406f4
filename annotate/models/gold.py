"""The gold verdict a claim's labels decided (or a reviewer set)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotate.models.choices import Verdict
from annotate.models.claims import Claim
from annotate.models.labels import ImportedAnnotator


class Gold(models.Model):
    class Source(models.TextChoices):
        UNANIMOUS = "unanimous", "Unanimous analysts"
        ADJUDICATED = "adjudicated", "Adjudicated by a lead"

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="gold")
    verdict = models.CharField(max_length=12, choices=Verdict.choices)
    source = models.CharField(max_length=12, choices=Source.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # An imported gold's `decided_by` name, kept as an imported annotator (never an account).
    imported_decided_by = models.ForeignKey(
        ImportedAnnotator, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField(blank=True)
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "gold"
        constraints = [
            models.CheckConstraint(
                condition=Q(verdict__in=Verdict.values), name="gold_verdict_valid"
            ),
            models.CheckConstraint(
                condition=Q(source__in=["unanimous", "adjudicated"]), name="gold_source_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} ({self.source}) for claim {self.claim_id}"
