"""Design-based estimates: hand derivations, statsmodels cross-checks, and exact reduction to
today's independent-claims functions when every answer holds one claim and there is one stratum."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.stats import norm
from scipy.stats import t as student_t
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from metrics import stats
from metrics.stats import design as dz
from tests.metrics import independent as ref
from tests.metrics.independent import lang_reiczigel

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
    assert est.se == pytest.approx(_cluster_se(y, ids), rel=1e-12)
    assert est.n_clusters == 60
    assert est.n == y.size
    # design effect: clustered variance over the independent-claims variance (same n/(n−1) form)
    v0 = y.var(ddof=1) / y.size
    assert est.design_effect == pytest.approx(est.se**2 / v0, rel=1e-12)
    assert est.design_effect > 1.5


def test_design_proportion_interval_is_wilson_at_the_effective_size_korn_graubard():
    ids, y = _clustered(np.random.default_rng(4), 40)
    est = stats.design_proportion(y, ids)
    se = _cluster_se(y, ids)
    p = y.mean()
    z, t = norm.ppf(0.975), student_t.ppf(0.975, 40 - 1)
    n_star = p * (1 - p) / se**2 * (z / t) ** 2
    lo, hi = proportion_confint(p * n_star, n_star, alpha=0.05, method="wilson")
    assert (est.lower, est.upper) == pytest.approx((lo, hi), abs=1e-12)
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
    assert se.se == pytest.approx(_cluster_se(judge[pos].astype(float), ids[pos]), rel=1e-9)
    assert sp.se == pytest.approx(_cluster_se(1.0 - judge[neg].astype(float), ids[neg]), rel=1e-9)
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
    assert est.se == pytest.approx(math.sqrt(var), rel=1e-12)
    # the same from statsmodels, stratum by stratum
    va = _cluster_se(y[:9], ids[:9]) ** 2
    vb = _cluster_se(y[9:], ids[9:]) ** 2
    assert est.se**2 == pytest.approx(0.81 * va + 0.01 * vb, rel=1e-12)
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
    assert est.lower < 0.74 < est.upper
    # variance by hand: Σ W_h² p_h(1−p_h)/(n_h − 1) (one claim per answer, strata crossed by none)
    var = 0.75**2 * 0.9 * 0.1 / 149 + 0.25**2 * 0.26 * 0.74 / 299
    assert est.se == pytest.approx(math.sqrt(var), rel=1e-12)


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
    assert est.lower < 0.74 < est.upper


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
    assert est.se == pytest.approx(math.sqrt(var), rel=1e-9)
    half = student_t.ppf(0.975, 49) * math.sqrt(var)
    assert est.ci == pytest.approx((est.value - half, est.value + half), abs=1e-12)


# ------------------------------------------------------------------ bootstrap


def test_cluster_bootstrap_agrees_with_the_analytic_variance_and_is_seeded():
    ids, y = _clustered(np.random.default_rng(30), 150)
    boot = stats.cluster_bootstrap(y, None, ids, n_boot=4000, seed=1)
    again = stats.cluster_bootstrap(y, None, ids, n_boot=4000, seed=1)
    assert boot == again
    assert boot.se == pytest.approx(_cluster_se(y, ids), rel=0.08)
    assert boot.lower < y.mean() < boot.upper
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
    assert boot.se == pytest.approx(analytic.se, rel=0.1)


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
    w_today, w_design, w_boot = (
        today[1] - today[0],
        design.upper - design.lower,
        boot.upper - boot.lower,
    )
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
    assert est.se == pytest.approx(math.sqrt(var), rel=1e-9)
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
    assert (boot.lower, boot.upper) == (0.0, 1.0)
    assert boot.se == pytest.approx(math.sqrt(1 / 8), rel=0.05)
    assert boot.n_clusters == 2


def test_cluster_bootstrap_names_the_inputs_whose_lengths_differ():
    with pytest.raises(
        ValueError, match=r"^numerator, denominator and answer_ids differ in length$"
    ):
        stats.cluster_bootstrap([1, 0, 1], None, [1, 2])


def test_design_rogan_gladen_without_gold_of_both_kinds_says_so():
    # Every audited claim is faithful: no specificity, so no correction; the reason is shown.
    est = stats.design_rogan_gladen([1, 0, 1, 1], None, [1, 1], [1, 0])
    assert np.isnan([est.value, est.lower, est.upper]).all()
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
    assert est.se == pytest.approx(math.sqrt(var), rel=1e-9)
    # an answer-level bootstrap of the audit, computed here
    rng = np.random.default_rng(7)
    draws = rng.integers(0, G, size=(2000, G))
    counts = np.stack([np.bincount(row, minlength=G) for row in draws])
    boot = _rg_from_counts(p_obs, counts @ a_se, counts @ b_se, counts @ a_sp, counts @ b_sp)
    assert est.se == pytest.approx(boot.std(ddof=1), rel=0.10)
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
    assert est.upper - est.lower >= hi - lo
    # A positive correlation keeps the plain sentence.
    y2 = np.array([1, 1] * 5 + [0, 0] * 4, dtype=float)
    est2 = stats.design_proportion(y2, np.repeat(np.arange(9), 2))
    assert est2.design_effect > 1.0
    assert "counted as 1" not in est2.method


# --- metrics.stats.design.cluster_bootstrap: the default number of resamples --------------


def test_cluster_bootstrap_draws_2000_resamples_by_default():
    from metrics.stats.design import cluster_bootstrap

    y = [1, 0, 1, 1, 0, 1, 0]
    ids = [0, 0, 1, 1, 2, 2, 2]
    default = cluster_bootstrap(y, answer_ids=ids)
    assert default.method.startswith("Answer-level bootstrap, 2000 resamples of 3 answers,")
    explicit = cluster_bootstrap(y, answer_ids=ids, n_boot=2000)
    assert (default.lower, default.upper, default.se) == (
        explicit.lower,
        explicit.upper,
        explicit.se,
    )
    assert default.value == pytest.approx(4 / 7)


# --- metrics.stats.design.design_ppi_mean: strata weights renormalised over strata with gold


def test_stratified_ppi_weights_the_strata_with_gold_by_their_claims_among_those():
    from metrics.stats.design import design_ppi_mean

    rng = np.random.default_rng(5)
    sizes = {"A": (30, 60), "B": (20, 40), "C": (0, 50)}  # C has unaudited claims only
    truth = {"A": 0.8, "B": 0.5, "C": 0.3}
    y, fg, fr, s_g, s_r = [], [], [], [], []
    for lab, (n_gold, n_rest) in sizes.items():
        yy = (rng.random(n_gold + n_rest) < truth[lab]).astype(float)
        said = np.where(rng.random(yy.size) < 0.85, yy, 1.0 - yy)
        y += list(yy[:n_gold])
        fg += list(said[:n_gold])
        fr += list(said[n_gold:])
        s_g += [lab] * n_gold
        s_r += [lab] * n_rest
    y, fg, fr, s_g, s_r = (np.array(v) for v in (y, fg, fr, s_g, s_r))
    out = design_ppi_mean(y, fg, fr, strata_gold=s_g, strata_rest=s_r)
    # By hand: W_A = 90/150, W_B = 60/150 (C, without gold, is left out and its share
    # reported); θ̂_h is ppi_py's PPI++ point estimate within stratum h.
    theta = {lab: ref.ppi(y[s_g == lab], fg[s_g == lab], fr[s_r == lab])[0] for lab in "AB"}
    assert out.value == pytest.approx(0.6 * theta["A"] + 0.4 * theta["B"], abs=1e-12)
    assert out.unseen_share == pytest.approx(50 / 200)
    assert out.n_strata == 2
    # The method sentence: the base, then the strata, then the uncovered share, nothing more.
    assert out.method.startswith(
        "PPI++ (power-tuned per stratum), rectifier clustered by answer (50 audited answers, "
    )
    assert out.method.endswith(
        "t with 48 df; weighted over 2 strata by their share of the project (N_h/N); covers only "
        "the strata with gold: 25% of the project (stratum C) has no audited claim and is not "
        "estimated."
    )


# --- metrics.stats.design: the clustered Rogan–Gladen interval against a cluster bootstrap -----


def test_design_rogan_gladen_clustered_interval_agrees_with_a_cluster_bootstrap():
    """design `design_rogan_gladen` `_208` (the floor of the adjusted variance 1 + 1e-12 for
    1e-12: every clustered interval [0, 1]). The clustered audit of test_design.py (the judge a
    census): the interval's ends within 0.02 of the 2.5% and 97.5% quantiles of a 2,000-draw
    bootstrap of answers computed here (0.476, 0.655; the interval 0.472–0.646)."""
    import numpy as np

    from metrics import stats
    from tests.metrics.stats.test_design import _clustered_audit, _rg_from_counts

    gold, judge, ids = _clustered_audit()
    judge_all = np.r_[np.ones(470, int), np.zeros(530, int)]
    est = stats.design_rogan_gladen(
        judge_all, np.arange(1000), gold, judge, ids, judge_is_census=True
    )
    g = ids.max() + 1
    a_se, b_se = np.bincount(ids, gold * judge, g), np.bincount(ids, gold, g)
    a_sp, b_sp = np.bincount(ids, (1 - gold) * (1 - judge), g), np.bincount(ids, 1 - gold, g)
    draws = np.random.default_rng(7).integers(0, g, size=(2000, g))
    counts = np.stack([np.bincount(row, minlength=g) for row in draws])
    boot = _rg_from_counts(0.47, counts @ a_se, counts @ b_se, counts @ a_sp, counts @ b_sp)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    assert est.ci[0] == pytest.approx(lo, abs=0.02)
    assert est.ci[1] == pytest.approx(hi, abs=0.02)


# --- design: the cluster bootstrap drawn in small blocks ----------------------------------------


def test_cluster_bootstrap_in_blocks_smaller_than_the_resamples_is_the_plain_bootstrap():
    """design `cluster_bootstrap` `_102` (`n_boot + done` for `n_boot − done`: the last block
    overran the draws when `chunk` holds fewer than n_boot resamples). 10 answers of 3 claims,
    chunk = 30 index cells (3 resamples a block), 10 resamples: the percentile interval equals
    one computed here from the same generator's 10 × 10 draws of answers (numpy's stream does
    not depend on the block size)."""
    import numpy as np

    from metrics.stats.design import cluster_bootstrap

    y = np.array(
        [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1.0]
    )
    ids = np.repeat(np.arange(10), 3)
    est = cluster_bootstrap(y, answer_ids=ids, n_boot=10, seed=3, chunk=30)
    idx = np.random.default_rng(3).integers(0, 10, size=(10, 10))
    per_answer = np.bincount(ids, y, 10)
    draws = per_answer[idx].sum(axis=1) / 30
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert est.value == pytest.approx(y.mean())
    assert est.ci == (pytest.approx(lo), pytest.approx(hi))


A = pytest.approx


# --------------------------------------------------------------------------------------------
# independent references


def ref_cov(x, strata, clusters, sizes, active=None):
    """Stratified CR1 linearised covariance of the weighted column means, by loops.

    Returns (mu, cov, df, weights, seen). Strata: the labels of `sizes` with gold; weights
    N_h / Σ_seen N_h. A claim's influence W_h (x_i − μ_h)/n_h is summed per answer. Nested
    (each answer in one stratum): Σ_h G_h/(G_h − 1) Σ_g z_g z_gᵀ, a stratum with one answer
    falling back to W_h² Σ dev devᵀ/(n_h (n_h − 1)); otherwise G/(G − 1) Σ_g z_g z_gᵀ. G and G_h
    count answers holding an `active` claim.
    """
    x = np.asarray(x, float)
    n, k = x.shape
    strata = list(strata)
    clusters = list(clusters)
    act = [True] * n if active is None else [bool(a) for a in active]
    seen = [s for s in sizes if any(st == s for st in strata)]
    tot = sum(sizes[s] for s in seen)
    w = {s: sizes[s] / tot for s in seen}
    rows = {s: [i for i in range(n) if strata[i] == s] for s in seen}
    mu_h = {s: x[rows[s]].mean(axis=0) for s in seen}
    mu = sum(w[s] * mu_h[s] for s in seen)
    z = {}
    for i in range(n):
        s = strata[i]
        if s not in w:
            continue
        z.setdefault(clusters[i], np.zeros(k))
        z[clusters[i]] = z[clusters[i]] + w[s] * (x[i] - mu_h[s]) / len(rows[s])
    home = {}
    for i in range(n):
        if strata[i] in w:
            home.setdefault(clusters[i], set()).add(strata[i])
    nested = all(len(v) == 1 for v in home.values())
    live = {clusters[i] for i in range(n) if strata[i] in w and act[i]}
    cov = np.zeros((k, k))
    if nested:
        n_live = 0
        for s in seen:
            gs = [g for g in home if s in home[g]]
            g_live = sum(1 for g in gs if g in live)
            n_live += g_live > 0
            if g_live >= 2:
                for g in gs:
                    cov += g_live / (g_live - 1) * np.outer(z[g], z[g])
            elif g_live == 1:
                r = [i for i in rows[s] if act[i]]
                dev = x[r] - mu_h[s]
                nh = len(rows[s])
                cov += w[s] ** 2 * (dev.T @ dev) / (nh * max(nh - 1, 1))
        df = max(len(live) - n_live, 1)
    else:
        g = len(live)
        for v in z.values():
            cov += g / max(g - 1, 1) * np.outer(v, v)
        df = max(g - 1, 1)
    return mu, cov, float(df), w, seen


def ref_ratio(num, den, strata, clusters, sizes, conf=0.95):
    """θ = μ_num/μ_den, its variance, V₀, df, and the Wilson ends at the effective size."""
    x = np.column_stack([num, den]).astype(float)
    active = np.asarray(den) > 0
    mu, cov, df, _, _ = ref_cov(x, strata, clusters, sizes, active)
    n = len(num)
    _, cov0, _, _, _ = ref_cov(x, strata, list(range(n)), sizes, active)
    theta = mu[0] / mu[1]
    grad = np.array([1 / mu[1], -theta / mu[1]])
    var, var0 = grad @ cov @ grad, grad @ cov0 @ grad
    g_dom = len({c for c, a, s in zip(clusters, active, strata, strict=True) if a and s in sizes})
    z = norm.ppf(0.5 + conf / 2)
    t = student_t.ppf(0.5 + conf / 2, df)
    n_eff = theta * (1 - theta) / max(var, var0) if 0 < theta < 1 and var > 0 else float(g_dom)
    m = n_eff * (z / t) ** 2
    centre = (theta + z**2 / (2 * m)) / (1 + z**2 / m)
    half = z * math.sqrt(theta * (1 - theta) / m + z**2 / (4 * m**2)) / (1 + z**2 / m)
    lo = 0.0 if theta <= 0 else min(max(centre - half, 0.0), theta)
    hi = 1.0 if theta >= 1 else max(min(centre + half, 1.0), theta)
    return {
        "theta": theta,
        "var": var,
        "var0": var0,
        "df": df,
        "lo": lo,
        "hi": hi,
        "n_eff": n_eff,
        "g": g_dom,
        "deff": var / var0 if var0 > 0 else math.nan,
    }


def deff_words(deff: float) -> str:
    if deff < 1.0:
        return f"design effect {deff:.2f}, counted as 1: never narrower than independent claims"
    return f"design effect {deff:.2f}"


def as_dict_eq(got: dict, want: dict):
    assert set(got) == set(want)
    for key, value in want.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got[key]), key
        elif isinstance(value, (float, tuple)):
            assert got[key] == A(value, rel=1e-9, abs=1e-15), key
        else:
            assert got[key] == value, key


# --------------------------------------------------------------------------------------------
# design_proportion


def test_proportion_simple_whole_dict_confidence_90():
    y = [1, 0, 1, 1, 0]
    lo, hi = proportion_confint(3, 5, alpha=0.1, method="wilson")
    got = dz.design_proportion(y, confidence=0.9).as_dict()
    as_dict_eq(
        got,
        {
            "value": 0.6,
            "low": lo,
            "high": hi,
            "method": "Wilson interval, one claim per answer.",
            "design_effect": 1.0,
            "n_clusters": 5,
            "n": 5,
            "std_error": math.sqrt(0.6 * 0.4 / 5),
            "df": math.inf,
            "n_strata": 1,
            "unseen_share": 0.0,
            "extra": {"independent": True},
            "ci": (lo, hi),
        },
    )


def test_proportion_clustered_one_stratum_matches_statsmodels_cluster_ols():
    y = np.array([1, 1, 0, 1, 0, 0, 1], float)
    ids = ["a", "a", "b", "c", "c", "d", "e"]
    codes = np.array([0, 0, 1, 2, 2, 3, 4])
    fit = sm.OLS(y, np.ones((7, 1))).fit(cov_type="cluster", cov_kwds={"groups": codes})
    var = float(fit.bse[0] ** 2)
    theta = 4 / 7
    var0 = 7 / 6 * float(np.sum((y - theta) ** 2)) / 49
    ref = ref_ratio(y, np.ones(7), [None] * 7, ids, {None: 7.0}, conf=0.9)
    assert ref["var"] == A(var, rel=1e-12)
    assert ref["var0"] == A(var0, rel=1e-12)
    assert ref["df"] == 4.0
    got = dz.design_proportion(y, ids, confidence=0.9)
    deff = var / var0
    as_dict_eq(
        got.as_dict(),
        {
            "value": theta,
            "low": ref["lo"],
            "high": ref["hi"],
            "method": (
                f"Wilson interval at the effective sample size ({ref['n_eff']:.0f} of 7 claims), "
                f"cluster-robust by answer (5 answers, {deff_words(deff)}), t with 4 df."
            ),
            "design_effect": deff,
            "n_clusters": 5,
            "n": 7,
            "std_error": math.sqrt(var),
            "df": 4.0,
            "n_strata": 1,
            "unseen_share": 0.0,
            "extra": {"effective_n": A(ref["n_eff"], rel=1e-9), "unseen_strata": []},
            "ci": (ref["lo"], ref["hi"]),
        },
    )


def test_proportion_stratified_middle_stratum_unseen_and_lonely_stratum():
    # A: one answer of two claims (lonely: the independent fallback); B: no gold (middle);
    # C: three answers; D: size 0 (not "unseen": nothing there).
    y = [1, 0, 1, 1, 0, 1, 0, 0]
    st = ["A", "A", "C", "C", "C", "C", "C", "C"]
    ids = ["a1", "a1", "c1", "c1", "c2", "c3", "c3", "c3"]
    sizes = {"A": 10, "B": 5, "C": 20, "D": 0}
    ref = ref_ratio(y, np.ones(8), st, ids, sizes)
    # by hand: W_A = 1/3, W_C = 2/3; θ = 1/3·1/2 + 2/3·1/2
    assert ref["theta"] == A(0.5)
    assert ref["df"] == 2.0  # 4 answers − 2 seen strata
    got = dz.design_proportion(y, ids, st, sizes)
    assert got.as_dict() == {
        "value": A(0.5),
        "low": A(ref["lo"], rel=1e-9),
        "high": A(ref["hi"], rel=1e-9),
        "method": (
            f"Wilson interval at the effective sample size ({ref['n_eff']:.0f} of 8 claims), "
            f"cluster-robust by answer (4 answers, {deff_words(ref['deff'])}), t with 2 df; "
            "weighted over 2 strata by their share of the project (N_h/N); covers only the "
            "strata with gold: 14% of the project (stratum B) has no audited claim and is not "
            "estimated."
        ),
        "design_effect": A(ref["deff"], rel=1e-9),
        "n_clusters": 4,
        "n": 8,
        "std_error": A(math.sqrt(ref["var"]), rel=1e-9),
        "df": 2.0,
        "n_strata": 2,
        "unseen_share": A(5 / 35),
        "extra": {"effective_n": A(ref["n_eff"], rel=1e-9), "unseen_strata": ["B"]},
        "ci": (A(ref["lo"], rel=1e-9), A(ref["hi"], rel=1e-9)),
    }


def test_proportion_answers_spanning_strata_not_nested():
    y = [1, 0, 0, 1, 1, 0, 1]
    st = ["A", "B", "A", "B", "A", "B", "B"]
    ids = [1, 1, 2, 2, 3, 4, 4]
    sizes = {"A": 30, "B": 10}
    ref = ref_ratio(y, np.ones(7), st, ids, sizes, conf=0.9)
    assert ref["df"] == 3.0
    got = dz.design_proportion(y, ids, st, sizes, confidence=0.9)
    assert got.value == A(ref["theta"], rel=1e-12)
    assert (got.lower, got.upper) == (A(ref["lo"], rel=1e-9), A(ref["hi"], rel=1e-9))
    assert got.se == A(math.sqrt(ref["var"]), rel=1e-9)
    assert got.design_effect == A(ref["deff"], rel=1e-9)
    assert got.df == 3.0
    assert got.extra["effective_n"] == A(ref["n_eff"], rel=1e-9)


def test_proportion_all_ones_clustered_clips_to_one_with_n_eff_g():
    y = [1, 1, 1, 1]
    ids = ["a", "a", "b", "c"]
    got = dz.design_proportion(y, ids)
    assert got.value == 1.0
    assert got.upper == 1.0
    # n_eff = G = 3 (nothing to measure); Wilson at n* = 3 (z/t_2)²
    z, t = norm.ppf(0.975), student_t.ppf(0.975, 2)
    m = 3 * (z / t) ** 2
    centre = (1 + z**2 / (2 * m)) / (1 + z**2 / m)
    half = z * math.sqrt(z**2 / (4 * m**2)) / (1 + z**2 / m)
    assert got.lower == A(centre - half, rel=1e-9)
    assert got.extra["effective_n"] == 3.0
    assert math.isnan(got.design_effect)
    assert got.method.endswith(
        "design effect not measurable (a share of 0 or 1): each answer counted once), t with 2 df."
    )


def test_proportion_all_zero_clustered_low_exactly_zero():
    got = dz.design_proportion([0, 0, 0], ["a", "a", "b"])
    assert got.value == 0.0
    assert got.lower == 0.0
    assert got.upper > 0.0
    assert got.df == 1.0


def test_proportion_deff_below_one_says_counted_as_one():
    # answers with one 1 and one 0 each: clustered variance 0 < V₀ (design effect 0)
    y = [1, 0, 1, 0, 1, 0]
    ids = [1, 1, 2, 2, 3, 3]
    got = dz.design_proportion(y, ids)
    assert got.design_effect == A(0.0, abs=1e-12)
    # interval from V₀, t with 2 df
    ref = ref_ratio(y, np.ones(6), [None] * 6, ids, {None: 6.0})
    assert (got.lower, got.upper) == (A(ref["lo"], rel=1e-9), A(ref["hi"], rel=1e-9))
    assert "design effect 0.00, counted as 1: never narrower than independent claims" in got.method


def test_wilson_eff_infinite_var0_and_zero_var():
    # var0 not finite: V alone; θ at 0 / 1 exact ends
    lo, hi, n_eff = dz._wilson_eff(0.5, 0.01, math.inf, 3.0, 5, 0.95)
    assert n_eff == A(25.0)
    lo2, hi2, n2 = dz._wilson_eff(0.5, 0.0, 0.0, 3.0, 7, 0.95)
    assert n2 == 7.0
    assert dz._wilson_eff(0.0, 0.0, 0.0, 2.0, 4, 0.9)[0] == 0.0
    assert dz._wilson_eff(1.0, 0.0, 0.0, 2.0, 4, 0.9)[1] == 1.0


def test_deff_text_exact():
    assert dz._deff_text(0.5, floored=False) == "design effect 0.50"
    assert dz._deff_text(0.5, floored=True) == (
        "design effect 0.50, counted as 1: never narrower than independent claims"
    )
    assert dz._deff_text(1.0, floored=True) == "design effect 1.00"


def test_nan_estimate_fields():
    e = dz._nan_estimate("No x")
    assert (e.n_clusters, e.n, e.n_strata, e.unseen_share, e.method) == (0, 0, 0, 1.0, "No x")
    assert math.isnan(e.value)
    assert math.isnan(e.lower)
    assert math.isnan(e.upper)


def test_design_missing_sizes_and_strata_errors_exact():
    with pytest.raises(ValueError, match=r"^(stratum_sizes|give strata)") as err:
        dz.design_proportion([1, 0], None, ["A", "B"])
    assert str(err.value) == "stratum_sizes (claims per stratum in the project, N_h) are required"
    # one stratum given without sizes: fine (sizes from the counts)
    got = dz.design_proportion([1, 0, 1], ["a", "a", "b"], ["A", "A", "A"])
    assert got.n_strata == 1
    assert got.unseen_share == 0.0


# --------------------------------------------------------------------------------------------
# sensitivity / specificity and their covariance


def _sesp_ref(gold, judge, strata, ids, sizes):
    g, j = np.asarray(gold, float), np.asarray(judge, float)
    cols = np.column_stack([g * j, g, (1 - g) * (1 - j), 1 - g])
    mu, cov, _, _, _ = ref_cov(cols, strata, ids, sizes)
    se, sp = mu[0] / mu[1], mu[2] / mu[3]
    ga = np.array([1 / mu[1], -se / mu[1], 0, 0])
    gb = np.array([0, 0, 1 / mu[3], -sp / mu[3]])
    return se, sp, float(ga @ cov @ gb)


def test_sesp_clustered_exactly_one_gold_supported_claim_has_covariance():
    # One gold-supported claim (the `== 0` guard must not fire at a sum of 1).
    gold = [1, 0, 0, 0, 0, 0]
    judge = [1, 0, 1, 0, 0, 1]
    ids = ["a", "a", "b", "b", "c", "c"]
    se, sp, cov = _sesp_ref(gold, judge, [None] * 6, ids, {None: 6.0})
    assert math.isfinite(cov)
    out = dz.design_sensitivity_specificity(gold, judge, ids)
    assert out["covariance"] == A(cov, rel=1e-9, abs=1e-15)
    assert math.isfinite(out["covariance"])
    assert out["sensitivity"].value == 1.0
    assert out["specificity"].value == A(sp)
    assert out["youden_j"] == A(se + sp - 1)
    assert set(out) == {"sensitivity", "specificity", "covariance", "youden_j"}


def test_sesp_clustered_exactly_one_gold_unsupported_claim_has_covariance():
    gold = [1, 1, 1, 0, 1, 1]
    judge = [1, 0, 1, 0, 1, 1]
    ids = ["a", "a", "b", "b", "c", "c"]
    _, _, cov = _sesp_ref(gold, judge, [None] * 6, ids, {None: 6.0})
    out = dz.design_sensitivity_specificity(gold, judge, ids)
    assert math.isfinite(cov)
    assert out["covariance"] == A(cov, rel=1e-9, abs=1e-15)


def test_se_sp_cov_no_gold_of_a_kind_is_nan():
    out = dz.design_sensitivity_specificity([1, 1, 1], [1, 0, 1], ["a", "a", "b"])
    assert math.isnan(out["covariance"])
    assert math.isnan(out["specificity"].value)
    assert out["specificity"].method == "No gold-unsupported claims to estimate from"
    assert out["sensitivity"].value == A(2 / 3)


def test_sesp_stratified_with_middle_unseen_stratum():
    gold = [1, 0, 1, 1, 0, 0, 1, 0, 1]
    judge = [1, 0, 0, 1, 1, 0, 1, 0, 1]
    st = ["S", "S", "S", "S", "U", "U", "U", "U", "U"]
    ids = [1, 1, 2, 3, 4, 4, 5, 6, 6]
    sizes = {"S": 40, "N": 7, "U": 12}
    se, sp, cov = _sesp_ref(gold, judge, st, ids, sizes)
    out = dz.design_sensitivity_specificity(gold, judge, ids, st, sizes, confidence=0.9)
    assert out["covariance"] == A(cov, rel=1e-9)
    g = np.asarray(gold)
    rs = ref_ratio(np.asarray(gold) * np.asarray(judge), g.astype(float), st, ids, sizes, conf=0.9)
    rp = ref_ratio((1 - g) * (1 - np.asarray(judge)), (1 - g).astype(float), st, ids, sizes, 0.9)
    for est, expected in ((out["sensitivity"], rs), (out["specificity"], rp)):
        assert est.value == A(expected["theta"], rel=1e-12)
        assert (est.lower, est.upper) == (A(expected["lo"], rel=1e-9), A(expected["hi"], rel=1e-9))
        assert est.se == A(math.sqrt(expected["var"]), rel=1e-9)
        assert est.df == expected["df"]
        assert est.n_clusters == expected["g"]
        assert est.unseen_share == A(7 / 59)
        assert est.extra["unseen_strata"] == ["N"]
    assert out["youden_j"] == A(se + sp - 1)


def test_sesp_simple_no_negatives():
    out = dz.design_sensitivity_specificity([1, 1], [1, 0])
    assert out["covariance"] == 0.0
    assert out["specificity"].method == "No gold claims for specificity"
    assert out["sensitivity"].as_dict()["ci"] == A(
        proportion_confint(1, 2, alpha=0.05, method="wilson")
    )


# --------------------------------------------------------------------------------------------
# Rogan–Gladen


def _lr_adjusted(k, m, ks, ms, kp, mp, z):
    """Lang–Reiczigel unclipped limits and J' (formulas of the R script, see `independent`)."""
    m2, p2 = m + z**2, (k + z**2 / 2) / (m + z**2)
    ms2, se2 = ms + 2, (ks + 1) / (ms + 2)
    mp2, sp2 = mp + 2, (kp + 1) / (mp + 2)
    j2 = se2 + sp2 - 1
    pi2 = (p2 + sp2 - 1) / j2
    sd = math.sqrt(
        p2 * (1 - p2) / m2 + se2 * (1 - se2) / ms2 * pi2**2 + sp2 * (1 - sp2) / mp2 * (1 - pi2) ** 2
    ) / abs(j2)
    d = 2 * z**2 * (pi2 * se2 * (1 - se2) / ms2 - (1 - pi2) * sp2 * (1 - sp2) / mp2)
    return pi2 + d - z * sd, pi2 + d + z * sd


def test_rogan_gladen_simple_path_is_lang_reiczigel():
    ja = [1, 1, 0, 1, 0, 1, 1, 0]
    gold = [1, 1, 1, 0, 0, 0, 1]
    jg = [1, 1, 0, 0, 0, 1, 1]
    got = dz.design_rogan_gladen(ja, None, gold, jg, confidence=0.9)
    se, sp = 3 / 4, 2 / 3
    point = min(max((5 / 8 + sp - 1) / (se + sp - 1), 0), 1)
    lo, hi = lang_reiczigel(5, 8, 3, 4, 2, 3, conf=0.9)
    assert got.value == A(point)
    assert (got.lower, got.upper) == (A(min(lo, point)), A(max(hi, point)))
    assert got.method == "Rogan–Gladen, Lang–Reiczigel interval, one claim per answer."
    assert (got.design_effect, got.n_clusters, got.n) == (1.0, 8, 8)


def _rg_clustered_ref(ja, ids_a, gold, jg, ids_g, conf, census=False):
    n_a = len(ja)
    pa = ref_ratio(ja, np.ones(n_a), [None] * n_a, ids_a, {None: float(n_a)}, conf)
    g = np.asarray(gold, float)
    j = np.asarray(jg, float)
    n_g = len(gold)
    sizes = {None: float(n_g)}
    rs = ref_ratio(g * j, g, [None] * n_g, ids_g, sizes, conf)
    rp = ref_ratio((1 - g) * (1 - j), 1 - g, [None] * n_g, ids_g, sizes, conf)
    _, _, cov = _sesp_ref(gold, jg, [None] * n_g, ids_g, sizes)
    dfs = [rs["df"], rp["df"]] + ([] if census else [pa["df"]])
    df = min(dfs)
    t = student_t.ppf(0.5 + conf / 2, df)
    m = 1e15 if census else pa["n_eff"]
    lo_a, hi_a = _lr_adjusted(
        pa["theta"] * m,
        m,
        rs["theta"] * rs["n_eff"],
        rs["n_eff"],
        rp["theta"] * rp["n_eff"],
        rp["n_eff"],
        t,
    )
    se, sp = rs["theta"], rp["theta"]
    jj = se + sp - 1
    point = min(max((pa["theta"] - (1 - sp)) / (se - (1 - sp)), 0), 1)
    centre = (lo_a + hi_a) / 2
    sd2 = ((hi_a - lo_a) / (2 * t)) ** 2
    sd2 = max(sd2 - 2 * point * (1 - point) * cov / jj**2, 1e-12)
    lo = min(max(centre - t * math.sqrt(sd2), 0), 1)
    hi = min(max(centre + t * math.sqrt(sd2), 0), 1)
    v_p = 0.0 if census else pa["var"]
    var = v_p + point**2 * rs["var"] + (1 - point) ** 2 * rp["var"] - 2 * point * (1 - point) * cov
    var /= jj**2
    var0 = (
        (v_p / pa["deff"] if v_p > 0 else 0.0)
        + point**2 * rs["var"] / rs["deff"]
        + (1 - point) ** 2 * rp["var"] / rp["deff"]
    ) / jj**2
    return {
        "point": point,
        "lo": min(lo, point),
        "hi": max(hi, point),
        "var": var,
        "df": df,
        "deff": var / var0,
        "cov": cov,
        "pa": pa,
        "rs": rs,
        "rp": rp,
        "m": m,
    }


@pytest.mark.parametrize("census", [False, True])
def test_rogan_gladen_clustered_whole_dict(census):
    ja = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1]
    ids_a = [1, 1, 2, 3, 3, 4, 5, 5, 6, 7]
    gold = [1, 1, 0, 1, 0, 0, 1, 1, 0, 1]
    jg = [1, 0, 0, 1, 1, 0, 1, 1, 0, 1]
    ids_g = ["a", "a", "a", "b", "b", "c", "c", "d", "d", "e"]
    ref = _rg_clustered_ref(ja, ids_a, gold, jg, ids_g, 0.9, census)
    got = dz.design_rogan_gladen(ja, ids_a, gold, jg, ids_g, confidence=0.9, judge_is_census=census)
    judged = "every claim, a census" if census else f"10 claims worth {ref['m']:.0f}"
    rs, rp = ref["rs"], ref["rp"]
    assert got.as_dict() == {
        "value": A(ref["point"], rel=1e-12),
        "low": A(ref["lo"], rel=1e-9),
        "high": A(ref["hi"], rel=1e-9),
        "method": (
            f"Rogan–Gladen, Lang–Reiczigel interval at effective sample sizes (judged: {judged}; "
            f"gold-supported: 6 claims worth {rs['n_eff']:.0f}; gold-unsupported: 4 claims worth "
            f"{rp['n_eff']:.0f}), clustered by answer (design effect {ref['deff']:.2f}), "
            f"t with {ref['df']:.0f} df."
        ),
        "design_effect": A(ref["deff"], rel=1e-9),
        "n_clusters": rs["g"],
        "n": 10,
        "std_error": A(math.sqrt(ref["var"]), rel=1e-9),
        "df": ref["df"],
        "n_strata": 1,
        "unseen_share": 0.0,
        "extra": {"se_sp_covariance": A(ref["cov"], rel=1e-9), "judged_answers": 7},
        "ci": (A(ref["lo"], rel=1e-9), A(ref["hi"], rel=1e-9)),
    }


@pytest.mark.parametrize(("ja", "end"), [([1, 0, 0] * 20, "low"), ([1, 1, 0] * 20, "high")])
def test_rogan_gladen_clustered_interval_clipped_at_exact_end(ja, end):
    # answers of one gold-supported and one gold-unsupported claim, judged both right or both
    # wrong (a positive se/sp covariance); a census p_obs of 1/3 (2/3) puts the end below 0 (above 1)
    pat = [1, 1, 0, 1, 1, 1]
    gold = [1, 0] * 6
    jg = sum(([1, 0] if r else [0, 1] for r in pat), [])
    ids_g = sum(([i, i] for i in range(6)), [])
    ids_a = list(range(60))
    ref = _rg_clustered_ref(ja, ids_a, gold, jg, ids_g, 0.95, True)
    got = dz.design_rogan_gladen(ja, ids_a, gold, jg, ids_g, judge_is_census=True)
    assert ref["cov"] > 0
    if end == "low":
        assert got.lower == 0.0
        assert ref["lo"] == 0.0
        assert got.upper == A(ref["hi"], rel=1e-9)
        assert got.value == A(0.25)
    else:
        assert got.upper == 1.0
        assert ref["hi"] == 1.0
        assert got.lower == A(ref["lo"], rel=1e-9)
        assert got.value == A(0.75)
    assert got.se == A(math.sqrt(ref["var"]), rel=1e-9)
    assert got.df == 5.0  # min over se and sp (6 answers − 1); the census p_obs has none


def test_rogan_gladen_chance_judge_and_empty():
    got = dz.design_rogan_gladen([1, 0], None, [1, 0], [0, 1])
    assert got.method == (
        "Rogan–Gladen is undefined: the judge is no better than chance on this audit "
        "(J = se + sp − 1 = -1.00 ≤ 0)"
    )
    assert got.unseen_share == 0.0  # the audit saw every stratum: not "nothing audited"
    got = dz.design_rogan_gladen([], None, [1, 0], [1, 0])
    assert got.method == "Rogan–Gladen needs judged claims and gold of both kinds"


# --------------------------------------------------------------------------------------------
# PPI++ stratified


def ref_lambda(y, fg, fr):
    n, big = len(y), len(fr)
    if big == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (fg - fg.mean())))
    var = float(np.var(np.r_[fg, fr], ddof=1))
    if var <= 0:
        return 0.0
    return float(min(max(cov / ((1 + n / big) * var), 0), 1))


def ref_mean_var(x, ids):
    m = len(x)
    if m <= 1:
        return 0.0, 0.0
    dev = x - x.mean()
    groups: dict = {}
    for d, i in zip(dev, ids, strict=True):
        groups[i] = groups.get(i, 0.0) + d
    g = len(groups)
    v = g / max(g - 1, 1) * sum(s * s for s in groups.values()) / m**2
    v0 = m / (m - 1) * float(dev @ dev) / m**2
    return v, v0


def ref_floor(rect, f_all, lam):
    m = len(rect)
    tau2 = float(np.mean(f_all * (1 - f_all)) + (1 - lam) ** 2 * np.var(f_all))
    s2 = float(np.var(rect, ddof=1)) if m > 1 else 0.0
    return ((m - 1) * s2 + tau2) / m / m


def test_rectifier_floor_by_hand():
    rect = np.array([1.0, 0.0, 1.0])
    f = np.array([0.2, 0.5, 0.9, 1.0])
    lam = 0.25
    tau2 = np.mean(f * (1 - f)) + 0.75**2 * np.var(f)
    assert dz._rectifier_floor(rect, f, lam) == A((2 * (1 / 3) + tau2) / 9, rel=1e-12)
    # one claim: s² = 0
    assert dz._rectifier_floor(np.array([1.0]), f, lam) == A(tau2, rel=1e-12)


def test_mean_var_by_hand():
    x = np.array([1.0, 0.0, 1.0, 1.0])
    v, v0 = dz._mean_var(x, np.array(["a", "a", "b", "c"]))
    rv, rv0 = ref_mean_var(x, ["a", "a", "b", "c"])
    assert (v, v0) == (A(rv, rel=1e-12), A(rv0, rel=1e-12))
    assert dz._mean_var(np.array([1.0]), np.array([0])) == (0.0, 0.0)
    # one answer: G/(max(G−1,1)) = 1, z = 0
    assert dz._mean_var(x, np.array([7, 7, 7, 7]))[0] == A(0.0, abs=1e-15)


def _ppi_ref(y, fg, fr, ids_g, ids_r, s_g, s_r, conf=0.95):
    y, fg, fr = (np.asarray(v, float) for v in (y, fg, fr))
    s_g, s_r = np.asarray(s_g, object), np.asarray(s_r, object)
    labels = list(dict.fromkeys(list(s_g) + list(s_r)))
    total = len(y) + len(fr)
    seen = [lab for lab in labels if (s_g == lab).any()]
    seen_w = sum(((s_g == lab).sum() + (s_r == lab).sum()) / total for lab in seen)
    theta = var = var0 = 0.0
    floored = 0
    lams = {}
    for lab in seen:
        mg, mr = s_g == lab, s_r == lab
        w = (mg.sum() + mr.sum()) / total / seen_w
        yh, fgh, frh = y[mg], fg[mg], fr[mr]
        lam = ref_lambda(yh, fgh, frh)
        lams[lab] = lam
        rect = yh - lam * fgh
        est = lam * frh.mean() + rect.mean() if mr.any() else yh.mean()
        v_r, v0_r = ref_mean_var(rect, list(np.asarray(ids_g)[mg]))
        v_i, v0_i = ref_mean_var(frh, list(np.asarray(ids_r)[mr])) if mr.any() else (0, 0)
        if len(seen) > 1:
            fl = ref_floor(rect, np.r_[fgh, frh], lam)
            floored += fl > v_r
            v_r, v0_r = max(v_r, fl), max(v0_r, fl)
        theta += w * est
        var += w**2 * (v_r + lam**2 * v_i)
        var0 += w**2 * (v0_r + lam**2 * v0_i)
    g = len(set(np.asarray(ids_g).tolist()))
    df = max(g - len(seen), 1)
    half = student_t.ppf(0.5 + conf / 2, df) * math.sqrt(var)
    return {
        "theta": theta,
        "var": var,
        "var0": var0,
        "df": float(df),
        "half": half,
        "lams": lams,
        "g": g,
        "unseen": [lab for lab in labels if lab not in seen],
        "h": len(seen),
        "floored": floored,
        "unseen_share": 1 - seen_w,
    }


def test_ppi_stratified_middle_stratum_without_gold_whole_dict():
    # strata in order A, B (no gold: middle), C; nested answers, gold and rest in separate answers
    y = [1, 0, 1, 1, 1, 0]
    fg = [0.9, 0.2, 0.7, 0.8, 0.6, 0.3]
    s_g = ["A", "A", "A", "C", "C", "C"]
    ids_g = [1, 1, 2, 3, 4, 5]
    fr = [0.1, 0.8, 0.5, 0.4, 0.9, 0.7, 0.2, 0.6, 0.3]
    s_r = ["A", "B", "B", "C", "A", "C", "B", "C", "D"]
    ids_r = [10, 11, 12, 13, 14, 15, 16, 17, 18]
    ref = _ppi_ref(y, fg, fr, ids_g, ids_r, s_g, s_r, conf=0.9)
    got = dz.design_ppi_mean(y, fg, fr, ids_g, ids_r, s_g, s_r, confidence=0.9)
    deff = ref["var"] / ref["var0"]
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    floored_txt = (
        f"; {ref['floored']} of 2 strata's variance floored at what the judge's scores predict "
        "(too few audited claims to show their own)"
        if ref["floored"]
        else ""
    )
    assert ref["unseen"] == ["B", "D"]  # two strata without gold: both named
    assert got.as_dict() == {
        "value": A(clip(ref["theta"]), rel=1e-12),
        "low": A(clip(ref["theta"] - ref["half"]), rel=1e-9, abs=1e-15),
        "high": A(clip(ref["theta"] + ref["half"]), rel=1e-9, abs=1e-15),
        "method": (
            f"PPI++ (power-tuned per stratum), rectifier clustered by answer (5 audited answers, "
            f"design effect {deff:.2f}), t with 3 df{floored_txt}; weighted over 2 strata by "
            "their share of the project (N_h/N); covers only the strata with gold: 27% of the "
            "project (stratum B, D) has no audited claim and is not estimated."
        ),
        "design_effect": A(deff, rel=1e-9),
        "n_clusters": 5,
        "n": 6,
        "std_error": A(math.sqrt(ref["var"]), rel=1e-9),
        "df": 3.0,
        "n_strata": 2,
        "unseen_share": A(4 / 15),
        "extra": {"lambda": {k: A(v, abs=1e-15) for k, v in ref["lams"].items()}, "N": 9},
        "ci": (
            A(clip(ref["theta"] - ref["half"]), rel=1e-9, abs=1e-15),
            A(clip(ref["theta"] + ref["half"]), rel=1e-9, abs=1e-15),
        ),
    }


def test_ppi_stratified_tiny_agreeing_strata_are_floored():
    # every stratum's labels agree with a 0/1 judge: λ = 0 rectifier constant, variance 0
    y = [1, 1, 0, 0]
    fg = [1.0, 1.0, 0.0, 0.0]
    s_g = ["A", "A", "B", "B"]
    fr = [1.0, 0.0, 0.0, 1.0, 1.0]
    s_r = ["A", "A", "B", "B", "B"]
    ref = _ppi_ref(y, fg, fr, [1, 2, 3, 4], [5, 6, 7, 8, 9], s_g, s_r)
    got = dz.design_ppi_mean(y, fg, fr, [1, 2, 3, 4], [5, 6, 7, 8, 9], s_g, s_r)
    assert ref["floored"] == 2
    assert got.value == A(ref["theta"], rel=1e-12)
    assert got.se == A(math.sqrt(ref["var"]), rel=1e-9)
    assert got.design_effect == A(ref["var"] / ref["var0"], rel=1e-9)
    assert (got.lower, got.upper) == (
        A(max(ref["theta"] - ref["half"], 0), rel=1e-9),
        A(min(ref["theta"] + ref["half"], 1), rel=1e-9),
    )
    assert "; 2 of 2 strata's variance floored at what the judge's scores predict" in got.method


def test_ppi_one_stratum_clustered_no_floor_and_no_rest_in_stratum():
    # one stratum given as labels (one distinct value), answers clustered: CR1, no floor
    y = [1, 0, 1, 1, 0]
    fg = [0.8, 0.3, 0.6, 0.9, 0.4]
    fr = [0.7, 0.2, 0.9]
    ids_g = ["a", "a", "b", "c", "c"]
    ids_r = ["x", "y", "z"]
    ref = _ppi_ref(y, fg, fr, ids_g, ids_r, ["S"] * 5, ["S"] * 3)
    got = dz.design_ppi_mean(y, fg, fr, ids_g, ids_r, ["S"] * 5, ["S"] * 3)
    assert ref["floored"] == 0
    assert got.value == A(ref["theta"], rel=1e-12)
    assert got.se == A(math.sqrt(ref["var"]), rel=1e-9)
    assert got.df == 2.0
    assert got.n_strata == 1
    assert got.unseen_share == A(0.0, abs=1e-15)
    assert got.extra == {"lambda": {"S": A(ref["lams"]["S"])}, "N": 3}


def test_ppi_stratum_with_gold_but_no_rest_uses_gold_mean():
    y = [1, 0, 1, 1]
    fg = [0.9, 0.1, 0.8, 0.7]
    s_g = ["A", "A", "B", "B"]
    fr = [0.6, 0.5]
    s_r = ["A", "A"]
    ref = _ppi_ref(y, fg, fr, [1, 2, 3, 4], [5, 6], s_g, s_r)
    got = dz.design_ppi_mean(y, fg, fr, [1, 2, 3, 4], [5, 6], s_g, s_r)
    assert got.value == A(min(ref["theta"], 1.0), rel=1e-12)
    assert got.se == A(math.sqrt(ref["var"]), rel=1e-9)
    assert got.extra["lambda"]["B"] == 0.0


def _spanning_cr1(y, fg, fr, ids_g, ids_r):
    """PPI++ and its CR1 variance over answers, by hand: each answer sums its claims' influences
    on θ̂ (gold: rectifier deviations / n; unaudited: λ · prediction deviations / N), G/(G − 1)."""
    lam = ref_lambda(y, fg, fr)
    rect = y - lam * fg
    theta = lam * fr.mean() + rect.mean()
    u = {}
    for i, a in enumerate(ids_g):
        u[a] = u.get(a, 0.0) + (rect[i] - rect.mean()) / len(y)
    for i, a in enumerate(ids_r):
        u[a] = u.get(a, 0.0) + lam * (fr[i] - fr.mean()) / len(fr)
    g = len(u)
    return theta, g / (g - 1) * sum(v * v for v in u.values())


def test_ppi_answers_spanning_gold_and_rest_cr1_over_answers():
    y = np.array([1, 0, 1, 0], float)
    fg = np.array([0.9, 0.4, 0.7, 0.2])
    fr = np.array([0.8, 0.3, 0.6])
    ids_g = ["a", "b", "c", "d"]
    ids_r = ["a", "a", "b"]  # answers of gold claims again: the cells are tied
    s = ["S"] * 4
    got = dz.design_ppi_mean(y, fg, fr, ids_g, ids_r, s, ["S"] * 3)
    theta, var = _spanning_cr1(y, fg, fr, ids_g, ids_r)
    assert got.value == A(theta, rel=1e-12)
    assert got.se == A(math.sqrt(var), rel=1e-9)
    t = student_t.ppf(0.975, 3)
    assert (got.lower, got.upper) == (
        A(max(theta - t * math.sqrt(var), 0.0), rel=1e-9),
        A(min(theta + t * math.sqrt(var), 1.0), rel=1e-9),
    )


def test_ppi_simple_path_fields():
    y = [1, 0, 1]
    fg = [1, 0, 0]
    fr = [1, 1, 0, 1]
    got = dz.design_ppi_mean(y, fg, fr)
    assert got.method == "PPI++, normal interval, one claim per answer."
    assert (got.design_effect, got.n_clusters, got.n) == (1.0, 3, 3)
    assert set(got.extra) == {"lambda", "N"}
    assert got.extra["N"] == 4
    assert got.extra["lambda"] == A(
        ref_lambda(np.array(y, float), np.array(fg, float), np.array(fr, float))
    )


def test_ppi_strata_for_one_side_only_error():
    with pytest.raises(ValueError, match=r"^(stratum_sizes|give strata)") as err:
        dz.design_ppi_mean([1], [1], [1], strata_gold=["A"])
    assert str(err.value) == "give strata for both the gold and the rest claims, or for neither"


# --------------------------------------------------------------------------------------------
# kappa


def test_kappa_one_claim_per_answer_is_fleiss_times_n_over_n_minus_1():
    a = ["S", "S", "C", "N", "S", "C", "S", "N"]
    b = ["S", "C", "C", "N", "S", "S", "S", "C"]
    cats = ["S", "C", "N"]
    table = np.zeros((3, 3))
    for x, y in zip(a, b, strict=True):
        table[cats.index(x), cats.index(y)] += 1
    ck = cohens_kappa(table)
    got = dz.design_kappa(a, b, confidence=0.9)
    var = ck.std_kappa**2 * 8 / 7
    t = student_t.ppf(0.95, 7)
    assert got.value == A(ck.kappa, rel=1e-12)
    assert got.se == A(math.sqrt(var), rel=1e-9)
    assert (got.lower, got.upper) == (
        A(ck.kappa - t * math.sqrt(var), rel=1e-9),
        A(min(ck.kappa + t * math.sqrt(var), 1.0), rel=1e-9),
    )
    assert got.design_effect == A(1.0, rel=1e-9)
    assert got.method == (
        "Cohen's kappa, linearised variance clustered by answer (8 answers, design effect 1.00), "
        "t with 7 df."
    )
    assert (got.n_clusters, got.n, got.df) == (8, 8, 7.0)


def test_kappa_clustered_clip_at_minus_one_and_edges():
    # perfect disagreement with two answers: κ = −1, the lower end clipped at exactly −1
    got = dz.design_kappa([1, 0, 1, 0], [0, 1, 0, 1], ["a", "a", "b", "b"])
    assert got.value == A(-1.0)
    assert got.lower == -1.0
    assert dz.design_kappa([1], [1]).method == "Kappa needs two claims or more"
    assert dz.design_kappa([1, 1], [1, 1]).method == (
        "Kappa is undefined: both raters give one verdict only"
    )


def test_kappa_clustered_by_hand():
    a = np.array([1, 1, 0, 0, 1, 0])
    b = np.array([1, 0, 0, 0, 1, 1])
    ids = [1, 1, 2, 3, 3, 4]
    n = 6
    p = np.zeros((2, 2))
    for x, y in zip(a, b, strict=True):
        p[1 - x, 1 - y] += 1 / n  # codes by first appearance: 1 → 0, 0 → 1
    r, c = p.sum(1), p.sum(0)
    po, pe = np.trace(p), r @ c
    kappa = (po - pe) / (1 - pe)
    ca, cb = 1 - a, 1 - b
    u = ((ca == cb) - po) / (1 - pe) - (c[ca] + r[cb] - 2 * pe) * (1 - po) / (1 - pe) ** 2
    u = u / n
    z = {}
    for ui, g in zip(u, ids, strict=True):
        z[g] = z.get(g, 0.0) + ui
    var = 4 / 3 * sum(v * v for v in z.values())
    var0 = 6 / 5 * float(u @ u)
    got = dz.design_kappa(a, b, ids)
    assert got.value == A(kappa, rel=1e-12)
    assert got.se == A(math.sqrt(var), rel=1e-9)
    assert got.design_effect == A(var / var0, rel=1e-9)
    t = student_t.ppf(0.975, 3)
    assert got.upper == A(min(kappa + t * math.sqrt(var), 1.0), rel=1e-9)
    assert got.lower == A(max(kappa - t * math.sqrt(var), -1.0), rel=1e-9)


# --------------------------------------------------------------------------------------------
# cluster bootstrap, replayed draw by draw


def _boot_ref(a, b, ids, n_boot, seed, per, conf=0.95):
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = b > 0
    a, b = a[keep], b[keep]
    ids = list(np.asarray(ids, dtype=object)[keep])
    order = list(dict.fromkeys(ids))
    ag = np.array([sum(a[i] for i in range(a.size) if ids[i] == g) for g in order])
    bg = np.array([sum(b[i] for i in range(a.size) if ids[i] == g) for g in order])
    g = len(order)
    rng = np.random.default_rng(seed)
    draws = []
    while len(draws) < n_boot:
        k = min(per, n_boot - len(draws))
        idx = rng.integers(0, g, size=(k, g))
        draws.extend(list(ag[idx].sum(1) / bg[idx].sum(1)))
    draws = np.array(draws)
    theta = ag.sum() / bg.sum()
    tail = (1 - conf) / 2
    lo, hi = np.quantile(draws, [tail, 1 - tail])
    var = np.var(draws, ddof=1)
    dev = a - theta * b
    var0 = float(dev @ dev) / b.sum() ** 2
    return theta, min(lo, theta), max(hi, theta), var, var / var0, g


@pytest.mark.parametrize(("chunk", "per"), [(1, 1), (6, 1), (14, 2), (20_000_000, 9)])
def test_cluster_bootstrap_replayed_blocks(chunk, per):
    # blocks of 1, 2 and 9 resamples replayed block by block (PCG64 keeps the spare half of a
    # 64-bit word across calls, so the draws do not depend on the block size: `max(1, ...)` vs
    # `max(2, ...)` in the block size is an equivalent mutant; this pins the figures themselves)
    num = [1, 0, 1, 1, 0, 1, 0, 1, 1, 0]
    den = [1, 1, 1, 0, 1, 1, 1, 1, 1, 1]
    ids = ["a", "a", "b", "b", "c", "d", "d", "e", "f", "g"]
    theta, lo, hi, var, deff, g = _boot_ref(num, den, ids, 9, 3, per, conf=0.9)
    got = dz.cluster_bootstrap(num, den, ids, 0.9, n_boot=9, seed=3, chunk=chunk)
    assert g == 7
    assert got.as_dict() == {
        "value": A(theta, rel=1e-12),
        "low": A(lo, rel=1e-12),
        "high": A(hi, rel=1e-12),
        "method": (
            f"Answer-level bootstrap, 9 resamples of 7 answers, percentile interval "
            f"(design effect {deff:.2f})."
        ),
        "design_effect": A(deff, rel=1e-9),
        "n_clusters": 7,
        "n": 9,
        "std_error": A(math.sqrt(var), rel=1e-9),
        "df": A(math.nan, nan_ok=True),
        "n_strata": 1,
        "unseen_share": 0.0,
        "extra": {},
        "ci": (A(lo, rel=1e-12), A(hi, rel=1e-12)),
    }


def test_cluster_bootstrap_float_numerator_and_empty():
    num = np.array([0.5, 1.0, 0.0, 0.25])
    ids = [1, 1, 2, 3]
    theta, lo, hi, var, deff, g = _boot_ref(num, [1, 1, 1, 1], ids, 7, 0, 7)
    got = dz.cluster_bootstrap(num, None, ids, n_boot=7)
    assert got.value == A(theta)
    assert (got.lower, got.upper) == (A(lo), A(hi))
    assert got.se == A(math.sqrt(var))
    e = dz.cluster_bootstrap([1, 0], [0, 0])
    assert e.method == "No claims to resample"
    assert math.isnan(e.value)


def test_ppi_two_answers_spanning_cells_df_one():
    # two answers in all: G/(G − 1) = 2, t with 1 df
    y = np.array([1, 0, 1], float)
    fg = np.array([0.9, 0.3, 0.6])
    fr = np.array([0.7, 0.2])
    ids_g, ids_r = ["a", "a", "b"], ["a", "b"]
    got = dz.design_ppi_mean(y, fg, fr, ids_g, ids_r, ["S"] * 3, ["S"] * 2, confidence=0.9)
    lam = ref_lambda(y, fg, fr)
    rect = y - lam * fg
    theta = lam * fr.mean() + rect.mean()
    u = {"a": 0.0, "b": 0.0}
    for i, a in enumerate(ids_g):
        u[a] += (rect[i] - rect.mean()) / 3
    for i, a in enumerate(ids_r):
        u[a] += lam * (fr[i] - fr.mean()) / 2
    var = 2.0 * (u["a"] ** 2 + u["b"] ** 2)
    assert got.value == A(theta, rel=1e-12)
    assert got.se == A(math.sqrt(var), rel=1e-9)
    assert got.df == 1.0
    half = student_t.ppf(0.95, 1) * math.sqrt(var)
    assert (got.lower, got.upper) == (
        A(max(theta - half, 0.0), abs=1e-12),
        A(min(theta + half, 1.0)),
    )


def test_ppi_answers_each_holding_one_gold_and_one_rest_claim_are_clustered():
    """Found by this test file's author: one claim per answer on each side, but answers a, b, c
    hold a gold claim *and* an unaudited one. The independent-claims shortcut used to apply (its
    variance left out the covariance inside those answers); the CR1 variance over answers is
    derived by hand as in the test above."""
    y = np.array([1, 0, 1, 0], float)
    fg = np.array([0.9, 0.4, 0.7, 0.2])
    fr = np.array([0.8, 0.3, 0.6])
    ids_g, ids_r = ["a", "b", "c", "d"], ["a", "b", "c"]
    got = dz.design_ppi_mean(y, fg, fr, ids_g, ids_r)
    theta, var = _spanning_cr1(y, fg, fr, ids_g, ids_r)
    assert got.method != "PPI++, normal interval, one claim per answer."
    assert got.value == A(theta, rel=1e-12)
    assert got.se == A(math.sqrt(var), rel=1e-9)
    # disjoint answers keep the independent shortcut (today's figures)
    plain = dz.design_ppi_mean(y, fg, fr, ids_g, ["e", "f", "g"])
    assert plain.method == "PPI++, normal interval, one claim per answer."
