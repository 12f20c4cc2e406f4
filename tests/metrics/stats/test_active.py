"""Active audit statistics: inclusion probabilities and the active (Hájek, PPI++) estimate.

Expected figures come from hand derivations, a brute-force water-filling loop, ppi_py,
statsmodels (Wilson; weighted least squares with cluster-robust errors) and a delete-one-answer
jackknife written here, never from the functions under test.
"""

import numpy as np
import pytest
import statsmodels.api as sm
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from statsmodels.stats.proportion import proportion_confint

from metrics import stats

# --------------------------------------------------------------------------------------------
# inclusion_probabilities


def _water_fill(s, budget):
    """Brute force: cap at 1 whatever c·s passes 1, rescale the rest, repeat until stable."""
    pi = np.zeros_like(s)
    capped = np.zeros(s.size, bool)
    while True:
        free = ~capped
        c = (budget - capped.sum()) / s[free].sum()
        pi[free] = c * s[free]
        pi[capped] = 1.0
        over = free & (pi > 1.0)
        if not over.any():
            return pi
        capped |= over


@pytest.mark.parametrize("budget", [1, 7.5, 50, 180, 199])
def test_inclusion_probabilities_match_brute_force_water_filling(budget):
    rng = np.random.default_rng(3)
    sd = np.concatenate([rng.exponential(1.0, 150), np.zeros(30), rng.uniform(5, 50, 20)])
    pi = stats.inclusion_probabilities(sd, budget, floor=0.1)
    s = np.maximum(sd, 0.1 * sd.mean())
    np.testing.assert_allclose(pi, _water_fill(s, budget), rtol=1e-10, atol=1e-12)
    assert pi.sum() == pytest.approx(budget, rel=1e-12)
    assert pi.max() <= 1.0
    assert pi.min() > 0.0


def test_inclusion_probabilities_proportional_to_sd_and_floored():
    sd = np.array([0.0, 0.01, 0.1, 0.2, 0.4, 0.5])
    pi = stats.inclusion_probabilities(sd, 2.0, floor=0.2)
    floor = 0.2 * 1.21 / 6  # 0.2 × mean sd = 0.040333…
    s = np.array([floor, floor, 0.1, 0.2, 0.4, 0.5])
    c = 2.0 / s.sum()  # 1.5617: nothing reaches 1 here (c·0.5 = 0.78)
    np.testing.assert_allclose(pi, c * s)
    assert pi[0] == pi[1] == pytest.approx(2.0 * floor / (2 * floor + 1.2))


def test_inclusion_probabilities_cap_and_rescale_by_hand():
    # s = (10, 1 × 9), budget 3: the first is capped at 1, the 9 others share 2: 2/9 each
    pi = stats.inclusion_probabilities(np.r_[10.0, np.ones(9)], 3)
    np.testing.assert_allclose(pi, np.r_[1.0, np.full(9, 2 / 9)])


def test_inclusion_probabilities_full_budget_and_flat_sd():
    np.testing.assert_array_equal(stats.inclusion_probabilities([0.1, 0.3, 0.2], 3), np.ones(3))
    np.testing.assert_array_equal(stats.inclusion_probabilities([0.1, 0.3], 10), np.ones(2))
    np.testing.assert_allclose(stats.inclusion_probabilities(np.zeros(4), 2), np.full(4, 0.5))


@pytest.mark.parametrize(
    ("sd", "budget", "floor", "word"),
    [
        ([0.1, 0.2], 0, 0.05, "budget"),
        ([0.1, 0.2], -3, 0.05, "budget"),
        ([0.1, 0.2], float("nan"), 0.05, "budget"),
        ([0.1, float("nan")], 1, 0.05, "error_sd"),
        ([0.1, -0.2], 1, 0.05, "error_sd"),
        ([], 1, 0.05, "error_sd"),
        ([0.1, 0.2], 1, 0.0, "floor"),
    ],
)
def test_inclusion_probabilities_bad_input_names_the_argument(sd, budget, floor, word):
    with pytest.raises(ValueError, match=word):
        stats.inclusion_probabilities(sd, budget, floor=floor)


def test_sequential_poisson_keys_are_u_over_pi():
    pi = np.array([0.5, 0.25, 1.0])
    u = np.array([0.2, 0.2, 0.9])
    np.testing.assert_allclose(stats.sequential_poisson_keys(pi, u=u), [0.4, 0.8, 0.9])
    with pytest.raises(ValueError, match="pi"):
        stats.sequential_poisson_keys([0.5, 0.0], seed=1)


def test_sequential_poisson_first_n_drawn_proportional_to_pi():
    # Ohlsson: the first n in ascending u/π are drawn with probability ≈ n π_i / Σπ
    rng = np.random.default_rng(11)
    pi = np.r_[np.full(100, 0.05), np.full(100, 0.2)]
    hits = np.zeros(pi.size)
    reps = 4000
    for _ in range(reps):
        keys = stats.sequential_poisson_keys(pi, u=rng.random(pi.size))
        hits[np.argsort(keys)[:25]] += 1
    share = hits / reps
    assert share[:100].mean() == pytest.approx(25 * 0.05 / pi.sum(), rel=0.05)
    assert share[100:].mean() == pytest.approx(25 * 0.2 / pi.sum(), rel=0.05)


# --------------------------------------------------------------------------------------------
# active_ppi_mean


def _project(rng, n_claims=3000, answers=None, rho=0.0, signal=2.5):
    """Gold y, a soft judge f, answer ids; claims of an answer share a random effect."""
    ids = np.arange(n_claims) if answers is None else rng.integers(0, answers, n_claims)
    g = n_claims if answers is None else answers
    effect = rng.normal(0, 1, g)[ids] * np.sqrt(rho)
    latent = 0.8 + effect + rng.normal(0, np.sqrt(1 - rho), n_claims)
    y = (latent > 0).astype(float)
    f = np.clip(1 / (1 + np.exp(-(signal * (2 * y - 1) + rng.normal(0, 1.5, n_claims)))), 0, 1)
    return y, f, ids


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uniform_pi_no_cluster_equals_ppi_mean_interval_and_ppi_py(seed):
    rng = np.random.default_rng(seed)
    y, f, _ = _project(rng)
    lab = rng.random(y.size) < 0.1
    y_masked = np.where(lab, y, np.nan)
    out = stats.active_ppi_mean(y_masked, lab, f, np.full(y.size, 0.1))
    today = stats.ppi_mean_interval(y[lab], f[lab], f[~lab])
    assert out.value == today["value"]
    assert out.ci == today["ci"]
    assert out.extra["lambda"] == today["lambda"]
    lo, hi = ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.05)
    point = ppi_mean_pointestimate(y[lab], f[lab], f[~lab])
    assert out.value == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
    assert out.low == pytest.approx(float(np.ravel(lo)[0]), abs=1e-12)
    assert out.high == pytest.approx(float(np.ravel(hi)[0]), abs=1e-12)
    assert "PPI++" in out.method


def test_uniform_pi_gold_only_equals_wilson():
    rng = np.random.default_rng(5)
    y, _, _ = _project(rng, 500)
    lab = rng.random(500) < 0.2
    out = stats.active_ppi_mean(y, lab, None, np.full(500, 0.2))
    k, n = int(y[lab].sum()), int(lab.sum())
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert out.value == k / n
    assert out.low == pytest.approx(lo, abs=1e-12)
    assert out.high == pytest.approx(hi, abs=1e-12)


def test_uniform_pi_clustered_gold_only_equals_design_proportion():
    rng = np.random.default_rng(6)
    y, _, ids = _project(rng, 2000, answers=500, rho=0.4)
    lab = rng.random(2000) < 0.15
    out = stats.active_ppi_mean(y, lab, None, np.full(2000, 0.15), cluster=ids)
    ref = stats.design_proportion(y[lab], ids[lab])
    assert out.value == pytest.approx(ref.value, abs=1e-12)
    assert out.low == pytest.approx(ref.low, abs=1e-12)
    assert out.high == pytest.approx(ref.high, abs=1e-12)
    assert out.std_error == pytest.approx(ref.std_error, rel=1e-9)
    assert out.df == ref.df


def test_hajek_ipw_matches_weighted_least_squares_with_cluster_robust_errors():
    rng = np.random.default_rng(7)
    y, f, ids = _project(rng, 4000, answers=1000, rho=0.4)
    pi = stats.inclusion_probabilities(np.sqrt(f * (1 - f)), 400)
    lab = rng.random(4000) < pi
    out = stats.active_ppi_mean(y, lab, None, pi, cluster=ids)
    w = 1 / pi[lab]
    assert out.value == pytest.approx(np.average(y[lab], weights=w), abs=1e-12)
    fit = sm.WLS(y[lab], np.ones((int(lab.sum()), 1)), weights=w).fit(
        cov_type="cluster", cov_kwds={"groups": ids[lab]}
    )
    # statsmodels' CR1: G/(G − 1)·(n − 1)/(n − k) with k = 1, the same factor
    assert out.std_error == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert out.low < out.value < out.high
    assert "Hájek" in out.method or "Inverse-probability" in out.method


def _active_point(y, lab, f, pi, lam):
    w = 1 / pi[lab]
    return lam * f.mean() + np.sum(w * (y[lab] - lam * f[lab])) / w.sum()


def _jackknife_var(y, lab, f, pi, ids, lam):
    """Delete-one-answer jackknife variance of the active point estimate at a fixed λ."""
    answers = np.unique(ids)
    reps = np.empty(answers.size)
    for k, a in enumerate(answers):
        keep = ids != a
        reps[k] = _active_point(y[keep], lab[keep], f[keep], pi[keep], lam)
    g = answers.size
    return (g - 1) / g * float(np.sum((reps - reps.mean()) ** 2))


def test_active_ppi_point_variance_and_tuning_against_a_jackknife():
    rng = np.random.default_rng(8)
    y, f, ids = _project(rng, 1600, answers=400, rho=0.4, signal=0.6)
    pi = stats.inclusion_probabilities(np.sqrt(f * (1 - f)), 250)
    lab = rng.random(y.size) < pi
    out = stats.active_ppi_mean(y, lab, f, pi, cluster=ids)
    lam = out.extra["lambda"]
    assert 0.1 < lam < 0.9  # a weak judge: the tuning is interior, not at a clip
    assert out.value == pytest.approx(_active_point(y, lab, f, pi, lam), abs=1e-12)
    assert out.std_error**2 == pytest.approx(_jackknife_var(y, lab, f, pi, ids, lam), rel=0.05)
    # the tuned λ minimises the variance: the jackknife agrees within its grid step
    grid = np.linspace(0, 1, 21)
    jack = [_jackknife_var(y, lab, f, pi, ids, g) for g in grid]
    assert abs(grid[int(np.argmin(jack))] - lam) <= 0.1
    untuned = stats.active_ppi_mean(y, lab, f, pi, cluster=ids, tune=False)
    assert untuned.extra["lambda"] == 1.0
    assert untuned.value == pytest.approx(_active_point(y, lab, f, pi, 1.0), abs=1e-12)
    assert "λ=" in out.method
    assert "Zrnic & Candès" in out.method
    assert f"of {np.unique(ids).size})" in out.method


def test_active_estimate_does_not_depend_on_the_scale_of_pi():
    rng = np.random.default_rng(9)
    y, f, ids = _project(rng, 1000, answers=250, rho=0.3)
    pi = stats.inclusion_probabilities(np.sqrt(f * (1 - f)), 200)
    lab = rng.random(y.size) < pi
    a = stats.active_ppi_mean(y, lab, f, pi, cluster=ids)
    b = stats.active_ppi_mean(y, lab, f, pi / 2, cluster=ids)
    assert a.value == pytest.approx(b.value, abs=1e-12)
    assert a.ci == pytest.approx(b.ci, abs=1e-12)


def test_active_ppi_no_label_and_bad_input():
    out = stats.active_ppi_mean([np.nan] * 3, [False] * 3, [0.5] * 3, [0.5] * 3)
    assert np.isnan(out.value)
    assert out.n == 0
    with pytest.raises(ValueError, match="pi"):
        stats.active_ppi_mean([1, 0], [True, True], None, [0.5, 0.0])
    with pytest.raises(ValueError, match="pi"):
        stats.active_ppi_mean([1, 0], [True, True], None, [0.5])
    with pytest.raises(ValueError, match="prediction"):
        stats.active_ppi_mean([1, 0], [True, True], [0.5, 1.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="y"):
        stats.active_ppi_mean([1, 2], [True, True], None, [0.5, 0.5])
    with pytest.raises(ValueError, match="cluster"):
        stats.active_ppi_mean([1, 0], [True, True], None, [0.5, 0.5], cluster=[1])
