"""Binomial intervals: Wilson score and Clopper–Pearson."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import stats

# Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
# methods", Stat Med 17:857–872, Table I: method 3 (Wilson score, no continuity correction) and
# method 5 (Clopper–Pearson "exact"), 95%, to 4 decimals.
NEWCOMBE_1998 = [
    # (k, n, wilson, clopper_pearson)
    (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
    (0, 20, (0.0000, 0.1611), (0.0000, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
    (29, 29, (0.8830, 1.0000), (0.8806, 1.0000)),
]


@pytest.mark.parametrize(("k", "n", "wilson", "exact"), NEWCOMBE_1998)
def test_wilson_interval_matches_newcombe_1998_table(k, n, wilson, exact):
    lo, hi = stats.wilson_interval(k, n)
    assert round(lo, 4) == wilson[0]
    assert round(hi, 4) == wilson[1]


@pytest.mark.parametrize(("k", "n", "wilson", "exact"), NEWCOMBE_1998)
def test_clopper_pearson_interval_matches_newcombe_1998_table(k, n, wilson, exact):
    lo, hi = stats.clopper_pearson_interval(k, n)
    assert round(lo, 4) == exact[0]
    assert round(hi, 4) == exact[1]


def test_wilson_interval_matches_r_binom_and_the_hand_formula():
    # R: binom::binom.confint(5, 10, methods = "wilson") -> 0.2365931 0.7634069
    lo, hi = stats.wilson_interval(5, 10)
    assert lo == pytest.approx(0.2365931, abs=1e-7)
    assert hi == pytest.approx(0.7634069, abs=1e-7)
    # by hand: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    z = 1.959963984540054
    p, n = 0.5, 10
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert (lo, hi) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_clopper_pearson_interval_matches_r_binom_test():
    # R: binom.test(5, 10)$conf.int -> 0.1870860 0.8129140
    lo, hi = stats.clopper_pearson_interval(5, 10)
    assert lo == pytest.approx(0.1870860, abs=1e-7)
    assert hi == pytest.approx(0.8129140, abs=1e-7)


def test_wilson_interval_other_confidence_is_wider_at_99():
    lo95, hi95 = stats.wilson_interval(30, 100)
    lo99, hi99 = stats.wilson_interval(30, 100, confidence=0.99)
    assert lo99 < lo95
    assert hi99 > hi95


@pytest.mark.parametrize("fn", [stats.wilson_interval, stats.clopper_pearson_interval])
def test_intervals_n_zero_is_nan(fn):
    lo, hi = fn(0, 0)
    assert math.isnan(lo)
    assert math.isnan(hi)


@pytest.mark.parametrize("fn", [stats.wilson_interval, stats.clopper_pearson_interval])
@pytest.mark.parametrize(
    ("k", "n", "conf"), [(3, 2, 0.95), (-1, 5, 0.95), (1, 5, 1.0), (1, 5, 0.0)]
)
def test_intervals_reject_impossible_input(fn, k, n, conf):
    with pytest.raises(ValueError, match="successes|confidence"):
        fn(k, n, conf)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=100_000),
    frac=st.floats(min_value=0.0, max_value=1.0),
    confidence=st.floats(min_value=0.5, max_value=0.999),
)
def test_intervals_contain_the_estimate_and_stay_in_unit_interval(n, frac, confidence):
    k = round(frac * n)
    p = k / n
    for fn in (stats.wilson_interval, stats.clopper_pearson_interval):
        lo, hi = fn(k, n, confidence)
        assert 0.0 <= lo <= p <= hi <= 1.0
        if k == 0:
            assert lo == 0.0
        if k == n:
            assert hi == 1.0


def test_clopper_pearson_interval_at_90_percent_is_statsmodels_alpha_010():
    from statsmodels.stats.proportion import proportion_confint

    assert stats.clopper_pearson_interval(7, 20, confidence=0.90) == pytest.approx(
        proportion_confint(7, 20, alpha=0.10, method="beta")
    )
