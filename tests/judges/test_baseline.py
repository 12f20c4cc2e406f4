"""The offline lexical baseline: its four kinds of verdict, and that it is deterministic."""

from types import SimpleNamespace

import pytest

from judges.backends.baseline import BaselineBackend

PILE = [
    SimpleNamespace(
        rank=1,
        title="Refunds",
        text="Refunds are processed within 14 days of delivery. They are issued to the "
        "original card.",
    ),
    SimpleNamespace(
        rank=2,
        title="Gift cards",
        text="Gift cards are not refundable. Return shipping is free for orders over £50.",
    ),
]


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Refunds are processed within 14 days of delivery.", "SUPPORTED"),
        ("Return shipping is free for orders over £50.", "SUPPORTED"),
        ("Gift cards are not refundable.", "SUPPORTED"),
        # a figure that differs from the best-matching sentence's
        ("Refunds are processed within 30 days of delivery.", "CONTRADICTED"),
        ("Return shipping is free for orders over £100.", "CONTRADICTED"),
        # negation mismatch
        ("Gift cards are refundable.", "CONTRADICTED"),
        ("Refunds are not issued to the original card.", "CONTRADICTED"),
        # absent from the pile
        ("The store opens at 9am on Sundays.", "NOT_IN_PILE"),
        ("Customers can exchange shoes in any branch.", "NOT_IN_PILE"),
    ],
)
def test_baseline_verdicts(claim, verdict):
    result = BaselineBackend().verify(claim, PILE)
    assert result.verdict == verdict, result.raw


def test_baseline_confidence_is_p_supported_and_ranks_verdicts():
    backend = BaselineBackend()
    supported = backend.verify("Gift cards are not refundable.", PILE).confidence
    contradicted = backend.verify("Gift cards are refundable.", PILE).confidence
    absent = backend.verify("The store opens at 9am on Sundays.", PILE).confidence
    assert 0.5 < supported <= 1.0
    assert 0.0 <= absent < contradicted < 0.5 < supported


def test_baseline_is_deterministic():
    claims = ["Refunds are processed within 30 days of delivery.", "Gift cards are refundable."]
    first = [BaselineBackend().verify(c, PILE) for c in claims]
    second = [BaselineBackend().verify(c, PILE) for c in claims]
    assert [(r.verdict, r.confidence, r.raw) for r in first] == [
        (r.verdict, r.confidence, r.raw) for r in second
    ]


def test_baseline_says_what_it_is():
    backend = BaselineBackend()
    assert "baseline" in backend.prompt_text.lower()
    assert "not an LLM" in backend.prompt_text
