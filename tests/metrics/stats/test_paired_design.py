"""Paired B − A under the audit's design (strata, inclusion probabilities): hand cases,
statsmodels' weighted least squares with a cluster-robust covariance, scipy's paired t for the
simple case, and seeded coverage simulations where the unweighted estimators fail.

World of the simulations (per draw): G = 400 questions, 80 of them high-risk (fixed), each
answered by A and B with 1 + Poisson(2) claims; a question's difficulty u_q ~ U(−0.1, 0.1) is
shared by both systems; A's claims are SUPPORTED with probability 0.5 + u_q (high) or
0.85 + u_q (low), B's with the same plus d_high (high) or d_low (low); 30% of answers have
all their claims decided by one draw (claims of one answer correlated). Claim counts do not
depend on the stratum, so the claim-pooled B − A is (80·d_high + 320·d_low)/400 in
expectation. Gold oversamples the high-risk questions, whose difference is not the low ones',
so a mean that ignores the design is pulled towards d_high.
"""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as scipy_stats

from metrics.stats.paired import (
    paired_design_difference,
    paired_gold_difference,
    paired_ppi_difference,
)

DRAWS = 1000
G = 400
HIGH = 80


def world(rng, d_low, d_high):
    high_q = np.arange(G) < HIGH
    u = rng.uniform(-0.1, 0.1, G)
    ys, ss, qs = [], [], []
    for s in (0, 1):
        p = np.where(high_q, 0.5 + s * d_high, 0.85 + s * d_low) + u
        n = 1 + rng.poisson(2, G)
        q = np.repeat(np.arange(G), n)
        common = rng.random(G) < p
        shared = rng.random(G) < 0.3
        own = rng.random(q.size) < p[q]
        ys.append(np.where(shared[q], common[q], own).astype(float))
        ss.append(np.full(q.size, s))
        qs.append(q)
    y, s, q = (np.concatenate(x) for x in (ys, ss, qs))
    return y, s, q, np.where(high_q[q], "high", "low")


def planted(d_low, d_high):
    return (HIGH * d_high + (G - HIGH) * d_low) / G


PLANTED = [(0.0, 0.2), (-0.05, 0.2)]  # B − A = 4 points, and 0 points (+20 high, −5 low)


@pytest.mark.parametrize(("d_low", "d_high"), PLANTED)
def test_unequal_inclusion_probabilities_gold_only_covers_where_the_unweighted_misses(
    d_low, d_high
):
    """Active (Poisson) sampling: a high-risk claim is drawn with π = 0.5, a low one with
    π = 0.08; each gold claim weighted by 1/π."""
    rng = np.random.default_rng(1501 + int(100 * d_low))
    truth = planted(d_low, d_high)
    covered = unweighted_covered = 0
    for _ in range(DRAWS):
        y, s, q, h = world(rng, d_low, d_high)
        pi = np.where(h == "high", 0.5, 0.08)
        gold = np.where(rng.random(y.size) < pi, y, np.nan)
        out = paired_design_difference(gold, s, q, weight=1 / pi)
        covered += out.lower <= truth <= out.upper
        labelled = ~np.isnan(gold)
        naive = paired_gold_difference(y[labelled], s[labelled], q[labelled])
        unweighted_covered += naive.lower <= truth <= naive.upper
    assert covered / DRAWS >= 0.93, covered / DRAWS
    # Measured (these seeds): weighted 0.965 / 0.946, unweighted 0.564 / 0.390.
    assert unweighted_covered / DRAWS < 0.80, unweighted_covered / DRAWS


@pytest.mark.parametrize(("d_low", "d_high"), PLANTED)
def test_stratified_audit_ppi_covers_where_the_unweighted_ppi_misses(d_low, d_high):
    """Stratified sampling: 100 gold claims per system among the high-risk claims (about 240),
    30 among the low ones (about 960); a judge whose errors differ by stratum and system
    (35% of A's high-risk verdicts flipped, 5% elsewhere)."""
    rng = np.random.default_rng(1601 + int(100 * d_low))
    truth = planted(d_low, d_high)
    covered = unweighted_covered = 0
    widths, gold_widths = [], []
    for _ in range(DRAWS):
        y, s, q, h = world(rng, d_low, d_high)
        gold = np.full(y.size, np.nan)
        for side in (0, 1):
            for name, k in (("high", 100), ("low", 30)):
                pick = rng.choice(np.flatnonzero((s == side) & (h == name)), k, replace=False)
                gold[pick] = y[pick]
        flip = rng.random(y.size) < np.where((h == "high") & (s == 0), 0.35, 0.05)
        judge = np.where(flip, 1 - y, y)
        out = paired_design_difference(gold, s, q, judge=judge, stratum=h)
        covered += out.lower <= truth <= out.upper
        widths.append(out.upper - out.lower)
        only = paired_design_difference(gold, s, q, stratum=h)
        gold_widths.append(only.upper - only.lower)
        naive = paired_ppi_difference(gold, judge, s, q)
        unweighted_covered += naive.lower <= truth <= naive.upper
    assert covered / DRAWS >= 0.93, covered / DRAWS
    # Measured (these seeds): stratified PPI++ 0.958 / 0.949, unweighted PPI++ 0.855 / 0.792.
    assert unweighted_covered / DRAWS < 0.90, unweighted_covered / DRAWS
    # The judge still buys precision over stratified gold alone.
    assert np.mean(widths) < np.mean(gold_widths)


@pytest.mark.parametrize(("d_low", "d_high"), PLANTED)
def test_unequal_inclusion_probabilities_ppi_covers_where_the_unweighted_ppi_misses(d_low, d_high):
    """Active sampling (π = 0.5 high-risk, 0.08 low) and the judge of the stratified test:
    PPI++ with each gold claim weighted 1/π, the judge's mean over all of each stratum."""
    rng = np.random.default_rng(1701 + int(100 * d_low))
    truth = planted(d_low, d_high)
    covered = unweighted_covered = 0
    widths, gold_widths = [], []
    for _ in range(DRAWS):
        y, s, q, h = world(rng, d_low, d_high)
        pi = np.where(h == "high", 0.5, 0.08)
        gold = np.where(rng.random(y.size) < pi, y, np.nan)
        flip = rng.random(y.size) < np.where((h == "high") & (s == 0), 0.35, 0.05)
        judge = np.where(flip, 1 - y, y)
        out = paired_design_difference(gold, s, q, judge=judge, weight=1 / pi)
        covered += out.lower <= truth <= out.upper
        widths.append(out.upper - out.lower)
        only = paired_design_difference(gold, s, q, weight=1 / pi)
        gold_widths.append(only.upper - only.lower)
        naive = paired_ppi_difference(gold, judge, s, q)
        unweighted_covered += naive.lower <= truth <= naive.upper
    assert covered / DRAWS >= 0.93, covered / DRAWS
    # Measured (these seeds): weighted PPI++ 0.949 / 0.959, unweighted PPI++ 0.887 / 0.842;
    # mean width 0.13 against 0.20 for weighted gold alone.
    assert unweighted_covered / DRAWS < 0.90, unweighted_covered / DRAWS
    assert np.mean(widths) < 0.8 * np.mean(gold_widths)


def _wls_contrast(gold, s, q, stratum, weight):
    """statsmodels: WLS of y on one indicator per (system, stratum) cell (the cells' weighted
    means), covariance clustered by question; B − A = Σ_h W_Bh β_Bh − Σ_h W_Ah β_Ah with
    W_sh = N_sh/N_s. Returns (value, SE with the CR1 factor G/(G − 1) only)."""
    labelled = ~np.isnan(gold)
    cells = sorted({(int(a), str(b)) for a, b in zip(s[labelled], stratum[labelled], strict=True)})
    x = np.column_stack([((s == a) & (stratum == b))[labelled].astype(float) for a, b in cells])
    fit = sm.WLS(gold[labelled], x, weights=weight[labelled]).fit(
        cov_type="cluster",
        cov_kwds={
            "groups": np.unique(q[labelled], return_inverse=True)[1],
            "use_correction": False,
        },
    )
    contrast = np.array(
        [
            (1 if a == 1 else -1) * ((s == a) & (stratum == b)).sum() / (s == a).sum()
            for a, b in cells
        ]
    )
    g = np.unique(q[labelled]).size
    # WLS's sandwich uses √w·x and √w·e: the same Σ_g (Σ_i w_i e_i x_i)(…)ᵀ as the influences.
    var = float(contrast @ fit.cov_params() @ contrast) * g / (g - 1)
    return float(contrast @ fit.params), np.sqrt(var)


def test_stratified_weighted_figure_is_statsmodels_wls_cluster_robust_contrast():
    rng = np.random.default_rng(31)
    y, s, q, h = world(rng, 0.0, 0.2)
    pi = np.where(h == "high", rng.uniform(0.3, 0.6, y.size), rng.uniform(0.05, 0.15, y.size))
    gold = np.where(rng.random(y.size) < pi, y, np.nan)
    out = paired_design_difference(gold, s, q, stratum=h, weight=1 / pi)
    value, se = _wls_contrast(gold, s, q, h, 1 / pi)
    assert out.value == pytest.approx(value, abs=1e-12)
    assert out.se == pytest.approx(se, rel=1e-9)
    g = np.unique(q[~np.isnan(gold)]).size
    t = scipy_stats.t.ppf(0.975, g - 1)
    assert (out.lower, out.upper) == (pytest.approx(value - t * se), pytest.approx(value + t * se))
    assert out.extra["design"] == "stratified"
    assert "stratified over 2 design strata" in out.method
    assert "weighted by 1/π" in out.method


def test_hand_worked_two_strata():
    # Stratum x: A units [1, 0 (gold), ·], B [1 (gold), ·]; stratum y: A [1 (gold)], B [0, 1].
    # N: A x 3, y 1 → W_Ax = 3/4, W_Ay = 1/4; B x 2, y 2 → 1/2, 1/2.
    # θ_A = 3/4·1/2 + 1/4·1 = 5/8; θ_B = 1/2·1 + 1/2·1/2 = 3/4; D = 1/8.
    nan = np.nan
    gold = [1, 0, nan, 1, nan, 1, 0, 1]
    system = [0, 0, 0, 1, 1, 0, 1, 1]
    question = ["q1", "q2", "q3", "q1", "q3", "q3", "q2", "q3"]
    stratum = ["x", "x", "x", "x", "x", "y", "y", "y"]
    out = paired_design_difference(gold, system, question, stratum=stratum)
    assert out.value == pytest.approx(1 / 8)
    assert out.rates == (pytest.approx(5 / 8), pytest.approx(3 / 4))
    # Influences W·(y − Ȳ_h)/n_h: A x: 3/4·(±1/2)/2 = ±3/16 (q1 +, q2 −); A y: 0;
    # B x: 0; B y: 1/2·(∓1/2)/2 = ∓1/8 (q2 −, q3 +). z_q (B − A): q1 −3/16, q2 3/16 − 1/8
    # = 1/16, q3 1/8. SE² = 3/2·(9 + 1 + 4)/256.
    assert out.se == pytest.approx(np.sqrt(1.5 * 14 / 256))
    assert out.n_questions == 3
    assert out.n_units == (3, 3)


def test_one_stratum_and_equal_weights_are_todays_paired_t_exactly():
    rng = np.random.default_rng(5)
    g = 50
    a = (rng.random(g) < 0.6).astype(float)
    b = (rng.random(g) < 0.7).astype(float)
    gold = np.concatenate([a, b, np.full(g, np.nan)])  # a third block never labelled
    system = np.concatenate([np.zeros(g), np.ones(g), np.ones(g)]).astype(int)
    question = np.concatenate([np.arange(g), np.arange(g), np.arange(g)])
    out = paired_design_difference(
        gold, system, question, stratum=["whole project"] * (3 * g), weight=np.full(3 * g, 4.0)
    )
    lo, hi = scipy_stats.ttest_rel(b, a).confidence_interval()
    assert out.value == pytest.approx(float(np.mean(b - a)), abs=1e-15)
    assert (out.lower, out.upper) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert "design" not in out.extra  # today's estimator, today's method text
    assert out.method.startswith("gold only, paired by question (clustered by question")


def test_a_stratum_without_gold_is_not_extrapolated_over_and_the_method_says_so():
    nan = np.nan
    # A: x [1, 0] gold, z [·, ·] none; B: x [1, 1] gold, z [·, ·].
    gold = [1, 0, nan, nan, 1, 1, nan, nan]
    system = [0, 0, 0, 0, 1, 1, 1, 1]
    question = ["q1", "q2", "q1", "q2", "q1", "q2", "q1", "q2"]
    stratum = ["x", "x", "z", "z", "x", "x", "z", "z"]
    out = paired_design_difference(gold, system, question, stratum=stratum)
    assert out.value == pytest.approx(0.5)
    assert out.extra["unseen_share"] == [0.5, 0.5]
    assert "strata with no gold not estimated: 50% of A's units, 50% of B's" in out.method


def test_a_weight_that_is_not_positive_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="weight must be a positive number"):
        paired_design_difference([1, 0, 1, 1], [0, 0, 1, 1], [1, 2, 1, 2], weight=[1, 0, 1, 1])
