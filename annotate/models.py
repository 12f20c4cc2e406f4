"""Projects, members, answers with their pile, claims, labels, gold and facts.

Invariants the database can hold are constraints here; the ones it cannot (a quote's span lies
inside its passage, the passage belongs to the claim's answer) are checked by `clean()` and by
`annotate.services.label_save`, the only writer of labels.
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Length

from annotate.vocabulary import verdict_choices


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    LEAD = "lead", "Lead"
    ANALYST = "analyst", "Analyst"


# What each role may do; an owner can do all a lead can, a lead all an analyst can.
ROLE_RANK = {Role.ANALYST: 1, Role.LEAD: 2, Role.OWNER: 3}


# The model fields' choices, built from the one vocabulary (annotate/vocabulary.py).
Verdict = models.TextChoices("Verdict", verdict_choices())


class RiskCategory(models.TextChoices):
    LEGAL = "legal", "Legal"
    FINANCIAL = "financial", "Financial"
    SAFETY = "safety", "Safety"
    HEALTH = "health", "Health"
    SECURITY = "security", "Security"
    ELIGIBILITY = "eligibility", "Eligibility"
    DISCRIMINATION = "discrimination", "Discrimination"
    NONE = "none", "None"


class ClaimTag(models.TextChoices):
    NUMERIC = "numeric", "Numeric"
    NEGATION = "negation", "Negation"
    MULTI_PART = "multi-part", "Multi-part"


class Correctness(models.TextChoices):
    """For an unfaithful claim: is it true anyway (self-knowledge) or not (hallucination)?"""

    YES = "yes", "Correct anyway"
    NO = "no", "Incorrect"
    UNKNOWN = "unknown", "Unknown"


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


class System(models.Model):
    """A version of the RAG pipeline that produced answers: its name, version and free metadata
    (retriever, prompt version, generator model, ...). Answers of two systems to one question
    share a question key (`Answer.question_id`), which is what a comparison pairs on."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=100)
    version = models.CharField(max_length=100, blank=True)
    metadata = models.JSONField(
        default=dict,
        blank=True,
        help_text='e.g. {"retriever": "bm25", "prompt_version": "v3", "generator_model": "..."}',
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "version", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="system_unique_name_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}".strip()


class Answer(models.Model):
    # Indexed as the leading column of answer_project_order and answer_external_id_unique.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="answers", db_index=False
    )
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0, help_text="Order of import.")
    question = models.TextField()
    text = models.TextField()
    risk_category = models.CharField(
        max_length=20, choices=RiskCategory.choices, default=RiskCategory.NONE
    )
    answerable = models.BooleanField(
        null=True, blank=True, help_text="Could the question be answered from the pile?"
    )
    abstention = models.BooleanField(
        default=False, help_text='Confirmed: the answer says "I do not know".'
    )
    abstention_suggested = models.BooleanField(
        default=False, help_text="Auto-detected as an abstention, awaiting a lead."
    )
    reference = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    system = models.ForeignKey(
        System, null=True, blank=True, on_delete=models.PROTECT, related_name="answers"
    )
    question_id = models.CharField(
        max_length=200,
        blank=True,
        help_text="The question key answers of different systems share (else the question text).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        indexes = [
            # The project page's order: one page of 50 without sorting the project's answers.
            models.Index(fields=["project", "position", "id"], name="answer_project_order"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="answer_external_id_unique"
            ),
            models.CheckConstraint(
                condition=Q(risk_category__in=RiskCategory.values), name="answer_risk_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.question[:60]}"


class Passage(models.Model):
    # Indexed as the leading column of passage_rank_unique.
    answer = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="passages", db_index=False
    )
    rank = models.PositiveIntegerField(help_text="1 = first retrieved.")
    source_id = models.CharField(max_length=300, blank=True)
    title = models.CharField(max_length=500, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["answer_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "rank"], name="passage_rank_unique"),
        ]

    def __str__(self) -> str:
        return f"#{self.rank} {self.title or self.source_id}"


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


class Fact(models.Model):
    """A supportable fact marked in a passage; coverage counts the ones claims ground."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="facts")
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="facts")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(end=F("start") + Length("text")) & Q(end__gt=F("start")),
                name="fact_span_matches_text",
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


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


class PairwisePreference(models.Model):
    """A person's preference between two systems' answers to one question.

    Marked on the blind screen by an analyst (`analyst`): the screen shows the answers as
    "Left" and "Right" only, in an order drawn per analyst and pair
    (`annotate.pairwise.first_system_on_left`); `left_system` is the one shown on the left,
    `choice` what the analyst pressed and `preferred_system` the system it resolves to (null: a
    tie). Or read from a file (`imported_annotator`, `choice` "import", no `left_system`: the
    file names the preferred system, and may grade it, `strength` 1 slightly / 2 clearly
    better, 0 for a tie). The systems are stored as an unordered pair (`system_1` has the lower
    id); the check constraints keep all of it consistent. Written only by
    `annotate.services.pairwise` (the screen) and `annotate.services.pairwise_import` (files).
    """

    class Choice(models.TextChoices):
        LEFT = "left", "Left"
        RIGHT = "right", "Right"
        TIE = "tie", "Tie"
        IMPORT = "import", "From a file"

    #: What the blind screen offers (a preference from a file is never pressed).
    SCREEN_CHOICES = ("left", "right", "tie")

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="pairwise_preferences"
    )
    question_key = models.TextField(help_text="The pair's question key (question_id, else text).")
    system_1 = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    system_2 = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    answer_1 = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="+", help_text="system_1's answer."
    )
    answer_2 = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="+", help_text="system_2's answer."
    )
    left_system = models.ForeignKey(
        System,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Shown on the left (the blind screen); empty for a preference from a file.",
    )
    analyst = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    imported_annotator = models.ForeignKey(
        ImportedAnnotator,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pairwise_preferences",
        help_text="Who marked it, for a preference from a file.",
    )
    choice = models.CharField(max_length=6, choices=Choice.choices)
    preferred_system = models.ForeignKey(
        System,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The system whose answer the analyst preferred; empty for a tie.",
    )
    strength = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="From a file's −2..2 grade: 0 a tie, 1 slightly, 2 clearly better; empty when "
        "not graded.",
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["changed_at", "id"]
        indexes = [
            models.Index(
                fields=["analyst", "system_1", "system_2", "changed_at"],
                name="pairpref_analyst_systems",
            ),
            models.Index(fields=["system_1", "system_2"], name="pairpref_systems"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["analyst", "answer_1", "answer_2"], name="pairpref_one_per_analyst_pair"
            ),
            models.UniqueConstraint(
                fields=["imported_annotator", "answer_1", "answer_2"],
                name="pairpref_one_per_imported_pair",
            ),
            models.CheckConstraint(
                condition=Q(analyst__isnull=False, imported_annotator__isnull=True)
                | Q(analyst__isnull=True, imported_annotator__isnull=False),
                name="pairpref_one_kind_of_marker",
            ),
            models.CheckConstraint(
                condition=Q(strength__isnull=True)
                | Q(strength=0, preferred_system__isnull=True)
                | Q(strength__in=[1, 2], preferred_system__isnull=False),
                name="pairpref_strength_matches",
            ),
            models.CheckConstraint(
                condition=Q(system_1__lt=F("system_2")), name="pairpref_systems_ordered"
            ),
            models.CheckConstraint(
                condition=~Q(answer_1=F("answer_2")), name="pairpref_two_answers"
            ),
            models.CheckConstraint(
                condition=Q(left_system__isnull=True)
                | Q(left_system=F("system_1"))
                | Q(left_system=F("system_2")),
                name="pairpref_left_is_one_of_the_pair",
            ),
            models.CheckConstraint(
                condition=(
                    (
                        Q(
                            choice="import",
                            left_system__isnull=True,
                            imported_annotator__isnull=False,
                        )
                        & (
                            Q(preferred_system__isnull=True)
                            | Q(preferred_system=F("system_1"))
                            | Q(preferred_system=F("system_2"))
                        )
                    )
                    | Q(choice="tie", preferred_system__isnull=True, left_system__isnull=False)
                    | Q(
                        choice="left",
                        left_system__isnull=False,
                        preferred_system__isnull=False,
                        preferred_system=F("left_system"),
                    )
                    | (
                        Q(choice="right", left_system__isnull=False, preferred_system__isnull=False)
                        & ~Q(preferred_system=F("left_system"))
                        & (Q(preferred_system=F("system_1")) | Q(preferred_system=F("system_2")))
                    )
                ),
                name="pairpref_choice_resolves",
            ),
        ]

    def __str__(self) -> str:
        who = self.analyst_id if self.analyst_id is not None else self.imported_annotator
        return f"{self.choice} on {self.question_key[:40]} by {who}"
