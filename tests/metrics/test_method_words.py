"""The report's method strings and interval words, whole; the instruments it leaves out; the
abstention block."""

import math

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint


def _nan_equal(a, b) -> bool:
    """Equal dicts/lists/floats where nan equals nan and floats compare to 1e-12."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_nan_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(_nan_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool):
            return a is b
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b and type(a) is type(b)


def _prop(k, n):
    """The `_proportion` dict, independently (statsmodels' Wilson)."""
    if n == 0:
        return {"value": math.nan, "ci": (math.nan, math.nan), "numerator": 0, "denominator": 0}
    return {
        "value": k / n,
        "ci": tuple(proportion_confint(k, n, method="wilson")),
        "numerator": k,
        "denominator": n,
    }


# --- method strings, instruments left out, abstention, the card's identity: whole outputs -------


@pytest.mark.parametrize(
    ("rate", "words"),
    [
        ({}, "95% Wilson interval."),
        ({"denominator": 0, "answers": 3}, "95% Wilson interval."),
        ({"denominator": 5, "answers": 5}, "95% Wilson interval."),
        (
            {"denominator": 6, "answers": 3, "design_effect": 1.234},
            "95% interval clustered by answer, 3 answers; design effect 1.23.",
        ),
        (
            {"denominator": 6, "answers": 3, "design_effect": math.nan, "strata": 1},
            "95% interval clustered by answer, 3 answers.",
        ),
        (
            {"denominator": 6, "answers": None, "strata": 2, "design_effect": None},
            "95% interval clustered by answer, 0 answers; stratified by design stratum, 2 strata "
            "(weights N_h/N).",
        ),
        (
            {"denominator": 9, "answers": 4, "strata": 3, "design_effect": 0.5},
            "95% interval clustered by answer, 4 answers; stratified by design stratum, 3 strata "
            "(weights N_h/N); design effect 0.50.",
        ),
    ],
)
def test_interval_words_every_branch(rate, words):
    from metrics.services.method import _interval_words

    assert _interval_words(rate) == words


def test_method_strings_whole():
    from metrics.services.method import _method_strings

    base = (
        "Method: manual, claim level, against the retrieved pile; gold = unanimous analysts or a "
        "lead's adjudication; abstentions excluded."
    )
    report = {
        "claims": {"SUPPORTED": 0, "total": 0, "CONTRADICTED": 0},
        "faithfulness": {
            "mean_per_answer": {"answers": 2},
            "pooled": {"denominator": 4, "answers": 2},
        },
        "abstention": {"abstentions": 1, "answers": 5},
        "answers_with_unsupported_rate": {"numerator": 2, "denominator": 4},
        "contradiction_rate": {"numerator": 3},
        "coverage": {"measured": True, "numerator": 3, "denominator": 7},
        "citation_accuracy": {"measured": True, "numerator": 1, "denominator": 2},
    }
    out = _method_strings(report)
    assert list(out) == [
        "faithfulness",
        "contradiction_rate",
        "answers_with_unsupported_rate",
        "abstention",
        "coverage",
        "coverage_by_risk_category",
        "coverage_by_tag",
        "citation_accuracy",
    ]
    assert out["faithfulness"] == (
        "No claims assessed yet (0 claims in 2 answers). Method: manual, claim level, against "
        "the retrieved pile. Gold = unanimous analysts or a lead's adjudication; abstentions "
        "excluded; 95% interval clustered by answer, 2 answers."
    )
    assert out["contradiction_rate"] == f"3 of 0 gold claims contradicted by their own pile. {base}"
    assert out["answers_with_unsupported_rate"] == (
        "2 of 4 answers have at least one claim that is not supported (what a reader "
        f"experiences). {base}"
    )
    assert out["abstention"] == (
        "1 of 5 answers are confirmed abstentions; on unanswerable questions an abstention is "
        "correct, on answerable ones it is a missed answer. Method: lead-confirmed abstention "
        "flag, answer level."
    )
    assert out["coverage"] == (
        "3 of 7 marked facts grounded by a gold-SUPPORTED claim whose evidence quote overlaps the "
        "fact. Method: manual fact marking, fact level."
    )
    assert out["citation_accuracy"] == (
        "1 of 2 checked cited claims are supported by their cited passages alone. Method: judge "
        "citation runs (verify call against the cited passages only)."
    )
    assert out["coverage_by_risk_category"].startswith("Coverage by risk category: the marked")
    assert out["coverage_by_tag"].startswith("Coverage by claim tag: facts belong to answers")
    report["coverage"] = {"measured": False}
    report["citation_accuracy"] = {"measured": False}
    out = _method_strings(report)
    assert out["coverage"] == "Not measured: no facts are marked in this project's piles."
    assert out["citation_accuracy"] == "Not measured: no citation run exists for this project."


def test_instruments_left_out_names_counts_and_order():
    from metrics.services.instruments import (
        _instrument_keys,
        _instrument_verdicts,
        _instruments_left_out,
        instruments_left_out_text,
    )

    stale = {("m2", "p1"): 1, ("m1", "p9"): 4, (None, "p0"): 2}
    assert _instruments_left_out([("m1", "p9")], stale) == [
        {"model": "m2", "prompt_version": "p1", "stale_verdicts": 1},
        {"model": None, "prompt_version": "p0", "stale_verdicts": 2},
    ]
    # a judge with no current verdict at all: nothing "left out" beside its one instrument
    assert _instruments_left_out([], stale) == []
    left = [
        {"model": "m2", "prompt_version": "p1", "stale_verdicts": 1},
        {"model": "", "prompt_version": "p0", "stale_verdicts": 2},
    ]
    assert instruments_left_out_text(left) == (
        "Left out, every verdict made on a claim's previous text (edited, split or merged "
        "since): model m2, prompt p1: 1 verdict; model —, prompt p0: 2 verdicts. Run the judge on "
        "unjudged claims to judge the new text."
    )
    verdicts = pd.DataFrame(
        {
            "verdict_id": [1, 2, 3, 4, 5],
            "model": ["a", "b", "a", "c", "b"],
            "prompt_version": ["p", "p", "p", "q", "p"],
        }
    )
    # newest first by each instrument's newest verdict id: b (5), c (4), a (3)
    assert _instrument_keys(verdicts) == [("b", "p"), ("c", "q"), ("a", "p")]
    part, n = _instrument_verdicts(verdicts, {("b", "p"): 3, ("a", "p"): 1}, "b", "p")
    assert (part["verdict_id"].tolist(), n) == ([2, 5], 3)
    part, n = _instrument_verdicts(verdicts, {("b", "p"): 3}, "c", "q")
    assert (part["verdict_id"].tolist(), n) == ([4], 0)
    part, n = _instrument_verdicts(verdicts, {("b", "p"): 3, ("a", "p"): 1}, None, None)
    assert (len(part), n) == (5, 4)


def test_abstention_block_whole():
    from metrics.services.abstention_coverage import _abstention

    answers = pd.DataFrame(
        {
            "abstention": [True, False, True, False, False, True],
            "answerable": [
                "answerable",
                "answerable",
                "unanswerable",
                "unanswerable",
                "unknown",
                "unanswerable",
            ],
        }
    )
    assert _nan_equal(
        _abstention(answers),
        {
            "rate": _prop(3, 6),
            "by_answerable": {
                "answerable": _prop(1, 2),
                "unanswerable": _prop(2, 3),
                "unknown": _prop(0, 1),
            },
            "abstentions": 3,
            "answers": 6,
        },
    )
