"""The systems under test, their answers and each answer's pile of passages."""

from django.db import models
from django.db.models import Q

from annotate.models.choices import RiskCategory
from annotate.models.projects import Project


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
