"""Kills for survivors of the seed-22 mutation sample's last 129 names (tests/MUTATION.md,
"The rest of seed 22"): each test pins what a user of the figure reads, by hand or by scipy.

Each was checked to fail with its mutant applied to a scratch copy of the code (the mutant's
diff in the comment above the test).
"""

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from metrics.services.gate import GateError, gate_check
from metrics.stats import active_ppi_mean, isotonic_calibrator
from metrics.stats.paired import paired_gold_difference


# active_ppi_mean _79, _89, _97: the one-label branch's value, cluster count and extras.
def test_one_label_without_a_prediction_is_that_label_and_no_interval():
    est = active_ppi_mean([np.nan, 1.0, np.nan, np.nan, np.nan], [0, 1, 0, 0, 0], None, [0.2] * 5)
    assert est.value == 1.0
    assert math.isnan(est.low)
    assert math.isnan(est.high)
    assert est.n_clusters == 1
    assert est.n == 1
    assert est.extra == {"labelled": 1, "N": 5}
    assert est.method == "One labelled claim: too few to estimate a variance; label more."


def test_one_label_with_a_prediction_gives_no_figure():
    # A judge's prediction on the rest with a single label: no rectifier can be estimated, so
    # no value (not the one label read as the project's rate).
    est = active_ppi_mean(
        [np.nan, 1.0, np.nan, np.nan], [0, 1, 0, 0], [0.9, 0.8, 0.1, 0.4], [0.5] * 4
    )
    assert math.isnan(est.value)
    assert est.n_clusters == 1


# active_ppi_mean _287: "clustered by answer" only when answers were given.
def test_the_active_method_says_clustered_only_when_answers_are_given():
    y = np.array([1.0, 0.0, 1.0, 1.0, np.nan, np.nan, 0.0, 1.0])
    lab = ~np.isnan(y)
    pi = [0.5, 0.4, 0.5, 0.6, 0.3, 0.3, 0.5, 0.7]  # unequal: the general estimator's own text
    plain = active_ppi_mean(y, lab, None, pi)
    # answer 3 holds the two unlabelled claims: 3 of the 4 answers are labelled
    clustered = active_ppi_mean(y, lab, None, pi, cluster=[1, 1, 2, 2, 3, 3, 4, 4])
    assert plain.method.startswith("Inverse-probability estimate from gold alone (Hájek")
    assert "clustered by answer" not in plain.method
    assert "clustered by answer (3 labelled answers of 4)" in clustered.method


# paired PairedEstimate.as_dict _9: the unpaired interval a reader compares the paired one with.
def test_the_paired_dict_carries_the_unpaired_interval_by_hand():
    a = np.array([1, 0, 1, 1, 0, 1, 0, 1], float)
    b = np.array([1, 1, 1, 1, 0, 1, 1, 1], float)
    g = a.size
    values = np.r_[a, b]
    system = [0] * g + [1] * g  # 0 is A, 1 is B
    question = list(range(g)) * 2
    out = paired_gold_difference(values, system, question).as_dict()
    # One unit per system and question: D ± t_{G−1} √(s²_A/G + s²_B/G) (ddof 1).
    d = b.mean() - a.mean()
    se = math.sqrt(a.var(ddof=1) / g + b.var(ddof=1) / g)
    t = student_t.ppf(0.975, g - 1)
    assert out["ci_unpaired"] == pytest.approx([d - t * se, d + t * se], abs=1e-12)
    assert out["std_error_unpaired"] == pytest.approx(se, abs=1e-12)


# gate.gate_check _11: a bad `on` names the choices.
def test_the_gate_refuses_an_unknown_side_naming_the_choices():
    with pytest.raises(GateError, match=r"^on: use one of lower, value, upper, got 'middle'$"):
        gate_check({}, minimum=0.9, on="middle")


# calibration.IsotonicCalibrator.__call__ _5: a NaN confidence is named as the confidence.
def test_the_isotonic_calibrator_names_a_missing_confidence():
    cal = isotonic_calibrator([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"^confidence contains NaN$"):
        cal([0.5, float("nan")])
