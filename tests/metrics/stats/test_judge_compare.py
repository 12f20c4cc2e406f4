"""metrics.stats.judge_compare: the paired comparison of two judge versions (issue 28)."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from metrics.stats.judge_compare import paired_difference, ppi_break_even, ratio_rate


def _versions(rng, *, answers=50, per_answer=4, se_a=0.80, se_b=0.75, rho=0.7, icc=0.3):
    """200 held-out gold-SUPPORTED claims in 50 answers; version A is right on a claim when a
    latent normal falls below Φ⁻¹(se_a), version B on a correlated one (ρ) below Φ⁻¹(se_b); the
    latent shares an answer effect (intra-answer correlation `icc`). Planted sens difference
    se_a − se_b."""
    n = answers * per_answer
    answer_ids = np.repeat(np.arange(answers), per_answer)
    effect = rng.standard_normal(answers)[answer_ids]
    e_a = math.sqrt(icc) * effect + math.sqrt(1 - icc) * rng.standard_normal(n)
    e_b = rho * e_a + math.sqrt(1 - rho**2) * rng.standard_normal(n)
    y_a = (e_a < sps.norm.ppf(se_a)).astype(float)
    y_b = (e_b < sps.norm.ppf(se_b)).astype(float)
    return y_a, y_b, np.ones(n), answer_ids


def test_paired_difference_covers_planted_difference_and_is_narrower_than_unpaired():
    rng = np.random.default_rng(20260528)
    covered = covered_unpaired = narrower = 0
    draws = 1000
    for _ in range(draws):
        y_a, y_b, g, ids = _versions(rng)
        out = paired_difference(y_a, y_b, g, ids)
        lo, hi = out["ci"]
        covered += lo <= 0.05 <= hi
        ulo, uhi = out["unpaired_ci"]
        covered_unpaired += ulo <= 0.05 <= uhi
        narrower += (hi - lo) < (uhi - ulo)
    assert 0.93 <= covered / draws <= 0.97
    assert narrower == draws
    # The unpaired interval over-covers: it is wider than it needs to be.
    assert covered_unpaired / draws > 0.98


def test_paired_difference_ignoring_clusters_undercovers():
    """The naive version (every claim its own cluster) misses more often when answers are
    strongly correlated: the clustering is what makes the interval honest."""
    rng = np.random.default_rng(7)
    naive = clustered = 0
    for _ in range(1000):
        y_a, y_b, g, ids = _versions(rng, icc=0.8, rho=0.5)
        lo, hi = paired_difference(y_a, y_b, g, ids)["ci"]
        nlo, nhi = paired_difference(y_a, y_b, g, np.arange(ids.size))["ci"]
        clustered += lo <= 0.05 <= hi
        naive += nlo <= 0.05 <= nhi
    assert clustered / 1000 >= 0.93
    assert naive < clustered


def test_mcnemar_exact_matches_hand_count():
    # 10 gold-positive claims: A right and B wrong on 4, the reverse on 0, 6 concordant.
    y_a = np.array([1, 1, 1, 1, 1, 1, 0, 0, 1, 1], dtype=float)
    y_b = np.array([0, 0, 0, 0, 1, 1, 0, 0, 1, 1], dtype=float)
    out = paired_difference(y_a, y_b, np.ones(10), np.arange(10))
    assert out["discordant"] == (4, 0)
    # Two-sided exact: 2 · (1/2)^4 = 0.125.
    assert out["p_mcnemar"] == pytest.approx(0.125)
    assert out["value"] == pytest.approx(0.4)


def test_ratio_rate_reduces_to_share_with_hand_variance():
    # One claim per answer, one stratum: R = 3/4, V = n/(n−1) Σ z² with z = (y − R)/n.
    y = np.array([1, 1, 1, 0], dtype=float)
    out = ratio_rate(y, np.ones(4), np.arange(4))
    expected_var = 4 / 3 * np.sum(((y - 0.75) / 4) ** 2)
    assert out["value"] == pytest.approx(0.75)
    assert out["se"] == pytest.approx(math.sqrt(expected_var))


def test_break_even_against_the_formula():
    # Mani et al. 2025: the threshold is 1/√(n − 2); n = 27 gives exactly 0.2.
    score = np.r_[np.ones(14), np.zeros(13)]
    gold = score.copy()
    gold[:2] = 0  # a strong judge
    out = ppi_break_even(score, gold)
    assert out["threshold"] == pytest.approx(0.2)
    assert out["correlation"] == pytest.approx(np.corrcoef(score, gold)[0, 1])
    assert out["narrows"] is True
    assert ppi_break_even(np.ones(10), gold[:10])["narrows"] is None


def _ppi_against_gold(rho, *, n=20, big_n=2000, draws=1000, seed=1):
    """PPI++ (ppi_py, the independent implementation) against gold alone on a mean of 1/2:
    the ratio of their mean squared errors and of their intervals' widths, and the break-even
    indicator's verdict on the typical draw."""
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(seed)
    err_ppi = err_gold = width_ppi = width_gold = 0.0
    narrows = 0
    for _ in range(draws):
        latent = rng.standard_normal(n + big_n)
        y = (latent > 0).astype(float)
        f = rho * latent + math.sqrt(1 - rho**2) * rng.standard_normal(n + big_n)
        gold, on_gold, on_rest = y[:n], f[:n], f[n:]
        est = float(np.ravel(ppi_mean_pointestimate(gold, on_gold, on_rest))[0])
        err_ppi += (est - 0.5) ** 2
        err_gold += (gold.mean() - 0.5) ** 2
        lo, hi = ppi_mean_ci(gold, on_gold, on_rest, alpha=0.05)
        width_ppi += float(np.ravel(hi)[0] - np.ravel(lo)[0])
        lo, hi = classical_mean_ci(gold, alpha=0.05)
        width_gold += float(np.ravel(hi)[0] - np.ravel(lo)[0])
        narrows += bool(ppi_break_even(on_gold, gold)["narrows"])
    return err_ppi / err_gold, width_ppi / width_gold, narrows / draws


def test_weak_judge_ppi_no_better_than_gold_and_indicator_says_so():
    # ρ = 0.1 on 20 gold claims: the judge's correlation with gold (≈ 0.08) is far below
    # 1/√18 ≈ 0.24. PPI++ is then no better than gold alone: its error is larger, and its
    # interval no narrower in any way a reader would notice.
    mse_ratio, width_ratio, narrows = _ppi_against_gold(0.1)
    assert mse_ratio >= 1.0
    assert width_ratio >= 0.97
    # The sample correlation on 20 claims is itself noisy (sd ≈ 0.22): the indicator says
    # "gold alone is as good" in about three draws of four.
    assert narrows < 0.35


def test_strong_judge_ppi_narrower_and_indicator_says_so():
    mse_ratio, width_ratio, narrows = _ppi_against_gold(0.9)
    assert mse_ratio < 0.8
    assert width_ratio < 0.8
    assert narrows > 0.95
