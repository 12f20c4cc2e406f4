"""Each claim of an answer to a test question checked against the ground truth (issue 27,
item 5).

The ground truth of a claim is its test item's answer and supporting quotes (reached through
`SutRunItem.answer`, the annotate Answer the system under test wrote). The offline check is
the lexical baseline judge (judges/backends/baseline.py) with the ground-truth texts as its
"pile": SUPPORTED → CORRECT, CONTRADICTED → INCORRECT, NOT_IN_PILE → NOT_ADDRESSED. It is a
baseline that reads words and figures, not meaning, and the report says which claims an
analyst marked (an analyst's mark is used first).

`truth_check_run` is idempotent: one row per (claim, method), a second run rewrites the
verdicts in place (an edited ground truth or re-split answer gets fresh verdicts).
"""

from __future__ import annotations

from collections import Counter

from django.db import transaction

from annotate.models import Claim
from annotate.vocabulary import Verdict
from judges.backends.baseline import VERSION, BaselineBackend
from testsets.models import SutRun, SutRunItem, TruthCheck

VERDICT_OF = {
    Verdict.SUPPORTED: TruthCheck.Verdict.CORRECT,
    Verdict.CONTRADICTED: TruthCheck.Verdict.INCORRECT,
    Verdict.NOT_IN_PILE: TruthCheck.Verdict.NOT_ADDRESSED,
}
BATCH = 500


def ground_truth_texts(item) -> list[str]:
    """The texts a claim is checked against: the item's answer, then its quotes."""
    return [item.answer, *(quote.text for quote in item.quotes.all())]


def claim_truth_verdict(claim_text: str, truth: list[str]) -> tuple[str, str]:
    """(CORRECT | INCORRECT | NOT_ADDRESSED, the baseline's note) of one claim."""
    result = BaselineBackend().verify(claim_text, truth)
    verdict = VERDICT_OF.get(result.verdict, TruthCheck.Verdict.NOT_ADDRESSED)
    return verdict, result.raw[:1000]


def truth_check_run(*, run: SutRun, progress=None) -> dict:
    """Check every claim of the run's answers against its item's ground truth; the counts.

    `progress(done, total)` is called after each batch of claims. Answers not split yet have
    no claims and are counted in `answers_without_claims`."""
    rows = (
        SutRunItem.objects.filter(run=run, state=SutRunItem.State.ANSWERED, answer__isnull=False)
        .select_related("item")
        .prefetch_related("item__quotes")
    )
    item_of = {row.answer_id: row.item for row in rows}
    truth_of = {answer_id: ground_truth_texts(item) for answer_id, item in item_of.items()}
    claims = list(
        Claim.objects.filter(answer_id__in=list(item_of))
        .order_by("id")
        .values_list("id", "answer_id", "text")
    )
    counts: Counter = Counter()
    for start in range(0, len(claims), BATCH):
        checks = []
        for claim_id, answer_id, text in claims[start : start + BATCH]:
            verdict, note = claim_truth_verdict(text, truth_of[answer_id])
            counts[verdict] += 1
            checks.append(
                TruthCheck(
                    claim_id=claim_id,
                    item=item_of[answer_id],
                    verdict=verdict,
                    method=VERSION,
                    note=note,
                )
            )
        with transaction.atomic():
            TruthCheck.objects.bulk_create(
                checks,
                update_conflicts=True,
                unique_fields=["claim", "method"],
                update_fields=["item", "verdict", "note"],
            )
        if progress is not None:
            progress(min(start + BATCH, len(claims)), len(claims))
    with_claims = {answer_id for _, answer_id, _ in claims}
    return {
        "claims": len(claims),
        **{verdict.value: counts[verdict.value] for verdict in TruthCheck.Verdict},
        "answers": len(item_of),
        "answers_without_claims": len(item_of) - len(with_claims),
        "method": VERSION,
    }


def truth_check_counts(*, run: SutRun) -> dict:
    """The stored verdicts of the run's claims, by verdict (for the run's page)."""
    answers = SutRunItem.objects.filter(run=run, answer__isnull=False).values("answer_id")
    stored = Counter(
        TruthCheck.objects.filter(claim__answer_id__in=answers).values_list("verdict", flat=True)
    )
    return {verdict.value: stored[verdict.value] for verdict in TruthCheck.Verdict} | {
        "claims": sum(stored.values())
    }


def claim_ground_truth(*, claim) -> dict | None:
    """The ground truth of a claim whose answer a system under test gave to a test question
    (its item's question, answer and quotes, and the automatic check's verdict if any), or None.
    Only for a screen that has passed the reveal gate (`claim_reveal_for_user`)."""
    row = (
        SutRunItem.objects.filter(answer_id=claim.answer_id)
        .select_related("item")
        .prefetch_related("item__quotes")
        .first()
    )
    if row is None:
        return None
    check = TruthCheck.objects.filter(claim_id=claim.pk).order_by("-created_at", "-id").first()
    return {
        "item": row.item,
        "quotes": [quote.text for quote in row.item.quotes.all()],
        "check": check,
    }
