"""Analysts' pairwise preferences and their agreement with the pairwise judge
(metrics/stats/pairwise_human.py), pinned to hand derivations, statsmodels and scikit-learn."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from metrics.stats.pairwise_human import (
    clustered_mean,
    clustered_share,
    human_judge_agreement,
    human_preference,
    judge_pair_verdict,
)


@pytest.mark.parametrize(
    ("b_first", "a_first", "expected"),
    [
        # B's score p = (score(b_first) + 1 − score(a_first))/2, first 1, tie ½, second 0.
        ("first", "second", "B"),  # B won in both orders: p = 1
        ("first", "tie", "B"),  # p = ¾
        ("tie", "second", "B"),  # p = ¾
        ("first", "first", "tie"),  # the first position won both times: a split, p = ½
        ("second", "second", "tie"),  # the second position won both times, p = ½
        ("tie", "tie", "tie"),
        ("second", "tie", "A"),  # p = ¼
        ("tie", "first", "A"),
        ("second", "first", "A"),  # A won in both orders: p = 0
    ],
)
def test_judge_pair_verdict_combines_both_orders(b_first, a_first, expected):
    assert judge_pair_verdict(b_first, a_first) == expected


def test_judge_pair_verdict_refuses_unparseable():
    with pytest.raises(ValueError, match="first, second or tie"):
        judge_pair_verdict("UNPARSEABLE", "first")


def _statsmodels_cluster(y, clusters):
    codes = np.unique(clusters, return_inverse=True)[1]
    fit = sm.OLS(np.asarray(y, float), np.ones(len(y))).fit(
        cov_type="cluster", cov_kwds={"groups": codes}, use_t=True
    )
    return fit.params[0], fit.bse[0], tuple(fit.conf_int(alpha=0.05)[0])


def test_clustered_mean_is_statsmodels_cluster_robust_mean():
    rng = np.random.default_rng(15)
    clusters = np.repeat(np.arange(30), rng.integers(1, 4, size=30))
    effect = rng.normal(0.5, 0.15, size=30)[clusters]
    y = np.clip(np.round((effect + rng.normal(0, 0.2, clusters.size)) * 2) / 2, 0, 1)
    value, se, ci = _statsmodels_cluster(y, clusters)
    got = clustered_mean(y, clusters)
    assert got["value"] == pytest.approx(value)
    assert got["std_error"] == pytest.approx(se)
    assert got["ci"] == pytest.approx(ci)
    assert (got["n"], got["n_clusters"]) == (clusters.size, 30)


def test_clustered_mean_with_one_value_per_cluster_is_the_t_interval():
    y = np.array([1, 0.5, 0, 1, 0.5, 0.5, 1, 0, 1, 0.5])
    got = clustered_mean(y, np.arange(10))
    low, high = stats.t.interval(0.95, 9, loc=y.mean(), scale=stats.sem(y))
    assert got["ci"] == pytest.approx((low, high))
    # Near 1 the interval is clipped to the scale of a share.
    y = np.array([1, 0.5, 0, 1, 1, 0.5, 1, 0, 1, 1])
    low, high = stats.t.interval(0.95, 9, loc=y.mean(), scale=stats.sem(y))
    assert high > 1
    assert clustered_mean(y, np.arange(10))["ci"] == pytest.approx((low, 1.0))


def test_clustered_mean_without_two_clusters_has_no_interval():
    got = clustered_mean([1.0, 0.0], ["q", "q"])
    assert got["value"] == 0.5
    assert np.isnan(got["ci"][0])
    assert np.isnan(got["ci"][1])


def test_clustered_share_hand_worked_clusters_then_wilson_at_the_effective_size():
    """x = 1 1 | 0 0 | 1 0 | 1 1 in 4 questions. θ = 5/8; deviations sum per question to
    6/8, −10/8, −2/8, 6/8, squares 176/64; V = 4/3 · (176/64) / 8² = 0.0572917;
    V₀ = θ(1−θ)/n = 15/512; design effect 1.95556; n* = 8/1.95556 = 4.0909."""
    x = [1, 1, 0, 0, 1, 0, 1, 1]
    q = ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"]
    v = 4 / 3 * (176 / 64) / 64
    n_eff = 8 / (v / (15 / 512))
    assert n_eff == pytest.approx(4.0909, abs=1e-4)
    got = clustered_share(x, q)
    assert got["n_effective"] == pytest.approx(n_eff)
    assert got["ci"] == pytest.approx(
        proportion_confint(5 / 8 * n_eff, n_eff, alpha=0.05, method="wilson")
    )


def test_clustered_share_of_independent_outcomes_is_wilson_at_n_minus_one():
    """One outcome per question: V/V₀ = n/(n−1) exactly (CR1's G/(G−1)), so n* = n − 1."""
    x = [1] * 14 + [0] * 6
    got = clustered_share(x, range(20))
    assert got["n_effective"] == pytest.approx(19)
    assert got["ci"] == pytest.approx(proportion_confint(0.7 * 19, 19, alpha=0.05, method="wilson"))


def test_clustered_share_all_agree_counts_each_question_once():
    got = clustered_share([1, 1, 1, 1, 1, 1], ["a", "a", "b", "b", "c", "c"])
    low, high = proportion_confint(3, 3, alpha=0.05, method="wilson")
    assert got["value"] == 1.0
    assert got["ci"] == pytest.approx((low, 1.0))


def test_human_preference_scores_ties_half_and_counts():
    got = human_preference(["B", "B", "tie", "A"], ["q1", "q1", "q2", "q3"])
    assert got["value"] == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    assert got["counts"] == {"B": 2, "A": 1, "tie": 1}
    with pytest.raises(ValueError, match="B, A or tie"):
        human_preference(["left"], ["q1"])


def test_human_judge_agreement_share_kappa_and_table():
    human = ["B", "B", "A", "tie", "B", "A", "B", "tie", "A", "B"]
    judge = ["B", "A", "A", "tie", "B", "A", "tie", "B", "A", "B"]
    questions = ["q1", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"]
    got = human_judge_agreement(human, judge, questions)
    assert got["share"]["value"] == pytest.approx(7 / 10)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(human, judge))
    # Rows the analysts, columns the judge, order B, A, tie: counted by hand.
    assert got["confusion"]["counts"] == [[3, 1, 1], [0, 3, 0], [1, 0, 1]]
    assert got["n"] == 10
    assert got["share"]["n_clusters"] == 9


def test_clustered_mean_covers_a_planted_preference_when_analysts_share_pairs():
    """Seeded simulation: 60 pairs, 3 analysts mark each; a pair's true P(B preferred) is
    p ~ clip(N(0.6, 0.3), 0, 1), so analysts of one pair agree more than analysts of
    different pairs. A mark is B with probability 0.9·p, a tie with 0.1, else A, so
    E[score] = 0.9·E[p] + 0.05 with E[p] = ∫₀¹ P(N(0.6, 0.3) > t) dt (scipy's quad). The
    interval clustered by question covers that planted mean in ≥ 93% of 1,000 draws; treating
    the 180 marks as independent (one cluster per mark) covers it visibly less often."""
    from scipy.integrate import quad

    e_p = quad(lambda t: stats.norm.sf(t, 0.6, 0.3), 0, 1)[0]
    planted = 0.9 * e_p + 0.05
    rng = np.random.default_rng(20261201)
    questions = np.repeat(np.arange(60), 3)
    clustered = naive = 0
    draws = 1000
    for _ in range(draws):
        p_pair = np.clip(rng.normal(0.6, 0.3, size=60), 0, 1)[questions]
        u = rng.random(questions.size)
        scores = np.where(u < p_pair * 0.9, 1.0, np.where(u < p_pair * 0.9 + 0.1, 0.5, 0.0))
        low, high = clustered_mean(scores, questions)["ci"]
        clustered += low <= planted <= high
        low, high = clustered_mean(scores, np.arange(questions.size))["ci"]
        naive += low <= planted <= high
    assert clustered / draws >= 0.93, (clustered, naive)
    assert naive / draws < clustered / draws - 0.05, (clustered, naive)
