"""Pairwise judging in both orders: hand cases, and a judge preferring the first position 70%
of the time (simulated, seeded): the reported position bias matches it, and averaging both
orders removes it from the preference."""

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from metrics.stats import pairwise
from metrics.stats.pairwise import pairwise_both_orders


def test_hand_worked_three_pairs():
    # Pair 1: B wins in both orders; pair 2: first position wins both times; pair 3: tie, B.
    out = pairwise_both_orders(["first", "first", "tie"], ["second", "first", "second"])
    # preference: (1 + 1)/2, (1 + 0)/2, (0.5 + 1)/2 → mean (1 + 0.5 + 0.75)/3 = 0.75.
    assert out["preference_b"]["value"] == pytest.approx(0.75)
    # first position's share: (1 + 0)/2, (1 + 1)/2, (0.5 + 0)/2 → 0.5, 1, 0.25; bias −0.5.
    assert out["position_bias"]["value"] == pytest.approx((0.5 + 1 + 0.25) / 3 - 0.5)
    assert out["n_pairs"] == 3


def test_bad_verdicts_are_named():
    with pytest.raises(ValueError, match="b_first: verdicts must be first, second or tie, got A"):
        pairwise_both_orders(["A"], ["first"])
    with pytest.raises(ValueError, match="differ in length"):
        pairwise_both_orders(["first"], [])


@pytest.mark.parametrize("true_preference", [0.5, 0.65])
def test_a_judge_preferring_the_first_position_70_percent(true_preference):
    rng = np.random.default_rng(70)
    n, draws = 400, 300
    covered_bias = covered_pref = single_covered = 0
    for _ in range(draws):
        b_better = rng.random(n) < true_preference

        def ask(b_is_first, b_better=b_better):
            # 70%: the judge picks the first answer whatever it says; else it reads them.
            biased = rng.random(n) < 0.4  # first-position share 0.4 + 0.6·½ = 0.7
            reads = np.where(b_better == b_is_first, "first", "second")
            return np.where(biased, "first", reads)

        out = pairwise_both_orders(ask(True), ask(False))
        # Expected first-position share: 0.4 + 0.6·½ = 0.7 whatever the true preference.
        lo, hi = out["position_bias"]["ci"]
        covered_bias += lo <= 0.2 <= hi
        # Averaged: 0.4·½ + 0.6·P(B better) — the bias adds nothing towards either system.
        target = 0.4 * 0.5 + 0.6 * true_preference
        lo, hi = out["preference_b"]["ci"]
        covered_pref += lo <= target <= hi
        lo, hi = out["single_order_preference_b"]["ci"]
        single_covered += lo <= target <= hi
    assert covered_bias / draws >= 0.93
    assert covered_pref / draws >= 0.93
    # One order only (B first) reports 0.4 + 0.6·P(B better) instead: almost never covered.
    assert single_covered / draws < 0.05


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


def test_pairwise_two_pairs_has_t_interval_with_one_df():
    got = pairwise.pairwise_both_orders(["first", "second"], ["second", "second"], 0.9)
    pref = np.array([1.0, 0.5])
    assert got["preference_b"] == _t_ci(pref, 0.9)
    assert got["position_bias"] == _t_ci(np.array([0.5, 0.0]) - 0.5 + 0.0, 0.9)
