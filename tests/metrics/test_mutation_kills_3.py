"""Tests written for the survivors of the sixth mutation session (tests/MUTATION.md): each pins
a figure derived by hand or by an independent library (ppi_py, scipy), never by the product's
own function. Fast (one small import, no report), so in mutmut's test selection."""

import math

import numpy as np
import pytest
from kombu.exceptions import OperationalError

from judges.models import Judge
from metrics.models import ReportSnapshot
from metrics.services import snapshots
from metrics.services.gate import gate_check
from metrics.services.trend import systems_trend
from tests.compare.builders import answer_record, import_records
from tests.factories import ProjectFactory
from tests.metrics import independent as ref

S, N = "SUPPORTED", "NOT_IN_PILE"


# --- metrics.services.gate: the method a gate reports is the judge block's own -------------


def test_gate_on_the_judges_headline_reports_that_estimates_method_and_interval():
    report = {
        "project": {"slug": "p"},
        "judge": {
            "name": "j",
            "headline_estimate": "ppi",
            "ppi": {"value": 0.91, "ci": [0.88, 0.94], "method": "PPI++ clustered by answer"},
        },
        "faithfulness": {"pooled": {"value": 0.5, "ci": [0.4, 0.6]}},
    }
    result = gate_check(report, metric="faithfulness", minimum=0.9, on="lower")
    assert result["method"] == "PPI++ clustered by answer"
    assert result["figure"] == 0.91
    assert result["interval"] == [0.88, 0.94]
    assert result["judged_value"] == 0.88
    assert result["pass"] is False
    assert result["reason"] == "lower 0.8800 is below the minimum 0.9"


def test_gate_on_a_judge_block_without_method_names_the_estimate():
    report = {"judge": {"headline_estimate": "rogan_gladen", "rogan_gladen": {"value": 0.8}}}
    result = gate_check(report, metric="faithfulness", minimum=0.7, on="value")
    assert result["method"] == "rogan_gladen"
    assert result["pass"] is True
    assert result["reason"] == "value end 0.8000 meets the threshold"


# --- metrics.services.snapshots: the broker down fails the snapshot with its message --------


@pytest.mark.django_db
def test_enqueue_with_the_broker_down_fails_the_pending_snapshot_with_the_message(monkeypatch):
    def broker_down(snapshot_id):
        raise OperationalError("connection refused")

    monkeypatch.setattr(snapshots, "_enqueue", broker_down)
    snapshot = ReportSnapshot.objects.create(project=ProjectFactory())
    snapshots._enqueue_or_fail(snapshot.pk)
    snapshot.refresh_from_db()
    assert snapshot.status == ReportSnapshot.Status.FAILED
    assert snapshot.error == (
        "the task queue (Redis) could not be reached; press Recompute once it is back"
    )


# --- metrics.services.trend: the PPI branch of a system's trend row ------------------------


def _cr1_mean_variance(x, answer_ids) -> float:
    """CR1 variance of a claim mean clustered by answer, by hand: G/(G−1)·Σ_g (Σ_i (x_i − x̄))²/n²."""
    x = np.asarray(x, dtype=float)
    sums: dict = {}
    for value, answer in zip(x - x.mean(), answer_ids, strict=True):
        sums[answer] = sums.get(answer, 0.0) + value
    g = len(sums)
    return g / (g - 1) * sum(v**2 for v in sums.values()) / x.size**2


# 12 answers of 2 claims each; answers 0–7 are audited (gold on both claims), 8–11 are not.
# The judge judged every claim; it errs on a few audited ones.
GOLD = [(S, S), (S, N), (N, N), (S, S), (S, S), (N, S), (S, S), (S, N)]
JUDGE = [(S, S), (S, S), (N, N), (S, S), (S, N), (N, S), (S, S), (S, N)] + [
    (S, S),
    (N, S),
    (S, S),
    (S, N),
]


@pytest.mark.django_db
def test_trend_row_with_audited_and_unaudited_judged_claims_carries_the_ppi_estimate():
    project = ProjectFactory()
    records = []
    for i, said in enumerate(JUDGE):
        gold = GOLD[i] if i < len(GOLD) else (None, None)
        records.append(answer_record(f"q{i}", "rag@1", list(zip(gold, said, strict=True))))
    import_records(project, records)
    rows = systems_trend(project=project, judge=Judge.objects.get(name="j"))
    assert len(rows) == 1
    row = rows[0]
    assert row["claims"] == 24
    assert row["gold_claims"] == 16

    y = np.array([v == S for pair in GOLD for v in pair], dtype=float)
    fg = np.array([v == S for pair in JUDGE[:8] for v in pair], dtype=float)
    fr = np.array([v == S for pair in JUDGE[8:] for v in pair], dtype=float)
    ids, rest_ids = np.arange(16) // 2, 8 + np.arange(8) // 2
    # By hand: 11 of 16 gold supported, the judge says 11 of 16 on them (agreeing on 14) and
    # 6 of 8 on the rest.
    assert (y.sum(), fg.sum(), fr.sum()) == (11, 11, 6)
    theta, _, lam = ref.ppi(y, fg, fr)  # ppi_py's point estimate and λ
    from scipy.stats import t as student_t

    var = _cr1_mean_variance(y - lam * fg, ids) + lam**2 * _cr1_mean_variance(fr, rest_ids)
    half = student_t.ppf(0.975, 8 - 1) * math.sqrt(var)
    ppi = row["ppi"]
    assert ppi is not None
    assert ppi["value"] == pytest.approx(theta, abs=1e-9)
    assert ppi["ci"] == [
        pytest.approx(max(theta - half, 0.0), abs=1e-9),
        pytest.approx(min(theta + half, 1.0), abs=1e-9),
    ]
    assert row["gold_only"]["value"] == pytest.approx(11 / 16)
    # The headline is the narrower of the two valid intervals.
    widths = {k: row[k]["ci"][1] - row[k]["ci"][0] for k in ("gold_only", "ppi")}
    assert row["headline"]["choice"] == min(widths, key=widths.get)


# --- metrics.stats.design.cluster_bootstrap: the default number of resamples --------------


def test_cluster_bootstrap_draws_2000_resamples_by_default():
    from metrics.stats.design import cluster_bootstrap

    y = [1, 0, 1, 1, 0, 1, 0]
    ids = [0, 0, 1, 1, 2, 2, 2]
    default = cluster_bootstrap(y, answer_ids=ids)
    assert default.method.startswith("Answer-level bootstrap, 2000 resamples of 3 answers,")
    explicit = cluster_bootstrap(y, answer_ids=ids, n_boot=2000)
    assert (default.low, default.high, default.std_error) == (
        explicit.low,
        explicit.high,
        explicit.std_error,
    )
    assert default.value == pytest.approx(4 / 7)


# --- metrics.stats.agreement.krippendorff_alpha: two distinct values are enough ------------


def test_krippendorff_alpha_of_binary_codes_matches_the_krippendorff_package():
    import krippendorff

    from metrics.stats.agreement import krippendorff_alpha

    data = np.array(
        [
            [1, 0, 1, 1, 0, 1, np.nan, 0, 1, 1],
            [1, 0, 0, 1, 0, 1, 1, 0, 1, np.nan],
            [1, 1, 0, 1, 0, np.nan, 1, 0, 1, 0],
        ]
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert krippendorff_alpha(data) == pytest.approx(expected, abs=1e-12)
    # Two coders, four units, one disagreement, by hand: the coincidence matrix of the 8 pairable
    # values has o_00 = 2, o_11 = 4, o_01 = o_10 = 1, so n_0 = 3, n_1 = 5, n = 8 and
    # α = 1 − (n − 1)·o_01 / (n_0·n_1) = 1 − 7·1/15 = 8/15.
    assert krippendorff_alpha([[0, 1, 1, 1], [0, 1, 1, 0]]) == pytest.approx(8 / 15)


# --- metrics.stats.calibration: Platt on more than 100,000 claims (the subsample start) ----


def test_platt_on_120k_claims_matches_scikit_learn():
    from metrics.stats.calibration import platt_calibrator

    rng = np.random.default_rng(3)
    c = rng.random(120_000)
    y = (rng.random(c.size) < 0.2 + 0.6 * c).astype(float)
    grid = np.linspace(0.0, 1.0, 11)
    expected = ref.platt_fit(c, y)(grid)  # scikit-learn's logistic regression, Platt's targets
    np.testing.assert_allclose(platt_calibrator(c, y)(grid), expected, atol=1e-6)


# --- metrics.stats.conformal_splits.crc_splits: a calibration half whose loss fits the budget


def test_crc_splits_keeps_every_claim_when_the_calibration_loss_is_within_budget():
    from metrics.stats.conformal_splits import crc_splits

    # 10 answers of 2 claims; one unsupported claim (answer 3, confidence 0.5): loss 1/2.
    answer = np.repeat(np.arange(10), 2)
    conf = 0.05 + 0.09 * answer + np.tile([0.0, 0.03], 10)
    conf[7] = 0.5
    supported = np.ones(20, dtype=bool)
    supported[7] = False
    out = crc_splits(conf, supported, answer, 0.2, n_splits=40, seed=1, return_masks=True)
    # All answers: Σ loss = 1/2 ≤ (10 + 1)·0.2 − 1 = 1.2, so every claim is kept: λ̂ = min(0, ·) = 0.
    assert out["lambda_hat_full"] == 0.0
    cal = out["calibration"]
    with_3 = cal[:, 3]
    assert 0 < with_3.sum() < 40
    # A half without answer 3 has loss 0 ≤ (5 + 1)·0.2 − 1 = 0.2: keep all; the test half holds
    # answer 3, realized loss (1/2)/5 = 0.1.
    np.testing.assert_array_equal(out["lambda_hat"][~with_3], 0.0)
    np.testing.assert_array_equal(out["retained_share"][~with_3], 1.0)
    np.testing.assert_allclose(out["realized"][~with_3], 0.1)
    # A half with answer 3 has loss 1/2 > 0.2: the cut is just above 0.5, and the test half keeps
    # its claims above 0.5 (no unsupported claim left to realize).
    np.testing.assert_array_equal(out["lambda_hat"][with_3], np.nextafter(0.5, 1.0))
    np.testing.assert_array_equal(out["realized"][with_3], 0.0)
    for row in np.flatnonzero(with_3):
        test_claims = ~cal[row][answer]
        assert out["retained_share"][row] == pytest.approx(np.mean(conf[test_claims] > 0.5))


# --- metrics.stats.conformal.crc_evaluate: a claim whose confidence equals λ̂ is kept -------


def test_crc_evaluate_keeps_a_claim_at_exactly_the_cut():
    from metrics.stats.conformal import crc_evaluate

    confidences = [np.array([0.3, 0.5, 0.7]), np.array([0.5, 0.2])]
    supported = [np.array([1, 0, 1]), np.array([1, 1])]
    out = crc_evaluate(confidences, supported, 0.5)
    # Kept (conf ≥ 0.5): 0.5 (unsupported) and 0.7 of answer 0, 0.5 of answer 1.
    assert out["claims_retained"] == 3
    assert out["supported_retained"] == 2
    assert out["retained_share"] == pytest.approx(3 / 5)
    assert out["faithfulness_retained"] == pytest.approx(2 / 3)
    # Loss: answer 0 keeps 1 unsupported of its 3 claims, answer 1 none: (1/3 + 0) / 2.
    assert out["false_claim_rate"] == pytest.approx(1 / 6)
    assert out["answers_abstaining"] == 0


# --- metrics.stats.design.design_kappa: two claims are enough ------------------------------


def test_design_kappa_of_two_claims_matches_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    from metrics.stats.design import design_kappa

    gold, judge = [S, N], [S, N]
    assert design_kappa(gold, judge).value == pytest.approx(cohen_kappa_score(gold, judge))
    assert design_kappa(gold, judge).value == pytest.approx(1.0)  # p_o = 1, p_e = 1/2
    swapped = [N, S]
    assert design_kappa(gold, swapped).value == pytest.approx(cohen_kappa_score(gold, swapped))
    assert design_kappa(gold, swapped).value == pytest.approx(-1.0)  # p_o = 0, p_e = 1/2


# --- metrics.stats.design.design_ppi_mean: strata weights renormalised over strata with gold


def test_stratified_ppi_weights_the_strata_with_gold_by_their_claims_among_those():
    from metrics.stats.design import design_ppi_mean

    rng = np.random.default_rng(5)
    sizes = {"A": (30, 60), "B": (20, 40), "C": (0, 50)}  # C has unaudited claims only
    truth = {"A": 0.8, "B": 0.5, "C": 0.3}
    y, fg, fr, s_g, s_r = [], [], [], [], []
    for lab, (n_gold, n_rest) in sizes.items():
        yy = (rng.random(n_gold + n_rest) < truth[lab]).astype(float)
        said = np.where(rng.random(yy.size) < 0.85, yy, 1.0 - yy)
        y += list(yy[:n_gold])
        fg += list(said[:n_gold])
        fr += list(said[n_gold:])
        s_g += [lab] * n_gold
        s_r += [lab] * n_rest
    y, fg, fr, s_g, s_r = (np.array(v) for v in (y, fg, fr, s_g, s_r))
    out = design_ppi_mean(y, fg, fr, strata_gold=s_g, strata_rest=s_r)
    # By hand: W_A = 90/150, W_B = 60/150 (C, without gold, is left out and its share
    # reported); θ̂_h is ppi_py's PPI++ point estimate within stratum h.
    theta = {lab: ref.ppi(y[s_g == lab], fg[s_g == lab], fr[s_r == lab])[0] for lab in "AB"}
    assert out.value == pytest.approx(0.6 * theta["A"] + 0.4 * theta["B"], abs=1e-12)
    assert out.unseen_share == pytest.approx(50 / 200)
    assert out.n_strata == 2
    # The method sentence: the base, then the strata, then the uncovered share, nothing more.
    assert out.method.startswith(
        "PPI++ (power-tuned per stratum), rectifier clustered by answer (50 audited answers, "
    )
    assert out.method.endswith(
        "t with 48 df; weighted over 2 strata by their share of the project (N_h/N); covers only "
        "the strata with gold: 25% of the project (stratum C) has no audited claim and is not "
        "estimated."
    )


# --- metrics.services.trend.trend_points: the chart's points --------------------------------


def test_trend_points_are_the_rows_with_a_headline():
    from metrics.services.trend import trend_points

    rows = [
        {"system": "rag@1", "headline": {"choice": "gold_only", "value": 0.5, "ci": [0.3, 0.7]}},
        {"system": "rag@2", "headline": {"choice": None, "value": None, "ci": [None, None]}},
        {"system": "rag@3", "headline": {"choice": "ppi", "value": 0.8, "ci": [0.7, 0.9]}},
    ]
    assert trend_points(rows) == [("rag@1", 0.5, 0.3, 0.7), ("rag@3", 0.8, 0.7, 0.9)]


# --- metrics.services.bits._bits_calibration: the block names its claim count --------------


def test_bits_calibration_block_counts_its_claims_and_says_when_it_can_recalibrate():
    import pandas as pd

    from metrics.services.bits import _bits_calibration

    conf = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    supported = np.array([True, True, False, True, False, False])
    rows = pd.DataFrame({"confidence": conf, "answer_id": [1, 1, 2, 2, 3, 3]})
    out = _bits_calibration(rows, supported)
    assert out["n"] == 6
    assert out["enough"] is True
    # Raw ECE, 10 equal bins, by hand: every claim alone in its bin, so Σ|c − y|/6 =
    # (0.1 + 0.2 + 0.3 + 0.4 + 0.2 + 0.7)/6 = 1.9/6.
    assert out["ece"]["raw"] == pytest.approx(1.9 / 6)
    assert out["ece"]["raw"] == pytest.approx(ref.ece(conf, supported.astype(float)))
    one = _bits_calibration(rows.iloc[:2], supported[:2])  # one answer, both supported
    assert (one["n"], one["enough"]) == (2, False)


# --- metrics.services.audit_design._queue_condition: a queue by the judge's verdict --------


@pytest.mark.django_db
def test_queue_condition_by_a_runs_verdict_keeps_the_claims_that_run_gave_it():
    from types import SimpleNamespace

    import pandas as pd

    from metrics.services.audit_design import _queue_condition
    from tests.factories import AnswerFactory, ClaimFactory, JudgeRunFactory, JudgeVerdictFactory

    project = ProjectFactory()
    answer = AnswerFactory(project=project)
    claims = [ClaimFactory(answer=answer) for _ in range(4)]
    run = JudgeRunFactory(judge__project=project)
    for claim, verdict in zip(claims, [S, N, S, "CONTRADICTED"], strict=True):
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict)
    data = SimpleNamespace(
        claim_ids=np.array([c.pk for c in claims]),
        claims=pd.DataFrame({"risk_category": ["none", "none", "high", "none"]}),
    )
    recorded = {"judge_verdict": S, "judge_run": run.pk}
    assert _queue_condition(project, recorded, data).tolist() == [True, False, True, False]
    recorded["risk_category"] = "none"
    assert _queue_condition(project, recorded, data).tolist() == [True, False, False, False]
    # A verdict without its run: which claims the queue could serve is unknown.
    no_run = {"judge_verdict": S}
    assert _queue_condition(project, no_run, data).tolist() == [False] * 4


# --- metrics.services.calibration: which recalibration, and from how many claims -----------


def test_lower_ece_picks_the_recalibration_with_the_smaller_ece():
    from metrics.services.calibration import _lower_ece

    assert _lower_ece({"raw": 0.2, "platt": 0.05, "isotonic": 0.1}) == "platt"
    assert _lower_ece({"raw": 0.2, "platt": 0.1, "isotonic": 0.05}) == "isotonic"
    assert _lower_ece({"raw": 0.2, "platt": math.nan, "isotonic": 0.3}) == "isotonic"
    assert _lower_ece({"raw": 0.2, "platt": math.nan, "isotonic": None}) == "raw"


def test_calibration_recalibrates_from_two_claims_in_two_answers_of_both_outcomes():
    import pandas as pd

    from metrics.services.calibration import _calibration

    conf = np.array([0.8, 0.3])
    block, _ = _calibration(
        confidence=conf,
        supported=np.array([1.0, 0.0]),
        answer_ids=np.array([1, 2]),
        claim_ids=np.array([10, 11]),
        all_confidence=conf,
        grounded_links=pd.DataFrame({"claim_id": [], "fact_id": []}),
        facts=pd.DataFrame({"answer_id": [], "fact_id": []}),
    )
    detail = block["detail"]
    # Two claims, two answers, one supported and one not: the rule's minimum, so enough, and
    # the recalibrations are fitted (out of fold: each claim by a fit on the other alone).
    assert (detail["n"], detail["answers"], detail["enough"]) == (2, 2, True)
    assert math.isfinite(block["ece"]["isotonic"])
    # Isotonic on one claim predicts its outcome: claim 0 gets 0, claim 1 gets 1, so the ECE
    # is (|0 − 1| + |1 − 0|)/2 = 1.
    assert block["ece"]["isotonic"] == pytest.approx(1.0)


# --- metrics.services.report / instruments: a report filtered to one system of two ---------


@pytest.mark.django_db
def test_report_of_one_system_names_it_and_audits_the_judge_on_its_claims_only():
    from annotate.models import System
    from metrics.services import report_compute

    project = ProjectFactory()
    records = []
    for i in range(6):
        # rag@1: two claims an answer, gold on both, the judge right on all but answer 0's second.
        said = [S, N] if i == 0 else [S, S]
        records.append(answer_record(f"q{i}", "rag@1", [(S, said[0]), (S, said[1])]))
        # rag@2: three claims an answer, judged, no gold.
        records.append(answer_record(f"q{i}", "rag@2", [(None, N), (None, N), (None, S)]))
    import_records(project, records)
    system = System.objects.get(project=project, name="rag", version="1")
    report = report_compute(project=project, judge=Judge.objects.get(name="j"), system=system)
    assert (report["system"]["name"], report["system"]["version"]) == ("rag", "1")
    judge = report["judge"]
    assert judge["n_judged"] == 12  # rag@1's 6 × 2 claims, not rag@2's 18
    assert judge["n_audited"] == 12
    assert judge["agreement"] == pytest.approx(11 / 12)
    assert "agreement_design_effect" in judge
    assert "stratified by" not in judge["method"]


@pytest.mark.django_db
def test_report_of_one_system_lists_only_the_instruments_used_on_its_claims():
    from annotate.models import Claim, System
    from judges.models import JudgeVerdict
    from metrics.services import report_compute
    from tests.factories import JudgeRunFactory

    project = ProjectFactory()
    records = [answer_record(f"q{i}", "rag@1", [(S, S), (S, N if i == 0 else S)]) for i in range(4)]
    records += [answer_record(f"q{i}", "rag@2", [(None, None)]) for i in range(4)]
    import_records(project, records)
    judge = Judge.objects.get(name="j")
    # A second instrument (model m-2, prompt p-2), used on rag@2's claims only.
    run = JudgeRunFactory(judge=judge, model="m-2", prompt_version="p-2")
    for claim in Claim.objects.filter(answer__system__version="2"):
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=N, confidence=0.6)
    system = System.objects.get(project=project, name="rag", version="1")
    report = report_compute(project=project, judge=judge, system=system)
    # rag@1 was judged by the imported instrument alone.
    assert [block["prompt_version"] for block in report["instruments"]] == ["imported"]
