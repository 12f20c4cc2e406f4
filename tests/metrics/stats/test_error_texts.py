"""Every error path of `metrics.stats`, through the function users call: the exception type and
the WHOLE message, exactly (mutmut wraps a message in "XX…XX" or changes its case, and renames
the argument names helpers are given, e.g. ``_as_judge(prediction, "prediction")``: a
``match="part"`` does not see either). Each check's boundary is pinned too: the last accepted
value passes, the first refused one raises (``<`` against ``<=``).

Messages are literals read off the code; no product function computes an expected value here.
"""

import importlib
import math

import numpy as np
import pytest

from metrics.stats import (
    _common,
    active,
    calibration,
    conformal,
    conformal_splits,
    design,
    heterogeneity,
    intervals,
    paired,
    pairwise,
    pairwise_human,
    prevalence,
    rates,
)

# `metrics.stats.agreement` is also a function the package exports: the module by name
agreement = importlib.import_module("metrics.stats.agreement")

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
NAN = float("nan")
VERDICTS_TEXT = "('SUPPORTED', 'CONTRADICTED', 'NOT_IN_PILE')"
DESIGNS_TEXT = "('uniform_gold', 'uniform_ppi', 'active', 'stratified')"


def case(fn, *args, _exc=ValueError, _msg, _id, **kwargs):
    return pytest.param(fn, args, kwargs, _exc, _msg, id=_id)


def check(fn, args, kwargs, exc, msg):
    with pytest.raises(exc) as err:
        fn(*args, **kwargs)
    assert type(err.value) is exc
    assert str(err.value) == msg


def binary_msg(name):
    return f"{name} must hold only 0/1 (or True/False)"


def verdict_msg(name, found):
    return (
        f"{name} must be 0/1 or one of {VERDICTS_TEXT}; found {found} "
        "(drop UNPARSEABLE / missing rows before calling)"
    )


def judge_msg(name):
    return f"{name} must be 0/1 verdicts or probabilities in [0, 1]"


# -- _common: confidence, counts, 0/1 coercion, NaN ----------------------------------------------

COMMON = [
    case(_common.check_confidence, 0.0, _id="conf-0",
         _msg="confidence must be strictly between 0 and 1, got 0.0"),
    case(_common.check_confidence, 1.0, _id="conf-1",
         _msg="confidence must be strictly between 0 and 1, got 1.0"),
    case(_common.z_value, -0.5, _id="z-neg",
         _msg="confidence must be strictly between 0 and 1, got -0.5"),
    case(design.design_proportion, [1, 0], confidence=1, _id="conf-via-design",
         _msg="confidence must be strictly between 0 and 1, got 1"),
    # check_count with its default name ("successes"), through the Wilson interval
    case(intervals.wilson_interval, 1.5, 3, _id="count-frac-k",
         _msg="successes and n must be whole numbers, got 1.5, 3"),
    case(intervals.clopper_pearson_interval, 1, 3.5, _id="count-frac-n",
         _msg="successes and n must be whole numbers, got 1, 3.5"),
    case(intervals.wilson_interval, 4, 3, _id="count-k-above-n",
         _msg="need 0 <= successes <= n, got successes=4, n=3"),
    case(intervals.wilson_interval, -1, 3, _id="count-k-negative",
         _msg="need 0 <= successes <= n, got successes=-1, n=3"),
    case(intervals.wilson_interval, 0, -1, _id="count-n-negative",
         _msg="need 0 <= successes <= n, got successes=0, n=-1"),
    case(heterogeneity.rate_equality_test, [3, 1], [2, 4], _id="count-heterogeneity",
         _msg="need 0 <= successes <= n, got successes=3, n=2"),
    # the names the Rogan–Gladen counts are checked under
    case(prevalence.rogan_gladen_interval, 5, 4, 1, 1, 1, 1, _id="count-pos",
         _msg="need 0 <= pos <= n, got pos=5, n=4"),
    case(prevalence.rogan_gladen_variance, 1, 4, 3, 2, 1, 1, _id="count-se",
         _msg="need 0 <= se_successes <= n, got se_successes=3, n=2"),
    case(prevalence.rogan_gladen_interval, 1, 4, 1, 1, 2, 1, _id="count-sp",
         _msg="need 0 <= sp_successes <= n, got sp_successes=2, n=1"),
    case(prevalence.rogan_gladen_interval, 1, 4, 0.5, 1, 1, 1, _id="count-se-frac",
         _msg="se_successes and n must be whole numbers, got 0.5, 1"),
    # as_binary: numbers, verdict strings, an object array of numbers
    case(design.design_proportion, [0, 2], _id="binary-number",
         _msg=binary_msg("outcome")),
    case(design.design_proportion, np.array([S, "maybe"], dtype=object), _id="binary-verdict",
         _msg=verdict_msg("outcome", "'maybe'")),
    case(design.design_proportion, [S, None], _id="binary-verdict-none",
         _msg=verdict_msg("outcome", "None")),
    case(design.design_proportion, [1, None], _id="binary-object-numbers",
         _msg=binary_msg("outcome")),
    case(design.design_proportion, np.array([1, 0.5], dtype=object), _id="binary-object-half",
         _msg=binary_msg("outcome")),
    # the helpers' own default name, called directly
    case(_common.as_binary, [0, 2], _id="binary-default-name", _msg=binary_msg("values")),
    case(_common.as_float_array, [NAN], _id="float-default-name", _msg="values contains NaN"),
    # as_float_array: a missing confidence
    case(calibration.expected_calibration_error, [0.5, NAN], [1, 0], _id="float-nan",
         _msg="confidence contains NaN"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "exc", "msg"), COMMON)
def test_common_errors(fn, args, kwargs, exc, msg):
    check(fn, args, kwargs, exc, msg)


def test_common_boundaries_pass():
    assert _common.check_confidence(1e-9) == 1e-9
    assert _common.check_confidence(1 - 1e-9) == 1 - 1e-9
    assert _common.check_count(3, 3) == (3, 3)
    assert _common.check_count(0, 0) == (0, 0)
    assert _common.check_count(2.0, 3.0) == (2, 3)
    assert _common.as_binary([0, 1, True]).tolist() == [0.0, 1.0, 1.0]
    assert _common.as_binary(np.array([1, 0], dtype=object)).tolist() == [1.0, 0.0]
    assert _common.as_binary([S, C, N]).tolist() == [1.0, 0.0, 0.0]
    assert _common.as_binary([]).size == 0
    assert _common.as_float_array([0.25, 1]).tolist() == [0.25, 1.0]


def test_calibrators_refuse_a_nan_confidence():
    platt = calibration.platt_calibrator([0.2, 0.8, 0.3, 0.9], [0, 1, 1, 0])
    iso = calibration.isotonic_calibrator([0.2, 0.8], [0, 1])
    for calibrator in (platt, iso):
        check(calibrator, ([0.5, NAN],), {}, ValueError, "confidence contains NaN")


# -- active ----------------------------------------------------------------------------------------

LAB3 = [True, True, False]
PI3 = [0.5, 0.5, 0.5]
FORECAST_KW = {"design": "active", "half_width": 0.1, "labels_total": None, "labels_more": None,
               "half_width_now": None, "labelled": 0, "variance_unit": NAN,
               "variance_floor": NAN, "design_effect": NAN, "confidence": 0.95, "method": ""}  # fmt: skip

# twelve claims, ten labelled (MIN_LABELS): the forecast reads them
Y12 = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, NAN, NAN]
L12 = [True] * 10 + [False] * 2
F12 = [0.9, 0.2, 0.8, 0.7, 0.3, 0.6, 0.9, 0.8, 0.4, 0.7, 0.5, 0.6]


ACTIVE = [
    # inclusion_probabilities
    case(active.inclusion_probabilities, [], 1, _id="ip-empty",
         _msg="error_sd is empty: no claims to draw from"),
    case(active.inclusion_probabilities, [0.1, NAN], 1, _id="ip-nan",
         _msg="error_sd contains NaN or infinite values"),
    case(active.inclusion_probabilities, [0.1, math.inf], 1, _id="ip-inf",
         _msg="error_sd contains NaN or infinite values"),
    case(active.inclusion_probabilities, [-0.1, 0.2], 1, _id="ip-negative",
         _msg="error_sd must be non-negative (a standard deviation)"),
    case(active.inclusion_probabilities, [0.1, 0.2], "many", _id="ip-budget-text",
         _msg="budget must be a number of labels, got 'many'"),
    case(active.inclusion_probabilities, [0.1, 0.2], None, _id="ip-budget-none",
         _msg="budget must be a number of labels, got None"),
    case(active.inclusion_probabilities, [0.1, 0.2], 0, _id="ip-budget-0",
         _msg="budget must be a positive number of labels, got 0"),
    case(active.inclusion_probabilities, [0.1, 0.2], -1.5, _id="ip-budget-neg",
         _msg="budget must be a positive number of labels, got -1.5"),
    case(active.inclusion_probabilities, [0.1, 0.2], math.inf, _id="ip-budget-inf",
         _msg="budget must be a positive number of labels, got inf"),
    case(active.inclusion_probabilities, [0.1, 0.2], 1, floor=0, _id="ip-floor-0",
         _msg="floor must be in (0, 1], got 0"),
    case(active.inclusion_probabilities, [0.1, 0.2], 1, floor=1.5, _id="ip-floor-big",
         _msg="floor must be in (0, 1], got 1.5"),
    case(active.inclusion_probabilities, [0.1, 0.2], 1, floor=NAN, _id="ip-floor-nan",
         _msg="floor must be in (0, 1], got nan"),
    # sequential_poisson_keys / _check_pi
    case(active.sequential_poisson_keys, [0.5, 0.5], u=[0.1], _id="spk-u",
         _msg="u has 1 entries for 2 claims"),
    case(active.sequential_poisson_keys, [0.0, 0.5], u=[0.1, 0.2], _id="spk-pi-0",
         _msg="pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)"),
    case(active.sequential_poisson_keys, [1.01, 0.5], u=[0.1, 0.2], _id="spk-pi-above-1",
         _msg="pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)"),
    case(active.sequential_poisson_keys, [NAN, 0.5], u=[0.1, 0.2], _id="spk-pi-nan",
         _msg="pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)"),
    # active_ppi_mean
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, None, PI3, confidence=1.5, _id="apm-conf",
         _msg="confidence must be strictly between 0 and 1, got 1.5"),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, None, [0.5, 0.5], _id="apm-pi-size",
         _msg="pi has 2 entries for 3 claims"),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, None, [0.5, 0.0, 0.5], _id="apm-pi-0",
         _msg="pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)"),
    case(active.active_ppi_mean, [1, 0], LAB3, None, PI3, _id="apm-y-size",
         _msg="y has 2 entries for 3 claims"),
    case(active.active_ppi_mean, [1, 2, NAN], LAB3, None, PI3, _id="apm-y-list",
         _msg=binary_msg("y")),
    case(active.active_ppi_mean, np.array([1.0, 2.0, NAN]), LAB3, None, PI3, _id="apm-y-array",
         _msg=binary_msg("y")),
    # verdict strings: a list, and a numpy string array (neither read as floats)
    case(active.active_ppi_mean, [S, "maybe", None], LAB3, None, PI3, _id="apm-y-verdicts",
         _msg=verdict_msg("y", "'maybe'")),
    case(active.active_ppi_mean, np.array([S, "maybe", S]), LAB3, None, PI3,
         _id="apm-y-str-array", _msg=verdict_msg("y", "'maybe'")),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, [0.5, 1.5, 0.2], PI3, _id="apm-pred",
         _msg=judge_msg("prediction")),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, [S, "x", S], PI3, _id="apm-pred-verdict",
         _msg=verdict_msg("prediction", "np.str_('x')")),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, [0.5, 0.5], PI3, _id="apm-pred-size",
         _msg="prediction has 2 entries for 3 claims"),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, None, PI3, cluster=["a", "b"],
         _id="apm-cluster-size", _msg="cluster has 2 entries for 3 claims"),
    case(active.active_ppi_mean, [1, 0, NAN], LAB3, None, PI3, cluster=[None, "a", "b"],
         _id="apm-cluster-missing", _msg="cluster ids must not be missing (None/NaN)"),
    # _strata_arrays (both Neyman functions), neyman_next_stratum
    case(active.neyman_next_stratum, [1], [2, 3], [1, 1], _id="ns-lengths",
         _msg="n_h, N_h and sd_h differ in length: 1, 2, 2 strata"),
    case(active.neyman_next_stratum, [1, 1], [2, 3], [1], _id="ns-lengths-sd",
         _msg="n_h, N_h and sd_h differ in length: 2, 2, 1 strata"),
    case(active.neyman_next_stratum, [], [], [], _id="ns-empty",
         _msg="N_h is empty: no strata"),
    case(active.neyman_next_stratum, [-1, 0], [2, 3], [1, 1], _id="ns-n-neg",
         _msg="n_h must hold non-negative numbers (no NaN)"),
    case(active.neyman_next_stratum, [0, 0], [2, NAN], [1, 1], _id="ns-N-nan",
         _msg="N_h must hold non-negative numbers (no NaN)"),
    case(active.neyman_next_stratum, [0, 0], [2, math.inf], [1, 1], _id="ns-N-inf",
         _msg="N_h must hold non-negative numbers (no NaN)"),
    case(active.neyman_next_stratum, [0, 0], [2, 3], [1, -0.5], _id="ns-sd-neg",
         _msg="sd_h must hold non-negative numbers (no NaN)"),
    case(active.neyman_next_stratum, [0, 0], [0, 0], [1, 1], _id="ns-N-zero",
         _msg="N_h sums to zero: no claims in any stratum"),
    case(active.neyman_next_stratum, [2, 3], [2, 3], [0.5, 0.5], _id="ns-full",
         _msg="every stratum is fully labelled (n_h ≥ N_h): no claim left to serve"),
    # neyman_allocation
    case(active.neyman_allocation, [3, 2], [0.5], 2, _id="na-lengths",
         _msg="n_h, N_h and sd_h differ in length: 2, 2, 1 strata"),
    case(active.neyman_allocation, [], [], 0, _id="na-empty", _msg="N_h is empty: no strata"),
    case(active.neyman_allocation, [3, 2], [0.5, 0.5], 1.5, _id="na-n-frac",
         _msg="n must be a whole number of labels ≥ 0, got 1.5"),
    case(active.neyman_allocation, [3, 2], [0.5, 0.5], -1, _id="na-n-neg",
         _msg="n must be a whole number of labels ≥ 0, got -1"),
    case(active.neyman_allocation, [3, 2], [0.5, 0.5], 6, _id="na-n-above",
         _msg="n = 6 labels is more than the 5 claims of the strata"),
    case(active.neyman_allocation, [3, 2], [0.5, 0.5], 2, minimum=1.5, _id="na-min-frac",
         _msg="minimum must be a whole number ≥ 0, got 1.5"),
    case(active.neyman_allocation, [3, 2], [0.5, 0.5], 2, minimum=-1, _id="na-min-neg",
         _msg="minimum must be a whole number ≥ 0, got -1"),
    case(active.neyman_allocation, [3, 2], [0.5, 0.5], 3, minimum=2, _id="na-min-above",
         _msg="minimum = 2 labels per stratum needs 4, more than n = 3"),
    # labels_needed
    case(active.labels_needed, 0.1, "uniform_gold", [1, 0], [True, True], confidence=0,
         _id="ln-conf", _msg="confidence must be strictly between 0 and 1, got 0"),
    case(active.labels_needed, 0.1, "bogus", [1, 0], [True, True], _id="ln-design",
         _msg=f"design must be one of {DESIGNS_TEXT}, got 'bogus'"),
    case(active.labels_needed, 0, "uniform_gold", [1, 0], [True, True], _id="ln-hw-0",
         _msg="half_width must be in (0, 1), got 0"),
    case(active.labels_needed, 1.0, "uniform_gold", [1, 0], [True, True], _id="ln-hw-1",
         _msg="half_width must be in (0, 1), got 1.0"),
    case(active.labels_needed, NAN, "uniform_gold", [1, 0], [True, True], _id="ln-hw-nan",
         _msg="half_width must be in (0, 1), got nan"),
    case(active.labels_needed, 0.1, "uniform_gold", [1, 0, 1], LAB3, [0.5] * 3, [0.5, 0.5],
         _id="ln-pi-size", _msg="pi has 2 entries for 3 claims"),
    case(active.labels_needed, 0.1, "uniform_gold", [1, 0, 1], LAB3, None, [0.5, 2, 0.5],
         _id="ln-pi-range",
         _msg="pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)"),
    case(active.labels_needed, 0.1, "uniform_gold", [1, 0, 1], LAB3, cluster=[1, 2],
         _id="ln-cluster-size", _msg="cluster has 2 entries for 3 claims"),
    case(active.labels_needed, 0.1, "uniform_gold", Y12[:11], L12, _id="ln-y-size",
         _msg="y has 11 entries for 12 claims"),
    case(active.labels_needed, 0.1, "uniform_gold", [2] + Y12[1:], L12, _id="ln-y-list",
         _msg=binary_msg("y")),
    case(active.labels_needed, 0.1, "uniform_gold", np.array([2.0] + Y12[1:]), L12,
         _id="ln-y-array", _msg=binary_msg("y")),
    case(active.labels_needed, 0.1, "uniform_gold", [S] * 9 + ["maybe", None, None], L12,
         _id="ln-y-verdicts", _msg=verdict_msg("y", "'maybe'")),
    case(active.labels_needed, 0.1, "uniform_gold", np.array([S] * 9 + ["maybe", S, S]), L12,
         _id="ln-y-str-array", _msg=verdict_msg("y", "'maybe'")),
    case(active.labels_needed, 0.1, "stratified", Y12, L12, _id="ln-strata-none",
         _msg="strata are required for the stratified design"),
    case(active.labels_needed, 0.1, "stratified", Y12, L12, strata=["a"] * 11,
         _id="ln-strata-size", _msg="strata has 11 entries for 12 claims"),
    case(active.labels_needed, 0.1, "uniform_ppi", Y12, L12, _id="ln-pred-none-ppi",
         _msg="prediction (the judge's P(SUPPORTED)) is required for uniform_ppi"),
    case(active.labels_needed, 0.1, "active", Y12, L12, _id="ln-pred-none-active",
         _msg="prediction (the judge's P(SUPPORTED)) is required for active"),
    case(active.labels_needed, 0.1, "uniform_ppi", Y12, L12, [1.5] + F12[1:],
         _id="ln-pred-range", _msg=judge_msg("prediction")),
    case(active.labels_needed, 0.1, "uniform_ppi", Y12, L12, F12[:11], _id="ln-pred-size",
         _msg="prediction has 11 entries for 12 claims"),
    case(active.labels_needed, 0.1, "active", Y12, L12, F12, design_pi=[0.5] * 11,
         _id="ln-design-pi-size", _msg="design_pi has 11 entries for 12 claims"),
    case(active.labels_needed, 0.1, "active", Y12, L12, F12, design_pi=[0.0] + [0.5] * 11,
         _id="ln-design-pi-range",
         _msg="pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)"),
    # selective_threshold
    case(active.selective_threshold, [0.9, 0.8], [1], _id="st-lengths",
         _msg="confidence and agree differ in length: 2 vs 1"),
    case(active.selective_threshold, [0.9, 0.8], [1, 3], _id="st-agree",
         _msg=binary_msg("agree")),
    case(active.selective_threshold, [0.9, NAN], [1, 0], _id="st-nan",
         _msg="confidence contains NaN"),
    case(active.selective_threshold, [0.9, 0.8], [1, 0], target=0, _id="st-target-0",
         _msg="target must be strictly between 0 and 1, got 0"),
    case(active.selective_threshold, [0.9, 0.8], [1, 0], target=1.0, _id="st-target-1",
         _msg="target must be strictly between 0 and 1, got 1.0"),
    case(active.selective_threshold, [0.9, 0.8], [1, 0], delta=0.0, _id="st-delta-0",
         _msg="delta must be strictly between 0 and 1, got 0.0"),
    case(active.selective_threshold, [0.9, 0.8], [1, 0], delta=1, _id="st-delta-1",
         _msg="delta must be strictly between 0 and 1, got 1"),
    case(active.selective_threshold, [0.9, 0.8], [1, 0], thresholds="all", _id="st-thr",
         _msg="thresholds must be 'deciles', 'distinct' or numbers, not 'all'"),
    # labels_saved, confidence_informative
    case(active.labels_saved, active.Forecast(**FORECAST_KW), active.Forecast(**FORECAST_KW),
         _id="ls-design", _msg="gold_only must be the uniform_gold forecast, got 'active'"),
    case(active.confidence_informative, [0.9, 0.8], [1], _id="ci-lengths",
         _msg="confidence and error differ in length: 2 vs 1"),
    case(active.confidence_informative, [0.9, 0.8], [1, 2], _id="ci-error",
         _msg=binary_msg("error")),
    case(active.confidence_informative, [0.9, NAN], [1, 0], _id="ci-nan",
         _msg="confidence contains NaN"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "exc", "msg"), ACTIVE)
def test_active_errors(fn, args, kwargs, exc, msg):
    check(fn, args, kwargs, exc, msg)


def test_active_boundaries_pass():
    # floor 1 is allowed (0 < floor <= 1); a budget just above 0 too; sd 0 is a valid sd
    pi = active.inclusion_probabilities([0.0, 0.2], 1e-6, floor=1.0)
    assert pi.sum() == pytest.approx(1e-6)
    assert active.inclusion_probabilities([0.0, 0.0], 1).tolist() == [0.5, 0.5]
    # π = 1 is an inclusion probability; an empty π is not checked (nothing to read)
    assert active.sequential_poisson_keys([1.0, 0.5], u=[0.25, 0.25]).tolist() == [0.25, 0.5]
    assert active.sequential_poisson_keys([], u=[]).size == 0
    # answer ids given (codes from 0): no id is missing
    two = active.active_ppi_mean([1, 0, NAN], LAB3, None, PI3, cluster=["a", "a", "b"])
    assert two.value == 0.5
    # one claim in all is a claim
    assert active.neyman_next_stratum([0], [1], [0.5]) == 0
    # zeros are non-negative; one stratum left open by one claim is served
    assert active.neyman_next_stratum([0, 3], [0, 4], [0.0, 0.5]) == 1
    assert active.neyman_next_stratum([1, 3], [2, 3], [0.5, 0.5]) == 0
    # n = 0 and n = the claims; minimum 0; minimum exactly filling n
    assert active.neyman_allocation([3, 2], [0.5, 0.5], 0).tolist() == [0, 0]
    assert active.neyman_allocation([3, 2], [0.5, 0.5], 5).tolist() == [3, 2]
    assert active.neyman_allocation([3, 2], [0.5, 0.5], 4, minimum=2).tolist() == [2, 2]
    assert active.neyman_allocation([3, 2], [0.5, 0.5], 2.0, minimum=0).sum() == 2
    # target and delta just inside (0, 1)
    out = active.selective_threshold([0.9, 0.8], [1, 1], target=1e-9, delta=1 - 1e-9)
    assert out.target == 1e-9
    assert out.delta == 1 - 1e-9


def test_labels_needed_minimum_labels_boundary():
    """Nine labels: "n/a" (the sentence pinned); ten: a forecast."""
    nine = active.labels_needed(0.1, "uniform_gold", Y12, [True] * 9 + [False] * 3)
    assert nine.labels_total is None
    assert nine.labels_more is None
    assert nine.method == (
        "uniform sampling, gold only: n/a, fewer than 10 labels to estimate the variance from."
    )
    ten = active.labels_needed(0.1, "uniform_gold", Y12, L12)
    assert ten.labels_total is not None


def test_active_ppi_mean_one_label_has_no_interval():
    zero = active.active_ppi_mean([NAN, NAN], [False, False], None, [0.5, 0.5])
    assert zero.method == "No labelled claim yet: nothing to estimate from."
    one = active.active_ppi_mean([1, NAN], [True, False], None, [0.5, 0.5])
    assert one.value == 1.0
    assert math.isnan(one.lower)
    assert one.method == "One labelled claim: too few to estimate a variance; label more."
    two = active.active_ppi_mean([1, 0, NAN], LAB3, None, PI3)
    assert not math.isnan(two.lower)


def test_labels_saved_without_a_width_says_na():
    gold = active.Forecast(**{**FORECAST_KW, "design": "uniform_gold"})
    out = active.labels_saved(active.Forecast(**FORECAST_KW), gold)
    assert out.method == "Labels saved: n/a (too few labels to compare the designs)."
    assert (out.saved, out.labels_gold_only) == (None, None)


# -- design ----------------------------------------------------------------------------------------

DESIGN = [
    case(design.design_proportion, [1, 0], answer_ids=["a"], _id="dp-ids-size",
         _msg="answer_ids has 1 entries for 2 claims"),
    case(design.design_proportion, [1, 0], strata=["a"], _id="dp-strata-size",
         _msg="strata has 1 entries for 2 claims"),
    case(design.design_proportion, [1, 0], strata=[None, "a"], stratum_sizes={"a": 3},
         _id="dp-strata-missing", _msg="answer and stratum ids must not be missing (None/NaN)"),
    case(design.design_proportion, [1, 0], answer_ids=[None, "a"], _id="dp-ids-missing",
         _msg="answer and stratum ids must not be missing (None/NaN)"),
    case(design.design_proportion, [1, 0], strata=["a", "b"], _id="dp-sizes-required",
         _msg="stratum_sizes (claims per stratum in the project, N_h) are required"),
    case(design.design_proportion, [1, 1, 0], strata=["a", "b", "b"], stratum_sizes={"a": 5},
         _id="dp-size-missing", _msg="stratum 'b' has gold claims but no size in stratum_sizes"),
    case(design.design_proportion, [1, 0], strata=["a", "b"],
         stratum_sizes={"a": 5, "b": -1}, _id="dp-size-negative",
         _msg="stratum_sizes['b'] must be a non-negative number"),
    case(design.design_proportion, [1, 0], strata=["a", "b"],
         stratum_sizes={"a": 5, "b": math.inf}, _id="dp-size-inf",
         _msg="stratum_sizes['b'] must be a non-negative number"),
    case(design.design_proportion, [1, 1, 0], strata=["a", "a", "b"],
         stratum_sizes={"a": 1, "b": 5}, _id="dp-size-below-count",
         _msg="stratum 'a' has 2 gold claims but stratum_sizes says N_h = 1 (N_h counts every "
              "claim of the stratum in the project)"),
    case(design.design_proportion, [1, 0], strata=["a", "b"], stratum_sizes={"a": 5, "b": 0},
         _id="dp-size-zero-with-gold",
         _msg="stratum 'b' has 1 gold claims but stratum_sizes says N_h = 0 (N_h counts every "
              "claim of the stratum in the project)"),
    case(design.two_phase_rate, [1, 0], [S, C], {S: 4}, _id="tpr-size-missing",
         _msg="stratum 'CONTRADICTED' has gold claims but no size in stratum_sizes"),
    # design_sensitivity_specificity
    case(design.design_sensitivity_specificity, [1, 0], [1], _id="dss-lengths",
         _msg="gold and judge differ in length: 2 vs 1"),
    case(design.design_sensitivity_specificity, [1, 2], [1, 0], _id="dss-gold",
         _msg=binary_msg("gold")),
    case(design.design_sensitivity_specificity, [1, 0], [1, 2], _id="dss-judge",
         _msg=binary_msg("judge")),
    case(design.design_sensitivity_specificity, [1, 0], [1, 0], answer_ids=[1], _id="dss-ids",
         _msg="answer_ids has 1 entries for 2 claims"),
    case(design.design_rogan_gladen, [1, 2], None, [1, 0], [1, 0], _id="drg-judge-all",
         _msg=binary_msg("judge_all")),
    # design_ppi_mean
    case(design.design_ppi_mean, [1, 0], [1], [0.5], _id="dpm-lengths",
         _msg="gold and judge_on_gold differ in length: 2 vs 1"),
    case(design.design_ppi_mean, [1, 2], [1, 0], [0.5], _id="dpm-gold",
         _msg=binary_msg("gold")),
    case(design.design_ppi_mean, [1, 0], [1, 1.5], [0.5], _id="dpm-judge-gold",
         _msg=judge_msg("judge_on_gold")),
    case(design.design_ppi_mean, [1, 0], [1, 0], [-0.5], _id="dpm-judge-rest",
         _msg=judge_msg("judge_on_rest")),
    case(design.design_ppi_mean, [1, 0], [1, 0], [0.5], answer_ids_gold=["a"],
         _id="dpm-ids-gold", _msg="answer ids must match the gold and rest claims in length"),
    case(design.design_ppi_mean, [1, 0], [1, 0], [0.5], answer_ids_rest=["a", "b"],
         _id="dpm-ids-rest", _msg="answer ids must match the gold and rest claims in length"),
    case(design.design_ppi_mean, [1, 0], [1, 0], [0.5], strata_gold=["h", "h"],
         _id="dpm-strata-gold-only",
         _msg="give strata for both the gold and the rest claims, or for neither"),
    case(design.design_ppi_mean, [1, 0], [1, 0], [0.5], strata_rest=["h"],
         _id="dpm-strata-rest-only",
         _msg="give strata for both the gold and the rest claims, or for neither"),
    case(design.design_ppi_mean, [1, 0], [1, 0], [0.5], strata_gold=["h"], strata_rest=["h"],
         _id="dpm-strata-gold-size", _msg="strata must match the gold and rest claims in length"),
    case(design.design_ppi_mean, [1, 0], [1, 0], [0.5], strata_gold=["h", "h"],
         strata_rest=[], _id="dpm-strata-rest-size",
         _msg="strata must match the gold and rest claims in length"),
    # design_kappa
    case(design.design_kappa, [S, C], [S], confidence=0, _id="dk-conf",
         _msg="confidence must be strictly between 0 and 1, got 0"),
    case(design.design_kappa, [S, C], [S], _id="dk-lengths",
         _msg="gold and judge differ in length: 2 vs 1"),
    case(design.design_kappa, [S, C], [S, C], answer_ids=["a"], _id="dk-ids",
         _msg="answer_ids has 1 entries for 2 claims"),
    # cluster_bootstrap
    case(design.cluster_bootstrap, [1, 0], [1], _id="cb-den-size",
         _msg="numerator, denominator and answer_ids differ in length"),
    case(design.cluster_bootstrap, [1, 0], None, ["a"], _id="cb-ids-size",
         _msg="numerator, denominator and answer_ids differ in length"),
    case(design.cluster_bootstrap, [1, 2], _id="cb-numerator",
         _msg=binary_msg("numerator")),
    case(design.cluster_bootstrap, [1, 0], [1, 2], _id="cb-denominator",
         _msg=binary_msg("denominator")),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "exc", "msg"), DESIGN)
def test_design_errors(fn, args, kwargs, exc, msg):
    check(fn, args, kwargs, exc, msg)


def test_design_boundaries_pass():
    # one stratum needs no sizes; N_h equal to the gold count and N_h = 0 for a stratum
    # without gold are accepted
    one = design.design_proportion([1, 0], strata=["a", "a"])
    assert one.value == 0.5
    exact = design.design_proportion([1, 1, 0], strata=["a", "a", "b"],
                                     stratum_sizes={"a": 2, "b": 1, "c": 0})  # fmt: skip
    assert exact.value == pytest.approx(2 / 3)
    assert exact.unseen_share == 0.0
    kappa = design.design_kappa([S, C], [S, C], answer_ids=["a", "b"])
    assert kappa.value == 1.0


# -- paired ----------------------------------------------------------------------------------------

LEN_ALL = "gold, system, question, stratum, weight and judge differ in length"
JUDGE_NAN = "judge needs a value for every unit (leave unjudged units out)"

PAIRED = [
    case(paired.paired_gold_difference, [1, 0], [0], [1, 1], _id="pgd-sys-size",
         _msg="values, system and question differ in length: 2, 1, 2"),
    case(paired.paired_gold_difference, [1, 0], [0, 1], [1], _id="pgd-q-size",
         _msg="values, system and question differ in length: 2, 2, 1"),
    case(paired.paired_gold_difference, [1, 0], [0, 2], [1, 1], _id="pgd-system",
         _msg="system must be 0 (A) or 1 (B) for every unit"),
    case(paired.paired_gold_difference, [1, 0], [0, 1], [1, 1], confidence=1.0,
         _id="pgd-conf", _msg="confidence must be strictly between 0 and 1, got 1.0"),
    case(paired.paired_ppi_difference, [1, 0], [0.5], [0, 1], [1, 1], _id="ppd-lengths",
         _msg="gold and judge differ in length: 2 vs 1"),
    case(paired.paired_ppi_difference, [1, 0], [0.5, NAN], [0, 1], [1, 1], _id="ppd-nan",
         _msg=JUDGE_NAN),
    case(paired.paired_design_difference, [1, 0], [0, 1], [1, 1], stratum=[0],
         _id="pdd-stratum", _msg=LEN_ALL),
    case(paired.paired_design_difference, [1, 0], [0, 1], [1, 1], weight=[1.0],
         _id="pdd-weight", _msg=LEN_ALL),
    case(paired.paired_design_difference, [1, 0], [0, 1], [1, 1], judge=[0.5],
         _id="pdd-judge", _msg=LEN_ALL),
    case(paired.paired_design_difference, [1, NAN], [0, 1], [1, 1], weight=[0.0, 1.0],
         _id="pdd-weight-0",
         _msg="weight must be a positive number (1/π) for every labelled unit"),
    case(paired.paired_design_difference, [1, NAN], [0, 1], [1, 1], weight=[math.inf, 1.0],
         _id="pdd-weight-inf",
         _msg="weight must be a positive number (1/π) for every labelled unit"),
    case(paired.paired_design_difference, [1, 0], [0, 1], [1, 1], judge=[0.5, NAN],
         _id="pdd-judge-nan", _msg=JUDGE_NAN),
    case(paired.proportions_equal, 3, 2, 1, 2, _id="pe-k1-above",
         _msg="need 0 <= k <= n, got 3/2 and 1/2"),
    case(paired.proportions_equal, -1, 2, 1, 2, _id="pe-k1-neg",
         _msg="need 0 <= k <= n, got -1/2 and 1/2"),
    case(paired.proportions_equal, 1, 2, 3, 2, _id="pe-k2-above",
         _msg="need 0 <= k <= n, got 1/2 and 3/2"),
    case(paired.proportions_equal, 1, 2, -1, 2, _id="pe-k2-neg",
         _msg="need 0 <= k <= n, got 1/2 and -1/2"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "exc", "msg"), PAIRED)
def test_paired_errors(fn, args, kwargs, exc, msg):
    check(fn, args, kwargs, exc, msg)


def test_paired_boundaries_pass():
    # a zero weight on an unlabelled unit is not read; k = n and k = 0 are valid counts
    out = paired.paired_design_difference(
        [1, 0, 1, NAN], [0, 1, 0, 1], [1, 1, 2, 2], weight=[1.0, 1.0, 1.0, 0.0]
    )
    assert out.n_questions >= 1
    assert paired.proportions_equal(2, 2, 0, 2) == pytest.approx(1 / 3)
    assert paired.proportions_equal(0, 2, 2, 2) == pytest.approx(1 / 3)
    assert math.isnan(paired.proportions_equal(0, 0, 1, 2))
    assert math.isnan(paired.proportions_equal(1, 2, 0, 0))


# -- conformal, conformal_splits, calibration ------------------------------------------------------

CONF2 = [np.array([0.9, 0.4]), np.array([0.7])]
SUP2 = [np.array([1, 0]), np.array([1])]

CONFORMAL = [
    case(conformal.crc_threshold, CONF2, SUP2[:1], 0.1, _id="crc-answers",
         _msg="confidences and supported differ in answers: 2 vs 1"),
    case(conformal.crc_threshold, CONF2, [np.array([1, 0]), np.array([1, 1])], 0.1,
         _id="crc-claims", _msg="answer 1: confidences and supported differ in claim count"),
    case(conformal.crc_evaluate, [np.array([0.9, NAN]), np.array([0.7])], SUP2, 0.5,
         _id="crc-nan", _msg="confidences contain NaN"),
    case(conformal.crc_threshold, CONF2, [np.array([1, 2]), np.array([1])], 0.1,
         _id="crc-supported", _msg=binary_msg("supported")),
    case(conformal.crc_threshold, CONF2, SUP2, 0.0, _id="crc-alpha-0",
         _msg="alpha must be strictly between 0 and 1, got 0.0"),
    case(conformal.crc_threshold, CONF2, SUP2, 1, _id="crc-alpha-1",
         _msg="alpha must be strictly between 0 and 1, got 1"),
    case(conformal.crc_threshold, CONF2, SUP2, 0.1, B=0, _id="crc-B-0",
         _msg="B must be positive"),
    case(conformal.frontier, CONF2, SUP2, [[["f1"], []]], _id="fr-grounded-answers",
         _msg="facts_grounded must have one entry per answer"),
    case(conformal.frontier, CONF2, SUP2, [[["f1"], []], [["f2"]]], facts_total=[2],
         _id="fr-total-answers", _msg="facts_total must have one entry per answer"),
    case(conformal.frontier, CONF2, SUP2, [[["f1"]], [["f2"]]], _id="fr-claims",
         _msg="answer 0: facts_grounded and confidences differ in claim count"),
    case(conformal_splits.crc_splits, [0.9, 0.4], [1, 0], [0, 0], 1.0, _id="cs-alpha-1",
         _msg="alpha must be strictly between 0 and 1, got 1.0"),
    case(conformal_splits.crc_splits, [0.9, 0.4], [1, 0], [0, 0], 0, _id="cs-alpha-0",
         _msg="alpha must be strictly between 0 and 1, got 0"),
    case(conformal_splits.crc_splits, [0.9, 0.4], [1], [0, 0], 0.1, _id="cs-sup-size",
         _msg="confidence, supported and answer differ in length"),
    case(conformal_splits.crc_splits, [0.9, 0.4], [1, 0], [0], 0.1, _id="cs-answer-size",
         _msg="confidence, supported and answer differ in length"),
    case(conformal_splits.crc_splits, [0.9, NAN], [1, 0], [0, 0], 0.1, _id="cs-nan",
         _msg="confidence contains NaN"),
    # calibration
    case(calibration.reliability_bins, [0.5, 0.6], [1], _id="cal-lengths",
         _msg="confidence and outcome differ in length: 2 vs 1"),
    case(calibration.reliability_bins, [0.5, 0.6], [1, 2], _id="cal-outcome",
         _msg=binary_msg("outcome")),
    case(calibration.reliability_bins, [-0.01, 0.6], [1, 0], _id="cal-below-0",
         _msg="confidence must lie in [0, 1]"),
    case(calibration.platt_calibrator, [0.5, 1.01], [1, 0], _id="cal-above-1",
         _msg="confidence must lie in [0, 1]"),
    case(calibration.isotonic_calibrator, [0.5, NAN], [1, 0], _id="cal-nan",
         _msg="confidence contains NaN"),
    case(calibration.reliability_bins, [0.5, 0.6], [1, 0], n_bins=0, _id="cal-bins-0",
         _msg="n_bins must be a positive whole number, got 0"),
    case(calibration.expected_calibration_error, [0.5, 0.6], [1, 0], n_bins=2.5,
         _id="cal-bins-frac", _msg="n_bins must be a positive whole number, got 2.5"),
    case(calibration.cross_fitted_calibration, [0.5, 0.6], [1, 0], "platt", groups=[1],
         _id="cal-groups", _msg="groups must have one entry per claim"),
    case(calibration.cross_fitted_calibration, [0.5, 0.6], [1, 0], "beta", _id="cal-method",
         _msg="method must be one of ('platt', 'isotonic'), got 'beta'"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "exc", "msg"), CONFORMAL)
def test_conformal_and_calibration_errors(fn, args, kwargs, exc, msg):
    check(fn, args, kwargs, exc, msg)


def test_conformal_and_calibration_boundaries_pass():
    assert conformal.crc_threshold(CONF2, SUP2, 0.5, B=1e-9) is not None
    table = conformal.frontier(CONF2, SUP2, [[["f1"], []], [["f2"]]], cuts=[0.0])
    assert table["coverage"].tolist() == [1.0]
    assert calibration.reliability_bins([0.0, 1.0], [0, 1], n_bins=1)["count"].tolist() == [2]
    # one bin: |Σc − Σy| / n = |1 − 2| / 2
    assert calibration.expected_calibration_error([0.0, 1.0], [1, 1], n_bins=1) == 0.5


# -- pairwise, pairwise_human, agreement, prevalence, rates ----------------------------------------

MISC = [
    case(pairwise.pairwise_both_orders, ["first", "up", "down"], ["tie"] * 3, _id="pw-b",
         _msg="b_first: verdicts must be first, second or tie, got down, up"),
    case(pairwise.pairwise_both_orders, ["tie"], ["left"], _id="pw-a",
         _msg="a_first: verdicts must be first, second or tie, got left"),
    case(pairwise.pairwise_both_orders, ["tie", "first"], ["tie"], _id="pw-lengths",
         _msg="b_first and a_first differ in length: 2, 1"),
    case(pairwise.pairwise_both_orders, ["tie"], ["tie"], confidence=0, _id="pw-conf",
         _msg="confidence must be strictly between 0 and 1, got 0"),
    case(pairwise_human.judge_pair_verdict, "up", "first", _id="ph-verdict-b",
         _msg="verdicts must be first, second or tie, got 'up' and 'first'"),
    case(pairwise_human.judge_pair_verdict, "tie", "down", _id="ph-verdict-a",
         _msg="verdicts must be first, second or tie, got 'tie' and 'down'"),
    case(pairwise_human.clustered_mean, [0.5, 1], ["q"], _id="ph-mean-lengths",
         _msg="values and clusters differ in length: 2, 1"),
    case(pairwise_human.clustered_share, [0, 1], ["q"], _id="ph-share-lengths",
         _msg="successes and clusters differ in length: 2, 1"),
    case(pairwise_human.clustered_share, [0, 0.5], ["q", "r"], _id="ph-share-values",
         _msg="successes must be 0 or 1"),
    case(pairwise_human.human_preference, ["B", "x", "C"], [1, 2, 3], _id="ph-choices",
         _msg="choices: preferences must be B, A or tie, got C, x"),
    case(pairwise_human.human_judge_agreement, ["B", "b"], ["A", "A"], [1, 2],
         _id="ph-human", _msg="human: preferences must be B, A or tie, got b"),
    case(pairwise_human.human_judge_agreement, ["B", "A"], ["A", None], [1, 2],
         _id="ph-judge", _msg="judge: preferences must be B, A or tie, got None"),
    case(pairwise_human.human_judge_agreement, ["B", "A"], ["A"], [1, 2],
         _id="ph-agree-lengths", _msg="human and judge differ in length: 2, 1"),
    case(agreement.agreement, [S, C], [S], _id="ag-lengths",
         _msg="label sequences differ in length: 2 vs 1"),
    case(agreement.cohen_kappa, [S], [S, C], _id="ag-kappa-lengths",
         _msg="label sequences differ in length: 1 vs 2"),
    case(agreement.krippendorff_alpha, [[0, 1]], level="binary", _id="ag-level",
         _msg="level must be one of ('nominal', 'ordinal', 'interval', 'ratio'), got 'binary'"),
    case(agreement.krippendorff_alpha, [0, 1, 1], _id="ag-1d",
         _msg="reliability must be 2-d, shaped (coders, units)"),
    case(agreement.confusion, [S, C], [S], _id="ag-confusion",
         _msg="gold and judge differ in length: 2 vs 1"),
    case(prevalence.rogan_gladen_interval, 1, 4, 1, 1, 1, 1, method="wald", _id="rg-method",
         _msg="method must be one of ('lang-reiczigel', 'delta', 'bootstrap'), got 'wald'"),
    case(prevalence.ppi_mean_interval, [1, 0], [1], [0.5], _id="ppi-lengths",
         _msg="gold and judge_on_gold differ in length: 2 vs 1"),
    case(prevalence.ppi_mean_interval, [1, 5], [1, 0], [0.5], _id="ppi-gold",
         _msg=binary_msg("gold")),
    case(prevalence.ppi_mean_interval, [1, 0], [{}, 0.5], [0.5], _id="ppi-judge-object",
         _msg=judge_msg("judge_on_gold")),
    case(prevalence.ppi_mean_interval, [1, 0], [1, 0], [0.5, NAN], _id="ppi-rest-nan",
         _msg=judge_msg("judge_on_rest")),
    case(prevalence.ppi_mean_interval, [1, 0], [1, 0], [1.5], _id="ppi-rest-above",
         _msg=judge_msg("judge_on_rest")),
    case(prevalence.ppi_mean_interval, [1, 0], [-0.1, 0], [0.5], _id="ppi-gold-below",
         _msg=judge_msg("judge_on_gold")),
    case(prevalence.ppi_mean_interval, [1, 0], np.array([S, "x"], dtype=object), [0.5],
         _id="ppi-judge-verdict", _msg=verdict_msg("judge_on_gold", "'x'")),
    case(prevalence.ppi_mean_interval, [1, 0], [1, 0], [0.5], confidence=1, _id="ppi-conf",
         _msg="confidence must be strictly between 0 and 1, got 1"),
    case(rates.answer_rates, ["a"], [S, S], _id="ar-lengths",
         _msg="answer_ids and verdicts differ in length: 1 vs 2"),
    case(rates.method_string, 5, 4, 1, 0, _id="ms-s-above",
         _msg="counts must be non-negative and supported, contradicted <= n_claims"),
    case(rates.method_string, 0, 4, 1, 5, _id="ms-c-above",
         _msg="counts must be non-negative and supported, contradicted <= n_claims"),
    case(rates.method_string, -1, 4, 1, 0, _id="ms-s-negative",
         _msg="counts must be non-negative and supported, contradicted <= n_claims"),
    case(rates.method_string, 0, 4, 1, -1, _id="ms-c-negative",
         _msg="counts must be non-negative and supported, contradicted <= n_claims"),
    case(rates.method_string, 0, 4, -1, 0, _id="ms-negative",
         _msg="counts must be non-negative and supported, contradicted <= n_claims"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "exc", "msg"), MISC)
def test_misc_errors(fn, args, kwargs, exc, msg):
    check(fn, args, kwargs, exc, msg)


def test_misc_boundaries_pass():
    assert pairwise_human.clustered_share([0, 1], ["q", "r"])["value"] == 0.5
    assert pairwise_human.clustered_mean([0.5, 1.0], ["q", "r"])["value"] == 0.75
    assert agreement.krippendorff_alpha([[0, 1], [0, 1]], level="nominal") == pytest.approx(1.0)
    assert pairwise_human.judge_pair_verdict("first", "second") == "B"
    out = prevalence.ppi_mean_interval([1, 0], [0.0, 1.0], [0.5])
    assert out["n"] == 2
    assert out["N"] == 1
    # s = n and c = n are allowed; zero claims has its own sentence
    assert rates.method_string(4, 4, 1, 0).startswith("100% of claims supported across 4 claims")
    assert rates.method_string(0, 4, 2, 4).startswith("0% of claims supported")
    assert rates.method_string(0, 0, 1, 0) == (
        "No claims assessed yet (0 claims in 1 answer). "
        "Method: manual, claim level, against the retrieved pile."
    )
