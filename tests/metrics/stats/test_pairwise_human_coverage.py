"""Seeded simulations of the analysts' pairwise figures (metrics/stats/pairwise_human.py), each
showing the naive version fails where the product's holds.

The world: every question has its own lean u ~ Beta(0.6, 0.6) (some questions clearly favour
one system, others are a toss-up), a tie chance of 0.15, P(B) = 0.85u, P(A) = 0.85(1 − u); four
analysts mark each question independently given its lean. Marks on one question are therefore
correlated, which is what clustering by question is for.

The population kappa of two analysts is derived by hand from the Beta moments (no estimator
involved): E[u²] = α(α+1)/(2α(2α+1)) = 0.96/2.64, p_o = E[Σ_k p_k²] = 0.85²·2E[u²] + 0.15²,
p_e = Σ_k E[p_k]² = 2·0.425² + 0.15², κ = (p_o − p_e)/(1 − p_e) ≈ 0.2665.
"""

import numpy as np
from scipy.stats import binomtest

from metrics.stats.pairwise_human import decided_preference, kappa_clustered

CHOICES = np.array(["B", "A", "tie"], dtype=object)
ALPHA, TIE, QUESTIONS, ANALYSTS, DRAWS = 0.6, 0.15, 60, 4, 500


def _truth_kappa() -> float:
    eu2 = ALPHA * (ALPHA + 1) / ((2 * ALPHA) * (2 * ALPHA + 1))
    p_o = (1 - TIE) ** 2 * 2 * eu2 + TIE**2
    p_e = 2 * ((1 - TIE) / 2) ** 2 + TIE**2
    return (p_o - p_e) / (1 - p_e)


def _marks(rng) -> np.ndarray:
    """(questions × analysts) marks as codes 0 B, 1 A, 2 tie."""
    u = rng.beta(ALPHA, ALPHA, QUESTIONS)
    p = np.stack([(1 - TIE) * u, (1 - TIE) * (1 - u), np.full(QUESTIONS, TIE)], axis=1)
    draw = rng.random((QUESTIONS, ANALYSTS))
    return (draw[:, :, None] > np.cumsum(p, axis=1)[:, None, :]).sum(axis=2)


def test_kappa_interval_clustered_by_question_covers_and_the_unclustered_one_does_not():
    truth = _truth_kappa()
    assert abs(truth - 0.2664576802507834) < 1e-12
    rng = np.random.default_rng(7)
    first, second = np.triu_indices(ANALYSTS, 1)  # every two analysts on a question
    questions = np.repeat(np.arange(QUESTIONS), first.size)
    covered = naive = 0
    for _ in range(DRAWS):
        marks = _marks(rng)
        x, y = CHOICES[marks[:, first].ravel()], CHOICES[marks[:, second].ravel()]
        clustered = kappa_clustered(x, y, questions)["ci"]
        # The naive interval: each comparison its own cluster, as if independent.
        unclustered = kappa_clustered(x, y, np.arange(x.size))["ci"]
        covered += clustered[0] <= truth <= clustered[1]
        naive += unclustered[0] <= truth <= unclustered[1]
    assert 0.93 <= covered / DRAWS <= 0.97, covered / DRAWS
    assert naive / DRAWS < 0.90, naive / DRAWS


def test_sign_test_over_questions_holds_its_size_and_a_test_over_marks_does_not():
    """No true preference (the lean is symmetric): the sign test over questions rejects at most
    5% of the time; a binomial test over every decided mark, as if marks were independent,
    rejects far more often."""
    rng = np.random.default_rng(11)
    questions = np.repeat(np.arange(QUESTIONS), ANALYSTS)
    rejected = naive = 0
    for _ in range(DRAWS):
        marks = CHOICES[_marks(rng).ravel()]
        result = decided_preference(marks, questions)
        rejected += result["sign_test"]["p_value"] < 0.05
        b, a = int((marks == "B").sum()), int((marks == "A").sum())
        naive += binomtest(b, a + b, 0.5).pvalue < 0.05
    assert rejected / DRAWS <= 0.06, rejected / DRAWS
    assert naive / DRAWS > 0.12, naive / DRAWS  # 19% with this seed
