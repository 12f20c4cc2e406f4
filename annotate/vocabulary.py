"""The verdict vocabulary, on the lowest floor: its strings, its codes and its order, here only.

Every module names a verdict as `Verdict.SUPPORTED` (a `str`, so it compares equal to the
stored string, serialises as itself and sorts as text) and, where a vectorised statistic needs
small integers, as `Verdict.SUPPORTED.code` — never a bare 0, 1 or 2
(tests/test_vocabulary.py greps for one). The order is the one every table, chart and export
uses: SUPPORTED, CONTRADICTED, NOT_IN_PILE.

Plain Python, no Django: `metrics.stats` (which imports no Django) reads it too; the models'
`TextChoices` are built from it (`annotate.models.Verdict`, `judges.models.JudgeVerdictChoice`).
"""

from enum import StrEnum


class Verdict(StrEnum):
    """A claim's verdict against its pile (DESIGN.md: exactly these three)."""

    SUPPORTED = "SUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    NOT_IN_PILE = "NOT_IN_PILE"

    def __repr__(self) -> str:
        """As the plain string: a message that lists the verdicts reads as it always did."""
        return repr(self.value)

    @property
    def code(self) -> int:
        """The verdict's position in `VERDICTS` (0, 1, 2): the int8 code of vectorised rates."""
        return _CODES[self]

    @property
    def label(self) -> str:
        """How a page names it: "Supported", "Contradicted", "Not in pile"."""
        return _LABELS[self]

    @classmethod
    def from_code(cls, code: int) -> "Verdict":
        return VERDICTS[code]


#: The three verdicts in their one order.
VERDICTS: tuple[Verdict, Verdict, Verdict] = tuple(Verdict)
#: The same as plain strings, for pandas and numpy lookups (which hash the text).
VERDICT_VALUES: tuple[str, str, str] = tuple(verdict.value for verdict in VERDICTS)
_CODES = {verdict: code for code, verdict in enumerate(VERDICTS)}
_LABELS = {
    Verdict.SUPPORTED: "Supported",
    Verdict.CONTRADICTED: "Contradicted",
    Verdict.NOT_IN_PILE: "Not in pile",
}

#: The code of "no verdict" (a claim without gold, a verdict outside the three).
NO_CODE = -1

#: What a judge writes when its reply is none of the three; never counted as a verdict.
UNPARSEABLE = "UNPARSEABLE"


def verdict_choices(*extra: tuple[str, str]) -> list[tuple[str, tuple[str, str]]]:
    """The members of a model's `TextChoices` built from the vocabulary (name, (value, label)),
    with `extra` (value, label) pairs after the three (the judge's UNPARSEABLE)."""
    members = [(v.name, (v.value, v.label)) for v in VERDICTS]
    return members + [(value, (value, label)) for value, label in extra]
