"""The abstention threshold chosen on development gold, certified on held-out gold (issue 28
item 6): the bound's coverage, the naive same-gold method's false certifications, the exact
bound against statsmodels, and the threshold's blindness to held-out gold."""

import numpy as np
import pytest
from scipy.stats import beta, norm
from scipy.stats import t as student_t
from statsmodels.stats.proportion import proportion_confint

from metrics.stats.active_selective import selective_threshold
from metrics.stats.selective_split import split_certified_abstention

DELTA = 0.10
TARGET = 0.90
DRAWS = 1000


def _clustered(rng, answers, per):
    """conf ~ U(0, 1); P(wrong | conf c, answer a) = 0.3 (1 − c) u_a with u_a ∈ {0.4, 1.6}
    equally likely, so the error among claims at conf ≥ t is 0.15 (1 − t) exactly."""
    conf = rng.uniform(size=answers * per)
    u = np.repeat(rng.choice([0.4, 1.6], size=answers), per)
    wrong = rng.uniform(size=conf.size) < 0.3 * (1 - conf) * u
    return conf, ~wrong, np.repeat(np.arange(answers), per)


def _naive_certifies(conf, agree):
    """The mistake: scan every threshold on the same gold and certify the first (lowest) one
    whose one-sided Clopper–Pearson bound on the error is at most 1 − target."""
    order = np.argsort(-conf)
    wrong = np.cumsum(~agree[order])
    m = np.arange(1, conf.size + 1)
    upper = np.where(wrong < m, beta.ppf(1 - DELTA, wrong + 1, m - wrong), 1.0)
    return bool((upper <= 1 - TARGET).any())


def test_certified_bound_holds_in_at_least_1_minus_delta_of_draws_with_clustered_claims():
    rng = np.random.default_rng(2028)
    holds, wrongly_certified, chosen = [], 0, 0
    for _ in range(DRAWS):
        dev_conf, dev_agree, _ = _clustered(rng, 100, 4)
        conf, agree, answers = _clustered(rng, 100, 4)
        result = split_certified_abstention(
            dev_conf, dev_agree, conf, agree, heldout_answer_ids=answers, delta=DELTA
        )
        if result.threshold is None:
            continue
        chosen += 1
        true_error = 0.15 * (1 - result.threshold)
        holds.append(true_error <= result.error.upper)
        wrongly_certified += result.certified and true_error > 1 - TARGET
    rate = float(np.mean(holds))
    print(f"bound holds in {rate:.3f} of {chosen} draws with a threshold")
    assert chosen >= 800
    assert rate >= 1 - DELTA
    assert wrongly_certified / DRAWS <= DELTA


def test_naive_same_gold_scan_certifies_too_often_and_the_split_does_not():
    """A judge wrong on 11% of claims at every confidence: no threshold reaches 90% agreement,
    so every certification is wrong. Scanning thresholds on the same 400 gold claims certifies
    one in more than δ of draws; development/held-out 200/200 does so in at most δ."""
    rng = np.random.default_rng(6)
    naive, split = [], []
    for _ in range(DRAWS):
        conf = rng.uniform(size=400)
        agree = rng.uniform(size=400) >= 0.11
        naive.append(_naive_certifies(conf, agree))
        result = split_certified_abstention(conf[:200], agree[:200], conf[200:], agree[200:])
        split.append(result.certified)
    naive_rate, split_rate = float(np.mean(naive)), float(np.mean(split))
    print(f"wrong certifications: naive {naive_rate:.3f}, split {split_rate:.3f} (δ = {DELTA})")
    assert naive_rate > DELTA + 0.05
    assert split_rate <= DELTA


def test_unweighted_bounds_are_clopper_pearson_as_statsmodels_gives_them():
    rng = np.random.default_rng(4)
    dev_conf = rng.uniform(size=300)
    dev_agree = rng.uniform(size=300) < 0.8 + 0.2 * dev_conf
    conf = rng.uniform(size=250)
    agree = rng.uniform(size=250) < 0.8 + 0.2 * conf
    result = split_certified_abstention(dev_conf, dev_agree, conf, agree, delta=DELTA)
    assert result.threshold is not None
    decided = conf >= result.threshold
    m, k = int(decided.sum()), int((~agree[decided]).sum())
    assert (result.n_decided, result.error.n) == (m, m)
    assert result.error.value == pytest.approx(k / m)
    # one-sided (1 − δ) upper end = the two-sided interval's at α = 2δ
    assert result.error.upper == pytest.approx(
        proportion_confint(k, m, alpha=2 * DELTA, method="beta")[1], abs=1e-12
    )
    assert result.error.lower == 0.0
    lo, hi = proportion_confint(m, 250, alpha=0.05, method="beta")
    assert result.coverage.value == pytest.approx(m / 250)
    assert result.coverage.ci == pytest.approx((lo, hi), abs=1e-12)
    assert result.certified == (result.error.upper <= 1 - TARGET)


def test_clustered_bound_is_clopper_pearson_at_the_korn_graubard_effective_size():
    """Each of G independent claims copied twice within its answer, d answers decided: by hand
    z_c = (y_c − p)/d on a decided answer, 0 elsewhere (domain estimation), so the linearised
    variance is G/(G − 1) · p(1 − p)/d, n_eff = d (G − 1)/G, and n* = n_eff (z/t_{d−1})² at
    level 1 − δ (df: the decided answers less one stratum)."""
    rng = np.random.default_rng(8)
    dev_conf = rng.uniform(size=300)
    dev_agree = rng.uniform(size=300) < 0.85 + 0.15 * dev_conf
    g = 60
    conf = np.repeat(rng.uniform(size=g), 2)
    agree = np.repeat(rng.uniform(size=g) < 0.85 + 0.15 * conf[::2], 2)
    answers = np.repeat(np.arange(g), 2)
    result = split_certified_abstention(
        dev_conf, dev_agree, conf, agree, heldout_answer_ids=answers, delta=DELTA
    )
    assert result.threshold is not None
    decided = conf[::2] >= result.threshold
    gd = int(decided.sum())
    p = float(np.mean(~agree[::2][decided]))
    assert 0 < p < 1
    n_eff = gd * (g - 1) / g
    n_star = n_eff * (norm.ppf(1 - DELTA) / student_t.ppf(1 - DELTA, gd - 1)) ** 2
    x = p * n_star
    assert result.error.value == pytest.approx(p)
    assert result.error.design_effect == pytest.approx(2 * gd / n_eff)
    assert result.error.upper == pytest.approx(beta.ppf(1 - DELTA, x + 1, n_star - x), rel=1e-9)
    assert (
        result.error.upper
        > proportion_confint(int(round(p * 2 * gd)), 2 * gd, alpha=2 * DELTA, method="beta")[1]
    )


def test_threshold_is_chosen_on_development_gold_only():
    """Held-out gold that would pick another threshold (on its own or pooled) cannot move it:
    fails if the threshold is chosen from held-out gold."""
    rng = np.random.default_rng(12)
    dev_conf = rng.uniform(size=300)
    dev_agree = rng.uniform(size=300) < 0.8 + 0.2 * dev_conf
    expected = selective_threshold(dev_conf, dev_agree, target=TARGET, delta=DELTA).threshold
    assert expected is not None
    perfect_conf = rng.uniform(size=300)
    perfect = np.ones(300, dtype=bool)  # alone it would certify the lowest decile
    assert selective_threshold(perfect_conf, perfect).threshold != expected
    pooled = selective_threshold(
        np.concatenate([dev_conf, perfect_conf]), np.concatenate([dev_agree, perfect])
    )
    assert pooled.threshold != expected
    for held_conf, held_agree in ((perfect_conf, perfect), (perfect_conf, ~perfect)):
        result = split_certified_abstention(dev_conf, dev_agree, held_conf, held_agree)
        assert result.threshold == expected
        assert result.development.threshold == expected
    assert split_certified_abstention(dev_conf, dev_agree, perfect_conf, perfect).certified
    assert not split_certified_abstention(dev_conf, dev_agree, perfect_conf, ~perfect).certified


def test_no_development_threshold_abstains_everywhere_and_certifies_nothing():
    rng = np.random.default_rng(1)
    conf = rng.uniform(size=100)
    result = split_certified_abstention(conf, np.zeros(100, bool), conf, np.ones(100, bool))
    assert result.threshold is None
    assert result.n_decided == 0
    assert result.coverage.value == 0.0
    assert not result.certified
    assert "abstains on every claim" in result.method
    with pytest.raises(ValueError, match="differ in length"):
        split_certified_abstention(conf, conf > 0.5, conf, np.ones(99, bool))
