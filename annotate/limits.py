"""The operator's size limits on one answer and on a project's texts (config/settings.py,
FAITHAUDIT_MAX_*).

Read from settings at each use, so a changed setting (or a test's override) applies at once.
The importers and the claim services check against these; the messages name the setting, so
a lead who hits one knows what to ask the operator for.
"""

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class Limits:
    passages_per_answer: int
    passage_chars: int
    answer_chars: int
    question_chars: int
    claim_chars: int
    claims_per_answer: int
    answers_per_file: int
    description_chars: int
    guidelines_chars: int


SETTINGS = {
    "passages_per_answer": "FAITHAUDIT_MAX_PASSAGES_PER_ANSWER",
    "passage_chars": "FAITHAUDIT_MAX_PASSAGE_CHARS",
    "answer_chars": "FAITHAUDIT_MAX_ANSWER_CHARS",
    "question_chars": "FAITHAUDIT_MAX_QUESTION_CHARS",
    "claim_chars": "FAITHAUDIT_MAX_CLAIM_CHARS",
    "claims_per_answer": "FAITHAUDIT_MAX_CLAIMS_PER_ANSWER",
    "answers_per_file": "FAITHAUDIT_MAX_ANSWERS_PER_FILE",
    "description_chars": "FAITHAUDIT_MAX_DESCRIPTION_CHARS",
    "guidelines_chars": "FAITHAUDIT_MAX_GUIDELINES_CHARS",
}


def limits_current() -> Limits:
    return Limits(**{name: int(getattr(settings, setting)) for name, setting in SETTINGS.items()})


def too_long(text: str, limit: str, what: str = "") -> str:
    """The message for `text` over limit `limit` (a Limits field), or "" when it fits."""
    most = getattr(limits_current(), limit)
    if len(text) <= most:
        return ""
    return chars_message(len(text), most, limit, what)


def chars_message(length: int, most: int, limit: str, what: str = "") -> str:
    subject = f"{what} is" if what else "is"
    return (
        f"{subject} {length:,} characters long; at most {most} are allowed "
        f"(operator setting {SETTINGS[limit]})"
    )


def count_message(count: int, most: int, noun: str, limit: str, holder: str = "") -> str:
    plural = noun if noun.endswith("s") else f"{noun}s"
    return (
        f"{holder + ' ' if holder else ''}has {count:,} {plural}; at most {most} {plural} are allowed"
        f" (operator setting {SETTINGS[limit]})"
    )


# A project's texts, each with its limit and the words its message names it by.
PROJECT_TEXTS = {
    "description": ("description_chars", "The project's description is"),
    "guidelines": ("guidelines_chars", "The guidelines are"),
}


def project_text_problems(**texts: str) -> dict[str, str]:
    """The message for each of a project's texts (`description=`, `guidelines=`) over its
    limit, by field; {} when all fit. Every writer of them checks here: the forms, the
    services (so the API and any other caller), the admin."""
    limits = limits_current()
    problems = {}
    for field, text in texts.items():
        limit, subject = PROJECT_TEXTS[field]
        most = getattr(limits, limit)
        if text is not None and len(text) > most:
            problems[field] = (
                f"{subject} {len(text):,} characters long; at most {most:,} characters are "
                f"allowed (operator setting {SETTINGS[limit]}). Shorten the text, or link to a "
                "longer document."
            )
    return problems
