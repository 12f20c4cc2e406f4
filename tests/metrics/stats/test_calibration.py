"""Calibration: reliability bins, ECE, Platt, isotonic, cross-fitting."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from metrics import stats
from metrics.stats import isotonic_calibrator
from metrics.stats.calibration import _fold_ids
from tests.metrics import independent as ref

# sklearn.calibration.calibration_curve docstring example (scikit-learn 1.x):
# prob_true = [0, 0.5, 1], prob_pred = [0.2, 0.525, 0.85] with n_bins=3.
SK_Y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
SK_P = np.array([0.1, 0.2, 0.3, 0.4, 0.65, 0.7, 0.8, 0.9, 1.0])


def _overconfident(rng, n):
    y = rng.random(n) < 0.6
    conf = np.clip(np.where(y, rng.beta(8, 1.5, n), rng.beta(1.5, 3, n)), 0, 1)
    return conf, y.astype(float)


def test_reliability_bins_sklearn_docstring_example():
    table = stats.reliability_bins(SK_P, SK_Y, n_bins=3)
    assert list(table["count"]) == [3, 2, 4]
    np.testing.assert_allclose(table["observed_rate"], [0.0, 0.5, 1.0])
    np.testing.assert_allclose(table["mean_confidence"], [0.2, 0.525, 0.85])
    assert {"lo", "hi", "count", "mean_confidence", "observed_rate"} <= set(table.columns)


def test_expected_calibration_error_sklearn_docstring_example_by_hand():
    # (3·|0.2 − 0| + 2·|0.525 − 0.5| + 4·|0.85 − 1|)/9 = 1.25/9
    assert stats.expected_calibration_error(SK_P, SK_Y, n_bins=3) == pytest.approx(1.25 / 9)


def test_reliability_bins_agree_with_sklearn_calibration_curve():
    rng = np.random.default_rng(0)
    conf, y = _overconfident(rng, 20_000)
    table = stats.reliability_bins(conf, y, n_bins=10)
    prob_true, prob_pred = calibration_curve(y, conf, n_bins=10, strategy="uniform")
    nonempty = table[table["count"] > 0]
    np.testing.assert_allclose(nonempty["observed_rate"], prob_true, atol=1e-12)
    np.testing.assert_allclose(nonempty["mean_confidence"], prob_pred, atol=1e-12)


def test_reliability_bins_are_left_open_right_closed_with_zero_in_first():
    table = stats.reliability_bins([0.0, 0.1, 0.3, 0.30000001, 1.0], [0, 0, 1, 1, 1], n_bins=10)
    counts = dict(zip(table["bin"], table["count"], strict=True))
    assert counts[0] == 2  # 0 and 0.1 (right edge) in [0, 0.1]
    assert counts[2] == 1  # 0.3 is the right edge of (0.2, 0.3]
    assert counts[3] == 1
    assert counts[9] == 1
    assert math.isnan(table.loc[5, "observed_rate"])  # empty bin: nan, not 0


def test_expected_calibration_error_empty_is_nan_and_bad_input_raises():
    assert math.isnan(stats.expected_calibration_error([], []))
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        stats.expected_calibration_error([1.2], [1])
    with pytest.raises(ValueError, match="only 0/1"):
        stats.expected_calibration_error([0.5], [2])


def test_expected_calibration_error_of_a_calibrated_source_is_small():
    rng = np.random.default_rng(1)
    conf = rng.random(200_000)
    y = (rng.random(conf.size) < conf).astype(float)
    assert stats.expected_calibration_error(conf, y) < 0.01
    assert stats.expected_calibration_error(conf, 1 - y) > 0.4


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=200),
    st.integers(1, 20),
)
def test_expected_calibration_error_is_in_unit_interval_and_matches_bins(data, n_bins):
    conf = [c for c, _ in data]
    y = [float(b) for _, b in data]
    ece = stats.expected_calibration_error(conf, y, n_bins)
    table = stats.reliability_bins(conf, y, n_bins)
    assert 0.0 <= ece <= 1.0
    assert int(table["count"].sum()) == len(data)
    used = table[table["count"] > 0]
    by_table = float(
        (used["count"] * (used["mean_confidence"] - used["observed_rate"]).abs()).sum()
    )
    assert ece == pytest.approx(by_table / len(data), abs=1e-12)


def test_platt_calibrator_matches_sklearn_logistic_regression_with_platt_targets():
    rng = np.random.default_rng(2)
    conf, y = _overconfident(rng, 4000)
    cal = stats.platt_calibrator(conf, y)
    # Platt (1999) targets as sample weights on duplicated rows, unpenalised logistic regression.
    n1, n0 = y.sum(), y.size - y.sum()
    t = np.where(y > 0, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))
    x = np.concatenate([conf, conf])[:, None]
    labels = np.r_[np.ones(y.size), np.zeros(y.size)]
    lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(
        x, labels, sample_weight=np.r_[t, 1 - t]
    )
    assert cal.slope == pytest.approx(lr.coef_[0, 0], rel=1e-5)
    assert cal.intercept == pytest.approx(lr.intercept_[0], rel=1e-5)
    grid = np.linspace(0, 1, 11)
    np.testing.assert_allclose(cal(grid), lr.predict_proba(grid[:, None])[:, 1], atol=1e-6)


def test_platt_calibrator_matches_sklearn_sigmoid_calibration():
    from sklearn.calibration import _SigmoidCalibration as sigmoid

    rng = np.random.default_rng(3)
    conf, y = _overconfident(rng, 3000)
    cal = stats.platt_calibrator(conf, y)
    ref = sigmoid().fit(conf, y)
    # sklearn: p = 1/(1 + exp(a·f + b))
    assert cal.slope == pytest.approx(-ref.a_, rel=1e-4)
    assert cal.intercept == pytest.approx(-ref.b_, rel=1e-4)


def test_platt_calibrator_preserves_ranking_and_lowers_ece():
    rng = np.random.default_rng(4)
    conf, y = _overconfident(rng, 20_000)
    cal = stats.platt_calibrator(conf, y)
    out = cal(conf)
    assert cal.slope > 0
    order = np.argsort(conf, kind="stable")
    assert np.all(np.diff(out[order]) >= 0)
    assert stats.expected_calibration_error(out, y) < stats.expected_calibration_error(conf, y)


def test_platt_calibrator_one_class_and_empty():
    cal = stats.platt_calibrator([0.2, 0.9, 0.5], [1, 1, 1])
    out = cal([0.1, 0.9])
    assert np.all((out > 0.5) & (out < 1.0))  # Platt's target (N+1)/(N+2) = 0.8, not a made-up 1
    assert np.all(np.isnan(stats.platt_calibrator([], [])([0.5])))


def test_isotonic_calibrator_matches_sklearn_isotonic_regression():
    rng = np.random.default_rng(5)
    conf, y = _overconfident(rng, 5000)
    conf = np.round(conf, 2)  # ties
    cal = stats.isotonic_calibrator(conf, y)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(conf, y)
    grid = np.r_[-0.0, np.linspace(0, 1, 501), conf]
    np.testing.assert_allclose(cal(grid), ref.predict(grid), atol=1e-12)


def test_isotonic_calibrator_is_monotone_and_nearly_perfect_in_sample():
    # Seed 000: isotonic brings the in-sample ECE to near zero.
    rng = np.random.default_rng(6)
    conf, y = _overconfident(rng, 10_000)
    cal = stats.isotonic_calibrator(conf, y)
    grid = np.linspace(0, 1, 1001)
    assert np.all(np.diff(cal(grid)) >= 0)
    assert stats.expected_calibration_error(cal(conf), y) < 0.01
    assert np.all(np.isnan(stats.isotonic_calibrator([], [])([0.3])))


@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_cross_fitted_calibration_is_out_of_fold(method):
    # With groups, fold membership does not depend on outcomes; flipping one claim's outcome must
    # not change its own calibrated value (it was scored by a calibrator that never saw it).
    rng = np.random.default_rng(7)
    conf, y = _overconfident(rng, 600)
    groups = np.repeat(np.arange(150), 4)
    base = stats.cross_fitted_calibration(conf, y, method, groups=groups)
    flipped = y.copy()
    flipped[17] = 1 - flipped[17]
    again = stats.cross_fitted_calibration(conf, flipped, method, groups=groups)
    assert again[17] == base[17]
    assert not np.allclose(again, base)  # ...but it does move the claims it was trained on


def test_cross_fitted_calibration_keeps_groups_together_and_is_seeded():
    y = np.tile([1.0, 0.0], 50)
    groups = np.repeat(np.arange(20), 5)
    fold = _fold_ids(y, 5, 0, groups)
    for g in range(20):
        assert len(set(fold[groups == g])) == 1
    assert sorted(np.bincount(fold).tolist()) == [20] * 5
    plain = _fold_ids(y, 5, 0, None)
    assert np.bincount(plain[y == 1]).tolist() == [10] * 5  # stratified
    np.testing.assert_array_equal(plain, _fold_ids(y, 5, 0, None))
    assert not np.array_equal(plain, _fold_ids(y, 5, 1, None))


def test_cross_fitted_calibration_small_inputs():
    assert np.all(np.isnan(stats.cross_fitted_calibration([0.5], [1], "platt")))
    assert stats.cross_fitted_calibration([], [], "isotonic").size == 0
    out = stats.cross_fitted_calibration([0.2, 0.8, 0.4], [0, 1, 1], "isotonic", folds=10)
    assert out.shape == (3,)
    assert not np.isnan(out).any()
    with pytest.raises(ValueError, match="method must be one of"):
        stats.cross_fitted_calibration([0.5, 0.6], [1, 0], "beta")


def test_cross_fitted_calibration_reduces_ece_out_of_sample():
    rng = np.random.default_rng(8)
    conf, y = _overconfident(rng, 20_000)
    raw = stats.expected_calibration_error(conf, y)
    for method in ("platt", "isotonic"):
        out = stats.cross_fitted_calibration(conf, y, method, folds=5, seed=0)
        assert stats.expected_calibration_error(out, y) < raw / 2


def test_a_nan_confidence_is_named_in_the_error():
    with pytest.raises(ValueError, match="^confidence contains NaN$"):
        stats.expected_calibration_error([0.5, float("nan")], [1, 0])


# calibration.IsotonicCalibrator.__call__ _5: a NaN confidence is named as the confidence.
def test_the_isotonic_calibrator_names_a_missing_confidence():
    cal = isotonic_calibrator([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"^confidence contains NaN$"):
        cal([0.5, float("nan")])


# --- metrics.stats.calibration: Platt on more than 100,000 claims (the subsample start) ----


def test_platt_on_120k_claims_matches_scikit_learn():
    from metrics.stats.calibration import platt_calibrator

    rng = np.random.default_rng(3)
    c = rng.random(120_000)
    y = (rng.random(c.size) < 0.2 + 0.6 * c).astype(float)
    grid = np.linspace(0.0, 1.0, 11)
    expected = ref.platt_fit(c, y)(grid)  # scikit-learn's logistic regression, Platt's targets
    np.testing.assert_allclose(platt_calibrator(c, y)(grid), expected, atol=1e-6)


# --- metrics.stats.calibration: Platt's line search gives up on a rounding plateau -------------


def test_platt_on_20000_separable_claims_fits_platts_two_targets():
    """calibration `_platt_fit` `_157` (`return` for `break` when the backtracking line search
    finds no decrease: None instead of the fit, and the calibrator fails). 20,000 claims whose
    confidence is exactly their 0/1 outcome (seed 0): near the optimum the objective's rounding
    stops the line search before Newton's decrement falls below the tolerance.

    With two distinct confidences the sigmoid meets Platt's regularised targets exactly (Platt
    1999, §2.2): σ(b) = 1/(N₋ + 2) at confidence 0 and σ(a + b) = (N₊ + 1)/(N₊ + 2) at 1, i.e.
    b = −log(N₋ + 1) and a + b = log(N₊ + 1)."""
    import numpy as np

    from metrics.stats.calibration import platt_calibrator

    c = np.random.default_rng(0).integers(0, 2, 20_000).astype(float)
    n1 = int(c.sum())
    n0 = c.size - n1
    calibrator = platt_calibrator(c, c)
    # stopped on the plateau, within 1e-4 of the optimum (here 1.6e-5 in b)
    assert calibrator.intercept == pytest.approx(-np.log(n0 + 1), abs=1e-4)
    assert calibrator.slope + calibrator.intercept == pytest.approx(np.log(n1 + 1), abs=1e-4)
    p0, p1 = calibrator(np.array([0.0, 1.0]))
    assert p0 == pytest.approx(1 / (n0 + 2), rel=1e-4)
    assert p1 == pytest.approx((n1 + 1) / (n1 + 2), rel=1e-8)


# --- metrics.stats.calibration: a judge that always says 1.0 --------------------------------------


def test_platt_of_a_constant_confidence_of_one_is_the_mean_platt_target():
    """calibration `_platt_fit` `_97` (`w.sum() − σ` for `+ σ` in the Hessian: with every
    confidence exactly 1 its determinant is −σ² < 0, Newton stops at the start and the
    calibrated value is (N₊ + 1)/(N + 2)). With one confidence value the best sigmoid meets the
    mean of Platt's targets: 3 supported, 1 not: (3·4/5 + 1/3)/4 = 0.68333 by hand."""
    import numpy as np

    from metrics.stats.calibration import platt_calibrator

    calibrator = platt_calibrator(np.ones(4), np.array([1.0, 1.0, 1.0, 0.0]))
    # Newton stops within its tolerance (here 3e-8); the mutant stops at 4/6 = 0.667
    assert calibrator(np.array([1.0]))[0] == pytest.approx((3 * 4 / 5 + 1 / 3) / 4, rel=1e-6)


A = pytest.approx


# --------------------------------------------------------------------------------------------
# Platt scaling


def test_platt_constant_confidence_reaches_mean_target():
    # one distinct confidence: the Hessian is singular but for the 1e-12 ridge; Newton must
    # still move from its start b = log((N₊+1)/(N₋+1)) to σ(a·c + b) = mean of Platt's targets
    from metrics.stats.calibration import platt_calibrator

    y = np.array([1, 1, 1, 0])
    t = np.where(y == 1, 4 / 5, 1 / 3)
    cal = platt_calibrator([0.5, 0.5, 0.5, 0.5], y)
    assert cal(np.array([0.5]))[0] == A(t.mean(), rel=1e-6)
    assert cal.n == 4


def test_platt_tiny_matches_sklearn_soft_targets():
    from metrics.stats.calibration import platt_calibrator
    from tests.metrics.independent import platt_fit

    c = np.array([0.2, 0.9, 0.4, 0.7, 0.8, 0.3])
    y = np.array([0, 1, 1, 0, 1, 0])
    cal = platt_calibrator(c, y)
    grid = np.array([0.0, 0.25, 0.5, 1.0])
    assert cal(grid) == A(platt_fit(c, y)(grid), rel=1e-6)
    empty = platt_calibrator([], [])
    assert empty.n == 0
    assert np.isnan(empty(np.array([0.5]))).all()
