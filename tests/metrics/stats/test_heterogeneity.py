"""A judge whose error rates differ by risk category: the equality test, the per-category
correction (seeded simulations, 1,000 draws each) and DeLong's AUC.

Expected figures come from hand derivations, scipy's distributions and scikit-learn, never
from the functions under test.
"""

import math

import numpy as np
import pytest
from scipy import stats as sps

from metrics import stats
from metrics.stats import heterogeneity as het

DRAWS = 1000
# Three risk categories: project claims judged per category, planted faithfulness, the judge's
# sensitivity and specificity, and the share of each category's claims the audit labelled
# (the audit oversamples the risky, small category, as a lead restricting the queue does).
N_C = np.array([3000, 2000, 1000])
PI_C = np.array([0.8, 0.6, 0.4])
AUDIT_C = np.array([0.03, 0.10, 0.30])


def _draw(rng, se_c, sp_c, audit_c):
    """One project: per category the judged count, the judge's SUPPORTED count, and the audit's
    (se successes, se n, sp successes, sp n)."""
    groups = {}
    for c, n in enumerate(N_C):
        gold = rng.random(n) < PI_C[c]
        judge = np.where(gold, rng.random(n) < se_c[c], rng.random(n) >= sp_c[c])
        audited = rng.random(n) < audit_c[c]
        g, j = gold[audited], judge[audited]
        groups[f"c{c}"] = {
            "pos": int(judge.sum()),
            "n": int(n),
            "se_successes": int((g & j).sum()),
            "se_n": int(g.sum()),
            "sp_successes": int((~g & ~j).sum()),
            "sp_n": int((~g).sum()),
        }
    return groups


def _pooled(groups):
    tot = {k: sum(g[k] for g in groups.values()) for k in next(iter(groups.values()))}
    value = stats.rogan_gladen(
        tot["pos"] / tot["n"], tot["se_successes"] / tot["se_n"], tot["sp_successes"] / tot["sp_n"]
    )
    ci = stats.rogan_gladen_interval(
        tot["pos"],
        tot["n"],
        tot["se_successes"],
        tot["se_n"],
        tot["sp_successes"],
        tot["sp_n"],
        method="lang-reiczigel",
    )
    return value, ci


def _tests(groups):
    se = het.rate_equality_test(
        [g["se_successes"] for g in groups.values()], [g["se_n"] for g in groups.values()]
    )
    sp = het.rate_equality_test(
        [g["sp_successes"] for g in groups.values()], [g["sp_n"] for g in groups.values()]
    )
    return se["p_value"], sp["p_value"]


PLANTED = float((N_C * PI_C).sum() / N_C.sum())


def test_pooled_correction_misses_and_per_category_covers_when_rates_differ():
    rng = np.random.default_rng(20261201)
    se_c, sp_c = np.array([0.95, 0.80, 0.60]), np.array([0.60, 0.80, 0.95])
    pooled_cover = per_cover = detected = 0
    pooled_err, per_err = [], []
    for _ in range(DRAWS):
        groups = _draw(rng, se_c, sp_c, AUDIT_C)
        value, (lo, hi) = _pooled(groups)
        pooled_cover += lo <= PLANTED <= hi
        pooled_err.append(value - PLANTED)
        per = het.stratified_rogan_gladen(groups)
        per_cover += per["ci"][0] <= PLANTED <= per["ci"][1]
        per_err.append(per["value"] - PLANTED)
        detected += het.rates_differ(*_tests(groups))[0]
    assert per_cover / DRAWS >= 0.93
    assert abs(np.mean(per_err)) < 0.01
    # The naive (pooled) correction is biased and its interval misses the planted value.
    assert abs(np.mean(pooled_err)) > 0.03
    assert pooled_cover / DRAWS < 0.80
    # The equality test sees rates this different nearly every time.
    assert detected / DRAWS > 0.95


def test_equal_rates_keep_todays_figures_and_the_test_alarms_about_five_percent():
    rng = np.random.default_rng(7)
    se_c, sp_c = np.full(3, 0.85), np.full(3, 0.80)
    audit = np.full(3, 0.10)
    alarms_se = alarms_sp = alarms = 0
    differences, per_cover, pooled_cover = [], 0, 0
    for _ in range(DRAWS):
        groups = _draw(rng, se_c, sp_c, audit)
        p_se, p_sp = _tests(groups)
        alarms_se += p_se < 0.05
        alarms_sp += p_sp < 0.05
        alarms += het.rates_differ(p_se, p_sp)[0]
        value, (lo, hi) = _pooled(groups)
        pooled_cover += lo <= PLANTED <= hi
        per = het.stratified_rogan_gladen(groups)
        per_cover += per["ci"][0] <= PLANTED <= per["ci"][1]
        differences.append(per["value"] - value)
    # Each test's false-alarm rate is its nominal 5% (±3 binomial sd of 1,000 draws).
    for rate in (alarms_se / DRAWS, alarms_sp / DRAWS):
        assert 0.05 - 0.021 <= rate <= 0.05 + 0.021, rate
    # The decision (Bonferroni over the two) alarms at most about 5%.
    assert alarms / DRAWS <= 0.05 + 0.021
    # With equal rates the per-category figure is today's pooled one within tolerance.
    assert abs(np.mean(differences)) < 0.003
    assert np.mean(np.abs(differences)) < 0.02
    assert pooled_cover / DRAWS >= 0.93
    assert per_cover / DRAWS >= 0.93


def test_equality_test_is_pearson_chi_square_by_hand():
    # sp: health 10 of 20, legal 20 of 20 → table [[10, 20], [10, 0]].
    obs = np.array([[10.0, 20.0], [10.0, 0.0]])
    row, col, total = obs.sum(1, keepdims=True), obs.sum(0, keepdims=True), obs.sum()
    expected = row @ col / total
    chi2 = float(((obs - expected) ** 2 / expected).sum())
    result = het.rate_equality_test([10, 20], [20, 20])
    assert result["test"].startswith("Pearson")
    assert result["statistic"] == pytest.approx(chi2)
    assert result["p_value"] == pytest.approx(sps.chi2.sf(chi2, 1))


def test_equality_test_small_two_by_two_is_fisher_exact_by_hand():
    # 3 of 4 vs 0 of 3: hypergeometric, two-sided = sum of tables at most as likely as observed.
    result = het.rate_equality_test([3, 0], [4, 3])
    assert result["test"].startswith("Fisher")
    total, succ, n1 = 7, 3, 4

    def prob(a):
        return math.comb(succ, a) * math.comb(total - succ, n1 - a) / math.comb(total, n1)

    observed = prob(3)
    p = sum(prob(a) for a in range(0, 4) if prob(a) <= observed * (1 + 1e-7))
    assert result["p_value"] == pytest.approx(p)


def test_equality_test_says_why_it_did_not_run():
    assert "fewer than two" in het.rate_equality_test([3, 0], [4, 0])["test"]
    assert "no variation" in het.rate_equality_test([4, 3], [4, 3])["test"]
    assert math.isnan(het.rate_equality_test([4, 3], [4, 3])["p_value"])
    assert het.rates_differ(math.nan, math.nan) == (False, pytest.approx(math.nan, nan_ok=True))
    assert het.rates_differ(0.03, math.nan)[0] is True  # one test: no Bonferroni factor
    assert het.rates_differ(0.03, 0.5)[0] is False  # 2 × 0.03 = 0.06


def test_stratified_rogan_gladen_by_hand():
    groups = {
        "health": {"pos": 110, "n": 140, "se_successes": 20, "se_n": 20, "sp_successes": 10,
                   "sp_n": 20},
        "legal": {"pos": 30, "n": 60, "se_successes": 20, "se_n": 20, "sp_successes": 20,
                  "sp_n": 20},
    }  # fmt: skip
    p_h, pi_h = 110 / 140, (110 / 140 - 0.5) / 0.5
    var_h = (p_h * (1 - p_h) / 140 + (1 - pi_h) ** 2 * 0.25 / 20) / 0.25
    var_l = 0.25 / 60
    value = 0.7 * pi_h + 0.3 * 0.5
    half = 1.959963984540054 * math.sqrt(0.49 * var_h + 0.09 * var_l)
    result = het.stratified_rogan_gladen(groups)
    assert value == pytest.approx(0.55)
    assert result["value"] == pytest.approx(value)
    assert result["ci"] == pytest.approx((value - half, value + half))


def test_stratified_rogan_gladen_names_a_category_it_cannot_correct():
    groups = {
        "a": {"pos": 5, "n": 10, "se_successes": 3, "se_n": 4, "sp_successes": 3, "sp_n": 4},
        "b": {"pos": 5, "n": 10, "se_successes": 3, "se_n": 4, "sp_successes": 0, "sp_n": 0},
    }
    result = het.stratified_rogan_gladen(groups)
    assert math.isnan(result["value"])
    assert result["uncorrectable"] == ["b"]


def test_stratified_ppi_one_group_is_ppi_and_combines_by_share():
    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.7).astype(float)
    fg = np.clip(y * 0.6 + rng.random(60) * 0.4, 0, 1)
    fr = rng.random(200)
    one = het.stratified_ppi({"a": {"gold": y, "judge_on_gold": fg, "judge_on_rest": fr}})
    ref = stats.ppi_mean_interval(y, fg, fr)
    assert one["value"] == pytest.approx(ref["value"])
    assert one["ci"] == pytest.approx(ref["ci"])
    two = het.stratified_ppi(
        {
            "a": {"gold": y, "judge_on_gold": fg, "judge_on_rest": fr},
            "b": {"gold": y[:20], "judge_on_gold": fg[:20], "judge_on_rest": fr[:30]},
        }
    )
    ref_b = stats.ppi_mean_interval(y[:20], fg[:20], fr[:30])
    w_a, w_b = 260 / 310, 50 / 310
    assert two["value"] == pytest.approx(w_a * ref["value"] + w_b * ref_b["value"])
    z = 1.959963984540054
    se_a, se_b = (
        (ref["ci"][1] - ref["ci"][0]) / (2 * z),
        (ref_b["ci"][1] - ref_b["ci"][0]) / (2 * z),
    )
    half = z * math.sqrt(w_a**2 * se_a**2 + w_b**2 * se_b**2)
    assert two["ci"] == pytest.approx((two["value"] - half, two["value"] + half))


def test_stratified_ppi_per_category_covers_when_the_audit_oversamples():
    rng = np.random.default_rng(11)
    se_c, sp_c = np.array([0.95, 0.80, 0.60]), np.array([0.60, 0.80, 0.95])
    cover = 0
    for _ in range(DRAWS):
        groups = {}
        for c, n in enumerate(N_C):
            gold = rng.random(n) < PI_C[c]
            judge = np.where(gold, rng.random(n) < se_c[c], rng.random(n) >= sp_c[c])
            audited = rng.random(n) < AUDIT_C[c]
            groups[c] = {
                "gold": gold[audited].astype(float),
                "judge_on_gold": judge[audited].astype(float),
                "judge_on_rest": judge[~audited].astype(float),
            }
        ci = het.stratified_ppi(groups)["ci"]
        cover += ci[0] <= PLANTED <= ci[1]
    assert cover / DRAWS >= 0.93


# --- metrics.stats.heterogeneity: a group without claims is skipped, not the end ---------------


def test_stratified_ppi_skips_an_empty_group_and_combines_the_rest():
    """heterogeneity `stratified_ppi` `_18` (`break` for `continue` at a group with no claims:
    every group after it was dropped). An empty group first, then one group: the combined
    figure is that group's PPI++ mean by ppi_py, weight 1."""
    import numpy as np

    from metrics.stats.heterogeneity import stratified_ppi
    from tests.metrics import independent as ref

    rng = np.random.default_rng(4)
    y = (rng.random(30) < 0.7).astype(float)
    fg = np.clip(np.where(y > 0, 0.8, 0.3) + rng.normal(0, 0.1, 30), 0, 1)
    fr = np.clip(rng.normal(0.65, 0.2, 50), 0, 1)
    out = stratified_ppi(
        {
            "empty": {
                "gold": np.empty(0),
                "judge_on_gold": np.empty(0),
                "judge_on_rest": np.empty(0),
            },
            "b": {"gold": y, "judge_on_gold": fg, "judge_on_rest": fr},
        }
    )
    value, _ci, _lam = ref.ppi(y, fg, fr)
    assert out["value"] == pytest.approx(value, rel=1e-9)
    assert set(out["per_group"]) == {"b"}
    assert out["per_group"]["b"]["weight"] == 1.0


# --- heterogeneity: the stratified PPI interval stays within [0, 1] ------------------------------


def test_stratified_ppi_interval_is_clipped_at_one():
    """heterogeneity `_combined` `_21` (the upper clip at 2 for 1). One group, 10 audited claims,
    9 supported, a judge that says exactly the gold and 10 more claims it calls supported: the
    unclipped upper end (value + z·SE, from the group's own figures) is above 1, so the interval
    ends at 1, a share."""
    import numpy as np
    from scipy.stats import norm

    from metrics.stats.heterogeneity import stratified_ppi

    y = np.array([1.0] * 9 + [0.0])
    out = stratified_ppi(
        {"g": {"gold": y, "judge_on_gold": y.copy(), "judge_on_rest": np.ones(10)}}
    )
    group = out["per_group"]["g"]
    assert group["value"] + norm.ppf(0.975) * group["se"] > 1.0  # the case
    assert out["ci"][1] == 1.0
    assert out["value"] <= 1.0
