"""The AUC with DeLong's interval (`metrics.stats.ranking.auc_delong`), the one AUC of the
product: the bits block's logit interval with its Wilson fallback, and the Wald interval the
CRC summary and the active design's "is the confidence informative" rule use.

Expected figures come from brute force (DeLong's placement values by a double loop over
positive/negative pairs), scikit-learn (`roc_auc_score`), scipy and statsmodels (Wilson);
never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.stats import norm
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from metrics.stats import ranking

A = pytest.approx
DRAWS = 1000


def _fields(got):
    return (got.value, got.se, got.lower, got.upper, got.positives, got.negatives)


def _delong_ref(x, y, conf=0.95):
    x, y = np.asarray(x, float), np.asarray(y, float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    m, n = x.size, y.size
    psi = np.array([[1.0 if a > b else 0.5 if a == b else 0.0 for b in y] for a in x])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    auc = float(psi.mean())
    var = (np.var(v10, ddof=1) / m if m > 1 else 0.0) + (np.var(v01, ddof=1) / n if n > 1 else 0.0)
    return auc, var, m, n


def _logit_ci(auc, var, conf):
    z = norm.ppf(0.5 + conf / 2)
    lg = math.log(auc / (1 - auc))
    h = z * math.sqrt(var) / (auc * (1 - auc))
    return 1 / (1 + math.exp(-(lg - h))), 1 / (1 + math.exp(-(lg + h)))


@pytest.mark.parametrize(
    ("pos", "neg", "conf"),
    [
        ([0.9, 0.4, 0.7, 0.4, float("nan")], [0.1, 0.4, 0.8, float("nan")], 0.9),
        ([0.6], [0.2, 0.7, 0.6], 0.95),  # one positive: its variance term is 0
        ([0.3, 0.8, 0.5], [0.4], 0.8),  # one negative
        ([0.3, 0.8], [0.4, 0.1], 0.95),  # two of each: s² with ddof 1 over two values
    ],
)
def test_auc_delong_whole_dict_brute_force(pos, neg, conf):
    auc, var, m, n = _delong_ref(pos, neg, conf)
    xs = [v for v in pos if not math.isnan(v)]
    ys = [v for v in neg if not math.isnan(v)]
    assert auc == A(roc_auc_score([1] * len(xs) + [0] * len(ys), xs + ys), rel=1e-12)
    lo, hi = _logit_ci(auc, var, conf)
    got = ranking.auc_delong(pos, neg, conf)
    assert _fields(got) == (
        A(auc, rel=1e-12),
        A(math.sqrt(var), rel=1e-12),
        A(lo, rel=1e-12),
        A(hi, rel=1e-12),
        m,
        n,
    )


def test_auc_delong_perfect_separation_wilson_of_min_m_n():
    got = ranking.auc_delong([0.9, 0.8, 0.7], [0.1, 0.2], 0.9)
    lo, _ = proportion_confint(2, 2, alpha=0.1, method="wilson")
    assert _fields(got) == (1.0, 0.0, A(lo, rel=1e-12), 1.0, 3, 2)
    got = ranking.auc_delong([0.1, 0.2], [0.9, 0.8, 0.7])
    _, hi = proportion_confint(0, 2, alpha=0.05, method="wilson")
    assert _fields(got) == (0.0, 0.0, 0.0, A(hi, rel=1e-12), 2, 3)


def test_auc_delong_all_tied_half_with_zero_variance():
    # every score tied: AUC 1/2, placement values constant, var 0: Wilson of round(1/2·2) of 2
    got = ranking.auc_delong([0.5, 0.5], [0.5, 0.5, 0.5])
    lo, hi = proportion_confint(1, 2, alpha=0.05, method="wilson")
    assert _fields(got) == (0.5, 0.0, A(lo, rel=1e-12), A(hi, rel=1e-12), 2, 3)


def test_auc_delong_single_pair_and_empty():
    got = ranking.auc_delong([0.4], [0.6])
    _, hi = proportion_confint(0, 1, alpha=0.05, method="wilson")
    assert _fields(got) == (0.0, 0.0, 0.0, A(hi), 1, 1)
    got = ranking.auc_delong([], [0.1, float("nan")])
    assert (got.positives, got.negatives, got.n) == (0, 1, 1)
    assert all(math.isnan(x) for x in (got.value, got.se, got.lower, got.upper))


def _auc(scores, truth):
    """The CRC summary's and the active design's AUC: DeLong with the Wald interval."""
    truth = np.asarray(truth).astype(bool)
    return ranking.auc_delong(scores[truth], scores[~truth], interval="wald")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auc_matches_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    y = rng.random(300) < 0.6
    s = np.round(np.where(y, rng.beta(4, 2, 300), rng.beta(2, 3, 300)), 1)  # many ties
    assert _auc(s, y).value == pytest.approx(roc_auc_score(y, s))


def test_delong_variance_by_brute_force():
    rng = np.random.default_rng(5)
    y = rng.random(40) < 0.5
    s = np.round(rng.random(40), 1)
    pos, neg = s[y], s[~y]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(1), psi.mean(0)
    var = v10.var(ddof=1) / pos.size + v01.var(ddof=1) / neg.size
    result = _auc(s, y)
    half = 1.959963984540054 * math.sqrt(var)
    assert result.value == pytest.approx(psi.mean())
    assert result.ci == pytest.approx((psi.mean() - half, min(psi.mean() + half, 1.0)))


def test_delong_interval_covers():
    rng = np.random.default_rng(9)
    # Binormal: positives N(1, 1), negatives N(0, 1): AUC = Φ(1/√2).
    truth = sps.norm.cdf(1 / math.sqrt(2))
    cover = 0
    for _ in range(DRAWS):
        y = rng.random(150) < 0.5
        s = rng.normal(y.astype(float), 1.0)
        lo, hi = _auc(s, y).ci
        cover += lo <= truth <= hi
    assert cover / DRAWS >= 0.93


def test_auc_without_both_classes_is_nan():
    assert math.isnan(_auc(np.array([0.1, 0.2]), np.array([1, 1])).value)


def test_auc_without_negatives_has_every_figure_nan():
    out = ranking.auc_delong([0.9, 0.8], [])
    assert all(math.isnan(x) for x in (out.value, out.se, out.lower, out.upper))
    assert (out.positives, out.negatives) == (2, 0)


def test_an_unknown_interval_is_refused():
    with pytest.raises(ValueError, match="interval must be"):
        ranking.auc_delong([0.9], [0.1], interval="exact")
