"""Paired B − A: hand cases and independent libraries (scipy's paired t, statsmodels'
cluster-robust OLS, ppi_py's PPI++ on differences)."""

import math

import numpy as np
import ppi_py
import pytest
import statsmodels.api as sm
from scipy import stats as scipy_stats
from scipy.stats import t as student_t

from metrics.stats.paired import paired_gold_difference, paired_ppi_difference, shared_questions


def test_one_unit_per_question_is_the_paired_t_interval():
    rng = np.random.default_rng(3)
    g = 40
    a = rng.uniform(0, 1, g)
    b = np.clip(a + rng.normal(0.05, 0.1, g), 0, 1)
    values = np.concatenate([a, b])
    system = np.repeat([0, 1], g)
    question = np.tile(np.arange(g), 2)
    out = paired_gold_difference(values, system, question)
    test = scipy_stats.ttest_rel(b, a)
    lo, hi = test.confidence_interval(0.95)
    assert out.value == pytest.approx(float(np.mean(b - a)))
    assert (out.lower, out.upper) == (pytest.approx(lo), pytest.approx(hi))
    assert out.n_questions == g


def test_hand_worked_two_questions_three_claims():
    # q1: A claims [1, 0], B [1, 1]; q2: A [1], B [0, 1]. θ_A = 2/3, θ_B = 3/4, D = 1/12.
    values = [1, 0, 1, 1, 1, 0, 1]
    system = [0, 0, 1, 1, 0, 1, 1]
    question = ["q1", "q1", "q1", "q1", "q2", "q2", "q2"]
    out = paired_gold_difference(values, system, question)
    assert out.value == pytest.approx(3 / 4 - 2 / 3)
    # z_q = (S_Bq − θ_B n_Bq)/n_B − (S_Aq − θ_A n_Aq)/n_A:
    # q1: (2 − 1.5)/4 − (1 − 4/3)/3 = 1/8 + 1/9; q2: (1 − 1.5)/4 − (1 − 2/3)/3 = −1/8 − 1/9.
    z1 = 1 / 8 + 1 / 9
    se = np.sqrt(2 / 1 * (2 * z1**2))
    assert out.se == pytest.approx(se)
    assert out.rates == (pytest.approx(2 / 3), pytest.approx(3 / 4))


def test_clustered_ratio_matches_statsmodels_cluster_robust_ols():
    rng = np.random.default_rng(11)
    rows = []
    for q in range(60):
        hard = rng.normal()
        for s in (0, 1):
            for _ in range(rng.integers(1, 6)):
                p = 1 / (1 + np.exp(-(0.8 + 0.3 * s + hard)))
                rows.append((float(rng.random() < p), s, q))
    y, s, q = (np.array(col) for col in zip(*rows, strict=True))
    out = paired_gold_difference(y, s, q)
    fit = sm.OLS(y, sm.add_constant(s.astype(float))).fit(
        cov_type="cluster", cov_kwds={"groups": q, "use_correction": False}
    )
    g = 60
    assert out.value == pytest.approx(fit.params[1])
    assert out.se == pytest.approx(fit.bse[1] * np.sqrt(g / (g - 1)))


def test_questions_answered_by_one_system_only_are_left_out():
    values = [1, 0, 1, 1, 0]
    system = [0, 1, 0, 1, 0]
    question = ["q1", "q1", "q2", "q2", "q3"]
    assert shared_questions(system, question).tolist() == [True, True, True, True, False]
    out = paired_gold_difference(values, system, question)
    assert out.n_questions == 2
    assert out.value == pytest.approx(0.5 - 1.0)


def test_paired_is_narrower_than_unpaired_when_questions_are_correlated():
    rng = np.random.default_rng(5)
    g = 100
    base = rng.uniform(0.2, 0.9, g)
    a = (rng.random(g) < base).astype(float)
    b = np.where(rng.random(g) < 0.9, a, 1 - a)
    out = paired_gold_difference(np.r_[a, b], np.repeat([0, 1], g), np.tile(np.arange(g), 2))
    assert out.se < out.se_unpaired


def test_empty_and_malformed_inputs():
    assert np.isnan(paired_gold_difference([], [], []).value)
    with pytest.raises(ValueError, match="differ in length"):
        paired_gold_difference([1, 0], [0], ["q"])
    with pytest.raises(ValueError, match="0 \\(A\\) or 1 \\(B\\)"):
        paired_gold_difference([1, 0], [0, 2], ["q", "q"])


def _ppi_world(seed, g=300, labelled=80):
    rng = np.random.default_rng(seed)
    truth_a = (rng.random(g) < 0.7).astype(float)
    truth_b = np.where(rng.random(g) < 0.8, truth_a, (rng.random(g) < 0.8).astype(float))
    noisy = lambda t: np.where(rng.random(g) < 0.85, t, 1 - t)  # noqa: E731
    judge_a, judge_b = noisy(truth_a), noisy(truth_b)
    gold_mask = np.zeros(g, bool)
    gold_mask[rng.choice(g, labelled, replace=False)] = True
    return truth_a, truth_b, judge_a, judge_b, gold_mask


def test_ppi_on_differences_matches_ppi_py_with_a_fixed_lambda():
    truth_a, truth_b, judge_a, judge_b, gold_mask = _ppi_world(1)
    g = truth_a.size
    gold = np.r_[np.where(gold_mask, truth_a, np.nan), np.where(gold_mask, truth_b, np.nan)]
    out = paired_ppi_difference(
        gold, np.r_[judge_a, judge_b], np.repeat([0, 1], g), np.tile(np.arange(g), 2), lam=0.6
    )
    y = (truth_b - truth_a)[gold_mask]
    yhat = (judge_b - judge_a)[gold_mask]
    yhat_u = (judge_b - judge_a)[~gold_mask]
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=0.6)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=0.6)
    se_ppi = (hi - lo) / 2 / scipy_stats.norm.ppf(0.975)
    assert out.value == pytest.approx(float(np.ravel(point)[0]))
    assert out.se == pytest.approx(float(np.ravel(se_ppi)[0]) * np.sqrt(g / (g - 1)))
    assert out.extra["gold_questions"] == 80


def test_ppi_with_lambda_zero_is_the_gold_only_estimate():
    truth_a, truth_b, judge_a, judge_b, gold_mask = _ppi_world(2)
    g = truth_a.size
    system, question = np.repeat([0, 1], g), np.tile(np.arange(g), 2)
    gold = np.r_[np.where(gold_mask, truth_a, np.nan), np.where(gold_mask, truth_b, np.nan)]
    ppi = paired_ppi_difference(gold, np.r_[judge_a, judge_b], system, question, lam=0.0)
    only = paired_gold_difference(
        np.r_[truth_a[gold_mask], truth_b[gold_mask]],
        np.repeat([0, 1], gold_mask.sum()),
        np.tile(np.flatnonzero(gold_mask), 2),
    )
    assert ppi.value == pytest.approx(only.value)
    # Same sum of squares; only the G/(G−1) factor differs (G shared vs. G gold questions).
    n_gold = gold_mask.sum()
    assert ppi.se**2 * (g - 1) / g == pytest.approx(only.se**2 * (n_gold - 1) / n_gold)


def test_ppi_narrows_the_gold_only_interval_with_a_good_judge():
    truth_a, truth_b, judge_a, judge_b, gold_mask = _ppi_world(4)
    g = truth_a.size
    gold = np.r_[np.where(gold_mask, truth_a, np.nan), np.where(gold_mask, truth_b, np.nan)]
    ppi = paired_ppi_difference(
        gold, np.r_[judge_a, judge_b], np.repeat([0, 1], g), np.tile(np.arange(g), 2)
    )
    only = paired_gold_difference(
        np.r_[truth_a[gold_mask], truth_b[gold_mask]],
        np.repeat([0, 1], gold_mask.sum()),
        np.tile(np.flatnonzero(gold_mask), 2),
    )
    assert ppi.upper - ppi.lower < only.upper - only.lower
    assert 0 < ppi.extra["lambda"] <= 1


def test_ppi_lambda_follows_ppi_py_on_the_differences():
    truth_a, truth_b, judge_a, judge_b, gold_mask = _ppi_world(6)
    g = truth_a.size
    gold = np.r_[np.where(gold_mask, truth_a, np.nan), np.where(gold_mask, truth_b, np.nan)]
    ours = paired_ppi_difference(
        gold, np.r_[judge_a, judge_b], np.repeat([0, 1], g), np.tile(np.arange(g), 2)
    )
    y = (truth_b - truth_a)[gold_mask]
    yhat = (judge_b - judge_a)[gold_mask]
    yhat_u = (judge_b - judge_a)[~gold_mask]
    lo, hi = (float(np.ravel(end)[0]) for end in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05))
    # Same power tuning up to ddof (and our t against its z): within a few percent of the width.
    assert ours.value == pytest.approx((lo + hi) / 2, abs=0.05 * (hi - lo))
    assert ours.upper - ours.lower == pytest.approx(hi - lo, rel=0.05)


def test_ppi_needs_gold_on_both_systems():
    out = paired_ppi_difference(
        [1, np.nan, np.nan, np.nan], [1, 1, 0, 1], [0, 1, 0, 1], ["q1", "q1", "q2", "q2"]
    )
    assert np.isnan(out.value)
    with pytest.raises(ValueError, match="every unit"):
        paired_ppi_difference([1, 0], [np.nan, 1], [0, 1], ["q", "q"])


def test_proportions_equal_is_fishers_exact_test_by_hand():
    from math import comb

    from metrics.stats.paired import proportions_equal

    # [[3, 1], [1, 3]]: hypergeometric with margins 4, 4 of 8; P(k) = C(4,k)C(4,4−k)/C(8,4).
    probs = [comb(4, k) * comb(4, 4 - k) / comb(8, 4) for k in range(5)]
    observed = probs[3]
    expected = sum(p for p in probs if p <= observed + 1e-12)
    assert proportions_equal(3, 4, 1, 4) == pytest.approx(expected)
    assert np.isnan(proportions_equal(0, 0, 1, 2))


# paired PairedEstimate.as_dict _9: the unpaired interval a reader compares the paired one with.
def test_the_paired_dict_carries_the_unpaired_interval_by_hand():
    a = np.array([1, 0, 1, 1, 0, 1, 0, 1], float)
    b = np.array([1, 1, 1, 1, 0, 1, 1, 1], float)
    g = a.size
    values = np.r_[a, b]
    system = [0] * g + [1] * g  # 0 is A, 1 is B
    question = list(range(g)) * 2
    out = paired_gold_difference(values, system, question).as_dict()
    # One unit per system and question: D ± t_{G−1} √(s²_A/G + s²_B/G) (ddof 1).
    d = b.mean() - a.mean()
    se = math.sqrt(a.var(ddof=1) / g + b.var(ddof=1) / g)
    t = student_t.ppf(0.975, g - 1)
    assert out["ci_unpaired"] == pytest.approx([d - t * se, d + t * se], abs=1e-12)
    assert out["std_error_unpaired"] == pytest.approx(se, abs=1e-12)


# --- metrics.stats.paired: two shared questions, the t quantile at 1 degree of freedom --------


def test_paired_gold_difference_of_two_questions_uses_t_with_one_degree_of_freedom():
    """paired `_finish` `_39` (t at max(df, 2) for max(df, 1): 4.30 for 12.71 when G = 2).

    50 units per system and question: A 25 and 25 supported, B 26 and 24. By hand: θ_A = θ_B =
    0.5, D = 0; z_Bq = (26 − 25)/100 = +0.01 and −0.01, z_Aq = 0; SE² = G/(G − 1)·Σ z² =
    2·0.0002, SE = 0.02; the interval 0 ± t_{0.975, 1}·0.02 (t from scipy), inside [−1, 1]."""
    import numpy as np
    from scipy.stats import t as student_t

    from metrics.stats.paired import paired_gold_difference

    values, system, question = [], [], []
    for s, q, k in ((0, "q1", 25), (0, "q2", 25), (1, "q1", 26), (1, "q2", 24)):
        values += [1.0] * k + [0.0] * (50 - k)
        system += [s] * 50
        question += [q] * 50
    est = paired_gold_difference(np.array(values), np.array(system), np.array(question))
    half = float(student_t.ppf(0.975, 1)) * 0.02  # 12.706 · 0.02 = 0.2541
    assert est.value == pytest.approx(0.0, abs=1e-15)
    assert est.se == pytest.approx(0.02, rel=1e-12)
    assert est.ci == (pytest.approx(-half, rel=1e-12), pytest.approx(half, rel=1e-12))
    assert est.n_questions == 2


def test_paired_difference_interval_is_clipped_to_minus_one_one():
    """paired `_finish` `_58` (the upper end clipped at 2 for 1). Two questions, one unit each:
    A 0, 0 and B 1, 0: D = 0.5, SE = |1 − 0|/2 = 0.5 by hand, t₀.₉₇₅,₁ = 12.7 (scipy): the
    interval 0.5 ± 6.35 clipped to [−1, 1], a difference of two shares."""
    import numpy as np

    from metrics.stats.paired import paired_gold_difference

    est = paired_gold_difference(
        np.array([0.0, 0.0, 1.0, 0.0]), np.array([0, 0, 1, 1]), np.array(["q1", "q2", "q1", "q2"])
    )
    assert est.value == pytest.approx(0.5)
    assert est.se == pytest.approx(0.5)
    assert est.ci == (-1.0, 1.0)
