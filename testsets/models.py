"""The knowledge base and the test sets drawn from it.

A `Document` is stored once per project and cut into `DocumentPassage` rows with stable
positions and code-point offsets into the document's text, so a supporting quote is checked
by the same code as an analyst's quote in a pile (`annotate.quotes`). A `TestSet` is a
versioned list of `TestItem` rows (question, ground-truth answer, risk class, language), each
with one or more verbatim `ItemQuote` rows; a published version is frozen. Items that failed
a check at generation are kept only as counted `GenerationDrop` rows with their reason.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotate.models import Project, RiskCategory


class Document(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="documents", db_index=False
    )
    external_id = models.CharField(max_length=200)
    title = models.CharField(max_length=500, blank=True)
    language = models.CharField(
        max_length=16, blank=True, help_text="ISO 639-1 code, e.g. 'en'; blank when unknown."
    )
    text = models.TextField()
    sha256 = models.CharField(max_length=64, help_text="Of the text, to store it once.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="document_external_id_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.external_id


class DocumentPassage(models.Model):
    """A chunk of a document: `text == document.text[start:end]` (code points)."""

    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="passages", db_index=False
    )
    position = models.PositiveIntegerField(help_text="0 = the document's first passage.")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["document_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "position"], name="document_passage_position_unique"
            ),
            models.CheckConstraint(condition=Q(end__gte=models.F("start")), name="passage_span"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.position}"


class TestSet(models.Model):
    __test__ = False  # not a pytest test class

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft (in review)"
        PUBLISHED = "published", "Published (frozen)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="test_sets")
    name = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    generator = models.JSONField(
        default=dict,
        blank=True,
        help_text="How the items were made: kind (offline|llm|import), endpoint, prompt hash.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["project_id", "name", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="test_set_version_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class TestItem(models.Model):
    __test__ = False  # not a pytest test class

    class Status(models.TextChoices):
        PENDING = "pending", "Awaiting review"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    test_set = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200, help_text="Stable within the test set.")
    position = models.PositiveIntegerField(default=0)
    question = models.TextField()
    answer = models.TextField(help_text="The ground-truth answer, supported by the quotes.")
    risk_category = models.CharField(
        max_length=16, choices=RiskCategory.choices, default=RiskCategory.NONE
    )
    language = models.CharField(max_length=16, blank=True)
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.PROTECT, related_name="items"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    edited = models.BooleanField(
        default=False, help_text="Changed by a reviewer before acceptance."
    )
    reject_reason = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["test_set_id", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["test_set", "external_id"], name="test_item_external_id_unique"
            ),
            models.CheckConstraint(
                condition=Q(risk_category__in=RiskCategory.values), name="test_item_risk_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.external_id


class ItemQuote(models.Model):
    """A verbatim supporting quote: `passage.text[start:end]` equals `text` (code points)."""

    item = models.ForeignKey(TestItem, on_delete=models.CASCADE, related_name="quotes")
    passage = models.ForeignKey(DocumentPassage, on_delete=models.PROTECT, related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["item_id", "id"]

    def __str__(self) -> str:
        return self.text[:60]


class GenerationDrop(models.Model):
    """A generated item that failed a check: never kept as an item, counted by reason."""

    class Reason(models.TextChoices):
        MALFORMED = "malformed", "Malformed output"
        QUOTE_NOT_FOUND = "quote_not_found", "Quote not found verbatim in its passage"
        NOT_SUPPORTED = "not_supported", "Answer not supported by its quotes"
        DUPLICATE = "duplicate", "Near-duplicate of a kept question"
        WRONG_LANGUAGE = "wrong_language", "Question not in the document's language"
        QUOTA = "quota", "Over the document's quota"

    test_set = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="drops")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    detail = models.TextField(blank=True)
    raw = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["test_set_id", "id"]

    def __str__(self) -> str:
        return self.reason


class SutRun(models.Model):
    """One run of the system under test over a published test set: each item's question is
    sent to the declared RAG endpoint (by name; its URL and key stay in the settings) and
    each response becomes an annotate Answer under `system_name`/`system_version`."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        INTERRUPTED = "interrupted", "Interrupted (resumable)"
        DONE = "done", "Done"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sut_runs")
    test_set = models.ForeignKey(TestSet, on_delete=models.PROTECT, related_name="sut_runs")
    endpoint = models.CharField(max_length=100, help_text="The declared RAG endpoint's name.")
    system_name = models.CharField(max_length=100)
    system_version = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0, help_text="Items answered or failed.")
    total = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.system_name} {self.system_version} on {self.test_set}".strip()


class SutRunItem(models.Model):
    """One (run, item): claimed before the endpoint is called and written once; the unique
    constraint is what keeps a resumed run from answering an item twice."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        ANSWERED = "answered", "Answered"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(SutRun, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(TestItem, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="Why it failed; never a key or a URL.")
    answer = models.OneToOneField(
        "annotate.Answer", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item"], name="sut_run_item_unique"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} item {self.item_id}: {self.state}"


class GenerationJob(models.Model):
    """One generation of a test set from the project's documents (issue 27, item 2): the
    documents are taken in id order and each one's items are written, with `done` moved on,
    in one transaction, so a job taken up again carries on from the first document not done."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Kind(models.TextChoices):
        OFFLINE = "offline", "Offline rule baseline (no LLM)"
        LLM = "llm", "LLM on a declared endpoint"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="generation_jobs")
    test_set = models.OneToOneField(
        TestSet, on_delete=models.CASCADE, related_name="generation_job"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    endpoint = models.CharField(max_length=100, blank=True, help_text="A declared LLM endpoint.")
    model = models.CharField(max_length=200, blank=True)
    per_document = models.PositiveIntegerField(default=5)
    judge = models.ForeignKey(
        "judges.Judge",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The project's judge checking each answer against its quotes; blank: the "
        "offline lexical baseline.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0, help_text="Documents done.")
    total = models.PositiveIntegerField(default=0, help_text="Documents to do.")
    counts = models.JSONField(
        default=dict, blank=True, help_text="generated, kept, and dropped by reason."
    )
    estimate = models.JSONField(default=dict, blank=True, help_text="Shown before the start.")
    usage = models.JSONField(default=dict, blank=True, help_text="Calls and tokens spent.")
    error = models.TextField(blank=True, help_text="Why it failed; never a key or a URL.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"generation of {self.test_set}"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.done / self.total)


class TruthCheck(models.Model):
    """One claim of an answer to a test question checked against the item's ground truth
    (its answer and quotes; issue 27, item 5). One row per (claim, method): a check run again
    rewrites the verdict in place (testsets/services/truth.py `truth_check_run`)."""

    class Verdict(models.TextChoices):
        CORRECT = "CORRECT", "Correct (agrees with the ground truth)"
        INCORRECT = "INCORRECT", "Incorrect (contradicts the ground truth)"
        NOT_ADDRESSED = "NOT_ADDRESSED", "Not addressed by the ground truth"

    claim = models.ForeignKey("annotate.Claim", on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(TestItem, on_delete=models.CASCADE, related_name="truth_checks")
    verdict = models.CharField(max_length=14, choices=Verdict.choices)
    method = models.CharField(max_length=80, help_text="e.g. lexical-baseline-1")
    note = models.TextField(blank=True, help_text="What the check matched, for the reader.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["claim_id", "method"]
        constraints = [
            models.UniqueConstraint(fields=["claim", "method"], name="truth_check_unique"),
            models.CheckConstraint(
                condition=Q(verdict__in=["CORRECT", "INCORRECT", "NOT_ADDRESSED"]),
                name="truth_check_verdict_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"claim {self.claim_id}: {self.verdict} ({self.method})"
