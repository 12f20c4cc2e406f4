"""What the history keeps of a label (its state's columns, its spans after the first, one
`LabelHistory` row per action) and the reveals a later change is measured against. Written by
`annotate.services.labels` and `label_undo`."""

from annotate.models import EvidenceSpan, Label, LabelHistory, Reveal

# A label's own state, in the order every writer of labels and their history uses (the
# history row names the passage `evidence_passage_id_at_time`).
LABEL_STATE_COLUMNS = (
    "verdict",
    "evidence_passage_id",
    "evidence_start",
    "evidence_end",
    "evidence_quote",
    "note",
    "correct",
)
HISTORY_STATE_COLUMNS = tuple(
    "evidence_passage_id_at_time" if column == "evidence_passage_id" else column
    for column in LABEL_STATE_COLUMNS
)


def more_spans_record(spans) -> list[dict] | None:
    """A label's spans after the first as its history row keeps them (`LabelHistory.more_spans`):
    from `EvidenceSpan` rows or the spans `label_save` takes (dicts with a `passage`)."""
    rows = []
    for span in spans:
        if isinstance(span, EvidenceSpan):
            passage_id, start, end, quote = span.passage_id, span.start, span.end, span.quote
        else:
            passage_id = span["passage"].pk
            start, end, quote = span["start"], span["end"], span["quote"]
        rows.append({"passage_id": passage_id, "start": start, "end": end, "quote": quote})
    return rows or None


def _history_row(label: Label, action: str, more: list[dict] | None = None) -> LabelHistory:
    return LabelHistory(
        label_id_at_time=label.pk,
        claim_id=label.claim_id,
        annotator_id=label.annotator_id,
        imported_annotator_id=label.imported_annotator_id,
        action=action,
        verdict=label.verdict,
        evidence_passage_id_at_time=label.evidence_passage_id,
        evidence_start=label.evidence_start,
        evidence_end=label.evidence_end,
        evidence_quote=label.evidence_quote,
        more_spans=more,
        note=label.note,
        correct=label.correct,
        changed_after_reveal=label.changed_after_reveal,
    )


def reveal_record(*, claim_id: int, user, verdict: str) -> None:
    """Record that the judge's or colleagues' verdicts on claim `claim_id` were shown to
    `user`, whose own label then said `verdict`. Only the first reveal is kept: its verdict is
    their blind judgement, against which a later change is `changed_after_reveal`. One
    statement, INSERT … ON CONFLICT DO NOTHING, for a screen that just rendered a reveal."""
    Reveal.objects.bulk_create(
        [Reveal(claim_id=claim_id, user=user, verdict=verdict)], ignore_conflicts=True
    )


def _changed_after_reveal(*, revealed: str | None, verdict: str) -> bool:
    """A label is changed after reveal when a reveal was shown and its verdict is no longer
    the one the analyst had then (changing back to it clears the flag)."""
    return revealed is not None and verdict != revealed
