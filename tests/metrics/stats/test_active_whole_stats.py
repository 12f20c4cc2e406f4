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


# ------------------------------------------------------------------------------------------
# every refusal's whole message (a changed word must fail)

ONES = np.ones(3)
LAB3 = np.array([True, True, False])
TEN = np.array([True] * 10 + [False] * 2)
Y12 = np.array([1, 0] * 6, dtype=float)

REFUSALS = [
    (lambda: A.inclusion_probabilities([], 1), "error_sd is empty: no claims to draw from"),
    (lambda: A.inclusion_probabilities([NAN], 1), "error_sd contains NaN or infinite values"),
    (lambda: A.inclusion_probabilities([math.inf], 1), "error_sd contains NaN or infinite values"),
    (
        lambda: A.inclusion_probabilities([-0.1], 1),
        "error_sd must be non-negative (a standard deviation)",
    ),
    (
        lambda: A.inclusion_probabilities([0.1], "x"),
        "budget must be a number of labels, got 'x'",
    ),
    (
        lambda: A.inclusion_probabilities([0.1], 0),
        "budget must be a positive number of labels, got 0",
    ),
    (
        lambda: A.inclusion_probabilities([0.1], math.inf),
        "budget must be a positive number of labels, got inf",
    ),
    (lambda: A.inclusion_probabilities([0.1], 1, floor=0), "floor must be in (0, 1], got 0"),
    (lambda: A.inclusion_probabilities([0.1], 1, floor=1.5), "floor must be in (0, 1], got 1.5"),
    (lambda: A.sequential_poisson_keys([0.5, 0.5], u=[0.1]), "u has 1 entries for 2 claims"),
    (
        lambda: A.sequential_poisson_keys([0.5, 0.0]),
        "pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)",
    ),
    (
        lambda: A.sequential_poisson_keys([1.5]),
        "pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)",
    ),
    (lambda: A.active_ppi_mean(ONES, LAB3, None, [0.5, 0.5]), "pi has 2 entries for 3 claims"),
    (lambda: A.active_ppi_mean([1, 0], LAB3, None, ONES), "y has 2 entries for 3 claims"),
    (
        lambda: A.active_ppi_mean(ONES, LAB3, [0.5, 0.5], ONES),
        "prediction has 2 entries for 3 claims",
    ),
    (
        lambda: A.active_ppi_mean(ONES, LAB3, None, ONES, cluster=[1, 2]),
        "cluster has 2 entries for 3 claims",
    ),
    (
        lambda: A.active_ppi_mean(ONES, LAB3, None, [0.5, 0.4, 0.5], cluster=[1, None, 2]),
        "cluster ids must not be missing (None/NaN)",
    ),
    (
        lambda: A.neyman_next_stratum([1], [2, 3], [0.5]),
        "n_h, N_h and sd_h differ in length: 1, 2, 1 strata",
    ),
    (lambda: A.neyman_next_stratum([], [], []), "N_h is empty: no strata"),
    (
        lambda: A.neyman_next_stratum([-1], [2], [0.5]),
        "n_h must hold non-negative numbers (no NaN)",
    ),
    (
        lambda: A.neyman_next_stratum([1], [NAN], [0.5]),
        "N_h must hold non-negative numbers (no NaN)",
    ),
    (
        lambda: A.neyman_next_stratum([1], [2], [-0.5]),
        "sd_h must hold non-negative numbers (no NaN)",
    ),
    (lambda: A.neyman_next_stratum([0], [0], [0.5]), "N_h sums to zero: no claims in any stratum"),
    (
        lambda: A.neyman_next_stratum([2, 3], [2, 3], [0.5, 0.5]),
        "every stratum is fully labelled (n_h ≥ N_h): no claim left to serve",
    ),
    (
        lambda: A.neyman_allocation([5], [0.5], 1.5),
        "n must be a whole number of labels ≥ 0, got 1.5",
    ),
    (lambda: A.neyman_allocation([5], [0.5], -1), "n must be a whole number of labels ≥ 0, got -1"),
    (
        lambda: A.neyman_allocation([2, 3], [0.5, 0.5], 6),
        "n = 6 labels is more than the 5 claims of the strata",
    ),
    (
        lambda: A.neyman_allocation([5], [0.5], 2, minimum=-1),
        "minimum must be a whole number ≥ 0, got -1",
    ),
    (
        lambda: A.neyman_allocation([5, 5], [0.5, 0.5], 3, minimum=2),
        "minimum = 2 labels per stratum needs 4, more than n = 3",
    ),
    (
        lambda: A.labels_needed(0.1, "magic", ONES, LAB3),
        "design must be one of ('uniform_gold', 'uniform_ppi', 'active', 'stratified'), got "
        "'magic'",
    ),
    (
        lambda: A.labels_needed(1.0, "uniform_gold", ONES, LAB3),
        "half_width must be in (0, 1), got 1.0",
    ),
    (
        lambda: A.labels_needed(0.0, "uniform_gold", ONES, LAB3),
        "half_width must be in (0, 1), got 0.0",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_gold", ONES, LAB3, pi=[0.5]),
        "pi has 1 entries for 3 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_gold", ONES, LAB3, cluster=[1]),
        "cluster has 1 entries for 3 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_gold", Y12[:5], TEN),
        "y has 5 entries for 12 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "stratified", Y12, TEN),
        "strata are required for the stratified design",
    ),
    (
        lambda: A.labels_needed(0.1, "stratified", Y12, TEN, strata=["a"]),
        "strata has 1 entries for 12 claims",
    ),
    (
        lambda: A.labels_needed(0.1, "active", Y12, TEN),
        "prediction (the judge's P(SUPPORTED)) is required for active",
    ),
    (
        lambda: A.labels_needed(0.1, "uniform_ppi", Y12, TEN, prediction=[0.5]),
        "prediction has 1 entries for 12 claims",
    ),
    (
        lambda: A.labels_needed(
            0.1, "active", Y12, TEN, prediction=np.full(12, 0.5), design_pi=[0.5]
        ),
        "design_pi has 1 entries for 12 claims",
    ),
]


@pytest.mark.parametrize(("call", "message"), REFUSALS)
def test_refusals_say_exactly_why(call, message):
    with pytest.raises(ValueError) as err:  # noqa: PT011 — the whole message is compared below
        call()
    assert str(err.value) == message


# ------------------------------------------------------------------------------------------
# the forecast and the gain: whole records


def test_labels_needed_with_too_few_labels_is_n_a():
    got = A.labels_needed(0.1, "uniform_gold", ONES, LAB3).as_dict()
    same(
        got,
        {
            "design": "uniform_gold",
            "half_width": 0.1,
            "labels_total": None,
            "labels_more": None,
            "half_width_now": None,
            "labelled": 2,
            "variance_unit": NAN,
            "variance_floor": NAN,
            "design_effect": NAN,
            "confidence": 0.95,
            "method": "uniform sampling, gold only: n/a, fewer than 10 labels to estimate the "
            "variance from.",
            "extra": {},
        },
    )
    saved = A.labels_saved(
        A.labels_needed(0.1, "uniform_gold", ONES, LAB3),
        A.labels_needed(0.1, "uniform_gold", ONES, LAB3),
    )
    same(
        saved.as_dict(),
        {
            "design": "uniform_gold",
            "labels_used": 2,
            "labels_gold_only": None,
            "saved": None,
            "ratio": NAN,
            "half_width": None,
            "method": "Labels saved: n/a (too few labels to compare the designs).",
        },
    )


def test_labels_needed_uniform_gold_by_hand_and_its_gain():
    """10 independent labels, 5 SUPPORTED: V₁ = p(1 − p) = 0.25, t at 9 df, n* = ⌈V₁t²/x²⌉,
    ±t·√(V₁/10) now; the gold-only design against itself saves nothing."""
    got = A.labels_needed(0.2, "uniform_gold", Y12, TEN)
    t = student_t.ppf(0.975, 9)
    total = math.ceil(0.25 * t**2 / 0.2**2)
    now = t * math.sqrt(0.25 / 10)
    assert total == 32
    same(
        got.as_dict(),
        {
            "design": "uniform_gold",
            "half_width": 0.2,
            "labels_total": total,
            "labels_more": total - 10,
            "half_width_now": now,
            "labelled": 10,
            "variance_unit": 0.25,
            "variance_floor": 0.0,
            "design_effect": 1.0,
            "confidence": 0.95,
            "method": "uniform sampling, gold only: about 22 more labels (32 in all) to reach "
            "±0.200 (95%), from the 10 labels so far (±0.358 now; per-label variance 0.2500, "
            "design effect 1.00; more labels than the project has claims (12): import about 20 "
            "more answers or accept a wider interval); a forecast from the current variance "
            "estimates, not a promise.",
            "extra": {},
        },
    )
    saved = A.labels_saved(got, got).as_dict()
    n_gold = math.ceil(0.25 / (0.25 / 10))
    same(
        saved,
        {
            "design": "uniform_gold",
            "labels_used": 10,
            "labels_gold_only": n_gold,
            "saved": n_gold - 10,
            "ratio": 10 / n_gold,
            "half_width": now,
            "method": "At ±0.358 the uniform sampling, gold only used 10 labels; uniform "
            "gold-only would have needed about 10 (saved 0 labels, 100% of gold-only's), "
            "measured on this project's labels from the two designs' variance estimates, not a "
            "promise.",
        },
    )
    with pytest.raises(ValueError) as err:  # noqa: PT011
        A.labels_saved(got, A.labels_needed(0.2, "stratified", Y12, TEN, strata=["a"] * 12))
    assert str(err.value) == "gold_only must be the uniform_gold forecast, got 'stratified'"


def test_inclusion_probabilities_small_cases_by_hand():
    assert A.inclusion_probabilities([0.1, 0.2], 2).tolist() == [1.0, 1.0]
    assert A.inclusion_probabilities([0.0, 0.0, 0.0, 0.0], 2).tolist() == [0.5] * 4
    # sd 0.3, 0.1, 0.1, 0.1 with budget 2: c·0.3 would pass 1 → capped, the rest share 1
    got = A.inclusion_probabilities([0.9, 0.1, 0.1, 0.1], 2)
    np.testing.assert_allclose(got, [1.0, 1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    # the floor: sd 0 gets floor·mean(sd) = 0.05·0.25 = 0.0125
    got = A.inclusion_probabilities([0.0, 0.5, 0.5, 0.0], 1)
    s = np.array([0.0125, 0.5, 0.5, 0.0125])
    np.testing.assert_allclose(got, s / s.sum(), rtol=1e-12)


def test_neyman_small_cases_by_hand():
    # an empty stratum first (the larger N_h among the empty ones)
    assert A.neyman_next_stratum([0, 3, 0], [5, 10, 8], [0.5, 0.5, 0.5]) == 2
    # Δ_h = W_h² S_h² (1/n_h − 1/(n_h + 1)): (0.5²·0.25·(1/2 − 1/3), 0.5²·0.01·(1/1 − 1/2))
    assert A.neyman_next_stratum([2, 1], [10, 10], [0.5, 0.1]) == 0
    # a fully labelled stratum is never served
    assert A.neyman_next_stratum([10, 5], [10, 10], [0.5, 0.1]) == 1
    # n_h ∝ N_h S_h: 10·0.5 : 10·0.1 → 5/6 and 1/6 of 6 labels
    assert A.neyman_allocation([10, 10], [0.5, 0.1], 6).tolist() == [5, 1]
    assert A.neyman_allocation([10, 10], [0.0, 0.0], 4).tolist() == [2, 2]
    assert A.neyman_allocation([2, 10], [0.9, 0.1], 5).tolist() == [2, 3]  # capped at N_h
    assert A.neyman_allocation([10, 10], [0.5, 0.0], 6, minimum=2).tolist() == [4, 2]
    assert A.neyman_allocation([10, 10], [0.5, 0.5], 5).dtype == np.int64


def test_confidence_informative_from_delong():
    from sklearn.metrics import roc_auc_score

    conf = np.array([0.9, 0.8, 0.85, 0.3, 0.95, 0.2, 0.88, 0.4, 0.92, 0.1] * 3)
    error = np.array([0, 0, 0, 1, 0, 1, 0, 1, 0, 1] * 3)
    auc, informative = A.confidence_informative(conf, error)
    assert auc == pytest.approx(roc_auc_score(error, -conf), rel=1e-12)
    assert informative is True
    auc, informative = A.confidence_informative([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1])
    assert auc == 0.5
    assert informative is False
    with pytest.raises(ValueError) as err:  # noqa: PT011
        A.confidence_informative([0.5], [0, 1])
    assert str(err.value) == "confidence and error differ in length: 1 vs 2"
    with pytest.raises(ValueError) as err:  # noqa: PT011
        A.confidence_informative([NAN], [0])
    assert str(err.value) == "confidence contains NaN"
