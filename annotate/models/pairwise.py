"""Pairwise preferences between two systems' answers to one question."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.models.answers import Answer, System
from annotate.models.labels import ImportedAnnotator
from annotate.models.projects import Project


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
