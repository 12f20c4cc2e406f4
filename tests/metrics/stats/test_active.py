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
    one = stats.active_ppi_mean(
        [1, np.nan, np.nan], [True, False, False], [0.9, 0.5, 0.2], [0.5] * 3
    )
    assert np.isnan(one.low)
    assert np.isnan(one.high)
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
        halves.append((est.high - est.low) / 2)
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
