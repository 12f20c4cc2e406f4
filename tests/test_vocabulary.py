"""One verdict vocabulary (issue 31 item 1): the strings, codes and order live in
annotate/vocabulary.py and nowhere else in the product; no verdict is a bare 0, 1 or 2."""

import io
import json
import re
import tokenize
from pathlib import Path

import numpy as np
import pandas as pd

from annotate.models import Verdict as VerdictChoice
from annotate.vocabulary import NO_CODE, VERDICT_VALUES, VERDICTS, Verdict
from judges.models import JudgeVerdictChoice

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("annotate", "judges", "metrics", "interchange", "api", "config", "testsets", "monitor")
HOME = ROOT / "annotate" / "vocabulary.py"
WORDS = ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE", "UNPARSEABLE")


def _product_files():
    for app in PRODUCT:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _string_tokens(path: Path):
    """The file's string literals that are exactly a verdict word (docstrings and prose that
    mention one are sentences, not definitions)."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            body = token.string.strip("\"'")
            if token.string[:1] in "\"'" and body in WORDS:
                yield token.start[0], body


def test_each_verdict_word_is_written_as_a_literal_only_in_the_vocabulary():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {word!r}"
        for path in _product_files()
        if path != HOME
        for line, word in _string_tokens(path)
    ]
    assert found == [], "verdict literals outside annotate/vocabulary.py:\n" + "\n".join(found)
    home = sorted(word for _, word in _string_tokens(HOME))
    assert home == sorted(WORDS), home


# A comparison of something named like a verdict or its code with a bare 0, 1 or 2; and a
# tuple-assignment of the three names to numbers (the old `SUPPORTED, … = 0, 1, 2`).
_BARE = re.compile(
    r"\b(gold|judge|verdict|said|code)(?!\w*(?:claims|count)\b)\w*(\[[^\]]*\])?\s*(==|!=)\s*[012]\b"
    r"(?!\.)",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"\b(SUPPORTED|CONTRADICTED|NOT_IN_PILE)\b[^=\n]*=\s*[012]\b")


def _code_lines(path: Path):
    """The file's lines with every string literal and comment blanked (prose and f-string
    text are not code that compares a verdict)."""
    lines = path.read_text().splitlines()
    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT):
            (row, col), (end_row, end_col) = token.start, token.end
            for r in range(row, end_row + 1):
                line = lines[r - 1]
                a = col if r == row else 0
                b = end_col if r == end_row else len(line)
                lines[r - 1] = line[:a] + " " * (b - a) + line[b:]
    return enumerate(lines, 1)


def test_no_verdict_is_a_bare_number_in_product_code():
    hits = []
    for path in _product_files():
        for number, code in _code_lines(path):
            if _BARE.search(code) or _NUMBERED.search(code):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {code.strip()}")
    assert hits == [], "\n".join(hits)


def test_the_grep_catches_what_it_is_for():
    """The two patterns above would have caught the lines issue 31 found."""
    assert _BARE.search("rate(gold == 1)")
    assert _BARE.search("(judged.judge_codes[audited] == 0)")
    assert _NUMBERED.search("SUPPORTED, CONTRADICTED, NOT_IN_PILE = 0, 1, 2")
    assert not _BARE.search("if len(found) == 1:")
    assert not _BARE.search("gold == Verdict.CONTRADICTED.code")
    assert not _BARE.search("'s' if gold_claims != 1 else ''")  # a count, not a verdict


def test_order_codes_and_labels():
    assert [v.value for v in VERDICTS] == ["SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"]
    assert [v.code for v in VERDICTS] == [0, 1, 2]
    assert [Verdict.from_code(code) for code in (0, 1, 2)] == list(VERDICTS)
    assert VERDICT_VALUES == ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE")
    assert all(type(value) is str for value in VERDICT_VALUES)
    assert NO_CODE not in {v.code for v in VERDICTS}
    assert Verdict.NOT_IN_PILE.label == "Not in pile"


def test_a_verdict_is_its_string_wherever_it_goes():
    """Stored, serialised, hashed and looked up as the plain text it stands for."""
    assert Verdict.SUPPORTED == "SUPPORTED"
    assert str(Verdict.SUPPORTED) == "SUPPORTED"
    assert f"{Verdict.CONTRADICTED}" == "CONTRADICTED"
    assert (
        json.dumps({Verdict.SUPPORTED: [Verdict.NOT_IN_PILE]}) == '{"SUPPORTED": ["NOT_IN_PILE"]}'
    )
    assert {"SUPPORTED": 1}[Verdict.SUPPORTED] == 1
    assert {Verdict.SUPPORTED: 1}["SUPPORTED"] == 1
    stored = pd.Series(["NOT_IN_PILE", "SUPPORTED", "UNPARSEABLE"])
    assert (stored == Verdict.SUPPORTED).tolist() == [False, True, False]
    assert stored.isin(VERDICT_VALUES).tolist() == [True, True, False]
    assert (np.array(["SUPPORTED", "x"], dtype=object) == Verdict.SUPPORTED).tolist() == [
        True,
        False,
    ]


def test_the_models_choices_are_built_from_the_vocabulary():
    assert VerdictChoice.values == list(VERDICT_VALUES)
    assert VerdictChoice.choices == [(v.value, v.label) for v in VERDICTS]
    assert JudgeVerdictChoice.values == [*VERDICT_VALUES, "UNPARSEABLE"]
    assert VerdictChoice.SUPPORTED == Verdict.SUPPORTED
