"""monitor.stats against hand derivations and an independent per-claim loop.

Beside confseq's own boundary (tests/monitor/test_stats_confseq.py), the boundary is checked
here against a plain Python loop that follows Waudby-Smith & Ramdas' hedged capital process one
claim at a time, with our daily-fixed bets.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from monitor.stats import (
    betting_cs,
    days_group,
    edetector,
    ipw_values,
    labels_for_halfwidth,
    ppi_values,
)


def test_ipw_and_ppi_values_by_hand():
    z, lo, hi = ipw_values(np.array([1, 1, 0]), np.array([1, 0, 1]), np.array([0.25, 0.5, 0.5]))
    assert z.tolist() == [4.0, 0.0, 0.0]
    assert hi.tolist() == [4.0, 2.0, 2.0]
    assert lo.tolist() == [0, 0, 0]
    # judge says 1, gold 0, sampled at π = 0.25: 1 + (0 − 1)/0.25 = −3
    z, lo, hi = ppi_values(
        np.array([1, 1]), np.array([0, 0]), np.array([1, 0]), np.array([0.25, 0.25])
    )
    assert z.tolist() == [-3.0, 1.0]
    assert lo.tolist() == [-3.0, -3.0]


def test_days_group_counts_by_hand():
    days = days_group(
        np.array([0, 0, 1, 2]), np.array([1.0, 0.0, 1.0, 1.0]), np.zeros(4), np.ones(4), 4
    )
    assert days.values.tolist() == [0.0, 1.0]
    assert days.counts.tolist() == [[1, 1], [0, 1], [0, 1], [0, 0]]


def _reference_excluded(z_by_day, lo, hi, m, alpha):
    """Independent loop: is m ever excluded by the hedged betting CS (daily-fixed bets)?"""
    kp = km = 1.0
    seen = []
    for day in z_by_day:
        n_prev = len(seen)
        mean = (0.5 + sum(seen)) / (1 + n_prev)
        var = (0.25 + sum((x - mean) ** 2 for x in seen)) / (1 + n_prev)
        n_now = n_prev + len(day)
        base = math.sqrt(2 * math.log(2 / alpha) / (var * n_now * math.log(1 + n_now)))
        lp, lm = min(base, 0.5 / (m - lo)), min(base, 0.5 / (hi - m))
        for x in day:
            kp *= 1 + lp * (x - m)
            km *= 1 - lm * (x - m)
        if 0.5 * kp + 0.5 * km >= 1 / alpha:
            return True
        seen.extend(day)
    return False


def test_boundary_matches_an_independent_per_claim_loop():
    rng = np.random.default_rng(3)
    pi, n_days = 0.2, 30
    day = np.repeat(np.arange(n_days), 50)
    y = rng.random(day.size) < 0.8
    s = rng.random(day.size) < pi
    z, lo, hi = ipw_values(y, s, np.full(day.size, pi))
    cs = betting_cs(days_group(day, z, lo, hi, n_days), 0.1, grid_size=201)
    by_day = [list(z[day == t]) for t in range(n_days)]
    grid = np.linspace(0, 1, 201)
    for m in grid[5:-5:7]:
        inside = cs.lower[-1] < m < cs.upper[-1]
        excluded = _reference_excluded(by_day, 0.0, 1 / pi, m, 0.1)
        # the reported ends widen the set by one grid step, so only strict insides must agree
        if inside and not (abs(m - cs.lower[-1]) < 0.011 or abs(m - cs.upper[-1]) < 0.011):
            assert not excluded, m
        if not (cs.lower[-1] <= m <= cs.upper[-1]):
            assert excluded, m


def test_cs_narrows_to_the_truth():
    rng = np.random.default_rng(4)
    day = np.repeat(np.arange(60), 500)
    y = rng.random(day.size) < 0.9
    z, lo, hi = ipw_values(y, np.ones(day.size, bool), np.ones(day.size))
    cs = betting_cs(days_group(day, z, lo, hi, 60))
    assert cs.lower[-1] < 0.9 < cs.upper[-1]
    assert cs.upper[-1] - cs.lower[-1] < 0.02
    assert np.all(np.diff(cs.upper) <= 1e-12)
    assert np.all(np.diff(cs.lower) >= -1e-12)


def test_edetector_threshold_is_horizon_over_alpha():
    days = days_group(np.zeros(1, int), np.ones(1), np.zeros(1), np.ones(1), 1)
    assert edetector(days, 0.9, alpha=0.05, horizon=90).threshold == pytest.approx(math.log(1800))


def test_labels_for_halfwidth_by_hand():
    # N = 10,000, h = 0.03, α = 0.05: N h²/(2 log 40) = 9/7.3778 = 1.21987; minus Var(Y) 0.09
    # gives 1.12987; r = 0.06 → π = 0.06/1.18987 = 0.050426 → 504.3 labels
    labels = labels_for_halfwidth(claims=10_000, halfwidth=0.03, var_y=0.09, disagreement=0.06)
    assert labels == pytest.approx(504.3, abs=0.5)
    assert labels_for_halfwidth(claims=10, halfwidth=0.03, var_y=0.09, disagreement=0.06) == 10
