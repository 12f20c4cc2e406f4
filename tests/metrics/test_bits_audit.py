"""Grounding bits audited like an instrument: the report's `grounding_bits` block against values
computed here (sklearn's AUC, statsmodels' Wilson interval, this file's own bigram bits), the
AUC interval's coverage in a seeded simulation, and the histogram by hand."""

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from metrics.services.bits import histogram_counts, histogram_edges
from metrics.stats.ranking import auc_delong
from tests.factories import AnswerFactory, ClaimFactory, GoldFactory, PassageFactory, ProjectFactory
from tests.judges.conftest import llm  # noqa: F401 - the loopback server fixture
from tests.judges.test_bits_backend import expected_bits


# --- the AUC and its interval --------------------------------------------------------------
def test_auc_equals_sklearn_with_ties():
    rng = np.random.default_rng(3)
    pos = np.round(rng.normal(0.7, 1, 40), 1)
    neg = np.round(rng.normal(0, 1, 55), 1)
    y = np.r_[np.ones(40), np.zeros(55)]
    got = auc_delong(pos, neg)
    assert got.value == pytest.approx(roc_auc_score(y, np.r_[pos, neg]), abs=1e-12)
    assert (got.positives, got.negatives) == (40, 55)


def test_delong_variance_equals_brute_force_placements():
    rng = np.random.default_rng(4)
    pos, neg = rng.integers(0, 6, 17).astype(float), rng.integers(0, 5, 23).astype(float)
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = v10.var(ddof=1) / 17 + v01.var(ddof=1) / 23
    assert auc_delong(pos, neg).se == pytest.approx(math.sqrt(var), rel=1e-12)


def test_auc_of_a_perfect_separation_has_a_wilson_interval_of_the_smaller_group():
    got = auc_delong([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0, -4.0])
    lo, hi = proportion_confint(3, 3, alpha=0.05, method="wilson")
    assert got.value == 1.0
    assert (got.lower, got.upper) == (pytest.approx(lo), 1.0)


def test_auc_is_nan_without_one_of_the_groups():
    assert math.isnan(auc_delong([], [1.0]).value)


def test_delong_interval_covers_the_binormal_auc():
    """Binormal scores, shift 1: AUC = Φ(1/√2) = 0.7602. DeLong's interval covers it about 95%
    of the time; the naive interval that treats the m·n pairs as independent trials does not."""
    from scipy.stats import norm

    truth = norm.cdf(1 / math.sqrt(2))
    rng = np.random.default_rng(18)
    covered = naive = 0
    reps = 600
    for _ in range(reps):
        pos, neg = rng.normal(1, 1, 30), rng.normal(0, 1, 45)
        got = auc_delong(pos, neg)
        covered += got.lower <= truth <= got.upper
        lo, hi = proportion_confint(round(got.value * 1350), 1350, method="wilson")
        naive += lo <= truth <= hi
    assert 0.925 <= covered / reps <= 0.975
    assert naive / reps < 0.70


# --- the histogram ---------------------------------------------------------------------------
def test_histogram_bins_are_round_right_closed_and_zero_is_an_edge():
    values = np.array([-2.3, -0.4, 0.0, 0.2, 1.1, 3.6])
    edges = histogram_edges(values, bins=6)
    # span 5.9 over 6 bins -> width 1 (the next round number up from 0.98)
    assert edges.tolist() == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    # (-3,-2]: -2.3; (-1,0]: -0.4 and 0.0; (0,1]: 0.2; (1,2]: 1.1; (3,4]: 3.6
    assert histogram_counts(values, edges) == [1, 0, 2, 1, 1, 0, 1]


def test_a_lowest_value_on_an_edge_gets_the_bin_below():
    edges = histogram_edges(np.array([-2.0, 1.0]), bins=3)
    assert edges[0] < -2.0
    assert sum(histogram_counts(np.array([-2.0, 1.0]), edges)) == 2


# --- the report's block on a project scored by the loopback server -----------------------------
TOPICS = [
    ("refunds", "Refunds are processed within 14 days. They are issued to the original card."),
    ("parcels", "Parcels ship from Leeds on weekdays. Tracking links arrive by email."),
    ("returns", "Returns are free for members. Labels are printed at the counter."),
    ("hours", "The shop opens at nine on Mondays. It closes early on public holidays."),
    ("gifts", "Gift cards never expire. They cannot be exchanged for cash."),
    ("repairs", "Repairs take up to three weeks. A loan phone is offered meanwhile."),
]


def _claims(name, pile):
    first, second = (
        s.strip() + ("" if s.strip().endswith(".") else ".") for s in pile.split(". ", 1)
    )
    swapped = first.replace("14", "30").replace("Leeds", "Derby").replace("nine", "ten")
    swapped = swapped.replace("free", "paid").replace("never", "often").replace("three", "six")
    return [
        (first, "SUPPORTED"),
        (second, "SUPPORTED"),
        (swapped, "CONTRADICTED"),
        (f"Our drones deliver {name} to the moon.", "NOT_IN_PILE"),
        (f"Staff who handle {name} speak seven languages.", "NOT_IN_PILE"),
    ]


@pytest.mark.django_db
def test_report_block_matches_independent_figures(llm, django_capture_on_commit_callbacks):  # noqa: F811
    from judges.services import judge_create, judge_run_start
    from metrics.services import report_compute

    _, ctl = llm
    project = ProjectFactory()
    gold_of = {}
    for name, pile in TOPICS:
        answer = AnswerFactory(project=project, question=f"What about {name}?")
        PassageFactory(answer=answer, rank=1, text=pile)
        for position, (text, verdict) in enumerate(_claims(name, pile)):
            claim = ClaimFactory(answer=answer, project=project, text=text, position=position)
            GoldFactory(claim=claim, verdict=verdict)
            gold_of[claim.pk] = (text, verdict)
    judge = judge_create(
        project=project, name="bits", backend="bits", model="loopback", endpoint="loopback"
    )
    with django_capture_on_commit_callbacks(execute=True):
        judge_run_start(judge=judge)
    report = report_compute(project=project, judge=judge)
    block = report["grounding_bits"]

    # The bits, recomputed from the prompts the server saw with this test's own bigram model.
    texts = {text for text, _ in gold_of.values()}
    assert len(texts) == len(gold_of)  # one claim per text: the log finds each one's prompts
    mine = {text: expected_bits(ctl, text)[0] for text in texts}
    y = np.array([v == "SUPPORTED" for _, v in gold_of.values()])
    b = np.array([mine[t] for t, _ in gold_of.values()])
    assert block["n_audited"] == len(gold_of) == 30
    assert block["auc"]["auc"] == pytest.approx(roc_auc_score(y, b), abs=1e-9)
    k, n = int((b[~y] <= 0).sum()), int((~y).sum())
    share = block["unsupported_non_positive"]
    assert (share["numerator"], share["denominator"]) == (k, n)
    assert share["ci"] == pytest.approx(proportion_confint(k, n, method="wilson"))
    assert block["sensitivity"]["value"] == pytest.approx((b[y] > 0).mean())
    assert block["specificity"]["value"] == pytest.approx((b[~y] <= 0).mean())
    assert block["mean_bits"]["SUPPORTED"] == pytest.approx(b[y].mean())
    assert block["mean_bits"]["unsupported"] == pytest.approx(b[~y].mean())
    # The copied claims score positive; the fabricated ones non-positive, but for the one that
    # repeats a bigram of its pile ("to the", from "issued to the original card").
    assert (b[y] > 0).all()
    positive_fabrications = [t for t, v in gold_of.values() if v == "NOT_IN_PILE" and mine[t] > 0]
    assert positive_fabrications == ["Our drones deliver refunds to the moon."]
    assert k == 11  # the 11 other fabrications; every swapped figure scores positive
    counts = block["histogram"]["counts"]
    assert sum(counts["SUPPORTED"]) == 12
    assert sum(counts["NOT_IN_PILE"]) == 12
    assert sum(counts["CONTRADICTED"]) == 6
    zero = block["histogram"]["zero_index"]
    assert block["histogram"]["edges"][zero] == 0.0
    assert sum(counts["NOT_IN_PILE"][:zero]) == 11  # at or left of the zero line
    assert sum(counts["SUPPORTED"][:zero]) == 0
    assert block["calibration"]["enough"] is True
    # The same run is the report's judge: its audit blocks (PPI++, calibration, CRC) apply.
    assert report["judge"]["backend"] == "bits"
    assert report["judge"]["n_audited"] == 30
    assert block["with_judge"] is None  # no prompted judge in this project


@pytest.mark.django_db
def test_with_a_prompted_judge_the_block_counts_disagreements_on_gold():
    from metrics.services import report_compute
    from tests.factories import JudgeFactory, JudgeRunFactory, JudgeVerdictFactory
    from tests.metrics.factories_bits import build_bits_project

    built = build_bits_project(n_answers=10)
    other = JudgeFactory(project=built.project, name="prompted", backend="openai", model="m")
    run = JudgeRunFactory(judge=other, prompt_version="p1")
    rng = np.random.default_rng(5)
    says = {}
    for claim in built.claims:
        verdict = "SUPPORTED" if rng.random() < 0.6 else "NOT_IN_PILE"
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict, confidence=None)
        says[claim.pk] = verdict == "SUPPORTED"
    report = report_compute(project=built.project, judge=built.judge)
    w = report["grounding_bits"]["with_judge"]
    assert (w["judge"], w["n"]) == ("prompted", 40)
    bits_says = {c.pk: built.bits[c.pk] > 0 for c in built.claims}
    assert w["disagree"] == sum(bits_says[c.pk] != says[c.pk] for c in built.claims)
    gold_s = [c for c in built.claims if c.gold.verdict == "SUPPORTED"]
    assert w["disagreements"]["SUPPORTED"]["bits_only_supported"] == sum(
        bits_says[c.pk] and not says[c.pk] for c in gold_s
    )
    assert set(w["combination"]) >= {"judge", "bits", "combined", "offered"}


# --- two instruments together --------------------------------------------------------------
def _two_signals(rng, n, judge_signal):
    y = rng.random(n) < 0.6
    groups = np.arange(n) // 4
    bits = rng.normal(np.where(y, 0.8, -0.8), 1.0)
    judge = 1 / (1 + np.exp(-rng.normal(np.where(y, judge_signal, -judge_signal), 1.0)))
    return judge, bits, y, groups


def test_combination_out_of_fold_figures_equal_sklearns_cross_val_predict():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from metrics.services.bits import combine_out_of_fold

    judge, bits, y, groups = _two_signals(np.random.default_rng(7), 200, 0.8)
    got = combine_out_of_fold(judge, bits, y, groups)
    p = cross_val_predict(
        make_pipeline(StandardScaler(), LogisticRegression()),
        np.column_stack([judge, bits]),
        y.astype(int),
        groups=groups,
        cv=GroupKFold(5),
        method="predict_proba",
    )[:, 1]
    assert got["combined"]["log_loss"] == pytest.approx(log_loss(y, p), rel=1e-9)
    assert got["combined"]["auc"] == pytest.approx(roc_auc_score(y, p), rel=1e-9)


def test_combination_is_offered_when_both_carry_signal_and_rarely_for_a_noise_judge():
    """Seeded simulation: two independent informative instruments → the combination beats both
    out of fold in nearly every data set; a judge of pure noise adds nothing, and the rule
    offers the combination far less often (only when the noise happens to help out of fold)."""
    from metrics.services.bits import combine_out_of_fold

    rng = np.random.default_rng(180)
    informative = sum(
        combine_out_of_fold(*_two_signals(rng, 240, 0.8))["offered"] for _ in range(40)
    )
    noise = sum(combine_out_of_fold(*_two_signals(rng, 240, 0.0))["offered"] for _ in range(40))
    assert informative >= 38
    assert noise <= 16
