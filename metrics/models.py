"""Report snapshots: a project's whole report computed by a task and stored, so the dashboard
reads one row instead of recounting on every request."""

from django.db import models

from annotate.models import Project, System
from judges.models import Judge


class ReportSnapshot(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="snapshots")
    judge = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.CASCADE, related_name="snapshots"
    )
    # What answers it covers (a project of two systems or more): one system's, or all of them
    # pooled (`all_systems`); neither is the project's default (its first system, or every
    # answer of a project with one system or none; snapshots made before systems were picked).
    system = models.ForeignKey(
        System, null=True, blank=True, on_delete=models.CASCADE, related_name="snapshots"
    )
    all_systems = models.BooleanField(
        default=False, help_text="The answers of every system, pooled (two systems or more)."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    progress = models.FloatField(default=0.0, help_text="0–1 while computing.")
    stage = models.CharField(max_length=200, blank=True)
    data = models.JSONField(default=dict, blank=True)
    crc_inputs = models.JSONField(
        default=list,
        blank=True,
        help_text="Each instrument's compact CRC inputs, for the α form; not part of the report.",
    )
    labels_at_compute = models.PositiveBigIntegerField(
        default=0, help_text="Label-history rows when computed: later ones are 'since'."
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "judge", "-created_at"], name="snapshot_idx")]

    def __str__(self) -> str:
        return f"report of {self.project} ({self.status}) {self.computed_at or ''}"
