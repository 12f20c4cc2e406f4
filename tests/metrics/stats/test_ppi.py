"""Prediction-powered inference (PPI++) for the true supported rate."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from metrics import stats

Z95 = norm.ppf(0.975)


def _ppi_py_reference(y, yhat, yhat_unlabeled, alpha=0.05):
    """Transcription of ppi_py 0.2 (github.com/aangelopoulos/ppi_py, ppi.py): ppi_mean_ci with
    lam=None -> _calc_lam_glm(clip=True) on the lam=1 gradients, then the lam-weighted CI."""
    n, big_n = y.shape[0], yhat_unlabeled.shape[0]
    pointest_1 = yhat_unlabeled.mean() + (y - yhat).mean()
    grads, grads_hat = y - pointest_1, yhat - pointest_1
    grads_hat_unlabeled = yhat_unlabeled - pointest_1
    grads_cent = grads - grads.mean()
    grad_hat_cent = grads_hat - grads_hat.mean()
    cov_grads = (1 / n) * (grads_cent @ grad_hat_cent + grad_hat_cent @ grads_cent)
    var_grads_hat = np.cov(np.concatenate([grads_hat, grads_hat_unlabeled]))
    lam = float(np.clip(cov_grads / (2 * (1 + n / big_n) * var_grads_hat), 0, 1))
    pointest = (lam * yhat_unlabeled).mean() + (y - lam * yhat).mean()
    imputed_std = (lam * yhat_unlabeled).std() / np.sqrt(big_n)
    rectifier_std = (y - lam * yhat).std() / np.sqrt(n)
    half = norm.ppf(1 - alpha / 2) * np.sqrt(imputed_std**2 + rectifier_std**2)
    return pointest, (pointest - half, pointest + half), lam


def _simulate(rng, n, big_n, pi, se, sp, soft=False):
    def judge(truth):
        if soft:  # a probability that leans the right way
            return np.clip(
                np.where(truth, rng.beta(5, 2, truth.size), rng.beta(2, 4, truth.size)), 0, 1
            )
        return np.where(truth, rng.random(truth.size) < se, rng.random(truth.size) < 1 - sp).astype(
            float
        )

    y = (rng.random(n) < pi).astype(float)
    rest = rng.random(big_n) < pi
    return y, judge(y > 0.5), judge(rest)


@pytest.mark.parametrize("soft", [False, True])
def test_ppi_mean_interval_matches_ppi_py_formulas(soft):
    rng = np.random.default_rng(5)
    y, fg, fr = _simulate(rng, 300, 4000, 0.55, 0.9, 0.7, soft=soft)
    out = stats.ppi_mean_interval(y, fg, fr)
    value, (lo, hi), lam = _ppi_py_reference(y, fg, fr)
    assert out["lambda"] == pytest.approx(lam, abs=1e-12)
    assert out["value"] == pytest.approx(value, abs=1e-12)
    assert out["ci"] == pytest.approx((lo, hi), abs=1e-12)
    assert 0.0 < out["lambda"] <= 1.0
    assert (out["n"], out["N"]) == (300, 4000)


def test_ppi_mean_interval_hand_worked_lambda_zero_is_classical():
    # A constant judge carries no information: λ = 0 and the interval is the classical CLT one,
    # mean ± z·sd/√n with the population sd (as ppi_py).
    y = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 1], dtype=float)
    out = stats.ppi_mean_interval(y, np.ones(10), np.ones(50))
    assert out["lambda"] == 0.0
    assert out["value"] == pytest.approx(0.7)
    half = Z95 * math.sqrt(0.7 * 0.3 / 10)
    assert out["ci"] == pytest.approx((0.7 - half, 0.7 + half))


def test_ppi_mean_interval_accepts_verdict_strings():
    gold = ["SUPPORTED", "NOT_IN_PILE", "SUPPORTED", "CONTRADICTED"] * 10
    judge = ["SUPPORTED", "SUPPORTED", "SUPPORTED", "CONTRADICTED"] * 10
    rest = ["SUPPORTED", "NOT_IN_PILE"] * 100
    as_str = stats.ppi_mean_interval(gold, judge, rest)
    as_num = stats.ppi_mean_interval([1, 0, 1, 0] * 10, [1, 1, 1, 0] * 10, [1.0, 0.0] * 100)
    assert as_str == as_num
    with pytest.raises(ValueError, match="UNPARSEABLE"):
        stats.ppi_mean_interval(["SUPPORTED"], ["UNPARSEABLE"], [])


def test_ppi_mean_interval_no_gold_is_nan_and_no_rest_is_gold_only():
    empty = stats.ppi_mean_interval([], [], [1, 0, 1])
    assert math.isnan(empty["value"])
    assert all(math.isnan(v) for v in empty["ci"])
    only_gold = stats.ppi_mean_interval([1, 0, 1, 1], [1, 0, 0, 1], [])
    assert only_gold["lambda"] == 0.0
    assert only_gold["value"] == pytest.approx(0.75)


def test_ppi_mean_interval_perfect_judge_uses_everything():
    # f = Y exactly: λ̂ = 1/(1 + n/N); the rectifier has variance (1−λ)²p(1−p), so the interval
    # shrinks towards the one over all n + N claims.
    rng = np.random.default_rng(1)
    y = (rng.random(200) < 0.3).astype(float)
    rest = (rng.random(20_000) < 0.3).astype(float)
    out = stats.ppi_mean_interval(y, y, rest)
    # λ̂ = Var_n(Y)/((1 + n/N)·Var_{n+N}(f)) ≈ 1/(1 + n/N), up to sampling noise in the two variances
    expected = np.var(y) / ((1 + 200 / 20_000) * np.var(np.r_[y, rest], ddof=1))
    assert out["lambda"] == pytest.approx(expected, abs=1e-12)
    assert out["lambda"] == pytest.approx(1 / (1 + 200 / 20_000), rel=0.1)
    gold_width = 2 * Z95 * y.std() / math.sqrt(200)
    assert out["ci"][1] - out["ci"][0] < 0.2 * gold_width


@pytest.mark.parametrize(
    ("pi", "se", "sp", "soft"),
    [
        (0.41, 0.976, 0.204, False),  # FaithBench-like: judge says 87%, humans 41%, J = 0.18
        (0.62, 0.90, 0.75, False),
        (0.62, 0.0, 0.0, True),  # soft probabilities
    ],
)
def test_ppi_mean_interval_covers_planted_rate_and_is_never_much_wider(pi, se, sp, soft):
    rng = np.random.default_rng(2023)
    sims, n, big_n = 1000, 150, 5000
    covered = 0
    worst_ratio = 0.0
    for _ in range(sims):
        y, fg, fr = _simulate(rng, n, big_n, pi, se, sp, soft=soft)
        out = stats.ppi_mean_interval(y, fg, fr)
        lo, hi = out["ci"]
        covered += lo <= pi <= hi
        classical = 2 * Z95 * y.std() / math.sqrt(n)
        if classical > 0:
            worst_ratio = max(worst_ratio, (hi - lo) / classical)
    assert covered / sims >= 0.93
    # PPI++ is never wider than the gold-only (classical, λ = 0) interval asymptotically; in these
    # 150-claim audits the estimated λ̂ costs at most 3%.
    assert worst_ratio <= 1.03


def test_ppi_mean_interval_faithbench_like_is_about_as_tight_as_gold_only():
    rng = np.random.default_rng(18)
    # se = 0.976, sp = 0.204: the judge reports 0.41·0.976 + 0.59·0.796 = 0.87, J = 0.18
    y, fg, fr = _simulate(rng, 150, 5000, 0.41, 0.976, 0.204)
    assert fr.mean() == pytest.approx(0.87, abs=0.02)
    out = stats.ppi_mean_interval(y, fg, fr)
    lo, hi = stats.wilson_interval(int(y.sum()), 150)
    assert (out["ci"][1] - out["ci"][0]) == pytest.approx(hi - lo, rel=0.05)
    assert out["ci"][1] - out["ci"][0] < 0.17  # about ±0.08


@settings(max_examples=100, deadline=None)
@given(
    gold=st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=1, max_size=80),
    rest=st.lists(st.floats(0, 1), min_size=0, max_size=200),
)
def test_ppi_mean_interval_contains_estimate_and_stays_in_unit_interval(gold, rest):
    y = [float(g) for g, _ in gold]
    fg = [f for _, f in gold]
    out = stats.ppi_mean_interval(y, fg, rest)
    lo, hi = out["ci"]
    assert 0.0 <= lo <= out["value"] <= hi <= 1.0
    assert 0.0 <= out["lambda"] <= 1.0


def test_ppi_mean_interval_without_gold_says_n_is_zero():
    out = stats.ppi_mean_interval([], [], [1.0, 0.0, 1.0])
    assert out["n"] == 0
    assert out["N"] == 3
    assert math.isnan(out["value"])
