"""The checks a label passes before it is written: its verdict, whether it needs a quote, and
each quoted span verified verbatim in the claim's own pile (`annotate.quotes`). Importers of
labels (`interchange`) run the same checks; the write is `annotate.services.labels`."""

from annotate.models import EVIDENCE_SPANS_MAX, Claim, Passage, Verdict
from annotate.quotes import QuoteError, quote_locate, quote_verify, utf16_to_codepoint_offset


class LabelError(ValueError):
    """A label that cannot be saved as given; the message is for the analyst."""


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


def _span_name(number: int, spans: int) -> str:
    """ "Span 2: " before a message about one span of a label with several; nothing with one."""
    return f"Span {number}: " if spans > 1 else ""


def label_evidence_from_browser(
    *,
    claim: Claim,
    passage_id: int | None,
    start_utf16: int | None,
    end_utf16: int | None,
    quote: str,
    more: list[dict] | tuple = (),
) -> dict:
    """Turn a browser selection into `label_save`'s evidence arguments (code points).

    The browser sends UTF-16 offsets (JavaScript strings); they are converted against the
    passage text. Without offsets (a quote typed or pasted with JavaScript off) the quote is
    looked up in the passage; without a passage, in the whole pile in rank order. No passage
    and no quote: no evidence. `more`: the spans after the first, each a dict with the same
    four keys (`passage_id`, `start_utf16`, `end_utf16`, `quote`); they come back as `more`,
    a list of `label_save`'s span dicts. When the first span is empty the second takes its
    place. The passages are read in one query (two when a quote came without its passage).
    """
    sent = [
        {"passage_id": passage_id, "start_utf16": start_utf16, "end_utf16": end_utf16,
         "quote": quote},
        *more,
    ]  # fmt: skip
    if len(sent) > 1 and sent[0]["passage_id"] is None and not sent[0]["quote"]:
        sent = sent[1:]  # the first span was cleared: the next one is the first now
    if len(sent) > EVIDENCE_SPANS_MAX:
        raise LabelError(
            f"A label quotes at most {EVIDENCE_SPANS_MAX} spans; this one has {len(sent)}: "
            "remove one."
        )
    if sent[0]["passage_id"] is None and not sent[0]["quote"]:
        return {"passage": None, "start": None, "end": None, "quote": "", "more": []}
    ids = {span["passage_id"] for span in sent if span["passage_id"] is not None}
    passages = {
        passage.pk: passage
        for passage in Passage.objects.filter(pk__in=ids, answer_id=claim.answer_id)
    }
    # A quote typed without its passage (the pile's other page, JavaScript off) is looked up
    # in the whole pile, in rank order.
    pile = []
    if any(span["passage_id"] is None and span["quote"] for span in sent):
        pile = list(Passage.objects.filter(answer_id=claim.answer_id).order_by("rank", "pk"))
    spans = [
        _span_from_browser(passages, pile, **span, name=_span_name(number, len(sent)))
        for number, span in enumerate(sent, start=1)
    ]
    return {**spans[0], "more": spans[1:]}


def _span_from_browser(
    passages: dict,
    pile: list,
    *,
    passage_id: int | None,
    start_utf16: int | None,
    end_utf16: int | None,
    quote: str,
    name: str,
) -> dict:
    if passage_id is None:
        if not quote:
            raise LabelError(f"{name}Which passage is the quote from? Select it in the pile.")
        passage = next(
            (p for p in pile if quote_locate(passage_text=p.text, quote=quote) is not None), None
        )
        if passage is None:
            raise LabelError(f"{name}The quote {quote!r} is not found in any passage of the pile.")
        passage_id, start_utf16, end_utf16 = passage.pk, None, None
        passages = {passage.pk: passage}
    passage = passages.get(passage_id)
    if passage is None:
        raise LabelError(f"{name}The quoted passage is not in this answer's pile.")
    if not quote:
        raise LabelError(f"{name}The quote is empty: select the sentence that decides the claim.")
    if start_utf16 is None or end_utf16 is None:
        span = quote_locate(passage_text=passage.text, quote=quote)
        if span is None:
            raise LabelError(f"{name}Passage #{passage.rank} does not contain the quote {quote!r}.")
        start, end = span
    else:
        try:
            start = utf16_to_codepoint_offset(passage.text, start_utf16)
            end = utf16_to_codepoint_offset(passage.text, end_utf16)
        except QuoteError as error:
            raise LabelError(f"{name}{error}") from error
    return {"passage": passage, "start": start, "end": end, "quote": quote}


def label_spans_check(*, claim: Claim, first: dict, more: list[dict] | tuple) -> None:
    """Raise LabelError, naming the span, unless every span of a label with several is verified
    in the claim's pile (`label_evidence_check`), there are at most `EVIDENCE_SPANS_MAX`, and no
    two overlap in one passage. `first` and each of `more`: `label_save`'s span dict."""
    if not more:
        return
    if first["passage"] is None:
        raise LabelError("Span 2 needs a first span: select the first quote in the pile.")
    spans = [first, *more]
    if len(spans) > EVIDENCE_SPANS_MAX:
        raise LabelError(
            f"A label quotes at most {EVIDENCE_SPANS_MAX} spans; this one has {len(spans)}: "
            "remove one."
        )
    for number, span in enumerate(spans, start=1):
        if span.get("passage") is None:
            raise LabelError(f"Span {number}: a quote needs the passage it comes from.")
        try:
            label_evidence_check(claim=claim, **span)
        except LabelError as error:
            raise LabelError(f"Span {number}: {error}") from error
    for later, span in enumerate(spans[1:], start=2):
        for earlier, other in enumerate(spans[: later - 1], start=1):
            if (
                span["passage"].pk == other["passage"].pk
                and span["start"] < other["end"]
                and other["start"] < span["end"]
            ):
                raise LabelError(
                    f"Span {later} overlaps span {earlier} in passage #{span['passage'].rank} "
                    f"(characters {span['start']}–{span['end']} and "
                    f"{other['start']}–{other['end']}): remove one, or quote each place once."
                )


def _label_check(
    *,
    claim: Claim,
    verdict: str,
    passage: Passage | None,
    start: int | None,
    end: int | None,
    quote: str,
    require_quote: bool | None,
    more: list[dict] | tuple = (),
) -> None:
    if verdict not in Verdict.values:
        raise LabelError(
            f"Unknown verdict {verdict!r}: use SUPPORTED, CONTRADICTED or NOT_IN_PILE."
        )
    if verdict == Verdict.NOT_IN_PILE and (passage is not None or quote or more):
        raise LabelError(
            "A NOT_IN_PILE label says no passage of the pile decides the claim, so it takes no "
            "quote: clear the quote, or choose SUPPORTED or CONTRADICTED if the quote decides it."
        )
    if require_quote is None:
        require_quote = claim.project.quote_required
    if require_quote and verdict != Verdict.NOT_IN_PILE and passage is None:
        raise LabelError(
            f"A {verdict} label needs a quote: select the sentence in the pile that decides it."
        )
    first = {"passage": passage, "start": start, "end": end, "quote": quote}
    if more:
        label_spans_check(claim=claim, first=first, more=more)
    else:
        label_evidence_check(claim=claim, **first)
