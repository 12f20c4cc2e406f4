"""metrics.stats.active's whole returned records for tiny inputs (issue 21: mutation testing).

Every key of `active_ppi_mean`'s DesignEstimate (its `extra` too) and of `selective_threshold`'s
record is compared with a literal; the figures behind them are derived here by hand: the Hájek
mean Σwy/Σw, Kish's n = (Σw)²/Σw², the CR1 variance by answer of the influence w(y − ȳ)/W, the
independent one, the effective size θ(1 − θ)/V·(z/t)², and scipy's exact binomial tail and
beta quantile for the selective test.
"""

import math

import numpy as np
import pytest
from scipy.stats import beta, binom, norm
from scipy.stats import t as student_t

from metrics.stats import active as A
from tests.metrics import independent as ref

NAN = math.nan
Y = np.array([1, 0, 1, 1, 0, 1, 0, 0], dtype=float)
LAB = np.array([1, 1, 1, 1, 1, 1, 0, 0], dtype=bool)
PI = np.array([0.2, 0.5, 0.8, 0.4, 0.25, 0.6, 0.5, 0.5])
CL = np.array([1, 1, 2, 2, 3, 4, 4, 5])


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


def _by_hand(cluster):
    w = 1 / PI[LAB]
    yl = Y[LAB]
    big_w = w.sum()
    theta = (w * yl).sum() / big_w
    a = w * (yl - theta) / big_w
    groups = np.unique(cluster[LAB])
    totals = np.array([a[cluster[LAB] == g].sum() for g in groups])
    g = groups.size
    var = g / (g - 1) * (totals**2).sum()
    var0 = 6 / 5 * (a**2).sum()
    t = student_t.ppf(0.975, g - 1)
    # the Wilson interval at n* = θ(1 − θ)/max(V, V₀)·(z/t)² (never more than independent)
    n_eff = theta * (1 - theta) / max(var, var0)
    z = norm.ppf(0.975)
    n_star = n_eff * (z / t) ** 2
    centre = (theta + z**2 / (2 * n_star)) / (1 + z**2 / n_star)
    half = (
        z * math.sqrt(theta * (1 - theta) / n_star + z**2 / (4 * n_star**2)) / (1 + z**2 / n_star)
    )
    return {
        "theta": theta,
        "kish": big_w**2 / (w**2).sum(),
        "se": math.sqrt(var),
        "deff": var / var0,
        "n_eff": n_eff,
        "ci": (centre - half, centre + half),
    }


def test_active_ppi_mean_gold_only_clustered_whole_record():
    got = A.active_ppi_mean(Y, LAB, None, PI, cluster=CL).as_dict()
    hand = _by_hand(CL)
    assert hand["theta"] == pytest.approx(
        (5 + 1.25 + 2.5 + 1 / 0.6) / (5 + 2 + 1.25 + 2.5 + 4 + 1 / 0.6)
    )
    same(
        got,
        {
            "ci": hand["ci"],
            "low": hand["ci"][0],
            "high": hand["ci"][1],
            "design_effect": hand["deff"],
            "df": 3.0,
            "extra": {
                "N": 8,
                "answers": 5,
                "effective_n": hand["n_eff"],
                "kish_n": hand["kish"],
                "labelled": 6,
                "labelled_answers": 4,
                "lambda": 0.0,
                "tuned": False,
            },
            "method": "Inverse-probability estimate from gold alone (Hájek weights 1/π, 6 labels "
            "of 8 claims), clustered by answer (4 labelled answers of 5); Wilson interval at the "
            "effective sample size (4), design effect 0.78, t with 3 df.",
            "n": 6,
            "n_clusters": 4,
            "n_strata": 1,
            "std_error": hand["se"],
            "unseen_share": 0.0,
            "value": hand["theta"],
        },
    )


def test_active_ppi_mean_gold_only_independent_claims_whole_record():
    got = A.active_ppi_mean(Y, LAB, None, PI).as_dict()
    hand = _by_hand(np.arange(8))
    assert hand["deff"] == pytest.approx(1.0)
    same(
        got,
        {
            "ci": hand["ci"],
            "low": hand["ci"][0],
            "high": hand["ci"][1],
            "design_effect": 1.0,
            "df": 5.0,
            "extra": {
                "N": 8,
                "answers": 8,
                "effective_n": hand["n_eff"],
                "kish_n": hand["kish"],
                "labelled": 6,
                "labelled_answers": 6,
                "lambda": 0.0,
                "tuned": False,
            },
            "method": "Inverse-probability estimate from gold alone (Hájek weights 1/π, 6 labels "
            "of 8 claims); Wilson interval at the effective sample size (4), design effect 1.00, t "
            "with 5 df.",
            "n": 6,
            "n_clusters": 6,
            "n_strata": 1,
            "std_error": hand["se"],
            "unseen_share": 0.0,
            "value": hand["theta"],
        },
    )


def _nothing(n, value, method):
    return {
        "ci": (NAN, NAN),
        "low": NAN,
        "high": NAN,
        "design_effect": NAN,
        "df": NAN,
        "extra": {"N": 8, "labelled": n},
        "method": method,
        "n": n,
        "n_clusters": n,
        "n_strata": 1,
        "std_error": NAN,
        "unseen_share": 0.0,
        "value": value,
    }


def test_active_ppi_mean_with_one_label_or_none():
    one = np.zeros(8, dtype=bool)
    one[0] = True
    same(
        A.active_ppi_mean(Y, one, None, PI).as_dict(),
        _nothing(1, 1.0, "One labelled claim: too few to estimate a variance; label more."),
    )
    same(
        A.active_ppi_mean(Y, one, np.full(8, 0.5), PI).as_dict(),
        _nothing(1, NAN, "One labelled claim: too few to estimate a variance; label more."),
    )
    same(
        A.active_ppi_mean(Y, np.zeros(8, dtype=bool), None, PI).as_dict(),
        _nothing(0, NAN, "No labelled claim yet: nothing to estimate from."),
    )


def test_constant_pi_is_the_simple_random_sample_wilson_and_ppi():
    got = A.active_ppi_mean(Y, LAB, None, np.full(8, 0.3)).as_dict()
    low, high = ref.wilson(4, 6)
    same(
        got,
        {
            "ci": (low, high),
            "low": low,
            "high": high,
            "design_effect": 1.0,
            "df": math.inf,
            "extra": {"N": 8, "labelled": 6, "independent": True, "lambda": 0.0},
            "method": "Wilson interval on the 6 labels (uniform inclusion, one claim per answer: "
            "a simple random sample).",
            "n": 6,
            "n_clusters": 6,
            "n_strata": 1,
            "std_error": math.sqrt(4 / 6 * 2 / 6 / 6),
            "unseen_share": 0.0,
            "value": 4 / 6,
        },
    )
    f = np.array([0.9, 0.2, 0.7, 0.8, 0.3, 0.6, 0.4, 0.9])
    got = A.active_ppi_mean(Y, LAB, f, np.full(8, 0.3)).as_dict()
    value, (low, high), lam = ref.ppi(Y[LAB], f[LAB], f[~LAB])
    assert got["value"] == pytest.approx(value, abs=1e-9)
    assert got["ci"] == pytest.approx((max(low, 0.0), min(high, 1.0)), abs=1e-9)
    assert got["extra"]["lambda"] == pytest.approx(lam, abs=1e-6)
    rect = Y[LAB] - got["extra"]["lambda"] * f[LAB]
    se = math.sqrt(np.var(rect) / 6 + got["extra"]["lambda"] ** 2 * np.var(f[~LAB]) / 2)
    assert got["std_error"] == pytest.approx(se, rel=1e-9)
    assert set(got["extra"]) == {"lambda", "labelled", "N", "independent", "tuned"}
    assert got["extra"]["tuned"] is True
    assert got["extra"]["independent"] is True
    assert got["method"] == (
        f"PPI++ (uniform inclusion, one claim per answer: a simple random sample), power-tuned "
        f"λ={got['extra']['lambda']:.2f}, 6 labels of 8 claims, normal interval."
    )
    assert (got["design_effect"], got["df"], got["n"], got["n_clusters"]) == (1.0, math.inf, 6, 6)


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
