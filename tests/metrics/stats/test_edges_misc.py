"""Edge cases of `metrics.stats` ranking, pairwise and rates, whole outputs pinned.

Expected figures come from brute force (DeLong's placement values by a double loop over
positive/negative pairs), scikit-learn (`roc_auc_score`), scipy (t, norm quantiles) and
statsmodels (Wilson); never from the function under test. Inputs are tiny: one positive, all
ties, a perfect separation (the Wilson fallback), one pair, a share just off 0% or 100%.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from metrics.stats import pairwise, rates

A = pytest.approx


# --------------------------------------------------------------------------------------------
# pairwise_both_orders


def _t_ci(x, conf):
    x = np.asarray(x, float)
    n = x.size
    half = student_t.ppf(0.5 + conf / 2, n - 1) * np.std(x, ddof=1) / math.sqrt(n)
    return {"value": A(x.mean(), abs=1e-15), "ci": A((x.mean() - half, x.mean() + half)), "n": n}


def test_pairwise_both_orders_whole_dict_confidence_80():
    b_first = ["first", "tie", "second", "first"]
    a_first = ["second", "first", "second", "tie"]
    sb = np.array([1, 0.5, 0, 1])
    sa = np.array([0, 1, 0, 0.5])
    pref = (sb + 1 - sa) / 2
    pos = (sb + sa) / 2 - 0.5
    got = pairwise.pairwise_both_orders(b_first, a_first, confidence=0.8)
    assert got == {
        "preference_b": _t_ci(pref, 0.8),
        "position_bias": _t_ci(pos, 0.8),
        "single_order_preference_b": _t_ci(sb, 0.8),
        "n_pairs": 4,
        "method": (
            "every pair judged in both orders and the two verdicts averaged (ties half); "
            "position bias = share of first-position wins − 50%; t intervals over pairs"
        ),
    }


def test_pairwise_one_pair_and_none():
    got = pairwise.pairwise_both_orders(["tie"], ["first"])
    assert got["preference_b"]["value"] == 0.25
    assert got["position_bias"]["value"] == 0.25
    assert got["single_order_preference_b"]["n"] == 1
    assert all(math.isnan(v) for v in got["preference_b"]["ci"])
    got = pairwise.pairwise_both_orders([], [])
    assert math.isnan(got["preference_b"]["value"])
    assert got["preference_b"]["n"] == 0
    assert got["n_pairs"] == 0


def test_pairwise_errors_exact():
    with pytest.raises(ValueError, match=r"^b_first and a_first") as err:
        pairwise.pairwise_both_orders(["first"], ["first", "tie"])
    assert str(err.value) == "b_first and a_first differ in length: 1, 2"
    with pytest.raises(ValueError, match=r"^a_first:") as err:
        pairwise.pairwise_both_orders(["first", "tie"], ["left", "B"])
    assert str(err.value) == "a_first: verdicts must be first, second or tie, got B, left"


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


def test_pairwise_two_pairs_has_t_interval_with_one_df():
    got = pairwise.pairwise_both_orders(["first", "second"], ["second", "second"], 0.9)
    pref = np.array([1.0, 0.5])
    assert got["preference_b"] == _t_ci(pref, 0.9)
    assert got["position_bias"] == _t_ci(np.array([0.5, 0.0]) - 0.5 + 0.0, 0.9)


# --------------------------------------------------------------------------------------------
# Platt scaling


def test_platt_constant_confidence_reaches_mean_target():
    # one distinct confidence: the Hessian is singular but for the 1e-12 ridge; Newton must
    # still move from its start b = log((N₊+1)/(N₋+1)) to σ(a·c + b) = mean of Platt's targets
    from metrics.stats.calibration import platt_calibrator

    y = np.array([1, 1, 1, 0])
    t = np.where(y == 1, 4 / 5, 1 / 3)
    cal = platt_calibrator([0.5, 0.5, 0.5, 0.5], y)
    assert cal(np.array([0.5]))[0] == A(t.mean(), rel=1e-6)
    assert cal.n == 4


def test_platt_tiny_matches_sklearn_soft_targets():
    from metrics.stats.calibration import platt_calibrator
    from tests.metrics.independent import platt_fit

    c = np.array([0.2, 0.9, 0.4, 0.7, 0.8, 0.3])
    y = np.array([0, 1, 1, 0, 1, 0])
    cal = platt_calibrator(c, y)
    grid = np.array([0.0, 0.25, 0.5, 1.0])
    assert cal(grid) == A(platt_fit(c, y)(grid), rel=1e-6)
    empty = platt_calibrator([], [])
    assert empty.n == 0
    assert np.isnan(empty(np.array([0.5]))).all()
