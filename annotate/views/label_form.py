"""The labelling screen's form: what a save may carry (`LabelForm`, its extra evidence spans)
and what the form shows back (`form_values`), with the browser's UTF-16 offsets."""

import math

from django import forms
from django.utils.text import Truncator

from annotate.models import Correctness, EvidenceSpan, Label, Verdict
from annotate.services.labels import LabelError

# The largest numbers a save may carry: a passage id (a 64-bit key) and a UTF-16 offset into
# a passage (32-bit; passages are far shorter). Larger ones are refused with the field named,
# never sent to the database (SQLite raised OverflowError on a 30-digit id: a 500).
MAX_ID = 2**63 - 1
MAX_OFFSET = 2**31 - 1


def whole_number(value: str, most: int) -> int | None:
    """`value` as a whole number from 0 to `most`, or None. ASCII digits only: "²".isdigit()
    is true but int("²") raises, and int() of more than 4,300 digits raises too."""
    if value.isascii() and value.isdigit() and len(value) <= len(str(most)):
        number = int(value)
        return number if number <= most else None
    return None


def _not_a_number(value: str, most: int) -> str:
    if value.isascii() and value.isdigit():
        return f"is too large (at most {most:,})"
    shown = value if len(value) <= 40 else f"{value[:20]}… ({len(value):,} characters)"
    return f"must be a whole number, not {shown!r}"


class LabelForm(forms.Form):
    verdict = forms.ChoiceField(
        choices=Verdict.choices,
        error_messages={
            "required": "Choose a verdict: 1 SUPPORTED, 2 CONTRADICTED, 3 NOT_IN_PILE."
        },
    )
    passage = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    start_utf16 = forms.IntegerField(required=False, min_value=0, max_value=MAX_OFFSET)
    end_utf16 = forms.IntegerField(required=False, min_value=0, max_value=MAX_OFFSET)
    quote = forms.CharField(required=False, strip=False)
    note = forms.CharField(required=False, max_length=5000)
    correct = forms.ChoiceField(choices=[("", "Not said"), *Correctness.choices], required=False)
    # the screen's own measure of the time on this claim (label.js); never refuses a save
    seconds = forms.CharField(required=False)

    def clean_seconds(self) -> float | None:
        """Seconds on the claim's screen as sent, None when absent or not a positive number
        (a measure that went wrong loses the timing, never the label)."""
        try:
            value = float(self.cleaned_data.get("seconds") or "")
        except ValueError:
            return None
        return value if math.isfinite(value) and value > 0 else None

    def first_error(self) -> str:
        for field, errors in self.errors.items():
            label = "" if field == "verdict" else f"{field}: "
            return f"{label}{errors[0]}"
        return ""

    def more_spans(self) -> list[dict]:
        """The spans after the first, as sent: the repeated fields `more_passage`,
        `more_start_utf16`, `more_end_utf16` and `more_quote`, one of each per span (span 2
        first). LabelError naming the span and the field when one is not a number."""
        columns = [self.data.getlist(f"more_{name}") for name in MORE_SPAN_FIELDS]
        if len({len(column) for column in columns}) > 1:
            raise LabelError(
                "The extra spans came incomplete (each needs more_passage, more_start_utf16, "
                "more_end_utf16 and more_quote): reload the page and select them again."
            )
        spans = []
        for number, (passage, start, end, quote) in enumerate(zip(*columns, strict=True), start=2):
            span = {"quote": quote}
            for name, value in (("passage_id", passage), ("start_utf16", start),
                                ("end_utf16", end)):  # fmt: skip
                value = value.strip()
                most = MAX_ID if name == "passage_id" else MAX_OFFSET
                span[name] = whole_number(value, most) if value else None
                if value and span[name] is None:
                    raise LabelError(f"Span {number}: {name} {_not_a_number(value, most)}.")
            if span["passage_id"] is None and not quote:
                continue  # an emptied row
            spans.append(span)
        return spans


MORE_SPAN_FIELDS = ("passage", "start_utf16", "end_utf16", "quote")


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def form_values(*, data, label: Label | None, passages) -> dict:
    """What the form shows: what the analyst just sent (after an error) or their saved label.
    `more_spans`: its spans after the first (`passage`, `rank`, `quote`, UTF-16 offsets);
    `passages`: the answer's passages by id, to name each span's rank."""
    if data is not None:
        values = {key: data.get(key, "") for key in LabelForm.base_fields}
        if hasattr(data, "getlist"):
            sent = zip(*(data.getlist(f"more_{name}") for name in MORE_SPAN_FIELDS), strict=False)
            values["more_spans"] = [
                _span_shown(passages, passage, start, end, quote)
                for passage, start, end, quote in sent
            ]
        else:
            values["more_spans"] = data.get("more_spans", [])
        return values
    # Every key present, blank: the template's lookup of a missing key raises twice and
    # calls dir() before it renders nothing.
    values = {**dict.fromkeys(LabelForm.base_fields, ""), "more_spans": []}
    if label is None:
        return values
    values.update(verdict=label.verdict, note=label.note, correct=label.correct)
    if label.evidence_passage_id:
        text = label.evidence_passage.text
        values.update(
            passage=str(label.evidence_passage_id),
            quote=label.evidence_quote,
            start_utf16=str(utf16_length(text[: label.evidence_start])),
            end_utf16=str(utf16_length(text[: label.evidence_end])),
            more_spans=spans_shown(passages, label.more_spans.all()),
        )
    return values


def _span_shown(passages, passage_id, start, end, quote: str) -> dict:
    number = whole_number(str(passage_id), MAX_ID)
    passage = passages.get(number) if number is not None else None
    return {
        "passage": str(passage_id),
        "rank": passage.rank if passage else "?",
        "start_utf16": str(start),
        "end_utf16": str(end),
        "quote": quote,
    }


def spans_shown(passages, spans) -> list[dict]:
    """Saved spans (`EvidenceSpan`, or a history row's dicts) as the form shows them, their
    code-point offsets turned into the browser's UTF-16 ones."""
    shown = []
    for span in spans:
        passage_id = span.passage_id if isinstance(span, EvidenceSpan) else span["passage_id"]
        start, end, quote = (
            (span.start, span.end, span.quote)
            if isinstance(span, EvidenceSpan)
            else (span["start"], span["end"], span["quote"])
        )
        passage = passages.get(passage_id)
        if passage is None:
            continue
        shown.append(
            _span_shown(
                passages,
                passage_id,
                utf16_length(passage.text[:start]),
                utf16_length(passage.text[:end]),
                quote,
            )
        )
    return shown


# The longest name an option of the quote's passage list shows (Django's truncatechars).
OPTION_NAME_CHARS = 60


def quote_options(passages, chosen) -> list[tuple[int, str, bool]]:
    """The quote's passage list as (id, "#rank name", selected), selected when the id is
    `chosen` (the form's `passage` value, a string): built here rather than in the template, where these few options cost
    more than the rest of the form (bench/profile_save_next.py). Truncator only when a name
    is longer than the limit: it returns shorter names unchanged (bar Unicode normalisation)."""
    options = []
    for passage in passages:
        name = passage.title or passage.source_id
        if len(name) > OPTION_NAME_CHARS:
            name = Truncator(name).chars(OPTION_NAME_CHARS)
        options.append((passage.pk, f"#{passage.rank} {name}", chosen == str(passage.pk)))
    return options
