"""Design-based estimates: hand derivations, statsmodels cross-checks, and exact reduction to
today's independent-claims functions when every answer holds one claim and there is one stratum."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.stats import norm
from scipy.stats import t as student_t
from statsmodels.stats.proportion import proportion_confint

from metrics import stats

from .test_intervals import NEWCOMBE_1998
from .test_ppi import _simulate


def _clustered(rng, answers, lo=2, hi=8, mean=0.7, rho=0.3):
    sizes = rng.integers(lo, hi + 1, answers)
    ids = np.repeat(np.arange(answers), sizes)
    total = 1.0 / rho - 1.0
    p = rng.beta(mean * total, (1 - mean) * total, answers)
    y = (rng.random(ids.size) < p[ids]).astype(float)
    return ids, y


def _cluster_se(y, ids):
    """Independent check: statsmodels' cluster-robust OLS on an intercept-only model."""
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": ids})
    return float(fit.bse[0])


# ------------------------------------------------------------------ independent checks


def test_design_proportion_std_error_equals_statsmodels_cluster_robust_ols():
    ids, y = _clustered(np.random.default_rng(3), 60)
    est = stats.design_proportion(y, ids)
    assert est.value == pytest.approx(y.mean(), abs=1e-15)
    assert est.std_error == pytest.approx(_cluster_se(y, ids), rel=1e-12)
    assert est.n_clusters == 60
    assert est.n == y.size
    # design effect: clustered variance over the independent-claims variance (same n/(n−1) form)
    v0 = y.var(ddof=1) / y.size
    assert est.design_effect == pytest.approx(est.std_error**2 / v0, rel=1e-12)
    assert est.design_effect > 1.5


def test_design_proportion_interval_is_wilson_at_the_effective_size_korn_graubard():
    ids, y = _clustered(np.random.default_rng(4), 40)
    est = stats.design_proportion(y, ids)
    se = _cluster_se(y, ids)
    p = y.mean()
    z, t = norm.ppf(0.975), student_t.ppf(0.975, 40 - 1)
    n_star = p * (1 - p) / se**2 * (z / t) ** 2
    lo, hi = proportion_confint(p * n_star, n_star, alpha=0.05, method="wilson")
    assert (est.low, est.high) == pytest.approx((lo, hi), abs=1e-12)
    assert est.df == 39
    assert "design effect" in est.method
    assert "40 answers" in est.method


def test_design_sensitivity_specificity_equal_cluster_robust_means_on_the_gold_subsets():
    rng = np.random.default_rng(8)
    ids, gold = _clustered(rng, 80, mean=0.6)
    judge = np.where(gold > 0, rng.random(gold.size) < 0.85, rng.random(gold.size) < 0.3)
    out = stats.design_sensitivity_specificity(gold, judge.astype(float), ids)
    pos, neg = gold > 0, gold == 0
    se, sp = out["sensitivity"], out["specificity"]
    assert se.value == pytest.approx(judge[pos].mean())
    assert sp.value == pytest.approx(1 - judge[neg].mean())
    assert se.std_error == pytest.approx(_cluster_se(judge[pos].astype(float), ids[pos]), rel=1e-9)
    assert sp.std_error == pytest.approx(
        _cluster_se(1.0 - judge[neg].astype(float), ids[neg]), rel=1e-9
    )
    assert out["youden_j"] == pytest.approx(se.value + sp.value - 1)


def test_design_proportion_stratified_hand_derivation():
    # Two strata, answers nested in strata; N_h = 900 and 100 claims in the project.
    # Stratum A: answers [1,1,0], [1,1], [0,0,0,1]  -> p_A = 5/9
    # Stratum B: answers [0,0], [1,0], [0]          -> p_B = 1/5
    y = np.array([1, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0], dtype=float)
    ids = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5, 6])
    strata = np.array(["A"] * 9 + ["B"] * 5)
    est = stats.design_proportion(y, ids, strata, {"A": 900, "B": 100})
    assert est.value == pytest.approx(0.9 * 5 / 9 + 0.1 * 1 / 5)
    # V = Σ W_h² · G_h/(G_h−1) · Σ_g (y_g − p_h m_g)² / n_h²  (Cochran 1977 §5.3 + ratio, CR1)
    e_a = np.array([2 - 3 * 5 / 9, 2 - 2 * 5 / 9, 1 - 4 * 5 / 9])
    e_b = np.array([0 - 2 / 5, 1 - 2 / 5, 0 - 1 / 5])
    var = 0.81 * 1.5 * (e_a @ e_a) / 81 + 0.01 * 1.5 * (e_b @ e_b) / 25
    assert est.std_error == pytest.approx(math.sqrt(var), rel=1e-12)
    # the same from statsmodels, stratum by stratum
    va = _cluster_se(y[:9], ids[:9]) ** 2
    vb = _cluster_se(y[9:], ids[9:]) ** 2
    assert est.std_error**2 == pytest.approx(0.81 * va + 0.01 * vb, rel=1e-12)
    assert est.df == 6 - 2
    assert est.n_strata == 2
    assert "weighted over 2 strata" in est.method


def test_design_proportion_does_not_extrapolate_over_a_stratum_without_gold():
    y = np.array([1, 0, 1, 1, 0, 1], dtype=float)
    strata = ["A", "A", "A", "B", "B", "B"]
    sizes = {"A": 300, "B": 100, "C": 100}
    est = stats.design_proportion(y, np.arange(6) // 2, strata, sizes)
    assert est.unseen_share == pytest.approx(0.2)
    assert est.value == pytest.approx(0.75 * 2 / 3 + 0.25 * 2 / 3)
    assert "20% of the project (stratum C) has no audited claim" in est.method


def test_design_proportion_rejects_a_stratum_without_size_and_mismatched_lengths():
    with pytest.raises(ValueError, match="stratum 'B' has gold claims but no size"):
        stats.design_proportion([1, 0], [1, 2], ["A", "B"], {"A": 10})
    with pytest.raises(ValueError, match="stratum_sizes"):
        stats.design_proportion([1, 0], [1, 2], ["A", "B"])
    with pytest.raises(ValueError, match="answer_ids has 3 entries for 2 claims"):
        stats.design_proportion([1, 0], [1, 2, 3])


def test_two_phase_rate_recovers_the_true_rate_from_an_audit_stratified_by_verdict():
    # The issue's example: a project of 2000 claims, the judge accepted 1500 and rejected 500.
    # Truly supported: 1350 of the accepted (PPV 0.90), 130 of the rejected (0.26): 1480/2000 =
    # 0.74. Audit: 10% of accepted (150 claims, 135 supported), 60% of rejected (300 claims, 78
    # supported). Unweighted gold faithfulness: 213/450 = 0.47.
    gold = np.r_[np.ones(135), np.zeros(15), np.ones(78), np.zeros(222)]
    verdict = np.array(["SUPPORTED"] * 150 + ["NOT_IN_PILE"] * 300)
    naive = stats.design_proportion(gold, np.arange(450))
    assert naive.value == pytest.approx(213 / 450)
    est = stats.two_phase_rate(
        gold, verdict, {"SUPPORTED": 1500, "NOT_IN_PILE": 500}, np.arange(450)
    )
    assert est.value == pytest.approx(0.75 * 0.9 + 0.25 * 0.26)
    assert est.low < 0.74 < est.high
    # variance by hand: Σ W_h² p_h(1−p_h)/(n_h − 1) (one claim per answer, strata crossed by none)
    var = 0.75**2 * 0.9 * 0.1 / 149 + 0.25**2 * 0.26 * 0.74 / 299
    assert est.std_error == pytest.approx(math.sqrt(var), rel=1e-12)


def test_design_rogan_gladen_with_verdict_strata_corrects_the_oversampled_audit():
    # Same audit; the judge's pooled rate is 1500/2000 = 0.75. Unweighted se = 135/213 and
    # sp = 222/237 are the oversampled audit's, and the naive Rogan–Gladen lands far from 0.74.
    gold = np.r_[np.ones(135), np.zeros(15), np.ones(78), np.zeros(222)]
    judge = np.r_[np.ones(150), np.zeros(300)]
    judge_all = np.r_[np.ones(1500), np.zeros(500)]
    naive = stats.rogan_gladen(0.75, 135 / 213, 222 / 237)
    assert abs(naive - 0.74) > 0.2
    strata = np.where(judge > 0, "S", "R")
    est = stats.design_rogan_gladen(
        judge_all, np.arange(2000), gold, judge, np.arange(450), strata, {"S": 1500, "R": 500}
    )
    # weighted: TP = 1500·0.9 = 1350, P = 1350 + 500·0.26 = 1480 -> se = 1350/1480;
    # TN = 500·0.74 = 370, Neg = 370 + 150 = 520 -> sp = 370/520; then (p + sp − 1)/J
    se, sp = 1350 / 1480, 370 / 520
    assert est.value == pytest.approx((0.75 + sp - 1) / (se + sp - 1))
    assert est.value == pytest.approx(0.74)
    assert est.low < 0.74 < est.high


# ------------------------------------------------------------------ exact reduction to today


def _from_counts(k, n):
    return np.r_[np.ones(k), np.zeros(n - k)]


@pytest.mark.parametrize(("k", "n", "wilson", "exact"), NEWCOMBE_1998)
def test_one_claim_per_answer_is_exactly_todays_wilson_on_newcombe_vectors(k, n, wilson, exact):
    y = _from_counts(k, n)
    today = stats.wilson_interval(k, n)
    for est in (
        stats.design_proportion(y),
        stats.design_proportion(y, np.arange(n) + 7),
        stats.design_proportion(y, np.arange(n), ["one"] * n, {"one": 10_000}),
    ):
        assert est.ci == today
        assert est.value == k / n
        assert est.design_effect == 1.0


def test_one_claim_per_answer_is_exactly_todays_sensitivity_specificity():
    rng = np.random.default_rng(12)
    gold = rng.choice(["SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"], 300, p=[0.6, 0.2, 0.2])
    judge = np.where(rng.random(300) < 0.8, gold, "SUPPORTED")
    today = stats.sensitivity_specificity(gold, judge)
    out = stats.design_sensitivity_specificity(gold, judge, np.arange(300))
    for name in ("sensitivity", "specificity"):
        assert out[name].value == today[name]["value"]
        assert out[name].ci == today[name]["ci"]
    assert out["youden_j"] == today["youden_j"]


@pytest.mark.parametrize(
    "counts",
    [
        (700, 1000, 85, 100, 70, 100),
        (5, 241, 48, 50, 95, 100),
        (60, 150, 40, 60, 70, 90),
        (870, 1000, 57, 60, 20, 90),
    ],
)
def test_one_claim_per_answer_is_exactly_todays_rogan_gladen_on_published_vectors(counts):
    pos, n, ks, ms, kp, mp = counts
    judge_all = _from_counts(pos, n)
    gold = np.r_[np.ones(ms), np.zeros(mp)]
    judge = np.r_[_from_counts(ks, ms), 1 - _from_counts(kp, mp)]
    est = stats.design_rogan_gladen(judge_all, np.arange(n), gold, judge, np.arange(ms + mp))
    assert est.ci == stats.rogan_gladen_interval(*counts, method="lang-reiczigel")
    assert est.value == stats.rogan_gladen(pos / n, ks / ms, kp / mp)


@pytest.mark.parametrize("soft", [False, True])
def test_one_claim_per_answer_is_exactly_todays_ppi(soft):
    y, fg, fr = _simulate(np.random.default_rng(5), 300, 4000, 0.55, 0.9, 0.7, soft=soft)
    today = stats.ppi_mean_interval(y, fg, fr)
    est = stats.design_ppi_mean(y, fg, fr, np.arange(300), np.arange(300, 4300))
    assert (est.value, est.ci) == (today["value"], today["ci"])
    one = stats.design_ppi_mean(y, fg, fr, None, None, ["x"] * 300, ["x"] * 4000)
    assert (one.value, one.ci) == (today["value"], today["ci"])


def test_design_ppi_clustered_rectifier_matches_statsmodels():
    rng = np.random.default_rng(21)
    ids, y = _clustered(rng, 50)
    f = np.where(y > 0, rng.random(y.size) < 0.85, rng.random(y.size) < 0.3).astype(float)
    ids_r, y_r = _clustered(rng, 400)
    f_r = np.where(y_r > 0, rng.random(y_r.size) < 0.85, rng.random(y_r.size) < 0.3)
    f_r = f_r.astype(float)
    est = stats.design_ppi_mean(y, f, f_r, ids, ids_r + 1000)
    lam = stats.ppi_mean_interval(y, f, f_r)["lambda"]  # λ as today's function tunes it
    assert est.extra["lambda"][0] == pytest.approx(lam, abs=1e-15)
    assert est.value == pytest.approx(lam * f_r.mean() + np.mean(y - lam * f))
    var = _cluster_se(y - lam * f, ids) ** 2 + lam**2 * _cluster_se(f_r, ids_r) ** 2
    assert est.std_error == pytest.approx(math.sqrt(var), rel=1e-9)
    half = student_t.ppf(0.975, 49) * math.sqrt(var)
    assert est.ci == pytest.approx((est.value - half, est.value + half), abs=1e-12)


# ------------------------------------------------------------------ bootstrap


def test_cluster_bootstrap_agrees_with_the_analytic_variance_and_is_seeded():
    ids, y = _clustered(np.random.default_rng(30), 150)
    boot = stats.cluster_bootstrap(y, None, ids, n_boot=4000, seed=1)
    again = stats.cluster_bootstrap(y, None, ids, n_boot=4000, seed=1)
    assert boot == again
    assert boot.std_error == pytest.approx(_cluster_se(y, ids), rel=0.08)
    assert boot.low < y.mean() < boot.high
    assert boot.design_effect > 1.5


def test_cluster_bootstrap_million_claims_in_200k_answers():
    # The vectorised bootstrap at the report's scale (about 3 s on an idle core; speed is the
    # benchmark's to measure, never a test's): it agrees with the analytic clustered error.
    rng = np.random.default_rng(31)
    ids = np.sort(np.r_[np.arange(200_000), rng.integers(0, 200_000, 800_000)])
    y = (rng.random(ids.size) < 0.7).astype(float)
    boot = stats.cluster_bootstrap(y, None, ids, n_boot=1000, seed=0)
    analytic = stats.design_proportion(y, ids)
    assert boot.n_clusters == 200_000
    assert boot.std_error == pytest.approx(analytic.std_error, rel=0.1)


def test_the_issues_60_by_6_project_analytic_interval_matches_the_answer_bootstrap():
    # 60 answers × 6 claims with strongly correlated claims: today's Wilson interval is about
    # half as wide as an answer-level bootstrap of the same labels; the design-based one is not.
    rng = np.random.default_rng(60)
    ids = np.repeat(np.arange(60), 6)
    p = rng.beta(0.7 * 1.0, 0.3 * 1.0, 60)  # ρ = 1/(a + b + 1) = 0.5
    y = (rng.random(ids.size) < p[ids]).astype(float)
    today = stats.wilson_interval(int(y.sum()), y.size)
    design = stats.design_proportion(y, ids)
    boot = stats.cluster_bootstrap(y, None, ids, n_boot=4000, seed=2)
    w_today, w_design, w_boot = today[1] - today[0], design.high - design.low, boot.high - boot.low
    assert w_today < 0.7 * w_boot
    assert w_design == pytest.approx(w_boot, rel=0.15)
    assert design.design_effect > 2.0


def test_design_proportion_rejects_a_stratum_smaller_than_its_gold():
    with pytest.raises(ValueError, match="stratum 'A' has 3 gold claims but stratum_sizes says"):
        stats.design_proportion([1, 0, 1, 1], [1, 1, 2, 3], ["A", "A", "A", "B"], {"A": 2, "B": 9})


def test_design_ppi_stratified_is_the_weighted_sum_of_per_stratum_ppi_fisch_et_al():
    # Two strata (N_A = 40 + 600, N_B = 60 + 300 claims). Per stratum: λ_h and θ̂_h as today's
    # single-stratum PPI++; θ̂ = Σ W_h θ̂_h; V = Σ W_h² (V_cl(rectifier) + λ_h² V_cl(mean f_rest)).
    rng = np.random.default_rng(40)
    parts = []
    for n_g, n_r, offset in ((40, 600, 0), (60, 300, 10_000)):
        ids, y = _clustered(rng, n_g // 4, lo=4, hi=4)
        f = np.where(y > 0, rng.random(y.size) < 0.9, rng.random(y.size) < 0.4).astype(float)
        ids_r, y_r = _clustered(rng, n_r // 4, lo=4, hi=4)
        f_r = np.where(y_r > 0, rng.random(y_r.size) < 0.9, rng.random(y_r.size) < 0.4)
        parts.append((y, f, ids + offset, f_r.astype(float), ids_r + offset + 5000))
    cat = [np.concatenate([p[i] for p in parts]) for i in range(5)]
    s_g = np.r_[["A"] * 40, ["B"] * 60]
    s_r = np.r_[["A"] * 600, ["B"] * 300]
    est = stats.design_ppi_mean(cat[0], cat[1], cat[3], cat[2], cat[4], s_g, s_r)
    weights = (640 / 1000, 360 / 1000)
    theta, var = 0.0, 0.0
    for w, (y, f, ids, f_r, ids_r) in zip(weights, parts, strict=True):
        today = stats.ppi_mean_interval(y, f, f_r)
        lam = today["lambda"]
        theta += w * (lam * f_r.mean() + np.mean(y - lam * f))
        var += w**2 * (_cluster_se(y - lam * f, ids) ** 2 + lam**2 * _cluster_se(f_r, ids_r) ** 2)
    assert est.value == pytest.approx(theta, abs=1e-12)
    assert est.std_error == pytest.approx(math.sqrt(var), rel=1e-9)
    assert est.df == 25 - 2  # 10 + 15 audited answers, 2 strata
    assert est.n_strata == 2


def test_cluster_bootstrap_resamples_every_answer_including_the_first():
    # Two answers of one claim each, the first faithful, the second not. Resampling 2 answers
    # with replacement gives the ratio 0 (both draws the second answer, probability 1/4), 0.5
    # (1/2) or 1 (1/4): the 2.5% and 97.5% percentiles are 0 and 1, and the bootstrap variance is
    # that of a mean of two Bernoulli(1/2) draws, 1/4 / 2 = 1/8. A resampler that skipped the first
    # answer would draw only 0.
    boot = stats.cluster_bootstrap([1, 0], None, [10, 20], n_boot=4000, seed=3)
    assert boot.value == 0.5
    assert (boot.low, boot.high) == (0.0, 1.0)
    assert boot.std_error == pytest.approx(math.sqrt(1 / 8), rel=0.05)
    assert boot.n_clusters == 2


def test_cluster_bootstrap_names_the_inputs_whose_lengths_differ():
    with pytest.raises(
        ValueError, match=r"^numerator, denominator and answer_ids differ in length$"
    ):
        stats.cluster_bootstrap([1, 0, 1], None, [1, 2])


def test_design_rogan_gladen_without_gold_of_both_kinds_says_so():
    # Every audited claim is faithful: no specificity, so no correction; the reason is shown.
    est = stats.design_rogan_gladen([1, 0, 1, 1], None, [1, 1], [1, 0])
    assert np.isnan([est.value, est.low, est.high]).all()
    assert est.method == "Rogan–Gladen needs judged claims and gold of both kinds"


def test_cluster_bootstrap_gives_the_same_figures_for_float32_labels():
    # The same 0/1 labels as float32 or float64 are the same numbers: every figure must be
    # bit-identical (a float32 array kept as float32 loses the design effect's last digits).
    rng = np.random.default_rng(5)
    ids = np.sort(rng.integers(0, 40, 300))
    y = (rng.random(300) < 0.37).astype(np.float64)
    wide = stats.cluster_bootstrap(y, None, ids, n_boot=500, seed=1)
    narrow = stats.cluster_bootstrap(y.astype(np.float32), None, ids, n_boot=500, seed=1)
    assert narrow == wide


def _clustered_audit(seed=2113, answers=150):
    """Gold and judge verdicts on 1–4 claims per answer, the judge's errors shared within an
    answer (an answer-level effect), so clustering changes se's and sp's variance."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=answers)
    ids = np.repeat(np.arange(answers), sizes)
    gold = (rng.random(ids.size) < 0.55).astype(int)
    slip = rng.normal(0.0, 1.2, size=answers)[ids]
    p_right = 1.0 / (1.0 + np.exp(-(np.where(gold == 1, 1.2, 2.2) + slip)))
    judge = np.where(rng.random(ids.size) < p_right, gold, 1 - gold)
    return gold, judge, ids


def _rg_from_counts(p_obs, tp, pos, tn, neg):
    se, sp = tp / pos, tn / neg
    return (p_obs + sp - 1.0) / (se + sp - 1.0)


def test_design_rogan_gladen_clustered_std_error_is_the_cr1_delta_method_and_a_bootstrap_agrees():
    """The clustered Rogan–Gladen `std_error` (the judge a census, so p_obs has no error):
    by hand, the delta method over CR1 variances of the two ratios and their covariance,
    V(π̂) = [π²V(se) + (1−π)²V(sp) − 2π(1−π)Cov(se, sp)] / J², with V, Cov = G/(G−1)·Σ_g z_g z'_g
    of the linearised ratios z_g = (a_g − r·b_g)/B; and a cluster bootstrap of answers (2,000
    resamples) agreeing within 10%. Kills `point**3` for `point**2` in the variance (MUTATION.md),
    which leaves the interval alone."""
    gold, judge, ids = _clustered_audit()
    p_obs = 0.47
    judge_all = np.r_[np.ones(470, int), np.zeros(530, int)]
    est = stats.design_rogan_gladen(
        judge_all, np.arange(1000), gold, judge, ids, judge_is_census=True
    )
    G = ids.max() + 1
    a_se = np.bincount(ids, gold * judge, G)
    b_se = np.bincount(ids, gold, G)
    a_sp = np.bincount(ids, (1 - gold) * (1 - judge), G)
    b_sp = np.bincount(ids, 1 - gold, G)
    se, sp = a_se.sum() / b_se.sum(), a_sp.sum() / b_sp.sum()
    z_se = (a_se - se * b_se) / b_se.sum()
    z_sp = (a_sp - sp * b_sp) / b_sp.sum()
    # CR1's G/(G − 1): G the answers holding a claim of the ratio's domain (gold-supported for
    # se, gold-unsupported for sp), every answer for their covariance
    g_se, g_sp = np.count_nonzero(b_se), np.count_nonzero(b_sp)
    v_se = g_se / (g_se - 1) * (z_se @ z_se)
    v_sp = g_sp / (g_sp - 1) * (z_sp @ z_sp)
    cov = G / (G - 1) * (z_se @ z_sp)
    j = se + sp - 1.0
    point = (p_obs + sp - 1.0) / j
    assert est.value == pytest.approx(point, rel=1e-12)
    var = (point**2 * v_se + (1 - point) ** 2 * v_sp - 2 * point * (1 - point) * cov) / j**2
    assert est.std_error == pytest.approx(math.sqrt(var), rel=1e-9)
    # an answer-level bootstrap of the audit, computed here
    rng = np.random.default_rng(7)
    draws = rng.integers(0, G, size=(2000, G))
    counts = np.stack([np.bincount(row, minlength=G) for row in draws])
    boot = _rg_from_counts(p_obs, counts @ a_se, counts @ b_se, counts @ a_sp, counts @ b_sp)
    assert est.std_error == pytest.approx(boot.std(ddof=1), rel=0.10)
    # the design effect: against the same figure were every claim its own answer (CR1 with
    # G = the domain's claims, no covariance), the ratio of the two delta-method variances
    n_s, n_u = gold.sum(), (1 - gold).sum()
    y_se = (gold * judge - se * gold) / n_s
    y_sp = ((1 - gold) * (1 - judge) - sp * (1 - gold)) / n_u
    v0_se, v0_sp = n_s / (n_s - 1) * (y_se @ y_se), n_u / (n_u - 1) * (y_sp @ y_sp)
    var0 = (point**2 * v0_se + (1 - point) ** 2 * v0_sp) / j**2
    assert est.design_effect == pytest.approx(var / var0, rel=1e-6)


def test_a_design_effect_below_one_is_said_and_never_narrows_the_interval():
    """Answers that each hold one supported and one unsupported claim (negative intra-answer
    correlation) measure V < V₀: the method says the design effect is counted as 1 and the
    interval is no narrower than the independent-claims Wilson interval of the same claims."""
    y = np.array([1, 0] * 7 + [1, 1, 0, 0], dtype=float)
    ids = np.r_[np.repeat(np.arange(7), 2), [7, 7, 8, 8]]
    est = stats.design_proportion(y, ids)
    assert est.design_effect < 1.0
    assert f"design effect {est.design_effect:.2f}, counted as 1" in est.method
    lo, hi = stats.wilson_interval(int(y.sum()), y.size)
    assert est.high - est.low >= hi - lo
    # A positive correlation keeps the plain sentence.
    y2 = np.array([1, 1] * 5 + [0, 0] * 4, dtype=float)
    est2 = stats.design_proportion(y2, np.repeat(np.arange(9), 2))
    assert est2.design_effect > 1.0
    assert "counted as 1" not in est2.method
