"""The report's `active_audit` block (issue 14), through the database.

Expected figures come from independent arithmetic: `ppi_py` (tests/metrics/independent.py) for
the active headline with a constant π (which must then be today's uniform PPI++), Wilson by hand,
stratified means by hand with numpy, the forecast n = V₁·z²/x² from the binomial variance, and
the selective-judging threshold checked with scipy's exact binomial tail.
"""

import math

import numpy as np
import pytest
from scipy.stats import beta, binom
from scipy.stats import t as student_t

from annotate.models import Answer, Claim, Gold, Label, Project
from judges.models import JudgeVerdict
from metrics.services import report_compute
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
