"""Writing labels: the one path by which an analyst's verdict reaches the database."""

from django.db import transaction

from annotate.models import Claim, Label, LabelHistory, Passage, Verdict
from annotate.quotes import QuoteError, quote_verify


class LabelError(ValueError):
    """A label that cannot be saved as given; the message is for the analyst."""


def _history_row(label: Label, action: str) -> LabelHistory:
    return LabelHistory(
        label_id_at_time=label.pk,
        claim_id=label.claim_id,
        annotator_id=label.annotator_id,
        action=action,
        verdict=label.verdict,
        evidence_passage_id_at_time=label.evidence_passage_id,
        evidence_start=label.evidence_start,
        evidence_end=label.evidence_end,
        evidence_quote=label.evidence_quote,
        note=label.note,
        correct=label.correct,
    )


def label_evidence_check(
    *, claim: Claim, passage: Passage | None, start: int | None, end: int | None, quote: str
) -> None:
    """Raise LabelError unless the evidence is absent or verified in the claim's own pile."""
    if passage is None:
        if start is not None or end is not None or quote:
            raise LabelError("A quote needs the passage it comes from.")
        return
    if passage.answer_id != claim.answer_id:
        raise LabelError("The quoted passage is not in this answer's pile.")
    if start is None or end is None:
        raise LabelError("A quote needs its start and end in the passage.")
    try:
        quote_verify(passage_text=passage.text, start=start, end=end, quote=quote)
    except QuoteError as error:
        raise LabelError(str(error)) from error


@transaction.atomic
def label_save(
    *,
    claim: Claim,
    annotator,
    verdict: str,
    passage: Passage | None = None,
    start: int | None = None,
    end: int | None = None,
    quote: str = "",
    note: str = "",
    correct: str = "",
    stratum: dict | None = None,
    require_quote: bool | None = None,
) -> Label:
    """Create or replace `annotator`'s label on `claim`, verify the quote, keep the history.

    Offsets are in code points (convert browser UTF-16 offsets with
    `annotate.quotes.utf16_to_codepoint_offset` first). `require_quote` defaults to the
    project's setting: SUPPORTED and CONTRADICTED then need a quote, NOT_IN_PILE never does.
    """
    if verdict not in Verdict.values:
        raise LabelError(
            f"Unknown verdict {verdict!r}: use SUPPORTED, CONTRADICTED or NOT_IN_PILE."
        )
    if require_quote is None:
        require_quote = claim.project.quote_required
    if require_quote and verdict != Verdict.NOT_IN_PILE and passage is None:
        raise LabelError(
            f"A {verdict} label needs a quote: select the sentence in the pile that decides it."
        )
    label_evidence_check(claim=claim, passage=passage, start=start, end=end, quote=quote)
    if verdict == Verdict.SUPPORTED:
        correct = ""
    label = Label.objects.select_for_update().filter(claim=claim, annotator=annotator).first()
    action = LabelHistory.Action.UPDATED if label else LabelHistory.Action.CREATED
    if label is None:
        label = Label(claim=claim, annotator=annotator)
    label.verdict = verdict
    label.evidence_passage = passage
    label.evidence_start = start if passage else None
    label.evidence_end = end if passage else None
    label.evidence_quote = quote if passage else ""
    label.note = note
    label.correct = correct
    label.stratum = stratum or {}
    label.needs_review = False
    label.save()
    _history_row(label, action).save()
    return label
