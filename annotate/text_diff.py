"""Where two answers to one question differ, word by word (issue 32: the pairwise screen and
the compare page show two answers side by side, often nearly the same text; the reader needs
to see the three words that changed, not re-read two paragraphs).

Built on the standard library's `difflib.SequenceMatcher` over word tokens (whitespace kept
with the word before it, so each side re-joins to its own text exactly). No kept library
does a word-level two-sided diff of short texts; this module only shapes difflib's opcodes
into the segments a template prints.
"""

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_TOKEN = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class Segment:
    """A run of one side's text, `changed` when the other side does not have it there."""

    text: str
    changed: bool


@dataclass(frozen=True)
class WordDiff:
    left: list[Segment]
    right: list[Segment]
    changed_words: int  # words on either side that the other side lacks

    @property
    def identical(self) -> bool:
        return self.changed_words == 0


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def _key(token: str) -> str:
    """Tokens compare by their word, not the spaces after it (a line break does not differ)."""
    return token.strip()


def _segments(tokens: list[str], spans: list[tuple[int, int, bool]]) -> list[Segment]:
    out: list[Segment] = []
    for start, end, changed in spans:
        if start == end:
            continue
        text = "".join(tokens[start:end])
        if out and out[-1].changed == changed:
            out[-1] = Segment(out[-1].text + text, changed)
        else:
            out.append(Segment(text, changed))
    return out


def word_diff(left: str, right: str) -> WordDiff:
    """The two texts cut into unchanged and changed segments, each side re-joining to its own
    text exactly. Words compare exactly (case and punctuation count: "Monday." is not
    "Monday"); runs of whitespace never count as a difference."""
    a, b = _tokens(left), _tokens(right)
    matcher = SequenceMatcher(None, [_key(t) for t in a], [_key(t) for t in b], autojunk=False)
    left_spans, right_spans, changed = [], [], 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        same = tag == "equal"
        left_spans.append((i1, i2, not same))
        right_spans.append((j1, j2, not same))
        if not same:
            changed += sum(1 for t in a[i1:i2] if _key(t)) + sum(1 for t in b[j1:j2] if _key(t))
    return WordDiff(_segments(a, left_spans), _segments(b, right_spans), changed)
