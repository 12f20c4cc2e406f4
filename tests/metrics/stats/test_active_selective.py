"""Proof by simulation: selective judging (Trust or Escalate) keeps its guarantee.

A planted project of ~20,000 claims in 5,000 answers and a calibrated judge (confidence AUC ≈ 0.85
for its errors); 1,000 audits of 500 claims drawn uniformly from it. For each audit the threshold
chosen by `selective_threshold` (target 90% agreement, δ = 0.1) is applied to the whole project:
the agreement realised on the claims it accepts must reach 90% in at least 90% of the audits. The
naive rule (the lowest decile threshold whose audited agreement is ≥ 90%, no bound) must not.
"""

import numpy as np
import pytest
from scipy.special import expit, logit

from metrics import stats

DRAWS = 1000
AUDIT = 500
TARGET, DELTA = 0.9, 0.1


@pytest.fixture(scope="module")
def project():
    rng = np.random.default_rng(14)
    answers = 5000
    ids = np.repeat(np.arange(answers), rng.integers(2, 7, answers))
    n = ids.size
    y = (rng.random(n) < expit(1.4 + 1.5 * rng.normal(size=answers))[ids]).astype(float)
    kappa = 1.1
    noise = np.sqrt(0.3) * rng.normal(size=answers)[ids] + np.sqrt(0.7) * rng.normal(size=n)
    f = expit(logit(y.mean()) + 2 * kappa * (kappa * (2 * y - 1) + noise))
    conf = np.maximum(f, 1 - f)
    agree = ((f >= 0.5) == (y > 0.5)).astype(float)
    return conf, agree


def _realised(conf, agree, t):
    """Agreement over the project's claims at or above threshold t (1.0 if none: nothing
    accepted, nothing wrong)."""
    keep = conf >= t
    return float(agree[keep].mean()) if keep.any() else 1.0


def _naive_threshold(conf, agree):
    cands = np.unique(np.quantile(conf, np.linspace(0.9, 0.0, 10)))[::-1]
    chosen = None
    for t in cands:
        if agree[conf >= t].mean() < TARGET:
            break
        chosen = t
    return chosen


@pytest.fixture(scope="module")
def audits(project):
    conf, agree = project
    rng = np.random.default_rng(15)
    guarded, naive, shares = [], [], []
    for _ in range(DRAWS):
        idx = rng.choice(conf.size, AUDIT, replace=False)
        out = stats.selective_threshold(conf[idx], agree[idx], TARGET, DELTA)
        guarded.append(1.0 if out.threshold is None else _realised(conf, agree, out.threshold))
        shares.append(out.accepted_share)
        t = _naive_threshold(conf[idx], agree[idx])
        naive.append(1.0 if t is None else _realised(conf, agree, t))
    return np.array(guarded), np.array(naive), np.array(shares)


def test_planted_judge_is_informative_and_below_target_overall(project):
    conf, agree = project
    auc, informative = stats.confidence_informative(conf, 1 - agree)
    assert auc == pytest.approx(0.85, abs=0.04)
    assert informative
    assert agree.mean() < TARGET  # the judge cannot simply decide everything alone


def test_selective_threshold_guarantee_holds(audits):
    guarded, _, shares = audits
    assert np.mean(guarded >= TARGET) >= 1 - DELTA
    # and it is useful: the judge decides a real share of the claims alone
    assert np.median(shares) >= 0.3


def test_naive_threshold_breaks_the_guarantee(audits):
    _, naive, _ = audits
    assert np.mean(naive >= TARGET) < 1 - DELTA
