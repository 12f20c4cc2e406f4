"""The forecast held against the claims that exist (issue 32 item 1): a system with 30 claims
cannot take 110 labels; the forecast says how many answers to import instead."""

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from metrics.stats.active_forecast import forecast_within_claims, labels_needed

# 30 claims of one system in 15 answers (2 claims each); 20 labelled, 10 of them SUPPORTED.
CLAIMS, ANSWERS, LABELLED = 30, 15, 20


def _project():
    y = np.array([1.0] * 10 + [0.0] * 10 + [0.0] * 10)
    labelled = np.array([True] * 20 + [False] * 10)
    return y, labelled


def test_a_forecast_past_the_claims_present_asks_for_answers_derived_by_hand():
    y, labelled = _project()
    forecast = labels_needed(0.10, "uniform_gold", y, labelled)
    # By hand: p = 10/20 = 0.5, V₁ = p(1 − p) = 0.25 (every claim its own cluster: deff 1);
    # t = Student's 97.5% quantile at 20 − 1 df; n₀ = V₁·t²/x², rounded up.
    t = student_t.ppf(0.975, 19)
    n0 = math.ceil(0.25 * t**2 / 0.10**2)
    assert n0 == 110
    assert forecast.labels_total == n0
    bound = forecast_within_claims(forecast, claims=CLAIMS, answers=ANSWERS)
    assert not bound.reachable
    assert bound.unlabelled == 10
    assert bound.labels_more == n0 - LABELLED == 90
    # (110 − 30) claims more at 30/15 = 2 claims an answer: 40 answers
    assert bound.answers_more == math.ceil((n0 - CLAIMS) / (CLAIMS / ANSWERS)) == 40
    assert "import about 40 more answers" in bound.method
    assert "only 30 claims exist (10 not labelled yet)" in bound.method


def test_with_the_finite_population_correction_the_claims_present_suffice():
    y, labelled = _project()
    forecast = labels_needed(0.10, "uniform_gold", y, labelled, fpc=True)
    # By hand: n* = V₁t²/(x² + t²V₁/N) = n₀/(1 + n₀/N) before rounding (Cochran §4.4)
    t = student_t.ppf(0.975, 19)
    n_star = math.ceil(0.25 * t**2 / (0.10**2 + t**2 * 0.25 / CLAIMS))
    assert n_star == 24
    bound = forecast_within_claims(forecast, claims=CLAIMS, answers=ANSWERS)
    assert bound.reachable
    assert (bound.labels_more, bound.answers_more) == (n_star - LABELLED, 0)
    assert "about 4 more labels (24 in all) among the 30 claims present" in bound.method


def test_a_forecast_within_the_claims_is_unchanged():
    y = np.array([1.0] * 10 + [0.0] * 10 + [0.0] * 130)
    labelled = np.array([True] * 20 + [False] * 130)
    forecast = labels_needed(0.10, "uniform_gold", y, labelled)
    bound = forecast_within_claims(forecast, claims=150, answers=75)
    assert bound.reachable
    assert bound.labels_more == forecast.labels_more == 90
    assert bound.answers_more == 0


def test_no_forecast_is_not_reachable_and_counts_nothing():
    y, labelled = _project()
    labelled[5:] = False  # 5 labels: too few to forecast
    bound = forecast_within_claims(
        labels_needed(0.10, "uniform_gold", y, labelled), claims=CLAIMS, answers=ANSWERS
    )
    assert (bound.reachable, bound.labels_more, bound.answers_more) == (False, None, None)


@pytest.mark.parametrize(("claims", "answers"), [(0, 0), (10, 11), (10, 0)])
def test_impossible_counts_are_refused(claims, answers):
    y, labelled = _project()
    with pytest.raises(ValueError, match="answers ≤ claims"):
        forecast_within_claims(
            labels_needed(0.10, "uniform_gold", y, labelled), claims=claims, answers=answers
        )


def test_simulation_the_claims_present_cannot_reach_the_target_but_the_imported_ones_do():
    """Seeded: a system's claims are SUPPORTED with probability 0.5; 20 of its 30 claims are
    labelled. The naive forecast ("about 90 more labels") cannot be met: with every one of the
    30 claims labelled, the 95% interval is still wider than ±0.10 in (nearly) every draw. With
    the answers the bound asks for imported and every claim labelled, the interval reaches
    ±0.10 in most draws."""
    rng = np.random.default_rng(20261203)
    present_wide, imported_narrow, runs = 0, 0, 300
    for _ in range(runs):
        y = (rng.random(CLAIMS) < 0.5).astype(float)
        labelled = np.arange(CLAIMS) < LABELLED
        forecast = labels_needed(0.10, "uniform_gold", y, labelled)
        bound = forecast_within_claims(forecast, claims=CLAIMS, answers=ANSWERS)
        assert bound.labels_more > bound.unlabelled  # the naive promise asks for missing claims

        def half_width(outcomes):
            n = outcomes.size
            return student_t.ppf(0.975, n - 1) * outcomes.std(ddof=1) / math.sqrt(n)

        present_wide += half_width(y) > 0.10
        grown = CLAIMS + bound.answers_more * CLAIMS // ANSWERS
        more = (rng.random(grown - CLAIMS) < 0.5).astype(float)
        imported_narrow += half_width(np.concatenate([y, more])) <= 0.10
    assert present_wide / runs > 0.99
    assert imported_narrow / runs > 0.6
