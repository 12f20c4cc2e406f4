"""Claims cut from answers, and the strata of a project's stratified design."""

from django.db import models
from django.db.models import F, Q

from annotate.models.answers import Answer, Passage
from annotate.models.projects import Project


class Claim(models.Model):
    # project is the answer's project, kept here so the queue and reports at 100k–1M claims
    # filter one indexed table instead of joining answers.
    # Indexed as the leading column of claim_queue_idx.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="claims", db_index=False
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="claims")
    text = models.TextField()
    position = models.PositiveIntegerField(default=0)
    origin = models.CharField(
        max_length=80, default="manual", help_text="manual, rule, or llm:<prompt version>"
    )
    span_start = models.PositiveIntegerField(null=True, blank=True)
    span_end = models.PositiveIntegerField(null=True, blank=True)
    cited_passages = models.ManyToManyField(Passage, blank=True, related_name="citing_claims")
    tags = models.JSONField(default=list, blank=True)
    stratum = models.CharField(
        max_length=200,
        blank=True,
        help_text="The audit design stratum this claim was sampled in (from the import file); "
        "blank: the queue stratum of its gold label, else the project's single stratum.",
    )
    queue_key = models.BigIntegerField(
        default=0, help_text="Seeded random order of the labelling queue."
    )
    labels_required = models.PositiveSmallIntegerField(default=1)
    # Kept by label_save/label_undo under the claim's row lock: the quota check and the queue's
    # partial index of open claims read it instead of counting labels.
    label_count = models.PositiveSmallIntegerField(default=0)
    comment_count = models.PositiveIntegerField(
        default=0,
        db_default=0,
        help_text="Comments in its thread (`ClaimComment`), kept by comment_add: a screen of a "
        "claim without comments reads none.",
    )
    needs_review = models.BooleanField(
        default=False, help_text="Edited after labels existed: labels need a second look."
    )
    inclusion_probability = models.FloatField(
        null=True,
        blank=True,
        help_text="π of the active design (frozen when drawn: kept once the claim is labelled).",
    )
    active_stratum = models.CharField(
        max_length=200,
        blank=True,
        help_text="The stratified design's stratum: judge verdict × confidence band × risk "
        'category, e.g. "SUPPORTED · conf 0.9–1 · health".',
    )
    routed_to_judge = models.BooleanField(
        default=False,
        help_text="Selective judging: the judge decides this claim alone; the queue does not "
        "serve it while the project's selective judging is on.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "position", "id"]
        indexes = [
            models.Index(fields=["project", "queue_key"], name="claim_queue_idx"),
            # The queue's first open claim. With id, as the stratum's index below: the queue
            # orders by (queue_key, id), and without it PostgreSQL's incremental sort read 32
            # candidates (each with its label, skip and reservation checks) to return one
            # (the search 0.69 → 0.22 ms at 100k claims, bench-profile-100k's EXPLAIN ANALYZE).
            models.Index(
                fields=["project", "queue_key", "id"],
                condition=Q(label_count__lt=F("labels_required")),
                name="claim_open_queue_idx",
            ),
            # The stratified design: the first open claim of one stratum in queue order (id
            # too: the queue orders by (queue_key, id), so LIMIT 1 reads one index entry).
            models.Index(
                fields=["project", "active_stratum", "queue_key", "id"],
                condition=Q(label_count__lt=F("labels_required")),
                name="claim_open_stratum_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(span_start__isnull=True) | Q(span_end__gte=F("span_start")),
                name="claim_span_ordered",
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class ActiveStratum(models.Model):
    """One stratum of a project's stratified design (`Claim.active_stratum`) with the counts
    the queue's Neyman choice reads in one small query: its claims N_h, its claims with a label
    n_h, how many of those the first label called SUPPORTED, and the judge's prior for it.

    Written by `annotate.services.design.claims_design_store`; `labelled` and `supported` are
    moved by every label save and undo (`annotate.sql.active_stratum_move`).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="active_strata")
    name = models.CharField(max_length=200)
    claims = models.PositiveIntegerField(default=0, help_text="N_h: claims in the stratum.")
    labelled = models.IntegerField(default=0, help_text="n_h: claims with at least one label.")
    supported = models.IntegerField(
        default=0, help_text="Of the labelled claims, those whose first label is SUPPORTED."
    )
    prior_p = models.FloatField(
        default=0.5, help_text="The judge's mean P(SUPPORTED) over the stratum's claims."
    )
    prior_weight = models.FloatField(
        default=10.0, help_text="How many labels the judge's prior counts for in S_h."
    )

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="active_stratum_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.labelled}/{self.claims})"
