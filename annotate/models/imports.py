"""Import jobs: an uploaded file, its progress and outcome."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.models.projects import Project


def import_upload_to(job: "ImportJob", filename: str) -> str:
    # A directory of its own per upload keeps the lead's file name (errors and the job list
    # show it) without the storage renaming one of two same-named files.
    return f"imports/{uuid.uuid4().hex}/{filename}"


class ImportJob(models.Model):
    """One uploaded file imported by a worker, with its progress, result or errors.

    The file is stored under MEDIA_ROOT/imports/ until the job ends: deleted once its answers
    are in (the database holds them), kept when the job failed, so the file can be looked at
    and a job the queue never ran can be started again.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    file = models.FileField(upload_to=import_upload_to, max_length=500, blank=True)
    file_name = models.CharField(max_length=255, help_text="The name the file was uploaded as.")
    format = models.CharField(max_length=12, default="auto")
    annotator_map = models.JSONField(
        default=dict,
        blank=True,
        help_text="Annotator names of the file mapped to members' usernames by the owner; "
        "unmapped names are imported annotators.",
    )
    system = models.CharField(
        max_length=201,
        blank=True,
        help_text="NAME or NAME@VERSION: the system of the file's answers that name none.",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    answers_checked = models.PositiveIntegerField(
        default=0, help_text="Answers read and checked so far."
    )
    total_bytes = models.PositiveBigIntegerField(default=0)
    bytes_read = models.PositiveBigIntegerField(default=0)
    result = models.JSONField(
        default=dict, blank=True, help_text="The import's counts (ImportResult) once done."
    )
    errors = models.JSONField(
        default=list, blank=True, help_text="Problems in the file: [{location, field, message}]."
    )
    errors_truncated = models.BooleanField(default=False)
    error = models.TextField(blank=True, help_text="Why the job failed, when not the file.")
    # Which execution runs the job and when it last said so: a redelivered task leaves a live
    # job alone and takes over one whose worker died.
    lease_owner = models.CharField(max_length=32, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]),
                name="importjob_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(bytes_read__lte=F("total_bytes")), name="importjob_bytes_read_le_total"
            ),
        ]
        indexes = [models.Index(fields=["project", "-created_at"], name="importjob_recent_idx")]

    def __str__(self) -> str:
        return f"import #{self.pk} of {self.file_name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def seconds(self) -> float | None:
        """How long the import ran, once finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    @property
    def percent(self) -> int:
        """Progress as a share of the file read (the answers count is not known in advance)."""
        if self.status == self.Status.DONE:
            return 100
        if not self.total_bytes:
            return 0
        return min(100, self.bytes_read * 100 // self.total_bytes)
