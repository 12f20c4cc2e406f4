"""The finite-population correction (issue 33): the project's claims are the population.

Checked against brute force: on a small population every possible audit is enumerated, and the
corrected variance estimate must average to the estimator's exact variance over them (the
textbook (1 − f)·S²/n is unbiased for it; the uncorrected s²/n is not). The forecast's
Cochran n₀/(1 + n₀/N) on a project audited at 50% is derived by hand with scipy's t quantile.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from metrics import stats

A = pytest.approx


def _enumerate(y, n):
    """Every simple random sample of n of the claims y: (estimate, variance estimate) pairs,
    corrected and not."""
    big_n = y.size
    rows = []
    for chosen in itertools.combinations(range(big_n), n):
        sample = y[list(chosen)].astype(float)
        ids = np.array(chosen)
        fpc = stats.design_proportion(sample, ids, np.zeros(n, int), {0: float(big_n)}, fpc=True)
        raw = stats.design_proportion(sample, ids, np.zeros(n, int), {0: float(big_n)})
        rows.append((fpc.value, fpc.se**2, raw.se**2))
    return np.array(rows)


def test_the_corrected_variance_averages_to_the_exact_variance_over_every_audit():
    y = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0])  # 10 claims, 6 faithful
    rows = _enumerate(y, 5)  # all 252 audits of half the project
    assert rows.shape[0] == math.comb(10, 5)
    exact = rows[:, 0].var()  # the estimator's variance over every possible audit
    big_s2 = y.var(ddof=1)
    assert exact == A((1 - 5 / 10) * big_s2 / 5, rel=1e-12)  # Cochran (1977) Thm 2.2
    assert rows[:, 1].mean() == A(exact, rel=1e-9)  # corrected: unbiased
    assert rows[:, 2].mean() > 1.5 * exact  # uncorrected: far too large at f = ½


def test_stratified_correction_against_enumeration():
    # strata of 6 and 4 claims, 3 and 2 audited: every pair of within-stratum samples
    y_a, y_b = np.array([1, 1, 1, 0, 0, 1]), np.array([1, 0, 0, 0])
    values, variances = [], []
    for a in itertools.combinations(range(6), 3):
        for b in itertools.combinations(range(4), 2):
            sample = np.concatenate([y_a[list(a)], y_b[list(b)]]).astype(float)
            strata = np.array(["A"] * 3 + ["B"] * 2)
            ids = np.array([f"a{i}" for i in a] + [f"b{i}" for i in b])
            est = stats.design_proportion(sample, ids, strata, {"A": 6.0, "B": 4.0}, fpc=True)
            values.append(est.value)
            variances.append(est.se**2)
    values = np.array(values)
    # the stratified mean is unbiased for the project's rate, and its variance estimate for
    # its exact variance Σ W_h² (1 − f_h) S_h²/n_h
    assert values.mean() == A((y_a.sum() + y_b.sum()) / 10, rel=1e-12)
    by_hand = (0.6**2) * (1 - 3 / 6) * y_a.var(ddof=1) / 3 + (0.4**2) * (1 - 2 / 4) * y_b.var(
        ddof=1
    ) / 2
    assert values.var() == A(by_hand, rel=1e-12)
    assert np.mean(variances) == A(by_hand, rel=1e-9)


def test_a_census_is_known_exactly_and_a_small_audit_is_left_alone():
    y = np.array([1, 0, 1, 1, 0, 1, 1, 1], float)
    whole = stats.design_proportion(y, np.arange(8), np.zeros(8, int), {0: 8.0}, fpc=True)
    assert whole.ci == (A(6 / 8), A(6 / 8))
    assert "known exactly" in whole.method
    # 4 of 100 claims audited: under the 5% threshold, the interval is the uncorrected one
    small = stats.design_proportion(y[:4], np.arange(4), np.zeros(4, int), {0: 100.0}, fpc=True)
    plain = stats.design_proportion(y[:4], np.arange(4), np.zeros(4, int), {0: 100.0})
    assert small.ci == plain.ci


def test_the_forecast_on_a_project_audited_at_half():
    # 40 claims, one per answer, 20 labelled with 10 faithful: p = ½, per-label variance ¼
    y = np.array([1, 0] * 10 + [0] * 20, float)
    labelled = np.array([True] * 20 + [False] * 20)
    t = student_t.ppf(0.975, 19)
    n0 = 0.25 * t**2 / 0.15**2  # 48.7: more than the project's 40 claims
    by_hand = math.ceil(n0 / (1 + n0 / 40))  # Cochran (1977) §4.4: 22
    got = stats.labels_needed(0.15, "uniform_gold", y, labelled, fpc=True)
    assert got.labels_total == by_hand == 22
    assert got.labels_more == 2
    assert got.half_width_now == A(t * math.sqrt(0.25 * (1 / 20 - 1 / 40)), rel=1e-12)
    assert "finite-population corrected over the project's 40 claims" in got.method
    plain = stats.labels_needed(0.15, "uniform_gold", y, labelled)
    assert plain.labels_total == math.ceil(n0) == 49
    assert "import about 9 more answers" in plain.method  # 49 − 40 claims, one per answer


def _half_audited_project():
    from annotate.models import Gold
    from tests.factories import AnswerFactory, ClaimFactory, ProjectFactory

    project = ProjectFactory()
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(20)]
    for i, claim in enumerate(claims[:10]):
        Gold.objects.create(
            claim=claim, verdict="SUPPORTED" if i < 7 else "NOT_IN_PILE", source="unanimous"
        )
    return project


@pytest.mark.django_db
def test_the_report_of_a_half_audited_project_is_corrected_by_default(settings):
    from metrics.services import report_compute

    project = _half_audited_project()
    plain = report_compute(project=project)["faithfulness"]["pooled"]
    settings.FAITHAUDIT_FINITE_POPULATION_CORRECTION = True  # the product's default
    corrected = report_compute(project=project)["faithfulness"]["pooled"]
    assert corrected["value"] == plain["value"] == 0.7
    assert plain["ci"][0] < corrected["ci"][0] < 0.7 < corrected["ci"][1] < plain["ci"][1]
    assert "finite-population corrected (50% of the claims audited)" in corrected["interval_method"]
    assert "finite-population" not in plain["interval_method"]
