"""Evidence quotes: offsets in Unicode code points, verified against the passage text.

Browsers report selection offsets in UTF-16 code units (JavaScript strings), while Python and
the database count code points. An emoji outside the Basic Multilingual Plane is one code point
but two UTF-16 units, so every offset after it is off by one unless converted.
"""

from dataclasses import dataclass


class QuoteError(ValueError):
    """A quote that is not where it says it is in the pile."""


@dataclass(frozen=True)
class Quote:
    passage_id: int
    start: int
    end: int
    text: str


def utf16_to_codepoint_offset(text: str, utf16_offset: int) -> int:
    """The code-point index in `text` of a UTF-16 offset; QuoteError if it splits a pair."""
    if utf16_offset < 0:
        raise QuoteError("A quote offset cannot be negative.")
    units = 0
    for index, char in enumerate(text):
        if units == utf16_offset:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
        if units > utf16_offset:
            raise QuoteError("The quote's offset falls inside a character (a surrogate pair).")
    if units == utf16_offset:
        return len(text)
    raise QuoteError("The quote's offset lies beyond the end of the passage.")


def quote_verify(*, passage_text: str, start: int, end: int, quote: str) -> None:
    """Raise QuoteError unless `quote == passage_text[start:end]` (code points)."""
    if start < 0 or end < start:
        raise QuoteError(f"The quote's span {start}–{end} is not a valid range.")
    if end > len(passage_text):
        raise QuoteError(
            f"The quote's span {start}–{end} runs past the end of the passage "
            f"({len(passage_text)} characters)."
        )
    if start == end or not quote:
        raise QuoteError("The quote is empty: select the sentence that decides the claim.")
    if passage_text[start:end] != quote:
        raise QuoteError(
            "The quote is not in the pile at that place: the passage says "
            f"{passage_text[start:end]!r} there, not {quote!r}."
        )


def quote_locate(*, passage_text: str, quote: str) -> tuple[int, int] | None:
    """The first (start, end) of `quote` in the passage, in code points, or None."""
    index = passage_text.find(quote)
    if index < 0 or not quote:
        return None
    return index, index + len(quote)
