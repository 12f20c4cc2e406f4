"""Rogan–Gladen debiasing, its three intervals, and the headline chooser."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from metrics import stats
from tests.metrics.independent import lang_reiczigel

METHODS = ["lang-reiczigel", "delta", "bootstrap"]


def test_rogan_gladen_hand_worked():
    # (p + sp − 1)/(se + sp − 1) = (0.7 + 0.7 − 1)/(0.85 + 0.7 − 1) = 0.4/0.55
    assert stats.rogan_gladen(0.7, 0.85, 0.7) == pytest.approx(0.4 / 0.55, abs=1e-15)


def test_rogan_gladen_recovers_the_seed_000_panel():
    # Seed 000, Proposition 3 / Theorem 4: an over-endorsing judge reports 0.70 where the oracle
    # is 0.62; with its audited se, sp the correction returns 0.62.
    pi, se = 0.62, 0.90
    sp = 1 - (0.70 - pi * se) / (1 - pi)
    p_obs = pi * se + (1 - pi) * (1 - sp)
    assert p_obs == pytest.approx(0.70)
    assert stats.rogan_gladen(p_obs, se, sp) == pytest.approx(0.62, abs=1e-12)


def test_rogan_gladen_clips_to_unit_interval():
    assert stats.rogan_gladen(0.2, 0.9, 0.7) == 0.0  # raw (0.2 − 0.3)/0.6 < 0
    assert stats.rogan_gladen(0.99, 0.9, 0.95) == 1.0  # raw 0.94/0.85 > 1


@pytest.mark.parametrize(("se", "sp"), [(0.5, 0.5), (0.3, 0.6), (0.0, 0.0)])
def test_rogan_gladen_is_nan_when_judge_no_better_than_chance(se, sp):
    assert math.isnan(stats.rogan_gladen(0.5, se, sp))


def test_rogan_gladen_nan_input_is_nan():
    assert math.isnan(stats.rogan_gladen(float("nan"), 0.9, 0.9))


@settings(max_examples=300, deadline=None)
@given(p=st.floats(min_value=0.0, max_value=1.0))
def test_rogan_gladen_perfect_judge_collapses_to_naive_exactly(p):
    # Seed 000 collapse anchor: se = sp = 1 -> the debiased rate IS the naive rate.
    assert stats.rogan_gladen(p, 1.0, 1.0) == p


def test_rogan_gladen_variance_hand_worked():
    # p = 0.7, se = 0.85 (n 100), sp = 0.70 (n 100), π = 0.4/0.55, J = 0.55, n = 1000
    pi = 0.4 / 0.55
    expected = (
        0.7 * 0.3 / 1000 + pi**2 * 0.85 * 0.15 / 100 + (1 - pi) ** 2 * 0.7 * 0.3 / 100
    ) / 0.55**2
    assert stats.rogan_gladen_variance(700, 1000, 85, 100, 70, 100) == pytest.approx(expected)
    assert expected == pytest.approx(0.0034399290, abs=1e-10)


def test_rogan_gladen_variance_perfect_audit_is_binomial_variance():
    assert stats.rogan_gladen_variance(300, 1000, 50, 50, 80, 80) == pytest.approx(0.3 * 0.7 / 1000)


def test_rogan_gladen_variance_undefined_is_nan():
    assert math.isnan(stats.rogan_gladen_variance(0, 0, 5, 10, 5, 10))
    assert math.isnan(stats.rogan_gladen_variance(5, 10, 5, 10, 5, 10))  # J = 0


@pytest.mark.parametrize(
    "counts",
    [
        (700, 1000, 85, 100, 70, 100),
        (5, 241, 48, 50, 95, 100),  # Flor et al.'s rare-prevalence setting
        (60, 150, 40, 60, 70, 90),
        (870, 1000, 57, 60, 20, 90),  # FaithBench-like: lenient judge, J ≈ 0.17
    ],
)
def test_rogan_gladen_interval_lang_reiczigel_matches_published_script(counts):
    lo, hi = stats.rogan_gladen_interval(*counts, method="lang-reiczigel")
    ref_lo, ref_hi = lang_reiczigel(*counts)
    point = stats.rogan_gladen(counts[0] / counts[1], counts[2] / counts[3], counts[4] / counts[5])
    assert lo == pytest.approx(min(ref_lo, point), abs=1e-12)
    assert hi == pytest.approx(max(ref_hi, point), abs=1e-12)


def test_rogan_gladen_interval_delta_is_estimate_plus_minus_z_sd():
    lo, hi = stats.rogan_gladen_interval(700, 1000, 85, 100, 70, 100, method="delta")
    sd = math.sqrt(stats.rogan_gladen_variance(700, 1000, 85, 100, 70, 100))
    pi = 0.4 / 0.55
    assert lo == pytest.approx(pi - 1.959963984540054 * sd)
    assert hi == pytest.approx(pi + 1.959963984540054 * sd)


def test_rogan_gladen_interval_bootstrap_is_seeded_and_sensible():
    args = (700, 1000, 85, 100, 70, 100)
    a = stats.rogan_gladen_interval(*args, method="bootstrap")
    b = stats.rogan_gladen_interval(*args, method="bootstrap")
    c = stats.rogan_gladen_interval(*args, method="bootstrap", seed=1)
    assert a == b
    assert a != c
    delta = stats.rogan_gladen_interval(*args, method="delta")
    assert a[0] == pytest.approx(delta[0], abs=0.03)
    assert a[1] == pytest.approx(delta[1], abs=0.03)


def test_rogan_gladen_interval_perfect_audit_width_is_near_wilson():
    # se = sp = 1 from big audits: the correction adds (almost) nothing.
    lo, hi = stats.rogan_gladen_interval(300, 1000, 5000, 5000, 5000, 5000, method="delta")
    w_lo, w_hi = stats.wilson_interval(300, 1000)
    assert hi - lo == pytest.approx(w_hi - w_lo, rel=0.01)


@pytest.mark.parametrize("method", METHODS)
def test_rogan_gladen_interval_undefined_is_nan(method):
    assert all(
        math.isnan(v) for v in stats.rogan_gladen_interval(5, 10, 5, 10, 5, 10, method=method)
    )
    assert all(
        math.isnan(v) for v in stats.rogan_gladen_interval(0, 0, 9, 10, 9, 10, method=method)
    )
    assert all(
        math.isnan(v) for v in stats.rogan_gladen_interval(5, 10, 0, 0, 9, 10, method=method)
    )


def test_rogan_gladen_interval_rejects_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        stats.rogan_gladen_interval(5, 10, 9, 10, 9, 10, method="wald")


@st.composite
def audits_with_positive_j(draw):
    """Counts whose audited J = se + sp − 1 is > 0 (so the estimate is defined), with the judged
    count drawn across the informative range [n(1 − sp), n·se] and its edges."""
    se_n = draw(st.integers(1, 300))
    sp_n = draw(st.integers(1, 300))
    ks = draw(st.integers(1, se_n))
    kp = draw(st.integers(sp_n * (se_n - ks) // se_n + 1, sp_n))  # kp/sp_n > 1 − ks/se_n
    n = draw(st.integers(1, 2000))
    t = draw(st.floats(-0.05, 1.05))
    fp, se = 1 - kp / sp_n, ks / se_n
    pos = min(max(round(n * (fp + t * (se - fp))), 0), n)
    return pos, n, ks, se_n, kp, sp_n


@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=120, deadline=None)
@example(counts=(366, 438, 1, 1, 231, 231))  # π̂ = 0.836, the adjusted interval is [0.954, 1]
@example(counts=(1, 1, 1, 1, 1, 1))
@example(counts=(0, 1, 1, 1, 1, 1))
@example(counts=(2, 3, 1, 2, 2, 3))
@example(counts=(1, 3, 3, 3, 1, 2))
@example(counts=(5, 241, 1, 2, 2, 3))
@example(counts=(700, 1000, 2, 3, 2, 3))  # J = 1/3 from audits of 3 claims each
@example(counts=(1000, 1000, 100, 100, 1, 100))  # J = 0.01, just above 0
@given(counts=audits_with_positive_j())
def test_rogan_gladen_interval_contains_estimate_and_stays_in_unit_interval(counts, method):
    pos, n, ks, se_n, kp, sp_n = counts
    assert ks / se_n + kp / sp_n - 1 > 0
    point = stats.rogan_gladen(pos / n, ks / se_n, kp / sp_n)
    assert 0.0 <= point <= 1.0
    lo, hi = stats.rogan_gladen_interval(*counts, method=method, n_boot=500)
    if math.isnan(lo) or math.isnan(hi):
        # Only the adjusted estimate's own J' = se' + sp' − 1 can be ≤ 0 (1 + 1 pseudo-counts).
        assert method == "lang-reiczigel"
        assert (ks + 1) / (se_n + 2) + (kp + 1) / (sp_n + 2) - 1 <= 0
        assert math.isnan(lo)
        assert math.isnan(hi)
        return
    assert 0.0 <= lo <= point <= hi <= 1.0


def test_rogan_gladen_interval_contains_its_estimate_where_the_shift_moves_it_off():
    # se = 1/1, sp = 231/231: π̂ = 366/438 = 0.836. The adjusted Wald interval of Reiczigel's
    # script, around se' = 2/3 and sp' = 232/233, lies above it; the interval must reach it.
    point = 366 / 438
    ref_lo, ref_hi = lang_reiczigel(366, 438, 1, 1, 231, 231)
    assert ref_lo > point + 0.1
    lo, hi = stats.rogan_gladen_interval(366, 438, 1, 1, 231, 231)
    assert lo == pytest.approx(point, abs=1e-12)
    assert hi == pytest.approx(ref_hi, abs=1e-12)


def test_rogan_gladen_recovers_a_planted_rate_from_a_simulated_judge():
    # A judge of known se = 0.85, sp = 0.70 over 200,000 claims with true rate 0.41, audited on
    # 400 gold-positive and 400 gold-negative claims.
    rng = np.random.default_rng(7)
    pi, se, sp = 0.41, 0.85, 0.70
    truth = rng.random(200_000) < pi
    judged = np.where(truth, rng.random(truth.size) < se, rng.random(truth.size) < 1 - sp)
    naive = judged.mean()
    assert naive == pytest.approx(pi * se + (1 - pi) * (1 - sp), abs=0.005)
    se_hat = rng.binomial(400, se)
    sp_hat = rng.binomial(400, sp)
    est = stats.rogan_gladen(naive, se_hat / 400, sp_hat / 400)
    assert abs(naive - pi) > 0.05  # the naive rate is visibly biased...
    assert est == pytest.approx(pi, abs=0.04)  # ...the correction is not
    with_exact = stats.rogan_gladen(naive, se, sp)
    assert with_exact == pytest.approx(pi, abs=0.005)
    for method in METHODS:
        lo, hi = stats.rogan_gladen_interval(
            int(judged.sum()), judged.size, se_hat, 400, sp_hat, 400, method=method
        )
        assert lo <= pi <= hi


@pytest.mark.parametrize(
    ("pi", "se", "sp", "n", "n_se", "n_sp"),
    [(0.3, 0.85, 0.90, 300, 100, 100), (0.6, 0.75, 0.80, 500, 150, 80)],
)
def test_rogan_gladen_interval_lang_reiczigel_covers_at_nominal_rate(pi, se, sp, n, n_se, n_sp):
    """Lang & Reiczigel (2014) report near-nominal coverage: 3000 seeded draws through the public
    function cover the true rate 93–97% of the time (a Monte-Carlo s.e. of 0.4%), so an
    interval that is too narrow or needlessly wide fails; and its mean width is within 10% of
    the delta-method width at the true parameters, 2z·sd, worked by hand."""
    rng = np.random.default_rng(11)
    draws = 3000
    p_true = pi * se + (1 - pi) * (1 - sp)
    k = rng.binomial(n, p_true, draws)
    ks = rng.binomial(n_se, se, draws)
    kp = rng.binomial(n_sp, sp, draws)
    intervals = np.array(
        [
            stats.rogan_gladen_interval(int(a), n, int(b), n_se, int(c), n_sp)
            for a, b, c in zip(k, ks, kp, strict=True)
        ]
    )
    lo, hi = intervals[:, 0], intervals[:, 1]
    coverage = np.mean((lo <= pi) & (pi <= hi))
    assert 0.93 <= coverage <= 0.97
    sd = math.sqrt(
        p_true * (1 - p_true) / n
        + pi**2 * se * (1 - se) / n_se
        + (1 - pi) ** 2 * sp * (1 - sp) / n_sp
    ) / (se + sp - 1)
    assert np.mean(hi - lo) == pytest.approx(2 * 1.959963984540054 * sd, rel=0.10)


def test_headline_estimate_picks_narrowest_valid_and_explains_weak_judge():
    # FaithBench-like: J = 0.18, Rogan–Gladen very wide; gold-only and PPI++ about ±0.08.
    out = stats.headline_estimate(
        {"value": 0.41, "ci": (0.33, 0.49)},
        {"value": 0.30, "ci": (0.0, 0.75)},
        {"value": 0.42, "ci": (0.335, 0.505)},
        youden_j=0.18,
    )
    assert out["choice"] == "gold_only"
    assert out["value"] == 0.41
    assert out["ci"] == (0.33, 0.49)
    assert out["reason"].startswith("The judge is barely better than chance (J = 0.18)")
    assert "the audit sample alone is the better estimate" in out["reason"]


def test_headline_estimate_prefers_ppi_when_narrower():
    out = stats.headline_estimate(
        (0.62, (0.55, 0.69)), (0.61, (0.50, 0.72)), (0.615, (0.59, 0.64)), youden_j=0.7
    )
    assert out["choice"] == "ppi"
    assert "PPI++" in out["reason"]


def test_headline_estimate_prefers_rogan_gladen_for_an_accurate_judge():
    out = stats.headline_estimate(
        (0.62, (0.55, 0.69)), (0.62, (0.60, 0.64)), (0.62, (0.58, 0.66)), youden_j=0.9
    )
    assert out["choice"] == "rogan_gladen"
    assert "J = 0.90" in out["reason"]


def test_headline_estimate_rejects_rogan_gladen_when_j_not_positive():
    out = stats.headline_estimate((0.5, (0.4, 0.6)), (0.5, (0.49, 0.51)), None, youden_j=-0.02)
    assert out["choice"] == "gold_only"
    assert "no better than chance (J = -0.02)" in out["reason"]


def test_headline_estimate_ties_go_to_gold_only_and_zero_width_is_invalid():
    tie = stats.headline_estimate((0.5, (0.4, 0.6)), None, (0.5, (0.4, 0.6)), youden_j=0.5)
    assert tie["choice"] == "gold_only"
    zero = stats.headline_estimate((1.0, (1.0, 1.0)), None, (1.0, (1.0, 1.0)))
    assert zero["choice"] is None
    assert math.isnan(zero["value"])
    assert "audit more claims" in zero["reason"]


def test_rogan_gladen_variance_with_one_empty_audit_is_nan_and_clips_the_estimate():
    assert math.isnan(stats.rogan_gladen_variance(5, 10, 0, 0, 9, 10))
    assert math.isnan(stats.rogan_gladen_variance(5, 10, 9, 10, 0, 0))
    # p = 0.99, se = 0.9, sp = 0.95: the raw estimate 0.94/0.85 > 1 is clipped to π = 1, so the
    # sp term (1 − π)² vanishes: var = [p(1−p)/n + se(1−se)/n_se] / J².
    expected = (0.99 * 0.01 / 100 + 0.9 * 0.1 / 50) / 0.85**2
    assert stats.rogan_gladen_variance(99, 100, 45, 50, 38, 40) == pytest.approx(expected)


def test_rogan_gladen_bootstrap_carries_the_specificity_audit_and_its_level():
    """A huge judged sample and sensitivity audit, a specificity audit of 400: the spread comes
    from sp, so the bootstrap's width is the delta method's (within 15%); and for a
    near-normal spread the 95% and 50% percentile widths stand as z₀.₉₇₅/z₀.₇₅ = 2.91."""
    args = (600_000, 1_000_000, 90_000, 100_000, 320, 400)
    boot = stats.rogan_gladen_interval(*args, method="bootstrap", n_boot=20_000)
    delta = stats.rogan_gladen_interval(*args, method="delta")
    assert boot[1] - boot[0] == pytest.approx(delta[1] - delta[0], rel=0.15)
    half = stats.rogan_gladen_interval(*args, confidence=0.5, method="bootstrap", n_boot=20_000)
    ratio = (boot[1] - boot[0]) / (half[1] - half[0])
    assert ratio == pytest.approx(norm.ppf(0.975) / norm.ppf(0.75), rel=0.06)


def test_rogan_gladen_bootstrap_spreads_undefined_draws_over_both_ends_quietly():
    # Audits of 6: se = sp = 4/6, J = 1/3 > 0, but many resampled judges have J ≤ 0; those
    # draws count half at 0 and half at 1, so the interval reaches both ends, without warnings.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = stats.rogan_gladen_interval(50, 100, 4, 6, 4, 6, method="bootstrap")
        # p = 0.9: every defined draw is clipped to 1; the lower end is the undefined half at 0.
        high = stats.rogan_gladen_interval(90, 100, 4, 6, 4, 6, method="bootstrap")
    assert (lo, hi) == (0.0, 1.0)
    assert high == (0.0, 1.0)


def test_headline_reason_says_when_the_judge_does_not_narrow_the_audit_sample():
    out = stats.headline_estimate(
        {"value": 0.41, "ci": (0.33, 0.49)}, None, {"value": 0.42, "ci": (0.32, 0.52)}
    )
    assert out["choice"] == "gold_only"
    assert out["reason"] == (
        "The audit sample alone is the better estimate (±0.08); the judge's verdicts on the "
        "other claims do not narrow it (±0.10)."
    )


def test_headline_reason_prints_widths_differing_in_the_third_decimal():
    # Half-widths 0.177 and 0.183: both "±0.18" at two decimals.
    out = stats.headline_estimate(
        {"value": 0.5, "ci": (0.323, 0.677)}, None, {"value": 0.5, "ci": (0.317, 0.683)}
    )
    assert out["choice"] == "gold_only"
    assert "(±0.177)" in out["reason"]
    assert "(±0.183)" in out["reason"]


def test_headline_reason_says_widths_are_about_equal():
    # Half-widths 0.1830 and 0.1834 (0.2% apart): printed alike and called about equal.
    out = stats.headline_estimate(
        {"value": 0.5, "ci": (0.317, 0.683)}, None, {"value": 0.5, "ci": (0.3166, 0.6834)}
    )
    assert out["choice"] == "gold_only"
    assert "(±0.18)" in out["reason"]
    assert "(±0.18, about equal)" in out["reason"]


# --- metrics.stats.prevalence: an interval with one infinite end has no width -----------------


def test_headline_estimate_gives_no_width_to_an_interval_with_an_infinite_end():
    """prevalence `headline_estimate` `_22` (`isfinite(lo) or isfinite(hi)`: a width of +inf
    for an interval (0.2, inf), where the function promises nan for a width it cannot give).
    By hand: gold-only (0.6, (0.5, 0.7)) is the only valid estimate, width 0.2; PPI++ with an
    infinite upper end is not computable; Rogan–Gladen without J is left out."""
    import math

    from metrics.stats.prevalence import headline_estimate

    out = headline_estimate((0.6, (0.5, 0.7)), (0.6, (0.4, 0.8)), (0.3, (0.2, math.inf)))
    assert out["choice"] == "gold_only"
    assert out["widths"]["gold_only"] == pytest.approx(0.2)
    assert out["widths"]["rogan_gladen"] == pytest.approx(0.4)
    assert math.isnan(out["widths"]["ppi"])
    out = headline_estimate((0.6, (0.5, 0.7)), None, (0.3, (-math.inf, 0.4)))
    assert math.isnan(out["widths"]["ppi"])
    assert math.isnan(out["widths"]["rogan_gladen"])  # not computed
