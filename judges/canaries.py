"""Canaries: transplant claims whose gold is known into other answers, or add them from lines,
to check that a judge catches what it should (moved out of judges/services.py; re-exported there)."""

from __future__ import annotations

import random

from django.core.exceptions import ValidationError
from django.db import transaction

from annotate.models import Answer, Claim, Passage, Project, Verdict
from judges.backends.baseline import Analysis
from judges.models import Canary


def _pile_words(passages) -> set[str]:
    words: set[str] = set()
    for passage in passages:
        words |= Analysis(passage.text).words
    return words


@transaction.atomic
def canaries_transplant(
    *, project: Project, n: int, seed: int = 0, max_shared: float = 0.3
) -> list[Canary]:
    """Make up to `n` transplant canaries: a claim with gold SUPPORTED in one answer, placed
    on the pile of an unrelated answer that shares at most `max_shared` of the claim's content
    words (so the claim is true in the world but absent from that pile). Seeded: the same seed
    on the same data picks the same pairs; a pair that already exists is not made twice."""
    if n < 1:
        raise ValidationError({"n": "Ask for at least one canary."})
    rng = random.Random(seed)
    sources = list(
        Claim.objects.filter(project=project, gold__verdict=Verdict.SUPPORTED)
        .order_by("pk")
        .values_list("pk", "text", "answer_id")
    )
    answer_ids = list(
        Answer.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
    )
    rng.shuffle(sources)
    existing = set(
        Canary.objects.filter(project=project, source=Canary.Source.TRANSPLANT).values_list(
            "source_claim_id", "pile_answer_id"
        )
    )
    pile_cache: dict[int, set[str]] = {}
    made: list[Canary] = []
    for claim_id, text, own_answer in sources:
        if len(made) >= n:
            break
        words = Analysis(text).words
        if not words:
            continue
        targets = [a for a in answer_ids if a != own_answer]
        rng.shuffle(targets)
        for target in targets[:50]:
            if (claim_id, target) in existing:
                continue
            if target not in pile_cache:
                pile_cache[target] = _pile_words(Passage.objects.filter(answer_id=target))
            pile = pile_cache[target]
            if not pile:
                continue
            if len(words & pile) / len(words) <= max_shared:
                made.append(
                    Canary.objects.create(
                        project=project,
                        text=text,
                        pile_answer_id=target,
                        source=Canary.Source.TRANSPLANT,
                        source_claim_id=claim_id,
                    )
                )
                existing.add((claim_id, target))
                break
    return made


@transaction.atomic
def canary_add(*, project: Project, lines: str) -> list[Canary]:
    """Add a lead's canaries, one a line: `<answer external id> | <statement>` — a statement
    true in the world but absent from that answer's pile. All lines or none: an error names
    the line and the field."""
    answers = dict(Answer.objects.filter(project=project).values_list("external_id", "pk"))
    rows = []
    for number, line in enumerate(lines.splitlines(), start=1):
        if not line.strip():
            continue
        external_id, sep, statement = line.partition("|")
        external_id, statement = external_id.strip(), statement.strip()
        if not sep:
            raise ValidationError(f"Line {number}: expected '<answer external id> | <statement>'.")
        if external_id not in answers:
            raise ValidationError(
                f"Line {number}: answer external id {external_id!r} is not in this project."
            )
        if not statement:
            raise ValidationError(f"Line {number}: the statement is empty.")
        rows.append(
            Canary(
                project=project,
                text=statement,
                pile_answer_id=answers[external_id],
                source=Canary.Source.LIST,
            )
        )
    if not rows:
        raise ValidationError("No canaries given.")
    return Canary.objects.bulk_create(rows)
