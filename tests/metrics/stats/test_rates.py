"""Claim and answer rates, coverage, F1 and the method string."""

import math

import pytest

from metrics import stats
from metrics.stats import rates

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def test_claim_rates_hand_worked_and_unparseable_excluded():
    out = stats.claim_rates([S, S, S, C, N, "UNPARSEABLE", None])
    assert (out[S], out[C], out[N], out["n"], out["excluded"]) == (3, 1, 1, 5, 2)
    assert out["faithfulness"] == pytest.approx(0.6)
    assert out["contradiction_rate"] == pytest.approx(0.2)
    assert out["not_in_pile_rate"] == pytest.approx(0.2)
    assert out["hallucination_rate"] == pytest.approx(0.4)


def test_claim_rates_empty_is_nan_not_zero():
    out = stats.claim_rates([])
    assert out["n"] == 0
    for key in ("faithfulness", "contradiction_rate", "not_in_pile_rate", "hallucination_rate"):
        assert math.isnan(out[key])
    assert math.isnan(stats.claim_rates(["UNPARSEABLE"])["faithfulness"])


def test_claim_rates_all_supported_is_exactly_one():
    out = stats.claim_rates([S] * 4)
    assert out["faithfulness"] == 1.0
    assert out["hallucination_rate"] == 0.0


def test_answer_rates_hand_worked():
    # a1: S S C (2/3), a2: S (1), a3: N N (0), a4: only UNPARSEABLE -> not counted
    ids = ["a1", "a1", "a1", "a2", "a3", "a3", "a4"]
    verdicts = [S, S, C, S, N, N, "UNPARSEABLE"]
    out = stats.answer_rates(ids, verdicts)
    assert out["n_answers"] == 3
    assert out["mean_per_answer_faithfulness"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert out["answers_with_unsupported"] == 2
    assert out["answers_with_unsupported_rate"] == pytest.approx(2 / 3)


def test_answer_rates_empty_is_nan():
    out = stats.answer_rates([], [])
    assert out["n_answers"] == 0
    assert math.isnan(out["mean_per_answer_faithfulness"])
    assert math.isnan(out["answers_with_unsupported_rate"])


def test_coverage_and_f1_hand_worked():
    # Seed 000, Proposition 2: a terse answer of one supported claim covers 1 of 3 facts.
    assert stats.coverage(["f1"], ["f1", "f2", "f3"]) == pytest.approx(1 / 3)
    assert stats.coverage(["f1", "f1", "zz"], ["f1", "f2"]) == pytest.approx(0.5)
    assert math.isnan(stats.coverage(["f1"], []))
    assert stats.f1(1.0, 1 / 3) == pytest.approx(0.5)
    assert stats.f1(0.53, 1.0) == pytest.approx(2 * 0.53 / 1.53)
    assert stats.f1(0.0, 0.0) == 0.0
    assert math.isnan(stats.f1(float("nan"), 0.5))


def test_method_string_matches_design_example_exactly():
    # DESIGN.md "Metrics: definitions": 19/27 = 70.4%
    assert stats.method_string(19, 27, 5, 1) == (
        "70% of claims supported across 27 claims in 5 answers; 1 contradicted. "
        "Method: manual, claim level, against the retrieved pile."
    )


def test_method_string_pluralises_and_names_the_method():
    text = stats.method_string(1, 1, 1, 0, source="llm:abc123", level="answer level")
    assert text == (
        "100% of claims supported across 1 claim in 1 answer; 0 contradicted. "
        "Method: llm:abc123, answer level, against the retrieved pile."
    )


def test_method_string_zero_claims_says_so():
    assert stats.method_string(0, 0, 3, 0) == (
        "No claims assessed yet (0 claims in 3 answers). "
        "Method: manual, claim level, against the retrieved pile."
    )


def test_method_string_never_rounds_to_all_or_none():
    assert stats.method_string(999, 1000, 10, 1).startswith(">99% of claims supported")
    assert stats.method_string(1, 1000, 10, 0).startswith("<1% of claims supported")
    assert stats.method_string(0, 1000, 10, 0).startswith("0% of claims supported")


def test_method_string_rejects_inconsistent_counts():
    with pytest.raises(ValueError, match="counts must be"):
        stats.method_string(5, 3, 1, 0)


def test_method_string_rejects_a_negative_contradicted_count():
    with pytest.raises(ValueError, match="counts must be non-negative"):
        stats.method_string(3, 5, 2, -1)


A = pytest.approx


# --------------------------------------------------------------------------------------------
# rates


def test_claim_rates_whole_dict_with_excluded():
    v = ["SUPPORTED", "UNPARSEABLE", "CONTRADICTED", "SUPPORTED", None, "NOT_IN_PILE"]
    assert rates.claim_rates(v) == {
        "SUPPORTED": 2,
        "CONTRADICTED": 1,
        "NOT_IN_PILE": 1,
        "n": 4,
        "excluded": 2,
        "faithfulness": 0.5,
        "contradiction_rate": 0.25,
        "not_in_pile_rate": 0.25,
        "hallucination_rate": 0.5,
    }


def test_claim_rates_none_counted():
    got = rates.claim_rates(["UNPARSEABLE"])
    assert (got["n"], got["excluded"], got["SUPPORTED"]) == (0, 1, 0)
    for key in ("faithfulness", "contradiction_rate", "not_in_pile_rate", "hallucination_rate"):
        assert math.isnan(got[key]), key


def test_answer_rates_whole_dict_and_answer_left_empty():
    ids = ["a", "a", "b", "c", "c", "d"]
    v = ["SUPPORTED", "CONTRADICTED", "SUPPORTED", "SUPPORTED", "SUPPORTED", "UNPARSEABLE"]
    assert rates.answer_rates(ids, v) == {
        "n_answers": 3,
        "mean_per_answer_faithfulness": A((0.5 + 1 + 1) / 3),
        "answers_with_unsupported": 1,
        "answers_with_unsupported_rate": A(1 / 3),
    }
    got = rates.answer_rates(["a"], ["UNPARSEABLE"])
    assert got["n_answers"] == 0
    assert got["answers_with_unsupported"] == 0
    assert math.isnan(got["mean_per_answer_faithfulness"])
    assert math.isnan(got["answers_with_unsupported_rate"])
    assert set(got) == {
        "n_answers",
        "mean_per_answer_faithfulness",
        "answers_with_unsupported",
        "answers_with_unsupported_rate",
    }


def test_coverage_and_f1_edges():
    assert rates.coverage(["f1", "zz"], ["f1", "f2", "f3", "f1"]) == A(1 / 3)
    assert math.isnan(rates.coverage(["f1"], []))
    assert rates.f1(0.0, 0.0) == 0.0
    assert rates.f1(0.5, 1.0) == A(2 / 3)
    assert math.isnan(rates.f1(float("nan"), 0.5))
    assert math.isnan(rates.f1(0.5, float("nan")))


@pytest.mark.parametrize(
    ("s", "n", "a", "c", "text"),
    [
        (199, 200, 1, 0, ">99% of claims supported across 200 claims in 1 answer; 0 contradicted."),
        (1, 300, 2, 1, "<1% of claims supported across 300 claims in 2 answers; 1 contradicted."),
        # 0.5% rounds half up to 1% (metrics/format.py, the pages' rule), no longer to 0%.
        (1, 200, 2, 1, "1% of claims supported across 200 claims in 2 answers; 1 contradicted."),
        (1, 1, 1, 0, "100% of claims supported across 1 claim in 1 answer; 0 contradicted."),
        (0, 3, 1, 3, "0% of claims supported across 3 claims in 1 answer; 3 contradicted."),
        (1, 2, 3, 0, "50% of claims supported across 2 claims in 3 answers; 0 contradicted."),
    ],
)
def test_method_string_exact(s, n, a, c, text):
    assert rates.method_string(s, n, a, c) == (
        text + " Method: manual, claim level, against the retrieved pile."
    )


def test_method_string_no_claims_and_custom_words():
    assert rates.method_string(0, 0, 1, 0, "judge", "answer level", "the web") == (
        "No claims assessed yet (0 claims in 1 answer). Method: judge, answer level, against "
        "the web."
    )
    with pytest.raises(ValueError, match=r"^counts must") as err:
        rates.method_string(3, 2, 1, 0)
    assert str(err.value) == ("counts must be non-negative and supported, contradicted <= n_claims")
