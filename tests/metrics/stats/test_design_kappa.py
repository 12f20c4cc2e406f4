"""Cohen's kappa with an interval clustered by answer (`design_kappa`)."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from metrics import stats

V = np.array(["SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"], dtype=object)


def _pairs(table):
    gold, judge = [], []
    for a, row in enumerate(table):
        for b, count in enumerate(row):
            gold += [V[a]] * count
            judge += [V[b]] * count
    return np.array(gold, dtype=object), np.array(judge, dtype=object)


def test_design_kappa_one_claim_per_answer_is_fleiss_cohen_everitt_by_statsmodels():
    table = np.array([[20, 3, 1], [2, 8, 1], [1, 1, 5]])
    gold, judge = _pairs(table)
    n = int(table.sum())
    est = stats.design_kappa(gold, judge)
    ref = cohens_kappa(table)
    assert est.value == pytest.approx(cohen_kappa_score(gold, judge), abs=1e-12)
    assert est.value == pytest.approx(ref.kappa, abs=1e-12)
    # CR1 with G = n answers is n/(n − 1) times the large-sample variance.
    assert est.se == pytest.approx(ref.std_kappa * np.sqrt(n / (n - 1)), rel=1e-9)
    assert est.design_effect == pytest.approx(1.0)


def test_design_kappa_interval_covers_under_intra_answer_correlation():
    """Answers whose judge is mostly right or mostly wrong (ρ ≈ 0.3): the clustered interval
    covers the kappa of a very large world; the independent-claims one (design effect 1) falls
    short on the same draws."""
    rng = np.random.default_rng(7)

    def world(answers):
        sizes = rng.integers(2, 9, answers)
        ids = np.repeat(np.arange(answers), sizes)
        truth = rng.choice(3, ids.size, p=[0.6, 0.2, 0.2])
        right = rng.beta(0.8 * 2.33, 0.2 * 2.33, answers)[ids]
        judge = np.where(rng.random(ids.size) < right, truth, rng.integers(0, 3, ids.size))
        return V[truth], V[judge], ids

    big_g, big_j, _ = world(200_000)
    planted = cohen_kappa_score(big_g, big_j)
    hits = naive = 0
    draws = 400
    for _ in range(draws):
        g, j, ids = world(int(rng.integers(30, 201)))
        est = stats.design_kappa(g, j, ids)
        hits += est.lower <= planted <= est.upper
        flat = stats.design_kappa(g, j)
        naive += flat.lower <= planted <= flat.upper
    assert hits / draws >= 0.93, hits / draws
    assert naive / draws < 0.90, naive / draws


S, N = "SUPPORTED", "NOT_IN_PILE"


# --- metrics.stats.design.design_kappa: two claims are enough ------------------------------


def test_design_kappa_of_two_claims_matches_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    from metrics.stats.design import design_kappa

    gold, judge = [S, N], [S, N]
    assert design_kappa(gold, judge).value == pytest.approx(cohen_kappa_score(gold, judge))
    assert design_kappa(gold, judge).value == pytest.approx(1.0)  # p_o = 1, p_e = 1/2
    swapped = [N, S]
    assert design_kappa(gold, swapped).value == pytest.approx(cohen_kappa_score(gold, swapped))
    assert design_kappa(gold, swapped).value == pytest.approx(-1.0)  # p_o = 0, p_e = 1/2
