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


class RollupState(models.Model):
    """The report's sufficient statistics of one project × judge run × system, kept up to date
    by the writes that touch them (issue 30, `metrics.services.rollup_state`): per stratum
    N_h, r_h, Σf, Σf², g_h and the cross-products of per-answer totals (`totals`), with the
    per-answer cells they are sums of (`RollupCell`). PostgreSQL only: its triggers mark the
    answers a gold, verdict, claim or answer write touched (`RollupMark`)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    # plain ids: a state outlives nothing (its run or system gone, it is simply never read)
    run_id = models.BigIntegerField(null=True, blank=True)
    system_id = models.BigIntegerField(null=True, blank=True)
    key = models.CharField(max_length=80, unique=True, help_text="project:run:system")
    totals = models.JSONField(default=dict, blank=True)
    answers_refreshed = models.PositiveBigIntegerField(
        default=0, help_text="Answers re-aggregated by the last refresh (all of them on a build)."
    )
    built_at = models.DateTimeField(null=True, blank=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"rollup {self.key}"


class RollupCell(models.Model):
    """One answer's claims in one design stratum, as `metrics.sql.ROLLUP_CELLS` sums them."""

    # indexed by (state, answer) below: the foreign key's own index would be a second copy
    state = models.ForeignKey(
        RollupState, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    answer_id = models.BigIntegerField()
    stratum = models.CharField(max_length=200)
    claims = models.BigIntegerField()
    m = models.BigIntegerField(help_text="Unaudited judged claims.")
    s = models.FloatField(help_text="Σ f over them.")
    s2 = models.FloatField(help_text="Σ f² over them.")
    has_gold = models.BooleanField()
    first_id = models.BigIntegerField(null=True)
    confidences = models.JSONField(
        default=list,
        blank=True,
        help_text="The judge's confidences on every judged claim of the cell, gold included, "
        "rounded to metrics.sql.STATE_CONFIDENCE_DIGITS: what the cell adds to the state's "
        "RollupConfidence counts, taken out again when the cell is replaced.",
    )

    class Meta:
        indexes = [
            models.Index(fields=["state", "answer_id"], name="rollupcell_answer_idx"),
            models.Index(
                fields=["state", "answer_id"],
                name="rollupcell_gold_idx",
                condition=models.Q(has_gold=True),
            ),
        ]

    def __str__(self) -> str:
        return f"cell of answer {self.answer_id} in {self.stratum}"


class RollupConfidence(models.Model):
    """How many judged claims of a state's project got one (rounded) confidence from its run:
    the calibration's `judged_confidence` counts (`metrics.services.rollups.rollups_confidences`)
    kept up to date from the cells' `confidences`, so a refresh moves the counts of the answers
    written instead of scanning every verdict. A count of 0 is left in place and not read."""

    # indexed by the (state, value) constraint below
    state = models.ForeignKey(
        RollupState, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    value = models.FloatField()
    count = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["state", "value"], name="rollupconfidence_value_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.count} claims at confidence {self.value} (state {self.state_id})"


class RollupMark(models.Model):
    """An answer a write touched since its state's last refresh (inserted by the triggers of
    migration 0005, consumed by `rollup_state.rollup_refresh`)."""

    id = models.BigAutoField(primary_key=True)
    state_id = models.BigIntegerField()
    answer_id = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["state_id"], name="rollupmark_state_idx")]

    def __str__(self) -> str:
        return f"answer {self.answer_id} changed (state {self.state_id})"


class RollupHeadline(models.Model):
    """The headline from rollups a lead last asked for on the dashboard's "at scale" page
    (`metrics.services.rollup_headline`): faithfulness pooled and per stratum, the judge's
    design PPI++ and its calibration, as JSON, computed by a task for one project × judge run
    × system; the page reads this row, never the claims."""

    Status = ReportSnapshot.Status  # the same four states as a report snapshot

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    run_id = models.BigIntegerField(null=True, blank=True)
    system_id = models.BigIntegerField(null=True, blank=True)
    key = models.CharField(max_length=80, unique=True, help_text="project:run:system")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    stage = models.CharField(max_length=200, blank=True)
    figures = models.JSONField(default=dict, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="The last computation's time.")
    error = models.TextField(blank=True)
    requested_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"rollup headline {self.key} ({self.status})"
