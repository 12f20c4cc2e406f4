"""Facts an analyst pulled out of a passage."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Length

from annotate.models.answers import Answer, Passage


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
