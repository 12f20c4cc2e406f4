"""The report's `active_audit` block (issue 14), through the database.

Expected figures come from independent arithmetic: `ppi_py` (tests/metrics/independent.py) for
the active headline with a constant π (which must then be today's uniform PPI++), Wilson by hand,
stratified means by hand with numpy, the forecast n = V₁·z²/x² from the binomial variance, and
the selective-judging threshold checked with scipy's exact binomial tail.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom
from scipy.stats import t as student_t

from annotate.models import Answer, Claim, Gold, Label, Project
from judges.models import JudgeVerdict
from metrics import selectors
from metrics.services import active_audit as aa
from metrics.services import active_routing as routing
from metrics.services import audit_design as ds
from metrics.services import report_compute
from metrics.services.judged import Judged
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    ProjectFactory,
    UserFactory,
)
from tests.metrics import independent as ref
from tests.metrics.factories_report import CONF, GOLD, JUDGE, REST, REST_CONF

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def _one_claim_answers(project, count, **claim_fields):
    return [
        ClaimFactory(answer=AnswerFactory(project=project), **claim_fields) for _ in range(count)
    ]


def _planted_one_per_answer(**project_fields):
    """The planted vectors (40 gold + 20 judged, unaudited), every claim its own answer."""
    project = ProjectFactory(**project_fields)
    gold_claims = _one_claim_answers(project, 40)
    rest = _one_claim_answers(project, 20)
    for claim, verdict in zip(gold_claims, GOLD, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    judge = JudgeFactory(project=project, name="lenient", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for claim, verdict, conf in zip(
        gold_claims + rest, JUDGE + REST, CONF + REST_CONF, strict=True
    ):
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=conf)
    return project, judge, gold_claims, rest


def _active_labels(claims, pis, verdicts=GOLD):
    analyst = UserFactory()
    for claim, pi, verdict in zip(claims, pis, verdicts, strict=True):
        Label.objects.create(
            claim=claim,
            annotator=analyst,
            verdict=verdict,
            design="active",
            inclusion_probability=pi,
        )


def test_no_gold_gives_no_block():
    project = ProjectFactory()
    _one_claim_answers(project, 5)
    assert "active_audit" not in report_compute(project=project)


def _t(df):
    return float(student_t.ppf(0.975, df))


def test_uniform_design_gives_only_the_uniform_forecast_from_the_binomial_variance():
    """Gold only, one claim per answer: the headline is the pooled Wilson interval, and the
    uniform forecast is n = p(1 − p)·t²/x² labels for ±x (design effect 1, t at 39 df), the
    half-width now t·√(p(1 − p)/n)."""
    project = ProjectFactory()
    claims = _one_claim_answers(project, 40)
    for claim, verdict in zip(claims, GOLD, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    block = report_compute(project=project)["active_audit"]

    assert block["design"] == "uniform"
    assert set(block["forecast"]) == {"uniform"}
    p = GOLD.count(S) / 40
    low, high = ref.wilson(GOLD.count(S), 40)
    assert block["headline"]["half_width"] == pytest.approx((high - low) / 2, abs=1e-12)
    uniform = block["forecast"]["uniform"]
    assert uniform["estimator"] == "uniform_gold"
    assert uniform["target_half_width"] == 0.10  # no target set: the default
    t = _t(39)
    assert uniform["half_width_now"] == pytest.approx(t * math.sqrt(p * (1 - p) / 40), rel=1e-9)
    assert uniform["labels_total"] == math.ceil(p * (1 - p) * t**2 / 0.10**2)
    assert uniform["labels_more"] == max(uniform["labels_total"] - 40, 0)
    assert block["reached"] is ((high - low) / 2 <= 0.10)
    assert block["progress"] == pytest.approx(
        1.0 if block["reached"] else min(0.99, 40 / uniform["labels_total"])
    )


def test_the_lead_target_moves_the_forecast_and_the_stop_rule():
    project = ProjectFactory(target_half_width=0.05)
    claims = _one_claim_answers(project, 40)
    for claim, verdict in zip(claims, GOLD, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    block = report_compute(project=project)["active_audit"]
    uniform = block["forecast"]["uniform"]
    p = GOLD.count(S) / 40
    assert block["target_set"] is True
    assert uniform["target_half_width"] == 0.05
    assert uniform["labels_total"] == math.ceil(p * (1 - p) * _t(39) ** 2 / 0.05**2)
    assert block["reached"] is False
    assert block["progress"] == pytest.approx(40 / uniform["labels_total"])
    assert 0 < block["progress"] < 1

    project.target_half_width = 0.2  # wider than the interval now: reached
    project.save()
    block = report_compute(project=project)["active_audit"]
    assert block["reached"] is True
    assert block["progress"] == 1.0
    assert block["forecast"]["uniform"]["labels_more"] == 0


def test_active_headline_with_a_constant_pi_is_todays_uniform_ppi():
    """π ≡ 0.5 on every claim, one claim per answer: active inference with Hájek weights is
    exactly PPI++ (ppi_py), and the report's own PPI++ figure."""
    project, judge, gold_claims, rest = _planted_one_per_answer(queue_design="active")
    Claim.objects.filter(project=project).update(inclusion_probability=0.5)
    _active_labels(gold_claims, [0.5] * 40)
    report = report_compute(project=project, judge=judge)
    block = report["active_audit"]

    assert block["design"] == "active"
    assert set(block["forecast"]) == {"uniform", "active"}
    y = np.array([v == S for v in GOLD], dtype=float)
    f_gold = np.array(CONF)
    f_rest = np.array(REST_CONF)
    value, (low, high), _ = ref.ppi(y, f_gold, f_rest)
    assert block["headline"]["value"] == pytest.approx(value, abs=1e-9)
    assert block["headline"]["ci"] == pytest.approx([low, high], abs=1e-9)
    assert block["headline"]["value"] == pytest.approx(
        report["judge"]["ppi_faithfulness"]["value"], abs=1e-12
    )
    assert block["headline"]["half_width"] == pytest.approx((high - low) / 2, abs=1e-9)
    assert block["forecast"]["uniform"]["estimator"] == "uniform_ppi"
    assert block["forecast"]["active"]["estimator"] == "active"
    assert "Active" in block["method"] or "active" in block["method"]


def test_active_headline_weights_each_label_by_its_recorded_pi():
    """Labels drawn with π = 0.8 on the judge-SUPPORTED claims and 0.2 on the others: with no
    judge prediction used (λ = 0 is the Hájek mean), the figure is Σ y/π / Σ 1/π by hand; with
    the judge it is the Hájek rectified estimate computed here with numpy."""
    project, judge, gold_claims, rest = _planted_one_per_answer(queue_design="active")
    analyst = UserFactory()
    pis = []
    for claim, verdict_j, verdict_g in zip(gold_claims, JUDGE, GOLD, strict=True):
        pi = 0.8 if verdict_j == S else 0.2
        pis.append(pi)
        Label.objects.create(
            claim=claim, annotator=analyst, verdict=verdict_g, design="active",
            inclusion_probability=pi,
        )  # fmt: skip
    Claim.objects.filter(pk__in=[c.pk for c in rest]).update(inclusion_probability=0.5)
    block = report_compute(project=project, judge=judge)["active_audit"]
    y = np.array([v == S for v in GOLD], dtype=float)
    w = 1 / np.array(pis)
    f_all = np.array(CONF + REST_CONF)
    f_lab = np.array(CONF)
    # θ̂(λ) = λ·mean_N f + Σ w(y − λ f)/Σ w, for the λ the estimator chose (read back from the
    # value: it is linear in λ, so the pair (value, λ) must satisfy this line exactly)
    hajek = float((w * y).sum() / w.sum())
    slope = float(f_all.mean() - (w * f_lab).sum() / w.sum())
    lam = (block["headline"]["value"] - hajek) / slope
    assert -1e-9 <= lam <= 1 + 1e-9
    assert block["headline"]["value"] == pytest.approx(hajek + lam * slope, abs=1e-12)
    # the unweighted label mean is NOT what it reports (the design would be ignored)
    assert abs(block["headline"]["value"] - y.mean()) > 1e-3 or abs(hajek - y.mean()) < 1e-3


def test_stratified_headline_without_a_judge_is_the_weighted_stratum_mean():
    """Two active strata of 30 and 90 claims, gold on 20 and 10 of them: Σ_h (N_h/N)·ȳ_h."""
    project = ProjectFactory(queue_design="stratified")
    a = _one_claim_answers(project, 30, active_stratum="A")
    b = _one_claim_answers(project, 90, active_stratum="B")
    ya = [S] * 15 + [C] * 5  # 0.75
    yb = [S] * 4 + [N] * 6  # 0.40
    for claim, verdict in zip(a[:20], ya, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    for claim, verdict in zip(b[:10], yb, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    block = report_compute(project=project)["active_audit"]
    assert block["design"] == "stratified"
    assert set(block["forecast"]) == {"uniform", "stratified"}
    expected = 30 / 120 * 0.75 + 90 / 120 * 0.40
    assert block["headline"]["value"] == pytest.approx(expected, abs=1e-12)
    assert block["headline"]["ci"][0] < expected < block["headline"]["ci"][1]


def test_stratified_headline_with_a_judge_is_the_weighted_per_stratum_ppi():
    """Stratified PPI++ (Fisch et al. 2024) with one claim per answer: Σ_h W_h θ̂_h, each
    θ̂_h ppi_py's PPI++ on the stratum's gold and unaudited claims."""
    project = ProjectFactory(queue_design="stratified")
    judge = JudgeFactory(project=project, name="lenient", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    # stratum A: planted claims 0–19 gold + REST 0–9 unaudited; B: 20–39 gold + REST 10–19
    parts = {"A": (slice(0, 20), slice(0, 10)), "B": (slice(20, 40), slice(10, 20))}
    expected = 0.0
    for name, (g, r) in parts.items():
        gold_claims = _one_claim_answers(project, 20, active_stratum=name)
        rest = _one_claim_answers(project, 10, active_stratum=name)
        for claim, verdict in zip(gold_claims, GOLD[g], strict=True):
            Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
        for claim, verdict, conf in zip(
            gold_claims + rest, JUDGE[g] + REST[r], CONF[g] + REST_CONF[r], strict=True
        ):
            JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=conf)
        y = np.array([v == S for v in GOLD[g]], dtype=float)
        value, _ci, _lam = ref.ppi(y, np.array(CONF[g]), np.array(REST_CONF[r]))
        expected += 30 / 60 * value
    block = report_compute(project=project, judge=judge)["active_audit"]
    assert block["design"] == "stratified"
    assert block["headline"]["estimator"] == "stratified_ppi"
    assert block["headline"]["value"] == pytest.approx(expected, abs=1e-9)
    assert block["forecast"]["stratified"]["estimator"] == "stratified"


def test_active_design_without_a_judge_in_the_report_is_the_hajek_mean():
    """The dashboard's "gold only" report of an active project: no prediction, so the
    headline is the inverse-probability (Hájek) mean Σ y/π ÷ Σ 1/π of the labels."""
    project, _judge, gold_claims, _rest = _planted_one_per_answer(queue_design="active")
    pis = [0.8 if verdict == S else 0.2 for verdict in JUDGE]
    _active_labels(gold_claims, pis)
    block = report_compute(project=project)["active_audit"]
    y = np.array([v == S for v in GOLD], dtype=float)
    w = 1 / np.array(pis)
    assert block["design"] == "active"
    assert block["headline"]["value"] == pytest.approx(float(w @ y / w.sum()), abs=1e-12)
    low, high = block["headline"]["ci"]
    assert low < block["headline"]["value"] < high
    assert block["forecast"]["active"]["labels_total"] is not None


def test_labels_drawn_under_active_keep_the_design_after_the_project_goes_back_to_uniform():
    project, judge, gold_claims, _rest = _planted_one_per_answer(queue_design="uniform")
    analyst = UserFactory()
    Label.objects.create(
        claim=gold_claims[0], annotator=analyst, verdict=GOLD[0], design="active",
        inclusion_probability=0.5,
    )  # fmt: skip
    Claim.objects.filter(project=project).update(inclusion_probability=0.5)
    report = report_compute(project=project, judge=judge)
    block = report["active_audit"]
    assert block["design"] == "active"
    # only the claim drawn under the active design is in its sample; the 39 gold claims with
    # no recorded design are a phase of their own, known exactly (issue 33), and one active
    # label cannot estimate the rest: not estimated, and the method says why
    assert block["labels_now"] == 1
    assert block["headline"]["value"] is None
    assert block["headline"]["method"] == (
        "Fewer than 2 gold claims drawn under the last design (active): not estimated; 39 "
        "claims labelled before it are known exactly."
    )
    assert [p["gold_claims"] for p in block["headline"]["phases"]] == [39, 1]
    assert report["design"]["design"] == "outside the queue, then active"
    assert report["design"]["method"].startswith("Labels drawn in 2 phases: no recorded design")


# ------------------------------------------------------------------------------------------
# selective judging and the honest warnings


def build_confident_judge_project(n_gold=260, n_rest=60, seed=3, **project_fields):
    """A judge right on nearly every claim it is sure of (confidence ≥ 0.8) and a coin flip
    below: a threshold certifying 90% agreement exists (the decile test needs 220 audited
    claims or more for its top decile to pass at δ = 0.1). One claim per answer, written in
    bulk. Returns (project, judge, rows) with rows (claim, confidence in its verdict, gold
    verdict or None, judge verdict)."""
    rng = np.random.default_rng(seed)
    total = n_gold + n_rest
    project = ProjectFactory(**project_fields)
    judge = JudgeFactory(project=project, name="sure", model="m-2")
    run = JudgeRunFactory(judge=judge, prompt_version="p-2", model="m-2")
    answers = Answer.objects.bulk_create(
        Answer(project=project, external_id=f"c{i}", position=i, question="Q?", text="A.")
        for i in range(total)
    )
    Project.objects.filter(pk=project.pk).update(answers_count=total)
    claims = Claim.objects.bulk_create(
        Claim(
            project=project,
            answer=answer,
            text=f"Claim {i}.",
            position=0,
            origin="manual",
            queue_key=(i * 2654435761) % 2**31,
        )
        for i, answer in enumerate(answers)
    )
    sure = rng.random(total) < 0.6
    confidence = np.where(sure, rng.uniform(0.8, 1.0, total), rng.uniform(0.5, 0.8, total))
    says_supported = rng.random(total) < 0.7
    right = rng.random(total) < np.where(sure, 0.99, 0.55)
    verdicts, golds, rows = [], [], []
    for i, claim in enumerate(claims):
        judge_says = S if says_supported[i] else C
        gold = judge_says if right[i] else (C if judge_says == S else S)
        p_supported = float(confidence[i] if judge_says == S else 1 - confidence[i])
        verdicts.append(
            JudgeVerdict(run=run, claim=claim, verdict=judge_says, confidence=p_supported)
        )
        if i < n_gold:
            golds.append(Gold(claim=claim, verdict=gold, source="unanimous"))
        # the confidence in its verdict as the report reads it back from P(SUPPORTED)
        in_verdict = p_supported if judge_says == S else 1 - p_supported
        rows.append((claim, in_verdict, gold if i < n_gold else None, judge_says))
    JudgeVerdict.objects.bulk_create(verdicts)
    Gold.objects.bulk_create(golds)
    return project, judge, rows


def expected_threshold(rows, target, delta):
    """Trust or Escalate's fixed-sequence test by hand: candidates the audited confidences'
    deciles 0.9, 0.8, …, 0 (numpy), high to low; continue while the exact binomial tail
    P(X ≥ k | m, target) ≤ δ (scipy); the threshold is the last one passed."""
    conf = np.array([c for _claim, c, g, _j in rows if g is not None])
    agree = np.array([g == j for _claim, _c, g, j in rows if g is not None])
    chosen = None
    for t in np.unique(np.quantile(conf, np.linspace(0.9, 0.0, 10)))[::-1]:
        at = conf >= t
        if binom.sf(agree[at].sum() - 1, at.sum(), target) > delta:
            break
        chosen = float(t)
    return chosen


def test_selective_threshold_is_certified_by_the_exact_binomial_and_its_share_is_counted():
    project, judge, rows = build_confident_judge_project()
    block = report_compute(project=project, judge=judge)["active_audit"]
    sel = block["selective"]
    assert sel["target_agreement"] == 0.9
    assert sel["delta"] == 0.1
    expected = expected_threshold(rows, 0.9, 0.1)
    assert expected is not None
    assert sel["threshold"] == pytest.approx(expected, abs=1e-12)
    every = np.array([c for _claim, c, _g, _j in rows])
    at = every >= sel["threshold"]
    assert sel["share_of_claims"] == pytest.approx(float(at.mean()), abs=1e-12)
    assert sel["claims_at_or_above"] == int(at.sum())
    # the lower bound: one-sided Clopper–Pearson at level 1 − δ on the audited claims above
    agree = [g == j for _claim, c, g, j in rows if g is not None and c >= sel["threshold"]]
    k, m = sum(agree), len(agree)
    assert sel["lower_bound"] == pytest.approx(beta.ppf(0.1, k, m - k + 1), abs=1e-12)
    assert sel["lower_bound"] < k / m
    assert "binomial" in sel["method"]


def test_an_informative_confidence_gives_no_warning_and_a_coin_flip_does():
    project, judge, _rows = build_confident_judge_project()
    block = report_compute(project=project, judge=judge)["active_audit"]
    assert block["confidence"]["informative"] is True
    assert block["confidence"]["warning"] is None
    assert block["confidence"]["auc"] > 0.7

    # Confidence unrelated to errors: same project shape, confidences shuffled.
    project2, judge2, rows2 = build_confident_judge_project(seed=5)
    rng = np.random.default_rng(0)
    verdicts = list(JudgeVerdict.objects.filter(run__judge=judge2).order_by("id"))
    shuffled = rng.permutation([v.confidence for v in verdicts])
    flat = rng.uniform(0.5, 0.6, size=len(verdicts))
    for verdict, _c, value in zip(verdicts, shuffled, flat, strict=True):
        verdict.confidence = value if verdict.verdict == S else 1 - value
    JudgeVerdict.objects.bulk_update(verdicts, ["confidence"])
    block2 = report_compute(project=project2, judge=judge2)["active_audit"]
    assert block2["confidence"]["informative"] is False
    assert "no better than uniform" in block2["confidence"]["warning"]


def test_routed_claims_are_counted_and_said():
    project, judge, rows = build_confident_judge_project()
    routed = [claim.pk for claim, c, _g, _j in rows[:7]]
    Claim.objects.filter(pk__in=routed).update(routed_to_judge=True)
    project.selective_judging = True
    project.save()
    block = report_compute(project=project, judge=judge)["active_audit"]
    assert block["routing"]["on"] is True
    assert block["routing"]["routed_claims"] == 7
    assert "7 claims routed to the judge" in block["routing"]["text"]
    assert "How they are counted" in block["routing"]["text"]
    supported = sum(1 for _claim, _c, _g, j in rows[:7] if j == S) / 7
    assert block["routing"]["judge_supported_share"] == pytest.approx(supported, abs=1e-12)
    assert f"{100 * supported:.0f}% SUPPORTED" in block["routing"]["text"]
    assert block["routing"]["text"] in block["method"]


def test_gain_is_the_labels_uniform_gold_only_would_need_minus_the_design_s():
    project, judge, gold_claims, _rest = _planted_one_per_answer(queue_design="active")
    _active_labels(gold_claims, [0.5] * 40)
    block = report_compute(project=project, judge=judge)["active_audit"]
    gain = block["gain"]
    assert "not a promise" in gain["text"]
    assert gain["labels_design"] == 40
    # gold-only reaches the active design's half-width h at n = p(1 − p)·t²/h² labels
    p = GOLD.count(S) / 40
    h = block["forecast"]["active"]["half_width_now"]
    assert abs(gain["labels_uniform_gold_only"] - p * (1 - p) * _t(39) ** 2 / h**2) <= 1.0
    assert gain["labels_saved"] == gain["labels_uniform_gold_only"] - 40


# --- metrics.services.active_audit: an active design with gold drawn under another ----------


@pytest.mark.django_db
def test_active_design_whose_gold_was_all_drawn_uniformly_says_so_and_still_forecasts():
    """active_audit `_active_headline` `_84` (`method =` for `+=`: the "fewer than 2" sentence
    lost) and `_24` (a fill π of 2 for the claims without one when no label has a π: the
    forecast then refuses the π and the report fails).

    The project's queue is active, but its 3 gold claims were labelled before (no recorded π)
    and no claim has a π: nothing is drawn under the design, so the headline is not estimated
    and says the 3 gold claims are left out; the forecasts have no labels to go on."""
    project = ProjectFactory(queue_design="active")
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(5)]
    for claim, verdict in zip(claims[:3], (S, S, C), strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    block = report_compute(project=project)["active_audit"]
    assert block["design"] == "active"
    assert block["labels_now"] == 0
    headline = block["headline"]
    assert headline["value"] is None  # nan in the report JSON is null
    assert headline["gold_left_out"] == 3
    assert headline["method"] == (
        "Fewer than 2 gold claims drawn under the active design: not estimated. 3 gold claims "
        "with no recorded inclusion probability (labelled under another design) left out of "
        "this estimate."
    )
    assert set(block["forecast"]) == {"uniform", "active"}
    assert block["forecast"]["active"]["labels_total"] is None


@pytest.mark.django_db
def test_active_headline_with_a_gold_claim_drawn_under_another_design_keeps_its_method():
    """active_audit `_active_headline` `_84` (`method = _left_out_text(...)` for `+=` once 2 or
    more labels have a π: the estimate's own sentence lost, only the left-out one kept).

    Six one-claim answers, the queue active: four labelled under the design with π = 0.5 and
    gold S, S, C, S; a fifth with gold, labelled by the active queue but with no recorded π
    (left out); a sixth without gold. No judge: the Hájek mean of the four labels with equal
    weights, 3/4 by hand."""
    from annotate.models import Label
    from tests.factories import UserFactory

    project = ProjectFactory(queue_design="active")
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(6)]
    analyst = UserFactory()
    for claim, verdict in zip(claims[:5], (S, S, C, S, C), strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    for claim, verdict in zip(claims[:4], (S, S, C, S), strict=True):
        Label.objects.create(
            claim=claim,
            annotator=analyst,
            verdict=verdict,
            design="active",
            inclusion_probability=0.5,
        )
    Label.objects.create(
        claim=claims[4], annotator=analyst, verdict=C, design="active", inclusion_probability=None
    )
    headline = report_compute(project=project)["active_audit"]["headline"]
    assert headline["value"] == pytest.approx(0.75, abs=1e-12)
    assert headline["gold_left_out"] == 1
    left_out = (
        " 1 gold claim with no recorded inclusion probability (labelled under another design) "
        "left out of this estimate."
    )
    assert headline["method"].endswith(left_out)
    estimate_sentence = headline["method"][: -len(left_out)]
    assert estimate_sentence.strip()  # the estimate's own sentence comes first
    assert "left out" not in estimate_sentence


# --- metrics.services.active_audit: the block's method keeps its headline with routed claims ----


@pytest.mark.django_db
def test_active_audit_method_with_routed_claims_is_the_headline_then_the_routing_sentence():
    """active_audit `_block_method` `_73` (`text =` for `+=`: with claims routed to the judge the
    block's method was the routing sentence alone, the headline's and the forecast's gone).
    The project of test_active_audit.py's routing test: uniform queue, 7 claims routed."""
    from annotate.models import Claim

    project, judge, rows = build_confident_judge_project()
    Claim.objects.filter(pk__in=[claim.pk for claim, *_ in rows[:7]]).update(routed_to_judge=True)
    project.selective_judging = True
    project.save()
    block = report_compute(project=project, judge=judge)["active_audit"]
    method = block["method"]
    assert method.startswith("Headline under uniform sampling: ")
    assert (
        " Forecast: labels needed for a 95% half-width of ±0.100 (default target, none set)"
        in method
    )
    assert method.endswith(" " + block["routing"]["text"])
    assert block["routing"]["routed_claims"] == 7


@pytest.mark.django_db
def test_selective_routing_routes_exactly_the_claims_at_or_above_the_threshold():
    """active_audit `selective_judged_columns` `_44` (its `claim_ids` key renamed: routing
    failed with KeyError; "no tests" in the run, only the routing views call it). The project of
    test_active_audit.py's routing tests: the claims routed are those whose verdict confidence
    (as the test wrote it) is at or above the returned threshold."""
    from annotate.models import Claim
    from metrics.services.active_routing import selective_routing_apply

    project, judge, rows = build_confident_judge_project()
    out = selective_routing_apply(project=project, judge=judge)
    expected = {claim.pk for claim, conf, _gold, _verdict in rows if conf >= out["threshold"]}
    routed = set(
        Claim.objects.filter(project=project, routed_to_judge=True).values_list("pk", flat=True)
    )
    assert routed == expected
    assert out["routed"] == len(expected) > 0
    project.refresh_from_db()
    assert project.selective_judging is True


# --- metrics.services.active_audit: the active forecast draws with the claims' own π -----------


@pytest.mark.django_db
def test_active_forecast_uses_the_claims_current_pi_for_the_labels_to_come():
    """active_audit `design_forecasts` `_54` (`design_pi=None`: the forecast of the labels still to
    draw used the labels' π, with their mean for claims without one, instead of the claims'
    current π). 40 one-claim answers, the queue active: 20 labelled with π 0.5 (gold 14 S, 6 N),
    10 unlabelled with π 0.1, 10 without π. The labels' π fill the last 10 with 0.5, the
    claims' π with their mean (20·0.5 + 10·0.1)/30. Expected: `stats.labels_needed` (pinned by
    hand in tests/metrics/stats/test_active.py) on those arrays, the wiring being the point."""
    import numpy as np

    from annotate.models import Label
    from metrics import stats
    from tests.factories import UserFactory

    project = ProjectFactory(queue_design="active")
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(40)]
    user = UserFactory()
    verdicts = [S] * 14 + [N] * 6
    for claim, verdict in zip(claims[:20], verdicts, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
        Label.objects.create(
            claim=claim, annotator=user, verdict=verdict, design="active", inclusion_probability=0.5
        )
    for claim in claims[:20]:
        claim.inclusion_probability = 0.5
        claim.save(update_fields=["inclusion_probability"])
    for claim in claims[20:30]:
        claim.inclusion_probability = 0.1
        claim.save(update_fields=["inclusion_probability"])
    forecast = report_compute(project=project)["active_audit"]["forecast"]["active"]

    y = np.array([1.0] * 14 + [0.0] * 26)
    labelled = np.r_[np.ones(20, bool), np.zeros(20, bool)]
    pi = np.r_[np.full(20, 0.5), np.full(10, 0.1), np.full(10, 0.5)]
    design_pi = np.r_[np.full(20, 0.5), np.full(10, 0.1), np.full(10, (20 * 0.5 + 10 * 0.1) / 30)]
    expected = stats.labels_needed(
        0.10, "active", y, labelled, prediction=np.full(40, 0.5), pi=pi, design_pi=design_pi,
        cluster=np.arange(40),
    )  # fmt: skip
    without = stats.labels_needed(
        0.10, "active", y, labelled, prediction=np.full(40, 0.5), pi=pi, cluster=np.arange(40)
    )
    assert expected.labels_total != without.labels_total  # the case tells the two apart
    assert forecast["labels_total"] == expected.labels_total


NAN = math.nan


S_CODE, C_CODE, N_CODE = 0, 1, 2  # the report's verdict codes


# 24 claims in 12 answers of 2; gold on the first 15; the first 14 labelled by the active queue
# with the π below (claim 0 recorded 0.2 though its claim now says 0.3; a second, later active
# label of claim 0 at 0.9 must not count), claim 14 labelled under the uniform design (left out).
IDS = np.arange(101, 125)


ANS = 1 + np.arange(24) // 2


GOLD_CODES = np.array(
    [
        S_CODE,
        S_CODE,
        C_CODE,
        S_CODE,
        S_CODE,
        N_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        C_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
    ]
    + [-1] * 9,
    dtype=np.int8,
)


PIS = [0.2, 0.5, 0.8, 0.4, 0.3, 0.9, 0.6, 0.25, 0.5, 0.7, 0.35, 0.45, 0.55, 0.65]


CLAIM_PI = [0.3, *PIS[1:], 0.4, 0.5, 0.6, NAN, 0.3, 0.7, 0.5, 0.45, 0.8, 0.35]


JCODES = np.array(
    [
        S_CODE,
        S_CODE,
        C_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        C_CODE,
        S_CODE,
        N_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        C_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        S_CODE,
        N_CODE,
        S_CODE,
    ],
    dtype=np.int8,
)


JCONF = np.array(
    [0.9, 0.8, 0.2, 0.7, 0.85, 0.6, 0.9, 0.75, 0.8, 0.15, 0.9, 0.3, 0.95, 0.7, 0.8]
    + [0.9, 0.6, 0.1, 0.85, 0.7, 0.9, 0.8, 0.25, 0.65]
)


REPORT = {
    "judge": None,
    "faithfulness": {"pooled": {"value": 0.5, "ci": (0.25, 0.75)}},
    "method": {"faithfulness": "Wilson."},
}


FORECAST_TAIL = (
    " Forecast: labels needed for a 95% half-width of ±{target:.3f}{whose}, from the current "
    "variance estimates (n = V₁·t²/(x² − t²·V∞): V₁ the variance one label adds, V∞ what the "
    "judge's own error leaves however many labels); uniform sampling shown beside it. Progress "
    "= labels so far / labels needed; the target is reached when the headline's own 95% "
    "interval is within it."
)


LEAD = " (the lead’s target)"


DEFAULT = " (default target, none set)"


AUC_TEXT = (
    "AUC: how often the judge is less confident in a verdict it gets wrong than in one it gets "
    "right (0.5 = no better than chance)."
)


SELECTIVE_TEXT = (
    "The judge's confidence in its own verdict; above the threshold its verdicts agree with "
    "gold at least at the target, with the stated probability."
)


def routed_text(n, share, judge_share):
    return (
        f"{n} claim{'s' if n != 1 else ''} routed to the judge ({share} of the project's "
        "claims): the queue no longer serves them. How they are counted: they stay in every "
        "figure's population (N) and the gold they already had still counts, but labels drawn "
        "while routing is on come from the other claims only, so the audit sample "
        "under-represents routed claims from then on. For them read the judge's own "
        f"verdicts{judge_share}, certified to agree with gold as the selective-judging line "
        "says; stop routing before quoting the headline as a whole-project audit."
    )


class FakeData:
    """The report's `_Data` as the block reads it: claim ids, claims (gold code, answer)."""

    def __init__(self, claim_ids, answer_ids, gold):
        self.claim_ids = np.asarray(claim_ids, dtype=np.int64)
        self.claims = pd.DataFrame(
            {
                "claim_id": self.claim_ids,
                "answer_id": np.asarray(answer_ids, dtype=np.int64),
                "gold": np.asarray(gold, dtype=np.int8),
            }
        )
        # one stratum, equal weights: the design the report reads for labels not drawn in phases
        self.design = ds.AuditDesign(
            stratum=np.zeros(self.claim_ids.size, np.int64), names=["whole project"]
        )

    def answer_ids(self):
        return self.claims["answer_id"].to_numpy()


def judged_for(data, codes, conf, positions=None):
    pos = (
        np.arange(data.claim_ids.size)
        if positions is None
        else np.asarray(positions, dtype=np.int64)
    )
    gold = data.claims["gold"].to_numpy()[pos]
    return Judged(
        position=pos,
        judge_codes=np.asarray(codes, dtype=np.int8),
        confidence=np.asarray(conf, dtype=float),
        gold_codes=gold,
        answer_ids=data.answer_ids()[pos],
        audited=gold >= 0,
        strata=np.zeros(pos.size, np.int64),
        sizes={0: float(pos.size)},
    )


def _read(frame):
    def selector(*, project):
        assert isinstance(project, Project), "the selector is asked for the project's rows"
        return frame.copy()

    return selector


def plant(monkeypatch, labels, claims):
    monkeypatch.setattr(selectors, "label_design_columns", _read(labels))
    monkeypatch.setattr(selectors, "active_claim_columns", _read(claims))


def active_frames(routed=(20, 21), claim_pi=CLAIM_PI, strata=""):
    labels = pd.DataFrame(
        {
            "claim_id": [*IDS[:15], IDS[0]],
            "design": ["active"] * 14 + ["uniform", "active"],
            "inclusion_probability": [*PIS, NAN, 0.9],
        }
    )
    mask = np.zeros(IDS.size, dtype=bool)
    mask[list(routed)] = True
    claims = pd.DataFrame(
        {
            "claim_id": IDS,
            "inclusion_probability": claim_pi,
            "active_stratum": strata,
            "routed_to_judge": mask,
        }
    )
    return labels, claims


def within_claims(entry: dict, labelled: int) -> dict:
    """A forecast entry with what the 24 claims of 12 answers bound it to, by hand (issue 32
    item 1): a forecast past 24 labels asks for ⌈(n* − 24)/2⌉ more answers (2 claims each)."""
    total = entry["labels_total"]
    more = None if total is None else (0 if total <= 24 else math.ceil((total - 24) / 2))
    return {
        **entry,
        "claims": 24,
        "claims_unlabelled": 24 - labelled,
        "within_claims": total is not None and total <= 24,
        "answers_more": more,
    }


def same(actual, expected, path="block"):
    """Whole-structure equality: same keys, same types of containers, exact strings, floats to
    rel 1e-9 (NaN equals NaN)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert set(actual) == set(expected), (path, set(actual) ^ set(expected))
        for key in expected:
            same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, type(expected)), (path, type(actual))
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            same(a, e, f"{path}[{i}]")
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual is expected or (isinstance(expected, str) and actual == expected), (
            path,
            actual,
            expected,
        )
        assert type(actual) is type(expected), (path, type(actual))
    elif isinstance(expected, int):
        assert type(actual) is int, (path, type(actual))
        assert actual == expected, (path, actual, expected)
    else:
        assert isinstance(actual, float), (path, type(actual))
        if math.isnan(expected):
            assert math.isnan(actual), (path, actual)
        else:
            assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), (path, actual)


def hajek_active_by_hand(y, lab, f, pi, cluster, conf=0.95):
    """Zrnic & Candès' active estimate in its Hájek form with power-tuned λ and the CR1 variance
    by answer, written from the formula (and λ checked by brute force over a fine grid)."""
    big_n = lab.size
    w = 1.0 / pi[lab]
    big_w = w.sum()
    yl, fl = y[lab], f[lab]
    ybar_w = (w * yl).sum() / big_w
    fbar, fbar_w = f.mean(), (w * fl).sum() / big_w
    answers = np.unique(cluster)
    g = answers.size

    def influence(lam):
        phi = lam * (f - fbar) / big_n
        phi[lab] += w * ((yl - ybar_w) - lam * (fl - fbar_w)) / big_w
        return phi

    def cr1(lam):
        totals = np.array([influence(lam)[cluster == a].sum() for a in answers])
        return g / (g - 1) * (totals**2).sum()

    # V(λ) is quadratic: its minimiser from three points, clipped to [0, 1]
    v0, v1, v2 = cr1(0.0), cr1(0.5), cr1(1.0)
    a2 = 2 * (v2 - 2 * v1 + v0)
    b1 = v1 * 4 - 3 * v0 - v2
    lam = float(np.clip(-b1 / (2 * a2), 0.0, 1.0))
    grid = np.linspace(0, 1, 100001)
    assert abs(grid[np.argmin([cr1(x) for x in grid[::1000]]) * 1000] - lam) <= 0.01
    theta = lam * fbar + ybar_w - lam * fbar_w
    var = cr1(lam)
    phi = influence(lam)
    var_indep = big_n / (big_n - 1) * (phi**2).sum()
    g_lab = np.unique(cluster[lab]).size
    t = student_t.ppf(0.5 + conf / 2, g_lab - 1)
    half = t * math.sqrt(var)
    return {
        "value": theta,
        "ci": (max(theta - half, 0.0), min(theta + half, 1.0)),
        "lambda": lam,
        "deff": var / var_indep,
        "g_lab": g_lab,
    }


def _active_block(monkeypatch, *, target=None, routed=(20, 21), judge=True, **frames):
    labels, claims = active_frames(routed=routed, **frames)
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS, ANS, GOLD_CODES)
    project = Project(queue_design="active", target_half_width=target, selective_judging=True)
    judged = judged_for(data, JCODES, JCONF) if judge else None
    return aa.active_audit_block(project=project, data=data, figures=REPORT, judged=judged)


HEADLINE_METHOD = (
    "Active inference (Zrnic & Candès 2024), Hájek weights 1/π, power-tuned λ=0.18, 14 labels "
    "of 24 claims, clustered by answer (7 labelled answers of 12); design effect 0.77, t with 6 "
    "df. 1 gold claim with no recorded inclusion probability (labelled under another design) "
    "left out of this estimate."
)


ACTIVE_FORECAST_METHOD = (
    "active sampling (π ∝ the judge's error sd), PPI++: about 27 more labels (41 in all) to "
    "reach ±0.100 (95%), from the 14 labels so far (±0.163 now; per-label variance 0.0597, "
    "λ=0.25, design effect 1.00; more labels than the project has claims (24): import about 9 "
    "more answers or accept a wider interval); a forecast from the current variance estimates, "
    "not a promise."
)  # 41 − 24 = 17 claims at 24 claims in 12 answers: 8.5, about 9 answers


UNIFORM_FORECAST_METHOD = (
    "uniform sampling, PPI++: about 41 more labels (55 in all) to reach ±0.100 (95%), from the "
    "14 labels so far (±0.189 now; per-label variance 0.0805, λ=0.25, design effect 1.00; more "
    "labels than the project has claims (24): import about 16 more answers or accept a wider "
    "interval); a forecast from the current variance estimates, not a promise."
)  # 55 − 24 = 31 claims at 2 claims per answer: 15.5, about 16 answers


GAIN_TEXT = (
    "At ±0.163 the active sampling (π ∝ the judge's error sd), PPI++ used 14 labels; uniform "
    "gold-only would have needed about 23 (saved 9 labels, 61% of gold-only's), measured on "
    "this project's labels from the two designs' variance estimates, not a promise."
)


SELECTIVE_METHOD = (
    "No threshold certified: the judge may decide no claim alone; fixed-sequence testing over 7 "
    "thresholds, exact binomial, P(agreement ≥ 90%) ≥ 90% over audited claims drawn like these "
    "(15 audited claims, assumed exchangeable: claims of one answer are counted as independent)."
)


ROUTED_2 = routed_text(2, "8%", " (100% SUPPORTED)")


ACTIVE_HEADLINE = {
    "value": 0.8726929503437982,
    "ci": (0.7244862404542123, 1.0),
    "method": HEADLINE_METHOD,
    "estimator": "active_ppi",
    "design_effect": 0.7744075811603757,
    "gold_left_out": 1,
    "half_width": 0.13775687977289386,
}


ACTIVE_BLOCK = {
    "design": "active",
    "target_half_width": 0.1,
    "target_set": False,
    "headline": ACTIVE_HEADLINE,
    "labels_now": 14,
    "forecast": {
        "active": within_claims(
            {
                "estimator": "active",
                "half_width_now": 0.16329145492586572,
                "labels_more": 27,
                "labels_total": 41,
                "method": ACTIVE_FORECAST_METHOD,
                "target_half_width": 0.1,
            },
            14,
        ),
        "uniform": within_claims(
            {
                "estimator": "uniform_ppi",
                "half_width_now": 0.18861792785859316,
                "labels_more": 41,
                "labels_total": 55,
                "method": UNIFORM_FORECAST_METHOD,
                "target_half_width": 0.1,
            },
            14,
        ),
    },
    "reached": False,
    "progress": 14 / 41,
    "gain": {
        "caveat": "measured on this project's labels, not a promise",
        "design": "active",
        "labels_design": 14,
        "labels_saved": 9,
        "labels_uniform_gold_only": 23,
        "ratio": 14 / 23,
        "text": GAIN_TEXT,
    },
    "confidence": {
        "auc": 0.9615384615384616,
        "explanation": AUC_TEXT,
        "informative": True,
        "warning": None,
    },
    "selective": {
        "claims_at_or_above": 0,
        "delta": 0.1,
        "explanation": SELECTIVE_TEXT,
        "level": 0.9,
        "lower_bound": None,
        "method": SELECTIVE_METHOD,
        "routed_claims": 2,
        "share_audited": 0.0,
        "share_of_claims": 0.0,
        "target_agreement": 0.9,
        "threshold": None,
    },
    "routing": {"judge_supported_share": 1.0, "on": True, "routed_claims": 2, "text": ROUTED_2},
    "method": "Headline under the active design: "
    + HEADLINE_METHOD
    + FORECAST_TAIL.format(target=0.1, whose=DEFAULT)
    + " "
    + GAIN_TEXT
    + " "
    + ROUTED_2,
}


def test_active_block_whole_output(monkeypatch):
    same(_active_block(monkeypatch), ACTIVE_BLOCK)


def test_active_headline_figures_by_hand():
    """The golden's headline from the formula: each labelled claim's FIRST active label's π
    (claim 0: 0.2, not its claim's 0.3 nor its later label's 0.9), claim 14 (uniform label) out;
    its AUC from scikit-learn on the verdicts' own confidence."""
    from sklearn.metrics import roc_auc_score

    y = (GOLD_CODES == S_CODE).astype(float)
    lab = np.zeros(24, dtype=bool)
    lab[:14] = True
    pi = np.array(CLAIM_PI)
    pi[:14] = PIS
    pi[np.isnan(pi)] = np.mean(PIS)
    got = hajek_active_by_hand(y, lab, JCONF, pi, ANS)
    assert got["value"] == pytest.approx(ACTIVE_HEADLINE["value"], rel=1e-9)
    assert got["ci"] == pytest.approx(ACTIVE_HEADLINE["ci"], rel=1e-9)
    assert got["deff"] == pytest.approx(ACTIVE_HEADLINE["design_effect"], rel=1e-9)
    assert round(got["lambda"], 2) == 0.18
    assert got["g_lab"] == 7
    low, high = got["ci"]
    assert ACTIVE_HEADLINE["half_width"] == pytest.approx((high - low) / 2, rel=1e-12)
    verdict_conf = np.where(JCODES == S_CODE, JCONF, 1 - JCONF)[:15]
    wrong = (JCODES[:15] == S_CODE) != (GOLD_CODES[:15] == S_CODE)
    auc = roc_auc_score(wrong, -verdict_conf)
    assert ACTIVE_BLOCK["confidence"]["auc"] == pytest.approx(auc, rel=1e-12)
    # the stop rule and progress: 14 labels of the active design's 41
    assert ACTIVE_BLOCK["progress"] == 14 / ACTIVE_BLOCK["forecast"]["active"]["labels_total"]
    assert (high - low) / 2 > 0.1


def test_the_ratio_of_the_gain_is_the_labels_over_uniform_gold_only():
    gain = ACTIVE_BLOCK["gain"]
    assert gain["labels_saved"] == gain["labels_uniform_gold_only"] - gain["labels_design"]


NA_FORECAST_ACTIVE = {
    "estimator": "active",
    "half_width_now": None,
    "labels_more": None,
    "labels_total": None,
    "method": "active sampling (π ∝ the judge's error sd), PPI++: n/a, fewer than 10 labels to "
    "estimate the variance from.",
    "target_half_width": 0.1,
}


NA_FORECAST_UNIFORM = {
    **NA_FORECAST_ACTIVE,
    "estimator": "uniform_ppi",
    "method": "uniform sampling, PPI++: n/a, fewer than 10 labels to estimate the variance from.",
}


NA_GAIN_TEXT = "Labels saved: n/a (too few labels to compare the designs)."


NO_ROUTING = {"judge_supported_share": None, "on": False, "routed_claims": 0, "text": ""}


def _few_labels_block(labelled: int, left_out: int) -> dict:
    method = (
        "Fewer than 2 gold claims drawn under the active design: not estimated. "
        f"{left_out} gold claims with no recorded inclusion probability (labelled under another "
        "design) left out of this estimate."
    )
    return {
        "confidence": None,
        "design": "active",
        "forecast": {
            "active": within_claims(NA_FORECAST_ACTIVE, labelled),
            "uniform": within_claims(NA_FORECAST_UNIFORM, labelled),
        },
        "gain": {
            "caveat": "measured on this project's labels, not a promise",
            "design": "active",
            "labels_design": labelled,
            "labels_saved": None,
            "labels_uniform_gold_only": None,
            "ratio": None,
            "text": NA_GAIN_TEXT,
        },
        "headline": {
            "ci": (NAN, NAN),
            "design_effect": NAN,
            "estimator": "active_ppi",
            "gold_left_out": left_out,
            "half_width": None,
            "method": method,
            "value": NAN,
        },
        "labels_now": labelled,
        "method": "Headline under the active design: "
        + method
        + FORECAST_TAIL.format(target=0.1, whose=DEFAULT)
        + " "
        + NA_GAIN_TEXT,
        "progress": None,
        "reached": False,
        "routing": NO_ROUTING,
        "selective": None,
        "target_half_width": 0.1,
        "target_set": False,
    }


def _plain_active(monkeypatch, labels, judged=False, **project):
    claims = pd.DataFrame(
        {
            "claim_id": IDS,
            "inclusion_probability": CLAIM_PI,  # claim 17 has none (NaN)
            "active_stratum": "",
            "routed_to_judge": False,
        }
    )
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS, ANS, GOLD_CODES)
    project = Project(queue_design="active", **project)
    judged = judged_for(data, JCODES, JCONF) if judged else None
    return aa.active_audit_block(project=project, data=data, figures=REPORT, judged=judged)


def test_no_labelled_claim_under_the_active_design_is_not_estimated(monkeypatch):
    """Gold, but no label drawn by the active queue: every π falls back to the claims' own (1
    where a claim has none: a valid probability, so the forecasts say n/a instead of failing)."""
    labels = pd.DataFrame({"claim_id": [], "design": [], "inclusion_probability": []})
    labels = labels.astype({"claim_id": np.int64, "design": object, "inclusion_probability": float})
    same(_plain_active(monkeypatch, labels), _few_labels_block(0, 15))


def test_one_label_under_the_active_design_is_not_estimated(monkeypatch):
    labels = pd.DataFrame(
        {"claim_id": [IDS[0]], "design": ["active"], "inclusion_probability": [0.5]}
    )
    same(_plain_active(monkeypatch, labels), _few_labels_block(1, 14))


def test_a_single_left_out_gold_claim_is_said_in_the_singular():
    assert aa._left_out_text(1) == (
        " 1 gold claim with no recorded inclusion probability (labelled under another design) "
        "left out of this estimate."
    )
    y = np.array([1.0, 0.0, 1.0, 0.0])
    gold = np.array([True, True, True, False])
    headline, inputs = aa._active_headline(
        y, gold, None, np.array([0.5, NAN, NAN, NAN]), np.full(4, NAN), np.arange(4)
    )
    assert headline["method"] == (
        "Fewer than 2 gold claims drawn under the active design: not estimated. 2 gold claims "
        "with no recorded inclusion probability (labelled under another design) left out of "
        "this estimate."
    )
    # the labelled claim's π, and the labels' mean π for the claims with none
    assert inputs["pi"].tolist() == [0.5, 0.5, 0.5, 0.5]
    assert inputs["labelled"].tolist() == [True, False, False, False]
    headline, _ = aa._active_headline(
        y, gold, None, np.array([0.5, 0.25, NAN, NAN]), np.full(4, NAN), np.arange(4)
    )
    assert headline["gold_left_out"] == 1
    assert headline["method"].endswith(aa._left_out_text(1))
    # no gold claim left out: the method is the estimator's own, nothing appended
    headline, _ = aa._active_headline(
        y, gold, None, np.array([0.5, 0.25, 0.5, NAN]), np.full(4, NAN), np.arange(4)
    )
    assert headline["gold_left_out"] == 0
    assert "left out" not in headline["method"]
    # Hájek mean by hand: Σ y/π / Σ 1/π over the three labels
    assert headline["value"] == pytest.approx((2 + 0 + 2) / (2 + 4 + 2), rel=1e-12)


def test_constant_pi_one_claim_per_answer_is_todays_ppi_and_wilson():
    """All π equal, every claim its own answer: a simple random sample, so the active headline
    is ppi_py's PPI++ with the judge and the Wilson interval without."""
    rng = np.random.default_rng(3)
    n_all = 30
    y = (rng.random(n_all) < 0.7).astype(float)
    f = np.clip(y * 0.6 + rng.random(n_all) * 0.4, 0, 1)
    gold = np.zeros(n_all, dtype=bool)
    gold[:20] = True
    pi = np.where(gold, 0.4, NAN)
    headline, _ = aa._active_headline(y, gold, f, pi, np.full(n_all, 0.4), np.arange(n_all))
    value, (low, high), _lam = ref.ppi(y[:20], f[:20], f[20:])
    assert headline["value"] == pytest.approx(value, abs=1e-9)
    assert headline["ci"] == pytest.approx((low, high), abs=1e-9)
    assert headline["estimator"] == "active_ppi"
    assert headline["design_effect"] == 1.0
    headline, _ = aa._active_headline(y, gold, None, pi, np.full(n_all, 0.4), np.arange(n_all))
    k = int(y[:20].sum())
    assert headline["value"] == k / 20
    assert headline["ci"] == pytest.approx(ref.wilson(k, 20), abs=1e-12)
    assert headline["method"] == (
        "Wilson interval on the 20 labels (uniform inclusion, one claim per answer: a simple "
        "random sample)."
    )


STRATA = np.array(["A"] * 12 + ["B"] * 12, dtype=object)


STRATIFIED_FORECAST = {
    "estimator": "stratified",
    "half_width_now": 0.13517657118060877,
    "labels_more": 73,
    "labels_total": 88,
    "method": "stratified sampling, Neyman allocation: about 73 more labels (88 in all) to reach "
    "±0.300 (95%), from the 15 labels so far (±0.135 now; per-label variance 0.0490, design "
    "effect 1.05; more labels than the project has claims (24): import about 32 more answers or "
    "accept a wider interval); a forecast from the current variance estimates, not a promise.",
    "target_half_width": 0.3,
}


STRATIFIED_GAIN = {
    "caveat": "measured on this project's labels, not a promise",
    "design": "stratified",
    "labels_design": 15,
    "labels_saved": 20,
    "labels_uniform_gold_only": 35,
    "ratio": 15 / 35,
    "text": "At ±0.135 the stratified sampling, Neyman allocation used 15 labels; uniform "
    "gold-only would have needed about 35 (saved 20 labels, 43% of gold-only's), measured on "
    "this project's labels from the two designs' variance estimates, not a promise.",
}


STRATIFIED_GOLD_METHOD = (
    "Wilson interval at the effective sample size (26 of 15 claims), cluster-robust by answer "
    "(8 answers, design effect 0.73, counted as 1: never narrower than independent claims), t "
    "with 6 df; weighted over 2 strata by their share of the project (N_h/N)."
)


STRATIFIED_PPI_METHOD = (
    "PPI++ (power-tuned per stratum), rectifier clustered by answer (8 audited answers, design "
    "effect 0.97), t with 6 df; 2 of 2 strata's variance floored at what the judge's scores "
    "predict (too few audited claims to show their own); weighted over 2 strata by their share "
    "of the project (N_h/N)."
)


def _stratified_block(monkeypatch, judge):
    """Labels drawn under the stratified design (the project back on uniform since): strata A
    (claims 0–11, all gold) and B (claims 12–23, 3 gold)."""
    labels = pd.DataFrame(
        {
            "claim_id": list(IDS[:15]),
            "design": ["stratified"] * 15,
            "inclusion_probability": [NAN] * 15,
        }
    )
    claims = pd.DataFrame(
        {
            "claim_id": IDS,
            "inclusion_probability": NAN,
            "active_stratum": STRATA,
            "routed_to_judge": False,
        }
    )
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS, ANS, GOLD_CODES)
    project = Project(queue_design="uniform", target_half_width=0.3)
    judged = judged_for(data, JCODES, JCONF) if judge else None
    return aa.active_audit_block(project=project, data=data, figures=REPORT, judged=judged)


def _stratified_expected(headline, uniform, confidence, selective):
    return {
        "confidence": confidence,
        "design": "stratified",
        "forecast": {
            "stratified": within_claims(STRATIFIED_FORECAST, 15),
            "uniform": within_claims(uniform, 15),
        },
        "gain": STRATIFIED_GAIN,
        "headline": headline,
        "labels_now": 15,
        "method": "Headline under the stratified design: "
        + headline["method"]
        + FORECAST_TAIL.format(target=0.3, whose=LEAD)
        + " "
        + STRATIFIED_GAIN["text"],
        "progress": 1.0,
        "reached": True,
        "routing": NO_ROUTING,
        "selective": selective,
        "target_half_width": 0.3,
        "target_set": True,
    }


def test_stratified_block_gold_only_whole_output(monkeypatch):
    headline = {
        "ci": (0.6436952524998072, 0.9644418889474804),
        "design_effect": 0.7333333333333335,
        "estimator": "stratified_gold_only",
        "half_width": 0.1603733182238366,
        "method": STRATIFIED_GOLD_METHOD,
        "value": 0.875,
    }
    uniform = {
        "estimator": "uniform_gold",
        "half_width_now": 0.20648562320657526,
        "labels_more": 0,
        "labels_total": 13,
        "method": "uniform sampling, gold only: about 0 more labels (13 in all) to reach ±0.300 "
        "(95%), from the 15 labels so far (±0.206 now; per-label variance 0.1144, design effect "
        "1.05); a forecast from the current variance estimates, not a promise.",
        "target_half_width": 0.3,
    }
    same(_stratified_block(monkeypatch, False), _stratified_expected(headline, uniform, None, None))
    # by hand: W_A ȳ_A + W_B ȳ_B = ½·9/12 + ½·3/3
    y = (GOLD_CODES == S_CODE).astype(float)
    assert headline["value"] == 0.5 * y[:12].mean() + 0.5 * y[12:15].mean()


def test_stratified_block_with_a_judge_whole_output(monkeypatch):
    headline = {
        "ci": (0.6299942639636518, 1.0),
        "design_effect": 0.9724446228078685,
        "estimator": "stratified_ppi",
        "half_width": 0.18500286801817412,
        "method": STRATIFIED_PPI_METHOD,
        "value": 0.875,
    }
    uniform = {
        "estimator": "uniform_ppi",
        "half_width_now": 0.18100153332527363,
        "labels_more": None,
        "labels_total": None,
        "method": "uniform sampling, PPI++: ±0.300 cannot be reached by labels alone: the "
        "judge's own sampling error over the project is already ±0.111 (95%), from the 15 "
        "labels so far (±0.181 now; per-label variance 0.0549, λ=0.85, design effect 1.00); a "
        "forecast from the current variance estimates, not a promise.",
        "target_half_width": 0.3,
    }
    selective = {**ACTIVE_BLOCK["selective"], "routed_claims": 0}
    same(
        _stratified_block(monkeypatch, True),
        _stratified_expected(headline, uniform, ACTIVE_BLOCK["confidence"], selective),
    )


def _uniform_block(monkeypatch, target, report=REPORT):
    def no_columns(project):
        raise AssertionError("the uniform hot path must not read the claims' design columns")

    labels = pd.DataFrame(
        {"claim_id": [IDS[0]], "design": ["uniform"], "inclusion_probability": [NAN]}
    )
    monkeypatch.setattr(selectors, "label_design_columns", lambda project: labels.copy())
    monkeypatch.setattr(selectors, "active_claim_columns", no_columns)
    data = FakeData(IDS, ANS, GOLD_CODES)
    project = Project(queue_design="uniform", target_half_width=target)
    return aa.active_audit_block(project=project, data=data, figures=report, judged=None)


def test_uniform_block_reached_exactly_at_the_target(monkeypatch):
    """The report's own headline (±0.25 exactly, from (0.25, 0.75)) at a target of 0.25: the
    target is reached (≤, not <), progress 1."""
    block = _uniform_block(monkeypatch, 0.25)
    # the uniform gold-only forecast by hand: p = 12/15, design effect max(CR1/independent, 1),
    # t at 7 df (8 labelled answers), ±t·√(p(1 − p)·deff/15) now, n* = ⌈p(1 − p)·deff·t²/x²⌉
    y = (GOLD_CODES[:15] == S_CODE).astype(float)
    g = ANS[:15]
    p = y.mean()
    e = (y - p) / 15
    totals = np.array([e[g == a].sum() for a in np.unique(g)])
    deff = max(8 / 7 * (totals @ totals) / ((e @ e) * 15 / 14), 1.0)
    t = student_t.ppf(0.975, 7)
    now = t * math.sqrt(p * (1 - p) * deff / 15)
    total = math.ceil(p * (1 - p) * deff * t**2 / 0.25**2)
    assert total == 15
    uniform = {
        "estimator": "uniform_gold",
        "half_width_now": now,
        "labels_more": 0,
        "labels_total": 15,
        "method": "uniform sampling, gold only: about 0 more labels (15 in all) to reach ±0.250 "
        "(95%), from the 15 labels so far (±0.244 now; per-label variance 0.1600, design effect "
        "1.00); a forecast from the current variance estimates, not a promise.",
        "target_half_width": 0.25,
    }
    expected = {
        "confidence": None,
        "design": "uniform",
        "forecast": {"uniform": within_claims(uniform, 15)},
        "gain": None,
        "headline": {
            "value": 0.5,
            "ci": (0.25, 0.75),
            "method": "Wilson.",
            "estimator": "gold_only_faithfulness",
            "half_width": 0.25,
        },
        "labels_now": 15,
        "method": "Headline under uniform sampling: Wilson."
        + FORECAST_TAIL.format(target=0.25, whose=LEAD),
        "progress": 1.0,
        "reached": True,
        "routing": NO_ROUTING,
        "selective": None,
        "target_half_width": 0.25,
        "target_set": True,
    }
    same(block, expected)
    # just short of the headline's half-width: not reached, progress from the forecast
    block = _uniform_block(monkeypatch, 0.2499)
    assert block["reached"] is False
    assert block["progress"] == 0.99  # 15 labels of the 15 needed: capped below 1


def test_uniform_headline_is_the_judges_headline_estimate_when_there_is_one():
    report = {
        "judge": {
            "headline_estimate": "ppi_faithfulness",
            "ppi_faithfulness": {"value": 0.7, "ci": (0.6, 0.8), "method": "PPI++."},
        },
        "faithfulness": {"pooled": {"value": 0.5, "ci": (0.25, 0.75)}},
        "method": {"faithfulness": "Wilson."},
    }
    assert aa._uniform_headline(report) == {
        "value": 0.7,
        "ci": (0.6, 0.8),
        "method": "PPI++.",
        "estimator": "ppi_faithfulness",
    }
    report["judge"]["headline_estimate"] = None
    assert aa._uniform_headline(report)["estimator"] == "gold_only_faithfulness"


def test_uniform_hot_path_gives_no_pi_no_stratum_and_nothing_routed(monkeypatch):
    def no_columns(project):
        raise AssertionError("not read")

    labels = pd.DataFrame(
        {
            "claim_id": [IDS[0], 999],
            "design": ["uniform", "active"],
            "inclusion_probability": [NAN, 0.5],
        }
    )
    monkeypatch.setattr(selectors, "label_design_columns", lambda project: labels.copy())
    monkeypatch.setattr(selectors, "active_claim_columns", no_columns)
    data = FakeData(IDS[:3], ANS[:3], GOLD_CODES[:3])
    out = aa.claim_design_inputs(Project(queue_design="uniform"), data)
    assert set(out) == {"pi", "claim_pi", "strata", "routed", "label_designs"}
    assert np.isnan(out["pi"]).all()
    assert out["pi"].dtype == float
    assert np.isnan(out["claim_pi"]).all()
    assert out["claim_pi"].dtype == float
    assert out["strata"].tolist() == [aa.NO_STRATUM] * 3
    assert out["routed"].dtype == bool
    assert not out["routed"].any()
    assert out["label_designs"] == ["uniform"]  # the label of a claim outside the report: out


def test_claim_inputs_reads_the_first_active_pi_the_strata_and_the_routed_mask(monkeypatch):
    """A claim missing from the claims' columns (routed unknown, NaN) is not routed; the routed
    mask is boolean whatever dtype the frame had (it indexes the judge's verdicts)."""
    labels = pd.DataFrame(
        {
            "claim_id": [IDS[1], IDS[0], IDS[0], IDS[2]],
            "design": ["active", "stratified", "active", "active"],
            "inclusion_probability": [0.4, NAN, 0.3, NAN],
        }
    )
    claims = pd.DataFrame(
        {
            "claim_id": IDS[:3],
            "inclusion_probability": [0.5, NAN, 0.7],
            "active_stratum": ["A", "", None],
            "routed_to_judge": pd.Series([True, False, True], dtype=object),
        }
    )
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS[:4], ANS[:4], GOLD_CODES[:4])
    out = aa.claim_design_inputs(Project(queue_design="active"), data)
    np.testing.assert_array_equal(out["pi"], [0.3, 0.4, NAN, NAN])
    np.testing.assert_array_equal(out["claim_pi"], [0.5, NAN, 0.7, NAN])
    assert out["strata"].tolist() == ["A", aa.NO_STRATUM, aa.NO_STRATUM, aa.NO_STRATUM]
    assert out["routed"].dtype == bool
    assert out["routed"].tolist() == [True, False, True, False]
    assert out["label_designs"] == ["active", "stratified", "active", "active"]
    # and the routing block indexes the judge's verdicts with it
    judged = judged_for(data, [S_CODE, C_CODE, C_CODE, S_CODE], [0.9, 0.2, 0.3, 0.8])
    routing = aa._routing_block(Project(selective_judging=False), out["routed"], judged)
    assert routing == {
        "on": False,
        "routed_claims": 2,
        "judge_supported_share": 0.5,
        "text": routed_text(2, "50%", " (50% SUPPORTED)"),
    }


def test_routing_block_one_claim_and_no_judge():
    mask = np.array([False, True, False, False])
    assert aa._routing_block(Project(selective_judging=True), mask, None) == {
        "on": True,
        "routed_claims": 1,
        "judge_supported_share": None,
        "text": routed_text(1, "25%", ""),
    }
    assert routed_text(1, "25%", "").startswith("1 claim routed to the judge (25% of")
    # the judge judged none of the routed claims: no share
    data = FakeData(IDS[:4], ANS[:4], GOLD_CODES[:4])
    judged = judged_for(data, [S_CODE, S_CODE], [0.9, 0.8], positions=[0, 2])
    assert aa._routing_block(Project(), mask, judged)["judge_supported_share"] is None


def test_a_claim_with_pi_zero_takes_the_mean_pi_in_the_active_forecast(monkeypatch):
    """A claim whose recorded π is 0 (never drawable) is not a probability the forecast can
    divide by: it takes the mean π of the others, like a claim with none."""
    pi = list(CLAIM_PI)
    pi[17] = 0.0
    block = _active_block(monkeypatch, claim_pi=pi)
    same(block, ACTIVE_BLOCK)  # the same as with no π on claim 17
    out = aa.forecast_inputs(
        design="active",
        gold=np.array([True, False, False]),
        prediction=None,
        strata=None,
        claim_pi=np.array([0.2, 0.0, 0.6]),
        active_inputs={"labelled": np.array([True, False, False]), "pi": np.array([0.2, 1, 1])},
    )
    assert out["design_pi"].tolist() == [0.2, 0.4, 0.6]
    assert out["prediction"].tolist() == [0.5, 0.5, 0.5]
    out = aa.forecast_inputs(
        design="active",
        gold=np.array([True, False]),
        prediction=np.array([0.3, 0.4]),
        strata=None,
        claim_pi=np.array([NAN, math.inf]),
        active_inputs={"labelled": np.array([True, False]), "pi": np.array([1.0, 1.0])},
    )
    assert out["design_pi"].tolist() == [1.0, 1.0]
    assert out["prediction"].tolist() == [0.3, 0.4]


def test_stratified_and_uniform_forecast_inputs():
    gold = np.array([True, False, True, True, False, False])
    strata = np.array(["A", "A", "B", "B", "B", "C"], dtype=object)
    out = aa.forecast_inputs(
        design="stratified", gold=gold, prediction=None, strata=strata, claim_pi=None,
        active_inputs=None,
    )  # fmt: skip
    assert set(out) == {"labelled", "pi", "design_pi", "prediction"}
    assert out["pi"].tolist() == [0.5, 0.5, 2 / 3, 2 / 3, 2 / 3, 1.0]
    assert out["labelled"] is gold
    assert out["design_pi"] is None
    assert out["prediction"] is None
    out = aa.forecast_inputs(
        design="uniform", gold=gold, prediction=None, strata=strata, claim_pi=None,
        active_inputs=None,
    )  # fmt: skip
    assert out == {"labelled": gold, "pi": None, "design_pi": None, "prediction": None}


def test_small_pieces():
    assert aa._half_width((0.2, 0.5)) == pytest.approx(0.15)
    assert aa._half_width((None, 0.5)) is None
    assert aa._half_width((0.1, math.inf)) is None
    assert aa._finite(None) is None
    assert aa._finite(math.nan) is None
    assert aa._finite(np.float64(0.5)) == 0.5
    assert type(aa._finite(np.float64(0.5))) is float
    entry = {"labels_total": None}
    assert aa._progress(entry, 5) is None
    assert aa._progress({"labels_total": 0}, 5) == 0.99
    assert aa._progress({"labels_total": 20}, 5) == 0.25
    assert aa._progress({"labels_total": 20}, 30) == 0.99
    assert aa.design_in_use(Project(queue_design="stratified"), ["active"]) == "stratified"
    assert aa.design_in_use(Project(queue_design="active"), []) == "active"
    assert aa.design_in_use(Project(queue_design="uniform"), ["x", "uniform"]) == "uniform"
    assert (
        aa.design_in_use(Project(queue_design="uniform"), ["active", "stratified", "stratified"])
        == "stratified"
    )
    conf = aa._verdict_confidence(np.array([S_CODE, C_CODE, N_CODE]), np.array([0.8, 0.3, NAN]))
    np.testing.assert_array_equal(conf, [0.8, 0.7, NAN])


def test_prediction_is_the_confidence_or_the_verdict_and_half_elsewhere():
    data = FakeData(IDS[:4], ANS[:4], GOLD_CODES[:4])
    assert aa.judge_prediction(data, None) is None
    assert aa.judge_prediction(data, judged_for(data, [], [], positions=[])) is None
    judged = judged_for(data, [S_CODE, C_CODE, S_CODE], [NAN, NAN, 0.7], positions=[0, 1, 3])
    assert aa.judge_prediction(data, judged).tolist() == [1.0, 0.0, 0.5, 0.7]


def test_confidence_block_needs_errors_and_correct_verdicts_and_warns_when_uninformative():
    error = np.array([True, False, True, False])
    assert aa._confidence_block(np.array([0.9, NAN, NAN, NAN]), error) is None
    assert aa._confidence_block(np.array([0.9, 0.8, 0.7, 0.6]), np.ones(4, bool)) is None
    assert aa._confidence_block(np.array([0.9, 0.8, 0.7, 0.6]), np.zeros(4, bool)) is None
    # errors at the same confidences as correct verdicts: AUC ½, no better than chance
    block = aa._confidence_block(np.array([0.9, 0.9, 0.6, 0.6]), error)
    assert block == {
        "auc": 0.5,
        "informative": False,
        "warning": "The judge's confidence does not tell its errors apart (AUC 0.50, its 95% "
        "interval not above 0.5): active sampling is no better than uniform here.",
        "explanation": AUC_TEXT,
    }
    # NaN confidences are left out: two claims (one error, one correct) remain
    block = aa._confidence_block(np.array([0.2, 0.9, NAN, NAN]), error)
    assert block["auc"] == 1.0


def test_selective_block_certified_threshold_counts_the_claims_at_or_above():
    """25 audited claims at confidence 0.95 all agreeing (0.9^25 ≈ 0.07 ≤ δ), 5 at 0.5
    disagreeing: the threshold is certified at the top decile; claims at or above it counted
    over every judged claim."""
    from scipy.stats import beta, binom

    conf = np.array([0.95] * 25 + [0.5] * 5)
    agree = np.array([True] * 25 + [False] * 5)
    conf_all = np.array([0.95] * 25 + [0.5] * 5 + [0.96, 0.1, NAN])
    block = aa._selective_block(
        conf_audited=conf, agree=agree, conf_all=conf_all, target=0.9, delta=0.1, routed=3
    )
    assert binom.sf(24, 25, 0.9) <= 0.1
    lower = float(beta.ppf(0.1, 25, 1))
    assert block == {
        "target_agreement": 0.9,
        "delta": 0.1,
        "level": 0.9,
        "threshold": 0.95,
        "share_audited": 25 / 30,
        "share_of_claims": pytest.approx(26 / 33, rel=1e-12),
        "claims_at_or_above": 26,
        "lower_bound": pytest.approx(lower, rel=1e-12),
        "method": "The judge may decide alone at confidence ≥ 0.950 (83% of audited claims; "
        "agreement 100.0%, lower 90% bound 91.2%); fixed-sequence testing over 2 thresholds, "
        "exact binomial, P(agreement ≥ 90%) ≥ 90% over audited claims drawn like these (30 "
        "audited claims, assumed exchangeable: claims of one answer are counted as "
        "independent).",
        "routed_claims": 3,
        "explanation": SELECTIVE_TEXT,
    }
    assert (
        aa._selective_block(
            conf_audited=np.array([NAN]), agree=np.array([True]), conf_all=np.array([NAN]),
            target=0.9, delta=0.1, routed=0,
        )
        is None
    )  # fmt: skip


def test_block_method_for_each_design_and_target():
    base = {
        "target_half_width": 0.05,
        "target_set": True,
        "headline": {"method": None},
        "gain": {"text": ""},
        "routing": {"routed_claims": 0, "text": "ignored"},
    }
    tail = FORECAST_TAIL.format(target=0.05, whose=LEAD)
    assert aa._block_method({**base, "design": "active"}) == (
        "Headline under the active design: " + tail
    )
    assert aa._block_method({**base, "design": "uniform", "gain": None}) == (
        "Headline under uniform sampling: " + tail
    )
    block = {
        **base,
        "design": "stratified",
        "target_set": False,
        "headline": {"method": "M."},
        "gain": {"text": "G."},
        "routing": {"routed_claims": 1, "text": "R."},
    }
    assert aa._block_method(block) == (
        "Headline under the stratified design: M."
        + FORECAST_TAIL.format(target=0.05, whose=DEFAULT)
        + " G. R."
    )


# ------------------------------------------------------------------------------------------
# selective judging: the judge's columns and the routing's refusals (no database: the
# selectors are planted, and the refusals come before any write)


def _plant_verdicts(monkeypatch):
    verdicts = pd.DataFrame(
        {
            "verdict_id": [1, 2, 3, 4, 5, 6],
            "claim_id": [1, 1, 2, 1, 3, 4],
            "model": ["m1", "m2", "m2", "m2", "m2", "m2"],
            "prompt_version": ["p1", "p2", "p2", "p2", "p2", "p2"],
            "verdict": [
                "SUPPORTED", "CONTRADICTED", "SUPPORTED", "SUPPORTED", "UNPARSEABLE",
                "NOT_IN_PILE",
            ],
            "confidence": [0.9, 0.3, 0.8, 0.7, NAN, 0.4],
        }
    )  # fmt: skip
    gold = pd.DataFrame(
        {"claim_id": [1, 4], "verdict": ["SUPPORTED", "CONTRADICTED"], "source": ["u", "u"]}
    )
    monkeypatch.setattr(selectors, "judge_verify_columns", lambda judge: verdicts.copy())
    monkeypatch.setattr(selectors, "gold_columns", lambda project: gold.copy())


def test_selective_judged_columns_newest_instrument_newest_verdict(monkeypatch):
    """The newest instrument (m2, p2) only; each claim's newest parseable verdict; the
    confidence in its own verdict (1 − P(SUPPORTED) for the others); audited = has gold."""
    _plant_verdicts(monkeypatch)
    out = routing.selective_judged_columns(project=None, judge=None)
    assert set(out) == {"claim_ids", "confidence", "audited", "agree"}
    assert out["claim_ids"].tolist() == [1, 2, 4]
    assert out["claim_ids"].dtype == np.int64
    np.testing.assert_allclose(out["confidence"], [0.7, 0.8, 0.6], rtol=1e-12)
    assert out["audited"].tolist() == [True, False, True]
    assert out["agree"].tolist() == [True, False, False]


def test_routing_refusals_say_exactly_why(monkeypatch):
    apply = (
        routing.selective_routing_apply.__wrapped__
    )  # the checks, before the transaction's writes
    for target in (0.0, 1.0):
        with pytest.raises(routing.RoutingError) as err:
            apply(project=None, judge=None, target=target)
        assert str(err.value) == "target agreement must be between 0 and 1"
    for delta in (0.0, 1.0):
        with pytest.raises(routing.RoutingError) as err:
            apply(project=None, judge=None, delta=delta)
        assert str(err.value) == "delta must be between 0 and 1"
    no_conf = {
        "claim_ids": np.array([1]),
        "confidence": np.array([NAN]),
        "audited": np.array([True]),
        "agree": np.array([True]),
    }
    monkeypatch.setattr(routing, "selective_judged_columns", lambda project, judge: no_conf)
    with pytest.raises(routing.RoutingError) as err:
        apply(project=None, judge=None)
    assert str(err.value) == (
        "selective judging needs audited claims with the judge's confidence: this judge gives "
        "no confidences or has no verdict on a gold claim"
    )
    few = {
        "claim_ids": np.array([1, 2, 3]),
        "confidence": np.array([0.9, 0.8, 0.7]),
        "audited": np.array([True, True, False]),
        "agree": np.array([True, False, True]),
    }
    monkeypatch.setattr(routing, "selective_judged_columns", lambda project, judge: few)
    with pytest.raises(routing.RoutingError) as err:
        apply(project=None, judge=None, target=0.85, delta=0.05)
    assert str(err.value) == (
        "no confidence threshold certifies 85% agreement with gold at δ = 0.05 on the 2 "
        "audited claims: nothing routed"
    )


def test_only_gold_claims_with_a_positive_recorded_pi_are_labelled():
    """A claim with an active label but no gold yet (analysts disagree) is not labelled; a gold
    claim whose recorded π is 0 is no draw of the design: left out, said."""
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    gold = np.array([True, True, True, False, True])
    pi_label = np.array([0.5, 0.25, 0.4, 0.5, 0.0])
    headline, inputs = aa._active_headline(y, gold, None, pi_label, np.full(5, NAN), np.arange(5))
    assert inputs["labelled"].tolist() == [True, True, True, False, False]
    assert headline["gold_left_out"] == 1
    assert headline["value"] == pytest.approx((2 + 2.5) / (2 + 4 + 2.5), rel=1e-12)
    assert headline["method"].endswith(aa._left_out_text(1))
    # the unlabelled claims (no π of their own) take the labels' mean π
    assert inputs["pi"].tolist() == pytest.approx([0.5, 0.25, 0.4, 1.15 / 3, 1.15 / 3], rel=1e-12)
