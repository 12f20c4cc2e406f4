"""Active audit statistics: inclusion probabilities and the active (Hájek, PPI++) estimate.

Expected figures come from hand derivations, a brute-force water-filling loop, ppi_py,
statsmodels (Wilson; weighted least squares with cluster-robust errors) and a delete-one-answer
jackknife written here, never from the functions under test.
"""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm
from scipy.stats import t as student_t
from statsmodels.stats.proportion import proportion_confint

from metrics import stats
from metrics.stats import active as A
from metrics.stats import active_ppi_mean
from tests.metrics import independent as ref

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


def test_inclusion_probabilities_exact_for_pathological_sizes():
    # sizes 10^0 … 10^299 cap about one claim per water-filling round: past 64 rounds the
    # function switches to its sort; both must give the brute-force answer
    sd = 10.0 ** np.arange(300, dtype=float)
    for budget in (150, 290):
        pi = stats.inclusion_probabilities(sd, budget, floor=1e-300)
        s = np.maximum(sd, 1e-300 * sd.mean())
        np.testing.assert_allclose(pi, _water_fill(s, budget), rtol=1e-9, atol=1e-12)
        assert pi.sum() == pytest.approx(budget, rel=1e-9)


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
    assert out.lower == pytest.approx(float(np.ravel(lo)[0]), abs=1e-12)
    assert out.upper == pytest.approx(float(np.ravel(hi)[0]), abs=1e-12)
    assert "PPI++" in out.method


def test_uniform_pi_gold_only_equals_wilson():
    rng = np.random.default_rng(5)
    y, _, _ = _project(rng, 500)
    lab = rng.random(500) < 0.2
    out = stats.active_ppi_mean(y, lab, None, np.full(500, 0.2))
    k, n = int(y[lab].sum()), int(lab.sum())
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert out.value == k / n
    assert out.lower == pytest.approx(lo, abs=1e-12)
    assert out.upper == pytest.approx(hi, abs=1e-12)


def test_uniform_pi_clustered_gold_only_equals_design_proportion():
    rng = np.random.default_rng(6)
    y, _, ids = _project(rng, 2000, answers=500, rho=0.4)
    lab = rng.random(2000) < 0.15
    out = stats.active_ppi_mean(y, lab, None, np.full(2000, 0.15), cluster=ids)
    ref = stats.design_proportion(y[lab], ids[lab])
    assert out.value == pytest.approx(ref.value, abs=1e-12)
    assert out.lower == pytest.approx(ref.lower, abs=1e-12)
    assert out.upper == pytest.approx(ref.upper, abs=1e-12)
    assert out.se == pytest.approx(ref.se, rel=1e-9)
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
    assert out.se == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert out.lower < out.value < out.upper
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
    assert out.se**2 == pytest.approx(_jackknife_var(y, lab, f, pi, ids, lam), rel=0.05)
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
    one = stats.active_ppi_mean(
        [1, np.nan, np.nan], [True, False, False], [0.9, 0.5, 0.2], [0.5] * 3
    )
    assert np.isnan(one.lower)
    assert np.isnan(one.upper)
    assert "too few" in one.method
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


# --------------------------------------------------------------------------------------------
# Neyman allocation


def test_neyman_next_stratum_by_hand():
    big = [100, 300, 600]
    sd = [0.5, 0.1, 0.3]
    # W = (.1, .3, .6): W²S² = (.0025, .0009, .0324), each × (1/5 − 1/6): the third wins
    assert stats.neyman_next_stratum([5, 5, 5], big, sd) == 2
    # ... unless the first has 1 label: .0025·(1 − 1/2) = .00125 > .0324/30 = .00108
    assert stats.neyman_next_stratum([1, 5, 5], big, sd) == 0
    # a stratum with no label comes first, the largest N_h first
    assert stats.neyman_next_stratum([0, 3, 0], [100, 300, 50], sd) == 0
    # a fully labelled stratum is never served
    assert stats.neyman_next_stratum([5, 5, 600], big, sd) == 0
    with pytest.raises(ValueError, match="fully labelled"):
        stats.neyman_next_stratum([100, 300, 600], big, sd)
    with pytest.raises(ValueError, match="sd_h"):
        stats.neyman_next_stratum([1, 1], [5, 5], [0.1, float("nan")])
    with pytest.raises(ValueError, match="differ in length"):
        stats.neyman_next_stratum([1, 1], [5, 5, 5], [0.1, 0.2])


def _brute_force_best(w2s2, start, extra, caps):
    """The integer allocation of `extra` more labels minimising Σ W²S²/n_h, by enumeration."""
    best, arg = np.inf, None
    for a in range(extra + 1):
        for b in range(extra + 1 - a):
            c = extra - a - b
            n = np.array(start) + [a, b, c]
            if (n > caps).any():
                continue
            v = float(np.sum(w2s2 / n))
            if v < best - 1e-15:
                best, arg = v, n
    return arg


def test_greedy_neyman_serving_reaches_the_integer_optimum():
    big = np.array([200.0, 500.0, 300.0])
    sd = np.array([0.45, 0.2, 0.35])
    n = np.array([1, 1, 1])
    for _ in range(27):
        n[stats.neyman_next_stratum(n, big, sd)] += 1
    w2s2 = (big / big.sum()) ** 2 * sd**2
    np.testing.assert_array_equal(n, _brute_force_best(w2s2, [1, 1, 1], 27, big))
    # and it sits within one label per stratum of the continuous Neyman n_h ∝ N_h S_h
    assert np.all(np.abs(n - 30 * big * sd / (big * sd).sum()) <= 1.0)


def test_neyman_allocation_by_hand():
    # N S = (50, 50, 70): 100·(5/17, 5/17, 7/17) = (29.41, 29.41, 41.18); the spare label goes
    # to the largest remainder, the tie to the larger stratum
    np.testing.assert_array_equal(
        stats.neyman_allocation([100, 200, 700], [0.5, 0.25, 0.1], 100), [29, 30, 41]
    )
    # capped at N_h, the rest re-allocated
    np.testing.assert_array_equal(stats.neyman_allocation([10, 1000], [1.0, 0.01], 50), [10, 40])
    # no sd at all: proportional
    np.testing.assert_array_equal(stats.neyman_allocation([100, 300], [0, 0], 40), [10, 30])
    np.testing.assert_array_equal(stats.neyman_allocation([3, 4], [0.2, 0.1], 7), [3, 4])
    with pytest.raises(ValueError, match="more than"):
        stats.neyman_allocation([3, 4], [0.2, 0.1], 8)
    with pytest.raises(ValueError, match="n must"):
        stats.neyman_allocation([3, 4], [0.2, 0.1], 2.5)


@pytest.mark.parametrize("seed", range(5))
def test_neyman_allocation_sums_and_caps(seed):
    rng = np.random.default_rng(seed)
    big = rng.integers(1, 400, 8).astype(float)
    sd = rng.uniform(0, 0.5, 8)
    n = int(rng.integers(1, big.sum()))
    alloc = stats.neyman_allocation(big, sd, n)
    assert alloc.sum() == n
    assert (alloc <= big).all()
    assert (alloc >= 0).all()


# --------------------------------------------------------------------------------------------
# the forecast and the gain


def test_uniform_gold_forecast_by_hand_and_its_own_interval_reaches_it():
    rng = np.random.default_rng(21)
    y, _, _ = _project(rng, 20000)
    lab = np.zeros(y.size, bool)
    lab[rng.choice(y.size, 400, replace=False)] = True
    fc = stats.labels_needed(0.03, "uniform_gold", y, lab)
    p = y[lab].mean()
    t = student_t_ppf(399)
    assert fc.variance_unit == pytest.approx(p * (1 - p), rel=1e-12)
    assert fc.labels_total == int(np.ceil(p * (1 - p) * t**2 / 0.03**2))
    assert fc.labels_more == fc.labels_total - 400
    assert fc.half_width_now == pytest.approx(t * np.sqrt(p * (1 - p) / 400))
    # the design's own interval at the forecast size: Wilson half-width ≈ ±0.03
    lo, hi = stats.wilson_interval(round(p * fc.labels_total), fc.labels_total)
    assert (hi - lo) / 2 == pytest.approx(0.03, rel=0.02)
    assert "about" in fc.method
    assert "not a promise" in fc.method


def student_t_ppf(df):
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def test_forecast_is_none_below_ten_labels():
    lab = np.zeros(100, bool)
    lab[:9] = True
    fc = stats.labels_needed(0.05, "uniform_gold", np.ones(100), lab)
    assert fc.labels_total is None
    assert fc.labels_more is None
    assert "n/a" in fc.method


def test_active_forecast_with_uniform_pi_equals_uniform_ppi_forecast():
    rng = np.random.default_rng(22)
    y, f, ids = _project(rng, 5000, answers=1250, rho=0.3)
    lab = rng.random(y.size) < 0.06
    both = stats.forecasts(0.02, y, lab, f, np.full(y.size, 0.06), ids)
    assert set(both) == {"uniform_gold", "uniform_ppi", "active"}
    a, u = both["active"], both["uniform_ppi"]
    assert a.variance_unit == pytest.approx(u.variance_unit, rel=1e-9)
    assert a.labels_total == u.labels_total
    # the judge helps: PPI++ needs fewer labels than gold alone
    assert u.labels_total < both["uniform_gold"].labels_total


def test_stratified_forecast_by_hand():
    # two strata of 600 and 400 claims, 30 labels each, one claim per answer
    y = np.r_[np.tile([1.0, 1.0, 0.0], 200), np.tile([1.0, 0.0], 200)]
    strata = np.r_[np.zeros(600), np.ones(400)]
    lab = np.zeros(1000, bool)
    lab[:30] = lab[600:630] = True  # stratum 0: 20 of 30 supported; stratum 1: 15 of 30
    fc = stats.labels_needed(0.05, "stratified", y, lab, strata=strata)
    s0, s1 = np.sqrt(2 / 3 * 1 / 3), 0.5
    unit = (0.6 * s0 + 0.4 * s1) ** 2
    assert fc.variance_unit == pytest.approx(unit, rel=1e-9)
    t = student_t_ppf(59)
    assert fc.labels_total == int(np.ceil(unit * t**2 / 0.05**2))
    with pytest.raises(ValueError, match="strata"):
        stats.labels_needed(0.05, "stratified", y, lab)


def test_active_forecast_is_reached_by_the_active_estimate():
    """Draw the forecast number of labels with the active design: the median half-width of
    active_ppi_mean is then at most the target (the forecast does not promise too few)."""
    rng = np.random.default_rng(23)
    y, f, ids = _project(rng, 8000, answers=2000, rho=0.3, signal=1.5)
    pi_plan = stats.inclusion_probabilities(np.sqrt(f * (1 - f)), 300)
    lab = rng.random(y.size) < 0.03  # the labels so far: uniform
    fc = stats.labels_needed(
        0.03, "active", y, lab, f, np.full(y.size, 0.03), ids, design_pi=pi_plan
    )
    n_star = fc.labels_total
    pi = stats.inclusion_probabilities(np.sqrt(f * (1 - f)), n_star)
    halves = []
    for _ in range(30):
        keys = stats.sequential_poisson_keys(pi, u=rng.random(y.size))
        lab2 = np.zeros(y.size, bool)
        lab2[np.argsort(keys)[:n_star]] = True
        est = stats.active_ppi_mean(np.where(lab2, y, np.nan), lab2, f, pi, cluster=ids)
        halves.append((est.upper - est.lower) / 2)
    assert np.median(halves) <= 0.03 * 1.02
    assert np.median(halves) >= 0.03 * 0.75  # and it is not wildly pessimistic


def test_labels_saved_by_hand():
    def fc(design, unit, floor, n):
        return stats.Forecast(design, 0.05, None, None, None, n, unit, floor, 1.0, 0.95, "")

    chosen = fc("active", 0.05, 0.0, 100)
    chosen = stats.Forecast(**{**chosen.as_dict(), "half_width_now": 0.044})
    gold = fc("uniform_gold", 0.2, 0.0, 100)
    out = stats.labels_saved(chosen, gold)
    # gold-only reaches the same width at V_gold / V_active(100) = 0.2 / 0.0005 = 400 labels
    assert out.labels_gold_only == 400
    assert out.saved == 300
    assert out.ratio == pytest.approx(0.25)
    assert "not a promise" in out.method
    with pytest.raises(ValueError, match="uniform_gold"):
        stats.labels_saved(chosen, chosen)


def test_confidence_informative_matches_sklearn_auc():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(24)
    conf = rng.uniform(0.5, 1, 400)
    err = rng.random(400) < (1 - conf)  # calibrated: errors where confidence is low
    auc, informative = stats.confidence_informative(conf, err)
    assert auc == pytest.approx(roc_auc_score(err, -conf), abs=1e-12)
    assert informative
    noise = rng.random(400) < 0.2
    auc0, informative0 = stats.confidence_informative(conf, noise)
    assert auc0 == pytest.approx(roc_auc_score(noise, -conf), abs=1e-12)
    assert not informative0  # a coin's errors: the interval covers 0.5


# --------------------------------------------------------------------------------------------
# selective judging


def test_selective_threshold_fixed_sequence_against_scipy_binomtest():
    from scipy.stats import binomtest

    rng = np.random.default_rng(25)
    conf = rng.uniform(0.5, 1.0, 600)
    agree = (rng.random(600) < conf).astype(float)  # agreement rises with confidence
    out = stats.selective_threshold(conf, agree, target=0.8, delta=0.1)
    cands = np.unique(np.quantile(conf, np.linspace(0.9, 0.0, 10)))[::-1]
    expected = None
    for t in cands:
        keep = conf >= t
        p = binomtest(int(agree[keep].sum()), int(keep.sum()), 0.8, alternative="greater").pvalue
        if p > 0.1:
            break
        expected = t
    assert expected is not None
    assert out.threshold == pytest.approx(expected)
    keep = conf >= expected
    assert out.accepted_share == pytest.approx(keep.mean())
    assert out.agreement == pytest.approx(agree[keep].mean())
    ci = binomtest(int(agree[keep].sum()), int(keep.sum())).proportion_ci(
        confidence_level=0.9, method="exact"
    )
    # the one-sided 90% Clopper–Pearson bound is the lower end of the two-sided 80% interval
    ci80 = binomtest(int(agree[keep].sum()), int(keep.sum())).proportion_ci(
        confidence_level=0.8, method="exact"
    )
    assert out.lower_bound == pytest.approx(ci80.low, abs=1e-9)
    assert out.lower_bound >= 0.8
    assert ci.low < out.lower_bound
    assert "fixed-sequence" in out.method
    assert "exchangeable" in out.method


def test_selective_threshold_none_when_the_first_test_fails():
    conf = np.linspace(0.5, 1, 50)
    agree = np.r_[np.ones(25), np.zeros(25)]  # the most confident half all disagree
    out = stats.selective_threshold(conf, agree)
    assert out.threshold is None
    assert out.accepted_share == 0.0
    assert len(out.tests) == 1
    with pytest.raises(ValueError, match="target"):
        stats.selective_threshold(conf, agree, target=1.0)
    with pytest.raises(ValueError, match="differ in length"):
        stats.selective_threshold(conf[:3], agree)


def test_neyman_allocation_with_a_minimum_per_stratum():
    # N S = (1, 1, 98): Neyman gives (1, 1, 98) of 100; a minimum of 3 lifts the first two to 3
    # and leaves the third 94
    np.testing.assert_array_equal(
        stats.neyman_allocation([10, 10, 980], [0.1, 0.1, 0.1], 100, minimum=3), [3, 3, 94]
    )
    # an S_h = 0 stratum gets its minimum, not zero
    np.testing.assert_array_equal(
        stats.neyman_allocation([50, 50], [0.0, 0.3], 20, minimum=2), [2, 18]
    )
    # a minimum above N_h is capped at N_h
    np.testing.assert_array_equal(
        stats.neyman_allocation([1, 100], [0.5, 0.5], 10, minimum=2), [1, 9]
    )
    with pytest.raises(ValueError, match="minimum"):
        stats.neyman_allocation([50, 50], [0.1, 0.3], 3, minimum=2)


def test_forecast_below_the_labels_so_far_uses_the_smaller_df():
    # 500 labels, p = 0.5 exactly, x = 0.2: z²·0.25/0.04 ≈ 24 labels, but with 24 labels the
    # design's own t has ~23 df: n* solves n = 0.25·t²_{n−1}/0.04 by hand (fixed point)
    from scipy.stats import t as student_t

    y = np.tile([1.0, 0.0], 500)
    lab = np.zeros(1000, bool)
    lab[:500] = True
    fc = stats.labels_needed(0.2, "uniform_gold", y, lab)
    n = 25
    for _ in range(20):
        n = int(np.ceil(0.25 * student_t.ppf(0.975, n - 1) ** 2 / 0.04))
    assert fc.labels_total == n
    assert fc.labels_total > int(np.ceil(0.25 * student_t.ppf(0.975, 499) ** 2 / 0.04))


# active_ppi_mean _79, _89, _97: the one-label branch's value, cluster count and extras.
def test_one_label_without_a_prediction_is_that_label_and_no_interval():
    est = active_ppi_mean([np.nan, 1.0, np.nan, np.nan, np.nan], [0, 1, 0, 0, 0], None, [0.2] * 5)
    assert est.value == 1.0
    assert math.isnan(est.lower)
    assert math.isnan(est.upper)
    assert est.n_clusters == 1
    assert est.n == 1
    assert est.extra == {"labelled": 1, "N": 5}
    assert est.method == "One labelled claim: too few to estimate a variance; label more."


def test_one_label_with_a_prediction_gives_no_figure():
    # A judge's prediction on the rest with a single label: no rectifier can be estimated, so
    # no value (not the one label read as the project's rate).
    est = active_ppi_mean(
        [np.nan, 1.0, np.nan, np.nan], [0, 1, 0, 0], [0.9, 0.8, 0.1, 0.4], [0.5] * 4
    )
    assert math.isnan(est.value)
    assert est.n_clusters == 1


# active_ppi_mean _287: "clustered by answer" only when answers were given.
def test_the_active_method_says_clustered_only_when_answers_are_given():
    y = np.array([1.0, 0.0, 1.0, 1.0, np.nan, np.nan, 0.0, 1.0])
    lab = ~np.isnan(y)
    pi = [0.5, 0.4, 0.5, 0.6, 0.3, 0.3, 0.5, 0.7]  # unequal: the general estimator's own text
    plain = active_ppi_mean(y, lab, None, pi)
    # answer 3 holds the two unlabelled claims: 3 of the 4 answers are labelled
    clustered = active_ppi_mean(y, lab, None, pi, cluster=[1, 1, 2, 2, 3, 3, 4, 4])
    assert plain.method.startswith("Inverse-probability estimate from gold alone (Hájek")
    assert "clustered by answer" not in plain.method
    assert "clustered by answer (3 labelled answers of 4)" in clustered.method


# --- metrics.stats.active: constant π, one claim per answer, with a judge: today's PPI++ -------


def test_active_ppi_mean_with_constant_pi_is_ppi_pp_with_a_normal_interval():
    """active `_uniform_today` `_107` (`df=inf` dropped: the estimate's degrees of freedom nan,
    where its method says "normal interval"). Constant π, every claim its own answer, a judge's
    prediction on all 60 claims, 40 labelled: the point and interval are ppi_py's PPI++ mean
    (tests.metrics.independent.ppi), the normal interval's df infinite."""
    import math

    import numpy as np

    from metrics import stats
    from tests.metrics import independent as ref

    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.7).astype(float)
    f = np.clip(np.where(y > 0, 0.8, 0.3) + rng.normal(0, 0.1, 60), 0, 1)
    labelled = np.r_[np.ones(40, bool), np.zeros(20, bool)]
    est = stats.active_ppi_mean(np.where(labelled, y, np.nan), labelled, f, np.full(60, 0.5))
    value, (lo, hi), _lam = ref.ppi(y[:40], f[:40], f[40:])
    assert est.value == pytest.approx(value, rel=1e-9)
    assert est.ci == (pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9))
    assert est.df == math.inf


# --- metrics.stats.active: a bad prediction is refused naming it ---------------------------------


@pytest.mark.parametrize("design", ["uniform_ppi", "active"])
def test_labels_needed_refuses_a_prediction_outside_0_1_naming_it(design):
    """active `labels_needed` `_258` (the judge's prediction named "PREDICTION" in the error a
    caller reads)."""
    import numpy as np

    from metrics import stats

    y = np.array([1.0, 0.0] * 10)
    labelled = np.r_[np.ones(16, bool), np.zeros(4, bool)]  # enough labels to forecast from
    prediction = np.full(20, 0.6)
    prediction[3] = 1.5
    with pytest.raises(ValueError, match=r"^prediction must be 0/1 verdicts or probabilities"):
        stats.labels_needed(0.1, design, y, labelled, prediction=prediction)


def test_active_ppi_mean_reports_kish_effective_size_of_its_weights():
    """active `active_ppi_mean` `_283` (`W·2` for `W²` in Kish's effective size). Four labels
    with π = 0.5, 0.5, 0.25, 0.25 (weights 2, 2, 4, 4): n_eff = (Σw)²/Σw² = 144/40 = 3.6."""
    import numpy as np

    from metrics import stats

    labelled = np.r_[np.ones(4, bool), np.zeros(4, bool)]
    y = np.array([1.0, 0.0, 1.0, 1.0] + [np.nan] * 4)
    est = stats.active_ppi_mean(y, labelled, None, np.array([0.5, 0.5, 0.25, 0.25] + [0.5] * 4))
    assert est.extra["kish_n"] == pytest.approx(3.6)


# --- active and paired: a missing standard deviation, the difference's clip -----------------


def test_inclusion_probabilities_refuse_a_missing_sd_with_a_clear_error():
    """active `inclusion_probabilities` `_6` (`np.asarray(list(error_sd))` without
    `dtype=float`: a None among the standard deviations gave NumPy's TypeError from `isnan` on
    an object array instead of the function's own message)."""
    from metrics import stats

    with pytest.raises(ValueError, match=r"^error_sd contains NaN or infinite values"):
        stats.inclusion_probabilities([0.1, None, 0.3], 1)


# --- active: today's constant-π figure has design effect 1 ----------------------------------------


def test_active_ppi_mean_constant_pi_one_claim_per_answer_has_design_effect_one():
    """active `_uniform_today` `_93` (the design effect None for 1.0 in the constant-π PPI++
    branch: one claim per answer is a simple random sample, design effect 1 by definition)."""
    import numpy as np

    from metrics import stats

    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.7).astype(float)
    f = np.clip(np.where(y > 0, 0.8, 0.3) + rng.normal(0, 0.1, 60), 0, 1)
    labelled = np.r_[np.ones(40, bool), np.zeros(20, bool)]
    est = stats.active_ppi_mean(np.where(labelled, y, np.nan), labelled, f, np.full(60, 0.5))
    assert est.design_effect == 1.0
    wilson = stats.active_ppi_mean(np.where(labelled, y, np.nan), labelled, None, np.full(60, 0.5))
    assert wilson.design_effect == 1.0


NAN = math.nan


Y = np.array([1, 0, 1, 1, 0, 1, 0, 0], dtype=float)


LAB = np.array([1, 1, 1, 1, 1, 1, 0, 0], dtype=bool)


PI = np.array([0.2, 0.5, 0.8, 0.4, 0.25, 0.6, 0.5, 0.5])


CL = np.array([1, 1, 2, 2, 3, 4, 4, 5])


def same(actual, expected, path="out"):
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert set(actual) == set(expected), (path, set(actual) ^ set(expected))
        for key in expected:
            same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, type(expected)), (path, type(actual))
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            same(a, e, f"{path}[{i}]")
    elif isinstance(expected, (bool, str)) or expected is None:
        assert actual == expected, (path, actual, expected)
        assert type(actual) is type(expected), (path, type(actual))
    elif isinstance(expected, int):
        assert type(actual) is int, (path, type(actual))
        assert actual == expected, (path, actual)
    else:
        assert isinstance(actual, float), (path, type(actual))
        if math.isnan(expected):
            assert math.isnan(actual), (path, actual)
        else:
            assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), (path, actual)


def _by_hand(cluster):
    w = 1 / PI[LAB]
    yl = Y[LAB]
    big_w = w.sum()
    theta = (w * yl).sum() / big_w
    a = w * (yl - theta) / big_w
    groups = np.unique(cluster[LAB])
    totals = np.array([a[cluster[LAB] == g].sum() for g in groups])
    g = groups.size
    var = g / (g - 1) * (totals**2).sum()
    var0 = 6 / 5 * (a**2).sum()
    t = student_t.ppf(0.975, g - 1)
    # the Wilson interval at n* = θ(1 − θ)/max(V, V₀)·(z/t)² (never more than independent)
    n_eff = theta * (1 - theta) / max(var, var0)
    z = norm.ppf(0.975)
    n_star = n_eff * (z / t) ** 2
    centre = (theta + z**2 / (2 * n_star)) / (1 + z**2 / n_star)
    half = (
        z * math.sqrt(theta * (1 - theta) / n_star + z**2 / (4 * n_star**2)) / (1 + z**2 / n_star)
    )
    return {
        "theta": theta,
        "kish": big_w**2 / (w**2).sum(),
        "se": math.sqrt(var),
        "deff": var / var0,
        "n_eff": n_eff,
        "ci": (centre - half, centre + half),
    }


def test_active_ppi_mean_gold_only_clustered_whole_record():
    got = A.active_ppi_mean(Y, LAB, None, PI, cluster=CL).as_dict()
    hand = _by_hand(CL)
    assert hand["theta"] == pytest.approx(
        (5 + 1.25 + 2.5 + 1 / 0.6) / (5 + 2 + 1.25 + 2.5 + 4 + 1 / 0.6)
    )
    same(
        got,
        {
            "ci": hand["ci"],
            "low": hand["ci"][0],
            "high": hand["ci"][1],
            "design_effect": hand["deff"],
            "df": 3.0,
            "extra": {
                "N": 8,
                "answers": 5,
                "effective_n": hand["n_eff"],
                "kish_n": hand["kish"],
                "labelled": 6,
                "labelled_answers": 4,
                "lambda": 0.0,
                "tuned": False,
            },
            "method": "Inverse-probability estimate from gold alone (Hájek weights 1/π, 6 labels "
            "of 8 claims), clustered by answer (4 labelled answers of 5); Wilson interval at the "
            "effective sample size (4), design effect 0.78, t with 3 df.",
            "n": 6,
            "n_clusters": 4,
            "n_strata": 1,
            "std_error": hand["se"],
            "unseen_share": 0.0,
            "value": hand["theta"],
        },
    )


def test_active_ppi_mean_gold_only_independent_claims_whole_record():
    got = A.active_ppi_mean(Y, LAB, None, PI).as_dict()
    hand = _by_hand(np.arange(8))
    assert hand["deff"] == pytest.approx(1.0)
    same(
        got,
        {
            "ci": hand["ci"],
            "low": hand["ci"][0],
            "high": hand["ci"][1],
            "design_effect": 1.0,
            "df": 5.0,
            "extra": {
                "N": 8,
                "answers": 8,
                "effective_n": hand["n_eff"],
                "kish_n": hand["kish"],
                "labelled": 6,
                "labelled_answers": 6,
                "lambda": 0.0,
                "tuned": False,
            },
            "method": "Inverse-probability estimate from gold alone (Hájek weights 1/π, 6 labels "
            "of 8 claims); Wilson interval at the effective sample size (4), design effect 1.00, t "
            "with 5 df.",
            "n": 6,
            "n_clusters": 6,
            "n_strata": 1,
            "std_error": hand["se"],
            "unseen_share": 0.0,
            "value": hand["theta"],
        },
    )


def _nothing(n, value, method):
    return {
        "ci": (NAN, NAN),
        "low": NAN,
        "high": NAN,
        "design_effect": NAN,
        "df": NAN,
        "extra": {"N": 8, "labelled": n},
        "method": method,
        "n": n,
        "n_clusters": n,
        "n_strata": 1,
        "std_error": NAN,
        "unseen_share": 0.0,
        "value": value,
    }


def test_active_ppi_mean_with_one_label_or_none():
    one = np.zeros(8, dtype=bool)
    one[0] = True
    same(
        A.active_ppi_mean(Y, one, None, PI).as_dict(),
        _nothing(1, 1.0, "One labelled claim: too few to estimate a variance; label more."),
    )
    same(
        A.active_ppi_mean(Y, one, np.full(8, 0.5), PI).as_dict(),
        _nothing(1, NAN, "One labelled claim: too few to estimate a variance; label more."),
    )
    same(
        A.active_ppi_mean(Y, np.zeros(8, dtype=bool), None, PI).as_dict(),
        _nothing(0, NAN, "No labelled claim yet: nothing to estimate from."),
    )


def test_constant_pi_is_the_simple_random_sample_wilson_and_ppi():
    got = A.active_ppi_mean(Y, LAB, None, np.full(8, 0.3)).as_dict()
    low, high = ref.wilson(4, 6)
    same(
        got,
        {
            "ci": (low, high),
            "low": low,
            "high": high,
            "design_effect": 1.0,
            "df": math.inf,
            "extra": {"N": 8, "labelled": 6, "independent": True, "lambda": 0.0},
            "method": "Wilson interval on the 6 labels (uniform inclusion, one claim per answer: "
            "a simple random sample).",
            "n": 6,
            "n_clusters": 6,
            "n_strata": 1,
            "std_error": math.sqrt(4 / 6 * 2 / 6 / 6),
            "unseen_share": 0.0,
            "value": 4 / 6,
        },
    )
    f = np.array([0.9, 0.2, 0.7, 0.8, 0.3, 0.6, 0.4, 0.9])
    got = A.active_ppi_mean(Y, LAB, f, np.full(8, 0.3)).as_dict()
    value, (low, high), lam = ref.ppi(Y[LAB], f[LAB], f[~LAB])
    assert got["value"] == pytest.approx(value, abs=1e-9)
    assert got["ci"] == pytest.approx((max(low, 0.0), min(high, 1.0)), abs=1e-9)
    assert got["extra"]["lambda"] == pytest.approx(lam, abs=1e-6)
    rect = Y[LAB] - got["extra"]["lambda"] * f[LAB]
    se = math.sqrt(np.var(rect) / 6 + got["extra"]["lambda"] ** 2 * np.var(f[~LAB]) / 2)
    assert got["std_error"] == pytest.approx(se, rel=1e-9)
    assert set(got["extra"]) == {"lambda", "labelled", "N", "independent", "tuned"}
    assert got["extra"]["tuned"] is True
    assert got["extra"]["independent"] is True
    assert got["method"] == (
        f"PPI++ (uniform inclusion, one claim per answer: a simple random sample), power-tuned "
        f"λ={got['extra']['lambda']:.2f}, 6 labels of 8 claims, normal interval."
    )
    assert (got["design_effect"], got["df"], got["n"], got["n_clusters"]) == (1.0, math.inf, 6, 6)


# ------------------------------------------------------------------------------------------
# every refusal's whole message (a changed word must fail)

ONES = np.ones(3)


LAB3 = np.array([True, True, False])


TEN = np.array([True] * 10 + [False] * 2)


Y12 = np.array([1, 0] * 6, dtype=float)


REFUSALS = [
    (lambda: A.inclusion_probabilities([], 1), "error_sd is empty: no claims to draw from"),
    (lambda: A.inclusion_probabilities([NAN], 1), "error_sd contains NaN or infinite values"),
    (lambda: A.inclusion_probabilities([math.inf], 1), "error_sd contains NaN or infinite values"),
    (
        lambda: A.inclusion_probabilities([-0.1], 1),
        "error_sd must be non-negative (a standard deviation)",
    ),
    (
        lambda: A.inclusion_probabilities([0.1], "x"),
        "budget must be a number of labels, got 'x'",
    ),
    (
        lambda: A.inclusion_probabilities([0.1], 0),
        "budget must be a positive number of labels, got 0",
    ),
    (
        lambda: A.inclusion_probabilities([0.1], math.inf),
        "budget must be a positive number of labels, got inf",
    ),
    (lambda: A.inclusion_probabilities([0.1], 1, floor=0), "floor must be in (0, 1], got 0"),
    (lambda: A.inclusion_probabilities([0.1], 1, floor=1.5), "floor must be in (0, 1], got 1.5"),
    (lambda: A.sequential_poisson_keys([0.5, 0.5], u=[0.1]), "u has 1 entries for 2 claims"),
    (
        lambda: A.sequential_poisson_keys([0.5, 0.0]),
        "pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)",
    ),
    (
        lambda: A.sequential_poisson_keys([1.5]),
        "pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)",
    ),
    (lambda: A.active_ppi_mean(ONES, LAB3, None, [0.5, 0.5]), "pi has 2 entries for 3 claims"),
    (lambda: A.active_ppi_mean([1, 0], LAB3, None, ONES), "y has 2 entries for 3 claims"),
    (
        lambda: A.active_ppi_mean(ONES, LAB3, [0.5, 0.5], ONES),
        "prediction has 2 entries for 3 claims",
    ),
    (
        lambda: A.active_ppi_mean(ONES, LAB3, None, ONES, cluster=[1, 2]),
        "cluster has 2 entries for 3 claims",
    ),
    (
        lambda: A.active_ppi_mean(ONES, LAB3, None, [0.5, 0.4, 0.5], cluster=[1, None, 2]),
        "cluster ids must not be missing (None/NaN)",
    ),
    (
        lambda: A.neyman_next_stratum([1], [2, 3], [0.5]),
        "n_h, N_h and sd_h differ in length: 1, 2, 1 strata",
    ),
    (lambda: A.neyman_next_stratum([], [], []), "N_h is empty: no strata"),
    (
        lambda: A.neyman_next_stratum([-1], [2], [0.5]),
        "n_h must hold non-negative numbers (no NaN)",
    ),
    (
        lambda: A.neyman_next_stratum([1], [NAN], [0.5]),
        "N_h must hold non-negative numbers (no NaN)",
    ),
    (
        lambda: A.neyman_next_stratum([1], [2], [-0.5]),
        "sd_h must hold non-negative numbers (no NaN)",
    ),
    (lambda: A.neyman_next_stratum([0], [0], [0.5]), "N_h sums to zero: no claims in any stratum"),
    (
        lambda: A.neyman_next_stratum([2, 3], [2, 3], [0.5, 0.5]),
        "every stratum is fully labelled (n_h ≥ N_h): no claim left to serve",
    ),
    (
        lambda: A.neyman_allocation([5], [0.5], 1.5),
        "n must be a whole number of labels ≥ 0, got 1.5",
    ),
    (lambda: A.neyman_allocation([5], [0.5], -1), "n must be a whole number of labels ≥ 0, got -1"),
    (
        lambda: A.neyman_allocation([2, 3], [0.5, 0.5], 6),
        "n = 6 labels is more than the 5 claims of the strata",
    ),
    (
        lambda: A.neyman_allocation([5], [0.5], 2, minimum=-1),
        "minimum must be a whole number ≥ 0, got -1",
    ),
    (
        lambda: A.neyman_allocation([5, 5], [0.5, 0.5], 3, minimum=2),
        "minimum = 2 labels per stratum needs 4, more than n = 3",
    ),
    (
        lambda: A.labels_needed(0.1, "magic", ONES, LAB3),
        "design must be one of ('uniform_gold', 'uniform_ppi', 'active', 'stratified'), got "
        "'magic'",
    ),
    (
        lambda: A.labels_needed(1.0, "uniform_gold", ONES, LAB3),
        "half_width must be in (0, 1), got 1.0",
    ),
    (
        lambda: A.labels_needed(0.0, "uniform_gold", ONES, LAB3),
        "half_width must be in (0, 1), got 0.0",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_gold", ONES, LAB3, pi=[0.5]),
        "pi has 1 entries for 3 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_gold", ONES, LAB3, cluster=[1]),
        "cluster has 1 entries for 3 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_gold", Y12[:5], TEN),
        "y has 5 entries for 12 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "stratified", Y12, TEN),
        "strata are required for the stratified design",
    ),
    (
        lambda: A.labels_needed(0.1, "stratified", Y12, TEN, strata=["a"]),
        "strata has 1 entries for 12 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "active", Y12, TEN),
        "prediction (the judge's P(SUPPORTED)) is required for active",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_ppi", Y12, TEN, prediction=[0.5]),
        "prediction has 1 entries for 12 claims",
    ),
    (
        lambda: A.labels_needed(
            0.1, "active", Y12, TEN, prediction=np.full(12, 0.5), design_pi=[0.5]
        ),
        "design_pi has 1 entries for 12 claims",
    ),
]


@pytest.mark.parametrize(("call", "message"), REFUSALS)
def test_refusals_say_exactly_why(call, message):
    with pytest.raises(ValueError) as err:  # noqa: PT011 — the whole message is compared below
        call()
    assert str(err.value) == message


# ------------------------------------------------------------------------------------------
# the forecast and the gain: whole records


def test_labels_needed_with_too_few_labels_is_n_a():
    got = A.labels_needed(0.1, "uniform_gold", ONES, LAB3).as_dict()
    same(
        got,
        {
            "design": "uniform_gold",
            "half_width": 0.1,
            "labels_total": None,
            "labels_more": None,
            "half_width_now": None,
            "labelled": 2,
            "variance_unit": NAN,
            "variance_floor": NAN,
            "design_effect": NAN,
            "confidence": 0.95,
            "method": "uniform sampling, gold only: n/a, fewer than 10 labels to estimate the "
            "variance from.",
            "extra": {},
        },
    )
    saved = A.labels_saved(
        A.labels_needed(0.1, "uniform_gold", ONES, LAB3),
        A.labels_needed(0.1, "uniform_gold", ONES, LAB3),
    )
    same(
        saved.as_dict(),
        {
            "design": "uniform_gold",
            "labels_used": 2,
            "labels_gold_only": None,
            "saved": None,
            "ratio": NAN,
            "half_width": None,
            "method": "Labels saved: n/a (too few labels to compare the designs).",
        },
    )


def test_labels_needed_uniform_gold_by_hand_and_its_gain():
    """10 independent labels, 5 SUPPORTED: V₁ = p(1 − p) = 0.25, t at 9 df, n* = ⌈V₁t²/x²⌉,
    ±t·√(V₁/10) now; the gold-only design against itself saves nothing."""
    got = A.labels_needed(0.2, "uniform_gold", Y12, TEN)
    t = student_t.ppf(0.975, 9)
    total = math.ceil(0.25 * t**2 / 0.2**2)
    now = t * math.sqrt(0.25 / 10)
    assert total == 32
    same(
        got.as_dict(),
        {
            "design": "uniform_gold",
            "half_width": 0.2,
            "labels_total": total,
            "labels_more": total - 10,
            "half_width_now": now,
            "labelled": 10,
            "variance_unit": 0.25,
            "variance_floor": 0.0,
            "design_effect": 1.0,
            "confidence": 0.95,
            "method": "uniform sampling, gold only: about 22 more labels (32 in all) to reach "
            "±0.200 (95%), from the 10 labels so far (±0.358 now; per-label variance 0.2500, "
            "design effect 1.00; more labels than the project has claims (12): import about 20 "
            "more answers or accept a wider interval); a forecast from the current variance "
            "estimates, not a promise.",
            "extra": {},
        },
    )
    saved = A.labels_saved(got, got).as_dict()
    n_gold = math.ceil(0.25 / (0.25 / 10))
    same(
        saved,
        {
            "design": "uniform_gold",
            "labels_used": 10,
            "labels_gold_only": n_gold,
            "saved": n_gold - 10,
            "ratio": 10 / n_gold,
            "half_width": now,
            "method": "At ±0.358 the uniform sampling, gold only used 10 labels; uniform "
            "gold-only would have needed about 10 (saved 0 labels, 100% of gold-only's), "
            "measured on this project's labels from the two designs' variance estimates, not a "
            "promise.",
        },
    )
    with pytest.raises(ValueError) as err:  # noqa: PT011
        A.labels_saved(got, A.labels_needed(0.2, "stratified", Y12, TEN, strata=["a"] * 12))
    assert str(err.value) == "gold_only must be the uniform_gold forecast, got 'stratified'"


def test_inclusion_probabilities_small_cases_by_hand():
    assert A.inclusion_probabilities([0.1, 0.2], 2).tolist() == [1.0, 1.0]
    assert A.inclusion_probabilities([0.0, 0.0, 0.0, 0.0], 2).tolist() == [0.5] * 4
    # sd 0.3, 0.1, 0.1, 0.1 with budget 2: c·0.3 would pass 1 → capped, the rest share 1
    got = A.inclusion_probabilities([0.9, 0.1, 0.1, 0.1], 2)
    np.testing.assert_allclose(got, [1.0, 1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    # the floor: sd 0 gets floor·mean(sd) = 0.05·0.25 = 0.0125
    got = A.inclusion_probabilities([0.0, 0.5, 0.5, 0.0], 1)
    s = np.array([0.0125, 0.5, 0.5, 0.0125])
    np.testing.assert_allclose(got, s / s.sum(), rtol=1e-12)


def test_neyman_small_cases_by_hand():
    # an empty stratum first (the larger N_h among the empty ones)
    assert A.neyman_next_stratum([0, 3, 0], [5, 10, 8], [0.5, 0.5, 0.5]) == 2
    # Δ_h = W_h² S_h² (1/n_h − 1/(n_h + 1)): (0.5²·0.25·(1/2 − 1/3), 0.5²·0.01·(1/1 − 1/2))
    assert A.neyman_next_stratum([2, 1], [10, 10], [0.5, 0.1]) == 0
    # a fully labelled stratum is never served
    assert A.neyman_next_stratum([10, 5], [10, 10], [0.5, 0.1]) == 1
    # n_h ∝ N_h S_h: 10·0.5 : 10·0.1 → 5/6 and 1/6 of 6 labels
    assert A.neyman_allocation([10, 10], [0.5, 0.1], 6).tolist() == [5, 1]
    assert A.neyman_allocation([10, 10], [0.0, 0.0], 4).tolist() == [2, 2]
    assert A.neyman_allocation([2, 10], [0.9, 0.1], 5).tolist() == [2, 3]  # capped at N_h
    assert A.neyman_allocation([10, 10], [0.5, 0.0], 6, minimum=2).tolist() == [4, 2]
    assert A.neyman_allocation([10, 10], [0.5, 0.5], 5).dtype == np.int64


def test_confidence_informative_from_delong():
    from sklearn.metrics import roc_auc_score

    conf = np.array([0.9, 0.8, 0.85, 0.3, 0.95, 0.2, 0.88, 0.4, 0.92, 0.1] * 3)
    error = np.array([0, 0, 0, 1, 0, 1, 0, 1, 0, 1] * 3)
    auc, informative = A.confidence_informative(conf, error)
    assert auc == pytest.approx(roc_auc_score(error, -conf), rel=1e-12)
    assert informative is True
    auc, informative = A.confidence_informative([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1])
    assert auc == 0.5
    assert informative is False
    with pytest.raises(ValueError) as err:  # noqa: PT011
        A.confidence_informative([0.5], [0, 1])
    assert str(err.value) == "confidence and error differ in length: 1 vs 2"
    with pytest.raises(ValueError) as err:  # noqa: PT011
        A.confidence_informative([NAN], [0])
    assert str(err.value) == "confidence contains NaN"
