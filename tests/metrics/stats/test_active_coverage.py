"""Proof by simulation: active and stratified audits cover the planted project faithfulness.

One planted project per judge (module-scoped): ~2,000 claims in 500 answers of 2–6 claims; an
answer's claims share a random effect on their truth (and on the judge's noise), so claims of one
answer are correlated. Two judges: a calibrated one whose confidence tells its errors apart
(AUC ≈ 0.85) and one with the same verdicts whose confidence is nearly noise (AUC ≈ 0.55). Each
audit is drawn 1,000 times: 300 labels by sequential Poisson sampling with π from
`inclusion_probabilities` (the queue's order u/π), or by Neyman allocation over verdict ×
confidence-band strata. The naive figures (the plain mean of the labels, ignoring how they were
drawn) must miss, so the tests can fail.
"""

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import norm

from metrics import stats

DRAWS = 1000
ANSWERS = 200
LABELS = 250
Z = norm.ppf(0.975)
MU, SD_U, KAPPA = 1.4, 1.5, 1.1


def _planted_faithfulness():
    """E[y] = E_u[expit(μ + σu)], u ~ N(0, 1), by 80-point Gauss–Hermite quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    return float(w @ expit(MU + SD_U * x) / w.sum())


TRUTH = _planted_faithfulness()


def _project(rng, informative, answers=ANSWERS):
    """One synthetic project: answer ids, gold y, the judge's P(SUPPORTED) f."""
    ids = np.repeat(np.arange(answers), rng.integers(2, 9, answers))
    n = ids.size
    # truth: an answer's claims share a random effect (latent intra-answer correlation 0.4)
    y = (rng.random(n) < expit(MU + SD_U * rng.normal(size=answers))[ids]).astype(float)
    # the judge sees y through noise that is itself correlated within answers and reports the
    # calibrated posterior P(SUPPORTED | its signal) (prior: the planted rate)
    noise = np.sqrt(0.3) * rng.normal(size=answers)[ids] + np.sqrt(0.7) * rng.normal(size=n)
    f = expit(logit(TRUTH) + 2 * KAPPA * (KAPPA * (2 * y - 1) + noise))
    if not informative:
        # same verdicts, confidence mostly noise: 8% the real one, 92% uniform on (0.55, 0.99)
        conf = 0.08 * np.maximum(f, 1 - f) + 0.92 * rng.uniform(0.55, 0.99, n)
        f = np.where(f >= 0.5, conf, 1 - conf)
    return ids, y, f


def _naive_wilson(y_lab):
    return stats.wilson_interval(int(y_lab.sum()), y_lab.size)


def _bands(f):
    """Strata: the judge's verdict × confidence band (< 0.7, 0.7–0.9, ≥ 0.9)."""
    conf = np.maximum(f, 1 - f)
    return (f >= 0.5).astype(int) * 3 + np.digitize(conf, [0.7, 0.9]), conf


@pytest.fixture(scope="module", params=[True, False], ids=["auc85", "auc55"])
def draws(request):
    """1,000 fresh projects of ~1,000 claims per judge, each audited by active sampling."""
    informative = request.param
    rng = np.random.default_rng(2026 + informative)
    out = {k: np.empty((DRAWS, 2)) for k in ("ppi", "ipw", "ppi_unclustered", "ignore_pi")}
    aucs = []
    for d in range(DRAWS):
        ids, y, f = _project(rng, informative)
        n = y.size
        if d < 20:
            conf = np.maximum(f, 1 - f)
            aucs.append(stats.confidence_informative(conf, (f >= 0.5) != (y > 0.5))[0])
        # π ∝ √(f(1 − f)); the queue's order u/π; the first LABELS claims are labelled
        pi = stats.inclusion_probabilities(np.sqrt(f * (1 - f)), LABELS)
        keys = stats.sequential_poisson_keys(pi, u=rng.random(n))
        lab = np.zeros(n, bool)
        lab[np.argpartition(keys, LABELS - 1)[:LABELS]] = True
        y_seen = np.where(lab, y, np.nan)  # the estimator never sees unlabelled gold
        out["ppi"][d] = stats.active_ppi_mean(y_seen, lab, f, pi, cluster=ids).ci
        out["ipw"][d] = stats.active_ppi_mean(y_seen, lab, None, pi, cluster=ids).ci
        out["ppi_unclustered"][d] = stats.active_ppi_mean(y_seen, lab, f, pi).ci
        out["ignore_pi"][d] = _naive_wilson(y[lab])
    return {"informative": informative, "auc": float(np.mean(aucs)), "cis": out}


@pytest.fixture(scope="module", params=[True, False], ids=["auc85", "auc55"])
def strat_draws(request):
    """1,000 fresh projects of ~4,000 claims per judge, each audited by Neyman allocation over
    verdict × confidence-band strata; the target is each project's own rate (the stratified
    estimate is design-based: it estimates the project's claims, not the process behind them)."""
    informative = request.param
    rng = np.random.default_rng(3026 + informative)
    out = {k: np.empty((DRAWS, 2)) for k in ("strat", "strat_unweighted")}
    truths, allocs = np.empty(DRAWS), []
    for d in range(DRAWS):
        ids, y, f = _project(rng, informative, answers=4 * ANSWERS)
        n = y.size
        truths[d] = y.mean()
        strata, conf = _bands(f)
        labels, codes = np.unique(strata, return_inverse=True)
        big_h = np.bincount(codes).astype(float)
        # the judge's own predicted error rate per stratum gives the prior S_h (floored)
        e_h = np.bincount(codes, weights=1 - conf) / big_h
        alloc = stats.neyman_allocation(big_h, np.maximum(np.sqrt(e_h * (1 - e_h)), 0.05), LABELS)
        allocs.append(int(alloc.sum()))
        order = np.lexsort((rng.random(n), codes))  # a random order within each stratum
        starts = np.r_[0, np.cumsum(big_h.astype(int))[:-1]]
        pick = np.concatenate([order[s : s + a] for s, a in zip(starts, alloc, strict=True)])
        lab = np.zeros(n, bool)
        lab[pick] = True
        sizes = dict(zip(labels.tolist(), big_h.tolist(), strict=True))
        out["strat"][d] = stats.design_proportion(y[lab], ids[lab], strata[lab], sizes).ci
        out["strat_unweighted"][d] = _naive_wilson(y[lab])
    return {"informative": informative, "cis": out, "allocs": allocs, "truths": truths}


def _coverage(ci, truth=TRUTH):
    return float(np.mean((ci[:, 0] <= truth) & (ci[:, 1] >= truth)))


def _half(ci):
    return float(np.median(ci[:, 1] - ci[:, 0]) / 2)


UNIFORM_HALF = Z * np.sqrt(TRUTH * (1 - TRUTH) / LABELS)  # gold only, uniform, independent


def test_planted_judges_have_the_intended_confidence_auc(draws):
    target = 0.85 if draws["informative"] else 0.55
    assert draws["auc"] == pytest.approx(target, abs=0.04)


@pytest.mark.parametrize("estimator", ["ppi", "ipw"])
def test_active_sampling_intervals_cover_the_planted_faithfulness(draws, estimator):
    ci = draws["cis"][estimator]
    cov = _coverage(ci)
    assert 0.93 <= cov <= 0.975, cov
    if estimator == "ppi" and draws["informative"]:
        # an informative judge: narrower than uniform gold-only at the same labels
        assert _half(ci) <= 0.9 * UNIFORM_HALF, (_half(ci), UNIFORM_HALF)
    else:
        # an uninformative confidence (or gold alone) may cost width, but boundedly
        assert _half(ci) <= 1.6 * UNIFORM_HALF, (_half(ci), UNIFORM_HALF)


def test_naive_active_figures_miss(draws):
    """Ignoring π biases the mean when π follows the truth (the informative judge); ignoring
    the answers under-covers in both worlds."""
    cis = draws["cis"]
    if draws["informative"]:
        assert _coverage(cis["ignore_pi"]) < 0.80
    assert _coverage(cis["ppi_unclustered"]) < 0.93


def test_stratified_neyman_intervals_cover_the_planted_faithfulness(strat_draws):
    assert set(strat_draws["allocs"]) == {LABELS}
    ci = strat_draws["cis"]["strat"]
    cov = _coverage(ci, strat_draws["truths"])
    assert 0.93 <= cov <= 0.975, cov
    bound = 0.8 if strat_draws["informative"] else 1.1
    assert _half(ci) <= bound * UNIFORM_HALF, (_half(ci), UNIFORM_HALF)


def test_naive_unweighted_mean_of_neyman_labels_misses(strat_draws):
    """With an informative judge Neyman oversamples the uncertain strata, whose rate differs:
    the unweighted mean misses. With noise for a confidence the allocation is nearly
    proportional and the unweighted mean happens to be close (asserted, so the contrast shows)."""
    cov = _coverage(strat_draws["cis"]["strat_unweighted"], strat_draws["truths"])
    if strat_draws["informative"]:
        assert cov < 0.80, cov
    else:
        assert cov >= 0.90, cov
