"""Cutting a document's text into passages and sentences, as (start, end) code-point spans.

Pure functions over a string (no Django): every span satisfies `text[start:end]` is the piece,
with no leading or trailing whitespace, and spans are in order and never overlap.

Passages are cut at paragraph breaks (a blank line) and packed, several short paragraphs to a
passage, up to `max_chars`; a paragraph longer than that is cut between sentences, and a
sentence longer than that at the last space before the limit (or, with no space, at the limit
itself). So a passage is never longer than `max_chars`, and a cut falls where a reader would
make it: a quote (a sentence) rarely straddles two passages.
"""

from __future__ import annotations

import re

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v]*\n\s*")
# A sentence ends at . ! ? … (and closing quotes or brackets after it) before whitespace.
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s)")


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        span = _trimmed(text, start, match.start())
        if span:
            spans.append(span)
        start = match.end()
    span = _trimmed(text, start, len(text))
    if span:
        spans.append(span)
    return spans


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The sentences of `text[start:end]`, as spans of `text`. A rule split (end punctuation
    before whitespace, or a line break), so an abbreviation such as "e.g. " ends a sentence:
    good enough for passages and for the offline baseline's quotes, which only need to be
    verbatim."""
    end = len(text) if end is None else end
    spans, cursor = [], start
    for match in _SENTENCE_END.finditer(text, start, end):
        span = _trimmed(text, cursor, match.end())
        if span:
            spans.extend(_lines(text, *span))
        cursor = match.end()
    span = _trimmed(text, cursor, end)
    if span:
        spans.extend(_lines(text, *span))
    return spans


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A line break inside a sentence ends it too (a heading or a list item has no full stop)."""
    spans, cursor = [], start
    for index in range(start, end):
        if text[index] == "\n":
            span = _trimmed(text, cursor, index)
            if span:
                spans.append(span)
            cursor = index + 1
    span = _trimmed(text, cursor, end)
    if span:
        spans.append(span)
    return spans


def _hard_cut(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    spans = []
    while end - start > max_chars:
        cut = text.rfind(" ", start + 1, start + max_chars + 1)
        cut = cut if cut > start else start + max_chars
        span = _trimmed(text, start, cut)
        if span:
            spans.append(span)
        start = cut
        while start < end and text[start].isspace():
            start += 1
    span = _trimmed(text, start, end)
    if span:
        spans.append(span)
    return spans


def _units(text: str, max_chars: int) -> list[tuple[int, int]]:
    units = []
    for p_start, p_end in paragraph_spans(text):
        if p_end - p_start <= max_chars:
            units.append((p_start, p_end))
            continue
        for s_start, s_end in sentence_spans(text, p_start, p_end):
            units.extend(_hard_cut(text, s_start, s_end, max_chars))
    return units


def passage_spans(text: str, max_chars: int) -> list[tuple[int, int]]:
    """The passages of `text`, each at most `max_chars` long (see the module docstring)."""
    if max_chars < 1:
        raise ValueError("a passage must be allowed at least one character")
    passages: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for start, end in _units(text, max_chars):
        if current is not None and end - current[0] <= max_chars:
            current = (current[0], end)
            continue
        if current is not None:
            passages.append(current)
        current = (start, end)
    if current is not None:
        passages.append(current)
    return passages
