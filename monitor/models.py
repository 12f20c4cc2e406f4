"""A monitored stream, the claims it sampled (with the π each was drawn with), its alerts and
its human anchor set."""

from __future__ import annotations

from django.db import models

from annotate.models import Claim, Project, System
from judges.models import Judge, JudgeRun


class MonitoredStream(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="streams")
    system = models.ForeignKey(
        System,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="streams",
        help_text="Only this system's answers; empty: every answer of the project.",
    )
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="streams")
    sampling_rate = models.FloatField(
        default=0.1, help_text="π: the share of claims Poisson-sampled to the analysts now."
    )
    rate_history = models.JSONField(
        default=list, blank=True, help_text="[[ISO time, π], …]: every rate in force, oldest first."
    )
    target = models.FloatField(default=0.9, help_text="Alert when faithfulness is below this.")
    alpha = models.FloatField(default=0.05, help_text="Error allowed over the whole horizon.")
    horizon_days = models.PositiveIntegerField(default=90)
    halfwidth_target = models.FloatField(default=0.03)
    webhook = models.CharField(
        max_length=100,
        blank=True,
        help_text="Name of a webhook the operator declared (FAITHAUDIT_MONITOR_WEBHOOKS).",
    )
    email = models.EmailField(blank=True)
    active = models.BooleanField(default=True)
    started_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(sampling_rate__gt=0, sampling_rate__lte=1),
                name="monitor_stream_rate_in_0_1",
            ),
            models.CheckConstraint(
                condition=models.Q(target__gt=0, target__lt=1), name="monitor_stream_target_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} stream ≥ {self.target:.2f}"


class SampledClaim(models.Model):
    """A claim the stream saw: whether it was drawn to the queue, with which π, and when."""

    stream = models.ForeignKey(MonitoredStream, on_delete=models.CASCADE, related_name="claims")
    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="monitor_sample")
    pi = models.FloatField()
    sampled = models.BooleanField(default=False)
    drawn_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(pi__gt=0, pi__lte=1), name="monitor_sampled_pi_in_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id} (π = {self.pi:g})"


class Alert(models.Model):
    class Kind(models.TextChoices):
        FAITHFULNESS = "faithfulness", "Faithfulness below target"
        JUDGE_DRIFT = "judge_drift", "Judge drift"

    stream = models.ForeignKey(MonitoredStream, on_delete=models.CASCADE, related_name="alerts")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    raised_at = models.DateTimeField()
    evidence = models.JSONField(default=dict)
    sentence = models.TextField()
    webhook_sent_at = models.DateTimeField(null=True, blank=True)
    email_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-raised_at"]
        constraints = [
            # one alert of a kind per stream per episode: idempotent re-evaluation
            models.UniqueConstraint(
                fields=["stream", "kind", "raised_at"], name="monitor_alert_once"
            ),
        ]

    def __str__(self) -> str:
        return self.sentence


class AnchorSet(models.Model):
    """A fixed sample of gold claims the live judge re-judges on schedule."""

    stream = models.OneToOneField(
        MonitoredStream, on_delete=models.CASCADE, related_name="anchor_set"
    )
    claims = models.ManyToManyField(Claim, related_name="anchor_sets")
    calibration_days = models.PositiveIntegerField(default=14)
    created_at = models.DateTimeField(auto_now_add=True)
    since = models.DateField(
        null=True,
        blank=True,
        help_text="Calibration restarts here (a lead cleared a drift flag); empty: created_at.",
    )

    def __str__(self) -> str:
        return f"anchors of stream {self.stream_id}"


class AnchorJudgement(models.Model):
    """One re-judging of an anchor: the judge's verdict beside its gold label."""

    anchor_set = models.ForeignKey(AnchorSet, on_delete=models.CASCADE, related_name="judgements")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    gold_supported = models.BooleanField()
    judge_supported = models.BooleanField()
    judged_on = models.DateField(db_index=True)

    class Meta:
        constraints = [
            # one record per anchor per run: recording again is a no-op
            models.UniqueConstraint(
                fields=["anchor_set", "claim", "run"], name="monitor_anchor_once_per_run"
            ),
        ]

    def __str__(self) -> str:
        return f"anchor {self.claim_id} on {self.judged_on}"
