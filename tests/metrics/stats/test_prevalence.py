"""Rogan–Gladen debiasing, its three intervals, and the headline chooser."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from metrics import stats
from metrics.stats.prevalence import _lang_reiczigel

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


def _reiczigel_script(kprev, nprev, ksens, nsens, kspec, nspec, conf=0.95):
    """Line-by-line Python transcription of Reiczigel's R script CI4TruePrevalence (2013) as
    published with Lang & Reiczigel (2014), Prev Vet Med 113:13–22, eq. 16."""
    zcrit = norm.ppf((1 + conf) / 2)
    plus = 2
    nprev_, kprev_ = nprev + zcrit**2, kprev + zcrit**2 / 2
    nsens_, ksens_ = nsens + plus, ksens + plus / 2
    nspec_, kspec_ = nspec + plus, kspec + plus / 2
    obs_prev_, obs_sens_, obs_spec_ = kprev_ / nprev_, ksens_ / nsens_, kspec_ / nspec_
    est_prev_ = (obs_prev_ + obs_spec_ - 1) / (obs_sens_ + obs_spec_ - 1)
    youden_ = obs_sens_ + obs_spec_ - 1
    se_est = math.sqrt(
        obs_prev_ * (1 - obs_prev_) / nprev_
        + obs_sens_ * (1 - obs_sens_) / nsens_ * est_prev_**2
        + obs_spec_ * (1 - obs_spec_) / nspec_ * (1 - est_prev_) ** 2
    ) / abs(youden_)
    dprev = (
        2
        * zcrit**2
        * (
            est_prev_ * obs_sens_ * (1 - obs_sens_) / nsens_
            - (1 - est_prev_) * obs_spec_ * (1 - obs_spec_) / nspec_
        )
    )
    lcl = min(1, max(0, est_prev_ + dprev - zcrit * se_est))
    ucl = min(1, max(0, est_prev_ + dprev + zcrit * se_est))
    return lcl, ucl


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
    ref_lo, ref_hi = _reiczigel_script(*counts)
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


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 2000),
    p=st.floats(0, 1),
    se_n=st.integers(1, 300),
    se=st.floats(0, 1),
    sp_n=st.integers(1, 300),
    sp=st.floats(0, 1),
    method=st.sampled_from(METHODS),
)
def test_rogan_gladen_interval_contains_estimate_and_stays_in_unit_interval(
    n, p, se_n, se, sp_n, sp, method
):
    pos, ks, kp = round(p * n), round(se * se_n), round(sp * sp_n)
    point = stats.rogan_gladen(pos / n, ks / se_n, kp / sp_n)
    lo, hi = stats.rogan_gladen_interval(pos, n, ks, se_n, kp, sp_n, method=method, n_boot=500)
    if math.isnan(point):
        assert math.isnan(lo)
        assert math.isnan(hi)
        return
    assume(not math.isnan(lo))
    assert 0.0 <= lo <= point <= hi <= 1.0


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


def test_rogan_gladen_interval_lang_reiczigel_covers_at_nominal_rate():
    # Lang & Reiczigel (2014) report near-nominal coverage; 4000 seeded draws, vectorised.
    rng = np.random.default_rng(11)
    draws, pi, se, sp = 4000, 0.3, 0.85, 0.90
    n, n_se, n_sp = 300, 100, 100
    p_true = pi * se + (1 - pi) * (1 - sp)
    k = rng.binomial(n, p_true, draws)
    ks = rng.binomial(n_se, se, draws)
    kp = rng.binomial(n_sp, sp, draws)
    lo, hi, _ = _lang_reiczigel(k, n, ks, n_se, kp, n_sp, 1.959963984540054)
    coverage = np.mean((np.clip(lo, 0, 1) <= pi) & (pi <= np.clip(hi, 0, 1)))
    assert coverage >= 0.93


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
