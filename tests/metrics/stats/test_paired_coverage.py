"""Seeded simulations of the paired comparison: planted differences of 0, 3 and 8 points
between two systems answering the same questions, with question-level difficulty shared by
both systems and claims of one answer correlated.

World (per draw, G = 200 questions): question difficulty p_q = 0.05 + 0.85·Beta(0.6, 0.6) (some
piles support almost nothing, some almost everything, for both systems alike); system A
answers with p_q, system B with p_q + δ; each answer has 1 + Poisson(3) claims; 30% of answers
(at random) have all their claims decided by one Bernoulli(p) draw, the others claim by claim,
so every claim is SUPPORTED with probability p but claims of one answer are correlated. The
claim-pooled B − A faithfulness is then δ in expectation (claim counts are independent of p).
"""

import numpy as np
import pytest

from metrics.stats.paired import paired_gold_difference, paired_ppi_difference

DRAWS = 1000
G = 200


def world(rng, delta):
    p_q = 0.05 + 0.85 * rng.beta(0.6, 0.6, G)
    ys, systems, questions, answers = [], [], [], []
    for s in (0, 1):
        p = p_q + delta * s
        n = 1 + rng.poisson(3, G)
        common = rng.random(G) < p
        shared = rng.random(G) < 0.3
        q = np.repeat(np.arange(G), n)
        own = rng.random(q.size) < p[q]
        ys.append(np.where(shared[q], common[q], own).astype(float))
        systems.append(np.full(q.size, s))
        questions.append(q)
        answers.append(q + s * G)
    return (np.concatenate(x) for x in (ys, systems, questions, answers))


def naive_independent(y, s, z=1.96):
    """Claims treated as independent, systems as unrelated: the interval one would compute
    from two reports' claim counts."""
    a, b = y[s == 0], y[s == 1]
    value = b.mean() - a.mean()
    se = np.sqrt(a.mean() * (1 - a.mean()) / a.size + b.mean() * (1 - b.mean()) / b.size)
    return value - z * se, value + z * se


@pytest.mark.parametrize("delta", [0.0, 0.03, 0.08])
def test_gold_only_paired_interval_covers_and_is_narrower_than_unpaired(delta):
    rng = np.random.default_rng(2026 + int(delta * 100))
    covered = naive_covered = 0
    ratios = []
    for _ in range(DRAWS):
        y, s, q, _a = world(rng, delta)
        out = paired_gold_difference(y, s, q)
        covered += out.lower <= delta <= out.upper
        ratios.append(out.se / out.se_unpaired)
        lo, hi = naive_independent(y, s)
        naive_covered += lo <= delta <= hi
    coverage = covered / DRAWS
    assert coverage >= 0.93, coverage
    # The paired interval is narrower than the unpaired one (each system clustered by
    # question, covariance ignored) by about a quarter in this world: mean width ratio ≈ 0.75.
    assert np.mean(ratios) < 0.8, np.mean(ratios)
    assert max(ratios) < 1.0
    # The naive interval (claims independent) misses: it is what this test would catch.
    assert naive_covered / DRAWS < 0.90, naive_covered / DRAWS


@pytest.mark.parametrize("delta", [0.0, 0.03, 0.08])
def test_ppi_paired_interval_covers_with_a_judge_that_errs_differently_per_system(delta):
    rng = np.random.default_rng(7 + int(delta * 100))
    covered = 0
    widths, gold_widths = [], []
    for _ in range(DRAWS):
        y, s, q, _a = world(rng, delta)
        # The judge flips 10% of B's verdicts and 20% of A's: its errors differ by system.
        flip = rng.random(y.size) < np.where(s == 1, 0.10, 0.20)
        judge = np.where(flip, 1 - y, y)
        audited = rng.random(G) < 0.3  # gold on 30% of the questions, all their claims
        gold = np.where(audited[q], y, np.nan)
        out = paired_ppi_difference(gold, judge, s, q)
        covered += out.lower <= delta <= out.upper
        widths.append(out.upper - out.lower)
        keep = audited[q]
        only = paired_gold_difference(y[keep], s[keep], q[keep])
        gold_widths.append(only.upper - only.lower)
    assert covered / DRAWS >= 0.93, covered / DRAWS
    assert np.mean(widths) < np.mean(gold_widths)


def test_gate_false_alarm_at_no_difference_is_at_most_5_percent():
    rng = np.random.default_rng(99)
    alarms = {0.0: 0, 0.02: 0}
    for _ in range(DRAWS):
        y, s, q, _a = world(rng, 0.0)
        out = paired_gold_difference(y, s, q)
        for margin in alarms:
            alarms[margin] += out.upper < -margin
    assert alarms[0.0] / DRAWS <= 0.05, alarms
    assert alarms[0.02] <= alarms[0.0]
