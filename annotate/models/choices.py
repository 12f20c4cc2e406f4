"""The choices the models' fields take: roles, verdicts, risk categories, tags, correctness."""

from django.db import models

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
