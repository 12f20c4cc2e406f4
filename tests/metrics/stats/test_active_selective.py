"""Proof by simulation: selective judging (Trust or Escalate) keeps its guarantee.

A planted project of ~20,000 claims in 5,000 answers and a calibrated judge (confidence AUC ≈ 0.85
for its errors); 1,000 audits of 500 claims drawn uniformly from it. For each audit the threshold
chosen by `selective_threshold` (target 90% agreement, δ = 0.1) is applied to the whole project:
the agreement realised on the claims it accepts must reach 90% in at least 90% of the audits. The
naive rule (the lowest decile threshold whose audited agreement is ≥ 90%, no bound) must not.
"""

import math

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import beta, binom

from metrics import stats
from metrics.stats import active as A

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


# --- active: the selective-judging sentence names its level -------------------------------------


@pytest.mark.parametrize(("delta", "level"), [(0.1, 90), (0.05, 95)])
def test_selective_threshold_sentence_names_the_lower_bounds_level(delta, level):
    """active `selective_threshold` `_241` (the bound's level written as (2 − δ)·100%). 300
    audited claims, all agreeing, confidences 0.5–1: every cut certifies, the lowest is chosen;
    the exact one-sided lower bound of 300 of 300 at level 1 − δ is δ^(1/300) by hand (99.2%,
    99.0%)."""
    import numpy as np

    from metrics import stats

    result = stats.selective_threshold(
        np.linspace(0.5, 1, 300), np.ones(300, bool), target=0.9, delta=delta
    )
    assert result.threshold == 0.5
    assert result.n_accepted == 300  # confidence ≥ 0.5: all (kills `_108`, side "left")
    assert "(100% of audited claims;" in result.method  # kills `_234` (101·m/n)
    bound = 100 * delta ** (1 / 300)
    assert f"agreement 100.0%, lower {level}% bound {bound:.1f}%)" in result.method


def test_selective_threshold_refuses_a_delta_of_zero():
    """active `selective_threshold` `_41` (`0 <= delta`: δ = 0, a bound holding with certainty,
    accepted)."""
    import numpy as np

    from metrics import stats

    with pytest.raises(ValueError, match=r"^delta must be strictly between 0 and 1, got 0"):
        stats.selective_threshold(np.linspace(0.5, 1, 30), np.ones(30, bool), target=0.9, delta=0)


NAN = math.nan


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


def test_selective_threshold_whole_record_from_the_exact_binomial():
    got = A.selective_threshold(
        [0.9, 0.8, 0.7, 0.6], [1, 1, 0, 1], target=0.5, delta=0.5, thresholds=[0.65, 0.85]
    ).as_dict()
    p1, p2 = binom.sf(0, 1, 0.5), binom.sf(1, 3, 0.5)
    lower1, lower2 = beta.ppf(0.5, 1, 1), beta.ppf(0.5, 2, 2)
    same(
        got,
        {
            "accepted_share": 0.75,
            "agreement": 2 / 3,
            "delta": 0.5,
            "lower_bound": lower2,
            "method": "The judge may decide alone at confidence ≥ 0.650 (75% of audited claims; "
            "agreement 66.7%, lower 50% bound 50.0%); fixed-sequence testing over 2 thresholds, "
            "exact binomial, P(agreement ≥ 50%) ≥ 50% over audited claims drawn like these (4 "
            "audited claims, assumed exchangeable: claims of one answer are counted as "
            "independent).",
            "n": 4,
            "n_accepted": 3,
            "target": 0.5,
            "tests": [
                {"agree": 1, "lower": lower1, "n": 1, "p_value": p1, "threshold": 0.85},
                {"agree": 2, "lower": lower2, "n": 3, "p_value": p2, "threshold": 0.65},
            ],
            "threshold": 0.65,
        },
    )
    # the first test fails: nothing certified, the tests stop there
    got = A.selective_threshold([0.9, 0.8], [0, 1], target=0.5, delta=0.2, thresholds=[0.85, 0.5])
    same(
        got.as_dict(),
        {
            "accepted_share": 0.0,
            "agreement": NAN,
            "delta": 0.2,
            "lower_bound": NAN,
            "method": "No threshold certified: the judge may decide no claim alone; "
            "fixed-sequence testing over 2 thresholds, exact binomial, P(agreement ≥ 50%) ≥ 80% "
            "over audited claims drawn like these (2 audited claims, assumed exchangeable: "
            "claims of one answer are counted as independent).",
            "n": 2,
            "n_accepted": 0,
            "target": 0.5,
            "tests": [{"agree": 0, "lower": 0.0, "n": 1, "p_value": 1.0, "threshold": 0.85}],
            "threshold": None,
        },
    )
