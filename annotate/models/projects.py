"""A project (its design settings and kept counters) and its members' roles."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotate.models.choices import ROLE_RANK, Role


class Project(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True, help_text="Marking guidelines shown to analysts.")
    guidelines_version = models.PositiveIntegerField(
        default=1,
        help_text="Goes up by one whenever the guidelines' text changes; every label saved "
        "records the version in force.",
    )
    analysts_per_claim = models.PositiveSmallIntegerField(
        default=1, help_text="Labels every claim needs before it leaves the queue."
    )
    double_labelled_share = models.FloatField(
        default=0.0,
        help_text="Share of claims (0–1) that get one label more than analysts_per_claim, "
        "for inter-analyst agreement.",
    )
    queue_seed = models.PositiveIntegerField(
        default=0, help_text="Seed of the random order the labelling queue serves claims in."
    )

    class QueueOrder(models.TextChoices):
        ANSWER = "answer", "An answer at a time: a random answer, then its claims in order"
        CLAIM = "claim", "A claim at a time, in random order across all answers"

    queue_order = models.CharField(
        max_length=6,
        choices=QueueOrder.choices,
        default=QueueOrder.ANSWER,
        help_text="How the labelling queue serves claims. Both are random samples; an answer "
        "at a time saves analysts re-reading a pile for every claim.",
    )

    class QueueDesign(models.TextChoices):
        UNIFORM = "uniform", "Uniform random order"
        ACTIVE = "active", "Active: claims drawn with probability tied to the judge's uncertainty"
        STRATIFIED = (
            "stratified",
            "Stratified: the next claim from the stratum where a label helps most",
        )

    queue_design = models.CharField(
        max_length=10,
        choices=QueueDesign.choices,
        default=QueueDesign.UNIFORM,
        help_text="Which claims the queue serves first: a uniform random sample, claims drawn "
        "with inclusion probabilities from the judge's uncertainty (active), or the claim of "
        "the stratum where one more label shrinks the headline's variance most (stratified).",
    )
    label_budget = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Labels the lead plans to spend; sets the active design's inclusion "
        "probabilities.",
    )
    target_half_width = models.FloatField(
        null=True,
        blank=True,
        help_text="The half-width the headline's 95% interval should reach, e.g. 0.05 for ±0.05.",
    )
    design_run_id = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Id of the judge run (judges.JudgeRun) whose verdicts and confidences set the "
        "active or stratified design; annotate keeps the id only.",
    )
    selective_judging = models.BooleanField(
        default=False,
        help_text="The queue does not serve claims routed to the judge (the judge decides them "
        "alone).",
    )
    monitored = models.BooleanField(
        default=False,
        editable=False,
        help_text="An active monitored stream samples this project's traffic (kept by monitor): "
        "the queue serves only the claims Poisson-sampled to the analysts.",
    )
    design_job = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text='The last computation of the design: {"state": "queued"|"running"|"done"|'
        '"failed", "progress": 0–1, "error": "...", "design": ..., "run": id, "budget": n}.',
    )
    quote_required = models.BooleanField(
        default=True, help_text="SUPPORTED and CONTRADICTED labels need an evidence quote."
    )
    reveal_after_save = models.BooleanField(
        default=False,
        help_text="After saving their own label, analysts may see the judge's and colleagues'.",
    )
    count_changed_after_reveal = models.BooleanField(
        default=False,
        help_text="Count labels changed after the analyst was shown the judge's or a "
        "colleague's verdict toward gold and agreement. Off: such a label does not count "
        "toward a unanimous gold (the claim then needs other labels or a lead) and is left "
        "out of inter-analyst agreement.",
    )
    count_outside_queue_labels = models.BooleanField(
        default=False,
        help_text="Count labels saved outside the queue's random order (reached by moving "
        "within an answer) in the audit sample. Off: a gold claim whose every label was made "
        "outside the queue is left out of the audit sample and counted apart.",
    )
    # Labelling progress, maintained by label_save/label_undo so the screen never recounts
    # 100k claims (a count over them takes tens of ms); annotate.services.queue can rebuild it.
    claims_complete = models.PositiveIntegerField(
        default=0, help_text="Claims whose labels reached labels_required."
    )
    # Answers in the project, kept by the import (the only way answers arrive) so the project
    # page never counts 250k answers to paginate them (that count alone took 70-90 ms).
    answers_count = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(double_labelled_share__gte=0) & Q(double_labelled_share__lte=1),
                name="project_double_share_0_1",
            ),
            models.CheckConstraint(
                condition=Q(analysts_per_claim__gte=1), name="project_analysts_per_claim_ge_1"
            ),
            models.CheckConstraint(
                condition=Q(target_half_width__isnull=True)
                | (Q(target_half_width__gt=0) & Q(target_half_width__lt=0.5)),
                name="project_target_half_width_0_05",
            ),
            models.CheckConstraint(
                condition=Q(queue_design__in=["uniform", "active", "stratified"]),
                name="project_queue_design_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.ANALYST)
    queue_stratum = models.JSONField(
        default=dict,
        blank=True,
        help_text='Restricts this member\'s queue, e.g. {"risk_category": "health"} or '
        '{"judge_verdict": "SUPPORTED", "judge": 3}. Empty: the whole project.',
    )
    labels_saved = models.PositiveIntegerField(
        default=0, help_text="Labels this member has in the project (kept by label_save)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} — {self.role} of {self.project}"

    def has_role(self, role: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]
