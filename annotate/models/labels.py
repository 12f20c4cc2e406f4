"""Labels with their evidence spans and history, and the names imported labels were made under."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Length

from annotate.models.answers import Passage
from annotate.models.choices import Correctness, Verdict
from annotate.models.claims import Claim
from annotate.models.projects import Project


class ImportedAnnotator(models.Model):
    """A name an imported file's labels (or gold) were made under, kept within the project.

    Not an account: it cannot log in, is no member, and two projects' "alice" are two
    annotators. An import attributes labels to one of these unless an owner mapped the name to
    a member on that import (`interchange.services.imports.answers_import`'s `annotator_map`).
    """

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="imported_annotators"
    )
    name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="imported_annotator_unique_name"
            ),
        ]

    def __str__(self) -> str:
        return imported_name(self.name)


IMPORTED_SUFFIX = " (imported)"


def imported_name(name: str) -> str:
    """How screens and exports show an imported annotator: "alice (imported)"."""
    return f"{name}{IMPORTED_SUFFIX}"


class Label(models.Model):
    """One analyst's verdict on one claim, with the evidence quote that decides it.

    Made by a user (`annotator`, a member when they saved it) or, for labels that came in a
    file, by an `imported_annotator`: exactly one of the two.
    """

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="labels")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="labels",
    )
    imported_annotator = models.ForeignKey(
        ImportedAnnotator, null=True, blank=True, on_delete=models.PROTECT, related_name="labels"
    )
    verdict = models.CharField(max_length=12, choices=Verdict.choices)
    evidence_passage = models.ForeignKey(
        Passage, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_quote = models.TextField(blank=True)
    note = models.TextField(blank=True)
    correct = models.CharField(max_length=7, choices=Correctness.choices, blank=True)
    stratum = models.JSONField(
        default=dict, blank=True, help_text="The queue restriction in force when labelled."
    )
    needs_review = models.BooleanField(default=False)
    changed_after_reveal = models.BooleanField(
        default=False,
        help_text="Its verdict differs from the one it had when the analyst was shown the "
        "judge's or a colleague's verdict on the claim (a `Reveal`).",
    )
    guideline_version = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The project's guidelines version when the label was last saved on the "
        "labelling screen (none: imported, or saved before versions were kept).",
    )
    inclusion_probability = models.FloatField(
        null=True,
        blank=True,
        help_text="The claim's π under the active design when the label was saved through the "
        "queue (none: another design, or saved outside the queue).",
    )
    design = models.CharField(
        max_length=10,
        blank=True,
        help_text='The queue design the label was drawn under ("uniform", "active", '
        '"stratified"); blank: saved outside the queue order, or imported.',
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "annotator"], name="label_one_per_annotator"),
            models.UniqueConstraint(
                fields=["claim", "imported_annotator"], name="label_one_per_imported_annotator"
            ),
            models.CheckConstraint(
                condition=Q(annotator__isnull=False, imported_annotator__isnull=True)
                | Q(annotator__isnull=True, imported_annotator__isnull=False),
                name="label_one_annotator_kind",
            ),
            models.CheckConstraint(
                condition=Q(verdict__in=Verdict.values), name="label_verdict_valid"
            ),
            models.CheckConstraint(
                condition=Q(correct__in=[*Correctness.values, ""]), name="label_correct_valid"
            ),
            # Evidence is all there or all absent, and the span is as long as the quote.
            models.CheckConstraint(
                condition=(
                    Q(
                        evidence_passage__isnull=True,
                        evidence_start__isnull=True,
                        evidence_end__isnull=True,
                        evidence_quote="",
                    )
                    | Q(
                        evidence_passage__isnull=False,
                        evidence_start__isnull=False,
                        evidence_end=F("evidence_start") + Length("evidence_quote"),
                    )
                ),
                name="label_evidence_consistent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} by {self.annotator_name} on claim {self.claim_id}"

    @property
    def annotator_name(self) -> str:
        """The username, or "alice (imported)" for an imported annotator."""
        if self.imported_annotator_id is not None:
            return str(self.imported_annotator)
        return self.annotator.get_username() if self.annotator_id is not None else ""


# A label quotes at most this many spans: its own columns hold the first, `EvidenceSpan` the rest.
EVIDENCE_SPANS_MAX = 5


class EvidenceSpan(models.Model):
    """A label's second, third … evidence span, when the decision needs more than one sentence
    (two passages, or two places in one). The first span stays in the label's own columns, so a
    reader that knows one quote sees the first; `number` is the span's number on the screen
    (2 for the second). Like the first, each is verified against its passage text in code
    points by `annotate.services.labels`, which also refuses spans overlapping in a passage.
    """

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="more_spans")
    number = models.PositiveSmallIntegerField(help_text="2 for the label's second span, …")
    passage = models.ForeignKey(Passage, on_delete=models.PROTECT, related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    quote = models.TextField()

    class Meta:
        ordering = ["label_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["label", "number"], name="evidence_span_unique"),
            models.CheckConstraint(
                condition=Q(number__gte=2, number__lte=EVIDENCE_SPANS_MAX),
                name="evidence_span_number_valid",
            ),
            # As the label's first span: not empty, and as long as its quote.
            models.CheckConstraint(
                condition=~Q(quote="") & Q(end=F("start") + Length("quote")),
                name="evidence_span_consistent",
            ),
        ]

    def __str__(self) -> str:
        return f"span {self.number} of label {self.label_id}"


class LabelHistory(models.Model):
    """Every change to a label, in order: what it was after the change."""

    class Action(models.TextChoices):
        CREATED = "created"
        UPDATED = "updated"
        UNDONE = "undone"
        FLAGGED = "flagged", "Flagged for review"

    label_id_at_time = models.BigIntegerField(null=True, blank=True)
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="label_history")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    imported_annotator = models.ForeignKey(
        ImportedAnnotator, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    verdict = models.CharField(max_length=12, blank=True)
    evidence_passage_id_at_time = models.BigIntegerField(null=True, blank=True)
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_quote = models.TextField(blank=True)
    more_spans = models.JSONField(
        null=True,
        blank=True,
        help_text='The label\'s spans after the first, as [{"passage_id", "start", "end", '
        '"quote"}] in order (none: a single span or none).',
    )
    note = models.TextField(blank=True)
    correct = models.CharField(max_length=7, blank=True)
    changed_after_reveal = models.BooleanField(default=False)
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "label history"

    def __str__(self) -> str:
        return f"{self.action} {self.verdict} on claim {self.claim_id}"


LABEL_SECONDS_MAX = 1800  # a screen left open longer counts as this: the analyst was away


class LabelTime(models.Model):
    """The time an analyst spent on a claim's screen before one save (issue 32): measured by
    the labelling screen while the tab was visible, from the claim shown to its save, capped at
    `LABEL_SECONDS_MAX`. A claim's time per label is the sum over its saves (an edit adds)."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    seconds = models.FloatField()
    saved_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["claim", "user"], name="label_time_claim_user")]
        constraints = [
            models.CheckConstraint(
                condition=Q(seconds__gt=0, seconds__lte=LABEL_SECONDS_MAX),
                name="label_time_seconds_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.seconds:.0f} s on claim {self.claim_id}"
