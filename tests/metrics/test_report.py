"""The report against a planted project: every figure recomputed here from the planted lists.

Expected values come from hand counts and formulas written in this file (Wilson, Rogan–Gladen,
PPI++ in closed form, ECE); `metrics.stats` is only used where the test checks that the report
passed it the right arrays (the calibrators, the CRC cut, Lang–Reiczigel), with inputs built here.
"""

import json
import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotate.models import LabelHistory, Role
from annotate.services.labels import label_save
from judges.models import Judge
from metrics.services import report_build, report_compute, report_public
from tests.compare.builders import answer_record, import_records
from tests.factories import (
    ClaimFactory,
    JudgeFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)
from tests.metrics import independent as ref
from tests.metrics.factories_report import (
    A_DIFF,
    B_DIFF,
    CANARY,
    CONF,
    GOLD,
    JUDGE,
    REST,
    REST_CONF,
    TAGS,
    add_second_instrument,
    build_planted_project,
    read_only_scope,
    report_rolled_back,
)

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
wilson = ref.wilson


def assert_rate(block: dict, k: int, n: int) -> None:
    """An answer-level rate (abstention, answers with an unsupported claim): plain Wilson."""
    assert block["numerator"] == k
    assert block["denominator"] == n
    assert block["value"] == pytest.approx(k / n)
    assert block["ci"] == pytest.approx(wilson(k, n), abs=1e-9)


def assert_claim_rate(block: dict, outcome, answer_ids) -> None:
    """A claim-level rate: its interval clustered by answer (`ref.clustered_wilson`), since the
    planted answers hold four claims each (one stratum)."""
    outcome = [int(bool(v)) for v in outcome]
    assert block["numerator"] == sum(outcome)
    assert block["denominator"] == len(outcome)
    assert block["value"] == pytest.approx(sum(outcome) / len(outcome))
    assert block["ci"] == pytest.approx(ref.clustered_wilson(outcome, answer_ids), abs=1e-9)


def gold_rate(block: dict, indices, verdict: str) -> None:
    """The rate of `verdict` over the gold claims at `indices` (claim i is in answer i // 4)."""
    assert_claim_rate(block, [GOLD[i] == verdict for i in indices], [i // 4 for i in indices])


@pytest.fixture
def planted():
    return build_planted_project()


@pytest.fixture(scope=read_only_scope)
def report(django_db_setup, django_db_blocker):
    """The planted project's report, computed once for the module's read-only tests (the rows
    are rolled back at once; tests that change the project build their own)."""
    return report_rolled_back(build_planted_project, django_db_blocker)


def test_report_top_level_keys_and_valid_json(report):
    required = {
        "project", "computed_at", "claims", "faithfulness", "contradiction_rate",
        "answers_with_unsupported_rate", "abstention", "coverage", "citation_accuracy",
        "by_risk_category", "by_tag", "method", "judge", "labels_at_compute",
    }  # fmt: skip
    assert required <= set(report)
    assert {"pooled", "mean_per_answer"} <= set(report["faithfulness"])
    judge_keys = {
        "name", "prompt_version", "n_audited", "confusion", "agreement", "kappa", "sensitivity",
        "specificity", "naive_faithfulness", "debiased_faithfulness", "ppi_faithfulness",
        "gold_only_faithfulness", "headline_estimate", "ece", "crc",
    }  # fmt: skip
    assert judge_keys <= set(report["judge"])
    assert set(report["judge"]["sensitivity"]) >= {"value", "ci", "n"}
    assert set(report["judge"]["debiased_faithfulness"]) >= {"value", "ci", "method"}
    assert set(report["judge"]["ppi_faithfulness"]) >= {"value", "ci", "lambda"}
    assert set(report["judge"]["gold_only_faithfulness"]) >= {"value", "ci", "n"}
    assert set(report["judge"]["ece"]) == {"raw", "platt", "isotonic"}
    assert set(report["judge"]["crc"]) >= {
        "alpha",
        "lambda_hat",
        "retained",
        "realized_false_claim_rate",
    }
    json.dumps(report, allow_nan=False)
    assert not any(key.startswith("_") for key in report_public(report))


def test_report_gold_claim_rates(report):
    n = len(GOLD)
    assert report["claims"]["SUPPORTED"] == GOLD.count(S) == 29
    assert report["claims"]["CONTRADICTED"] == GOLD.count(C)
    assert report["claims"]["NOT_IN_PILE"] == GOLD.count(N)
    assert report["claims"]["total"] == n
    # Claims of the two abstention answers are counted apart, never as failures.
    assert report["claims"]["in_abstentions"] == 2
    assert report["claims"]["without_gold"] == len(REST)
    gold_rate(report["faithfulness"]["pooled"], range(n), S)
    gold_rate(report["contradiction_rate"], range(n), C)
    gold_rate(report["not_in_pile_rate"], range(n), N)
    per_answer = [GOLD[i : i + 4].count(S) / 4 for i in range(0, n, 4)]
    assert report["faithfulness"]["mean_per_answer"]["value"] == pytest.approx(np.mean(per_answer))
    unsupported = sum(1 for i in range(0, n, 4) if GOLD[i : i + 4].count(S) < 4)
    assert_rate(report["answers_with_unsupported_rate"], unsupported, 10)
    assert "29 claims" not in report["method"]["faithfulness"]
    assert "across 40 claims in 10 answers" in report["method"]["faithfulness"]


def test_report_abstention_split_by_answerable(report):
    abst = report["abstention"]
    assert abst["abstentions"] == 2
    assert abst["answers"] == 17
    assert_rate(abst["rate"], 2, 17)
    # Answers a0..a14: index % 3 == 0 answerable, 1 unanswerable, 2 unknown; x0, x1 abstain.
    answerable = sum(1 for i in range(15) if i % 3 == 0) + 1
    unanswerable = sum(1 for i in range(15) if i % 3 == 1) + 1
    assert_rate(abst["by_answerable"]["answerable"], 1, answerable)
    assert_rate(abst["by_answerable"]["unanswerable"], 1, unanswerable)
    assert abst["by_answerable"]["unknown"]["numerator"] == 0
    assert abst["by_answerable"]["unknown"]["denominator"] == 5


def test_report_coverage_citation_and_self_knowledge(report):
    # Facts: two in each of answers 0 and 1; only claim 0's quote (chars 0–20) overlaps one.
    coverage = report["coverage"]
    assert coverage["numerator"] == 1
    assert coverage["denominator"] == 4
    faith = GOLD.count(S) / 40
    assert coverage["f1"] == pytest.approx(2 * faith * 0.25 / (faith + 0.25))
    # Cited claims 0, 1, 3, 5; the citation run says SUPPORTED for 0, 1, 3.
    citation = report["citation_accuracy"]
    assert citation["status"] == "measured"
    assert citation["cited_claims"] == 4
    assert_claim_rate(citation, [1, 1, 1, 0], [0, 0, 0, 1])
    # Unfaithful gold claims marked: 3 yes, 6 no, 9 no, 12 yes (18 is "unknown").
    knowledge = report["self_knowledge"]
    ids = [i // 4 for i in range(40)]
    assert_claim_rate(knowledge["self_knowledge"], [i in (3, 12) for i in range(40)], ids)
    assert_claim_rate(knowledge["hallucination"], [i in (6, 9) for i in range(40)], ids)
    assert knowledge["unfaithful_claims"] == 40 - GOLD.count(S)
    assert knowledge["unmarked"] == knowledge["unfaithful_claims"] - 4


def test_report_self_knowledge_majority_of_marks_and_a_tie_is_unknown(planted):
    """A third analyst marks claims 3 "no" (with ana's "yes": a tie), 6 "no" (two "no") and
    12 "yes" (two "yes"): 12 is self-knowledge, 6 and 9 hallucination, 3 unknown."""
    from annotate.models import Label, Role

    cy = UserFactory(username="cy")
    MembershipFactory(project=planted.project, user=cy, role=Role.ANALYST)
    for index, mark in {3: "no", 6: "no", 12: "yes"}.items():
        Label.objects.create(
            claim=planted.claims[index], annotator=cy, verdict=GOLD[index], correct=mark
        )
    report = report_compute(project=planted.project, judge=planted.judge)
    unfaithful = 40 - GOLD.count(S)
    knowledge = report["self_knowledge"]
    ids = [i // 4 for i in range(40)]
    assert_claim_rate(knowledge["self_knowledge"], [i == 12 for i in range(40)], ids)
    assert_claim_rate(knowledge["hallucination"], [i in (6, 9) for i in range(40)], ids)
    assert knowledge["unmarked"] == unfaithful - 3
    health = report["by_risk_category"]["health"]["self_knowledge"]  # claims 0–19
    assert_claim_rate(health["self_knowledge"], [i == 12 for i in range(20)], ids[:20])
    assert_claim_rate(health["hallucination"], [i in (6, 9) for i in range(20)], ids[:20])


def test_report_by_risk_category_and_tag(report):
    by_risk = report["by_risk_category"]
    gold_rate(by_risk["health"]["faithfulness"]["pooled"], range(20), S)
    gold_rate(by_risk["legal"]["faithfulness"]["pooled"], range(20, 40), S)
    gold_rate(by_risk["legal"]["contradiction_rate"], range(20, 40), C)
    none = report["by_risk_category"]["none"]
    assert none["claims"]["total"] == 0
    assert none["faithfulness"]["pooled"]["value"] is None
    assert_rate(none["abstention"]["rate"], 2, 7)
    # The 20 unaudited claims are in answers 10–14 ("none"); every health claim has gold.
    assert none["claims_without_gold"] == len(REST)
    assert report["by_risk_category"]["health"]["claims_without_gold"] == 0
    assert report["by_risk_category"]["health"]["coverage"]["denominator"] == 4
    for tag in ("numeric", "negation", "multi-part"):
        indices = [i for i, tags in TAGS.items() if tag in tags]
        verdicts = [GOLD[i] for i in indices]
        block = report["by_tag"][tag]
        assert block["claims"]["total"] == len(indices)
        assert len(verdicts) == len(indices)
        gold_rate(block["faithfulness"]["pooled"], indices, S)
        gold_rate(block["not_in_pile_rate"], indices, N)


def _harmonic(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b else 0.0


def test_report_coverage_and_f1_by_risk_category_and_tag(report):
    # Facts: two in each of answers 0 and 1 (claims 0–7); only fact 1 of answer 0 is grounded
    # (claim 0's quote). Answers 0–4 are health, so health holds all four facts.
    health = report["by_risk_category"]["health"]["coverage"]
    assert (health["numerator"], health["denominator"], health["measured"]) == (1, 4, True)
    health_faith = GOLD[:20].count(S) / 20
    assert health["f1"] == pytest.approx(_harmonic(health_faith, 0.25))
    assert not report["by_risk_category"]["legal"]["coverage"]["measured"]
    # By tag: over the facts of the answers with at least one claim carrying the tag.
    facts_of_answer = {0: 2, 1: 2}
    grounded_of_answer = {0: 1}
    for tag in ("numeric", "negation", "multi-part"):
        indices = [i for i, tags in TAGS.items() if tag in tags]
        answers = {i // 4 for i in indices}
        n_facts = sum(facts_of_answer.get(a, 0) for a in answers)
        n_grounded = sum(grounded_of_answer.get(a, 0) for a in answers)
        coverage = report["by_tag"][tag]["coverage"]
        assert coverage["answers"] == len(answers)
        assert coverage["measured"] is bool(n_facts)
        assert coverage["numerator"] == n_grounded
        assert coverage["denominator"] == n_facts
        if n_facts:
            # Facts of one answer are clustered like its claims (answer 0: one of two grounded).
            facts = [
                (a, f == 0 and a in grounded_of_answer)
                for a in sorted(answers)
                for f in range(facts_of_answer.get(a, 0))
            ]
            if len(answers & set(facts_of_answer)) > 1:
                assert_claim_rate(coverage, [g for _, g in facts], [a for a, _ in facts])
            else:  # one answer's facts: no between-answer spread to measure, still an interval
                assert coverage["ci"][0] <= coverage["value"] <= coverage["ci"][1]
            faith = [GOLD[i] for i in indices].count(S) / len(indices)
            assert coverage["f1"] == pytest.approx(_harmonic(faith, n_grounded / n_facts))
        else:
            assert coverage["value"] is None
    # numeric: answers 0, 2, 4, 6 → answer 0's two facts, one grounded; negation: answers
    # 1, 2, 3 → answer 1's two facts, none grounded; multi-part: answer 4, no facts.
    assert report["by_tag"]["numeric"]["coverage"]["value"] == pytest.approx(0.5)
    assert report["by_tag"]["negation"]["coverage"]["value"] == 0.0
    assert (
        "answers that have at least one claim with the tag" in report["method"]["coverage_by_tag"]
    )


def test_report_analysts_alpha_agreement_and_kappas(report):
    a = [A_DIFF.get(i, GOLD[i]) for i in range(40)]
    b = [B_DIFF.get(i, GOLD[i]) for i in range(20)]
    code = {S: 0, C: 1, N: 2}
    matrix = np.array([[code[v] for v in a[:20]], [code[v] for v in b]], dtype=float)
    expected_alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    analysts = report["analysts"]
    assert analysts["krippendorff_alpha"] == pytest.approx(expected_alpha)
    rows = {row["annotator"]: row for row in analysts["per_analyst"]}
    assert rows["ana"]["n"] == 40
    assert rows["ana"]["agreement"] == pytest.approx(36 / 40)
    assert rows["ana"]["kappa"] == pytest.approx(cohen_kappa_score(a, GOLD))
    assert rows["bob"]["agreement"] == pytest.approx(17 / 20)
    pair = analysts["pairwise"][0]
    assert pair["n"] == 20
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(a[:20], b))
    assert analysts["human_human_kappa"] == pytest.approx(cohen_kappa_score(a[:20], b))
    assert analysts["human_pairs"] == 20  # claims 0–19, labelled by ana and bob


def _judge_expectations():
    """The judge's newest parseable verdicts: claim 2's newer run, claim 1's older verdict."""
    gold = np.array(GOLD)
    judge = np.array(JUDGE)
    return gold, judge


def test_report_judge_confusion_agreement_and_asymmetry(report):
    gold, judge = _judge_expectations()
    block = report["judge"]
    assert block["name"] == "lenient"
    assert block["prompt_version"] == "p-1"
    assert block["model"] == "m-1"
    assert block["n_audited"] == 40
    assert block["n_judged"] == 60
    assert block["unparseable"] == 1
    order = [S, C, N]
    expected = [[int(np.sum((gold == g) & (judge == j))) for j in order] for g in order]
    assert block["confusion"]["matrix"] == expected
    agree = int(np.sum(gold == judge))
    assert block["agreement"] == pytest.approx(agree / 40)
    assert block["agreement_ci"] == pytest.approx(
        ref.clustered_wilson(gold == judge, [i // 4 for i in range(40)])
    )
    assert block["kappa"] == pytest.approx(cohen_kappa_score(gold, judge))
    over = int(np.sum((judge == S) & (gold != S)))
    under = int(np.sum((judge != S) & (gold == S)))
    assert block["asymmetry"]["judge_supported_gold_not"]["count"] == over
    assert block["asymmetry"]["judge_supported_gold_not"]["rate"] == pytest.approx(over / 11)
    assert block["asymmetry"]["gold_supported_judge_not"]["count"] == under
    assert block["gold_sources"] == {"unanimous": 36, "adjudicated": 4}
    assert block["canary"]["pass_rate"]["value"] == pytest.approx(
        CANARY.count(N) / (len(CANARY) - 1)
    )
    # Agreement is 85%: no warning; the human ceiling is the analysts' pooled kappa.
    assert block["agreement_warning"] is None
    assert block["human_kappa_ceiling"] == report["analysts"]["human_human_kappa"]


def _cr1_mean_variance(x, answer_ids) -> float:
    """CR1 variance of a claim mean clustered by answer, by hand: G/(G−1)·Σ_g (Σ_i (x_i − x̄))²/n²."""
    x = np.asarray(x, dtype=float)
    sums = {}
    for value, answer in zip(x - x.mean(), answer_ids, strict=True):
        sums[answer] = sums.get(answer, 0.0) + value
    g = len(sums)
    return g / (g - 1) * sum(v**2 for v in sums.values()) / x.size**2


def _clustered_ppi_ci(y, fg, fr, ids, rest_ids):
    """PPI++ point and λ by ppi_py; the interval by hand, the rectifier and the judge's mean on
    the unaudited claims each clustered by answer, t with G − 1 df (G audited answers)."""
    from scipy.stats import t as student_t

    theta, _, lam = ref.ppi(y, fg, fr)
    var = _cr1_mean_variance(y - lam * fg, ids) + lam**2 * _cr1_mean_variance(fr, rest_ids)
    half = student_t.ppf(0.975, len(set(ids.tolist())) - 1) * math.sqrt(var)
    return theta, (max(theta - half, 0.0), min(theta + half, 1.0)), lam


def test_report_judge_sensitivity_specificity_and_three_estimates(report):
    from scipy.stats import t as student_t

    from metrics import stats

    gold, judge = _judge_expectations()
    block = report["judge"]
    ids = np.arange(40) // 4
    rest_ids = 10 + np.arange(20) // 4
    tp = int(np.sum((gold == S) & (judge == S)))
    pos = int(np.sum(gold == S))
    tn = int(np.sum((gold != S) & (judge != S)))
    neg = int(np.sum(gold != S))
    assert block["sensitivity"]["n"] == pos
    assert block["specificity"]["n"] == neg
    assert block["sensitivity"]["value"] == pytest.approx(tp / pos)
    # Clustered by answer: the planted answers hold four claims each.
    positive, negative = gold == S, gold != S
    assert block["sensitivity"]["ci"] == pytest.approx(
        ref.clustered_wilson(judge[positive] == S, ids[positive])
    )
    assert block["specificity"]["ci"] == pytest.approx(
        ref.clustered_wilson(judge[negative] != S, ids[negative])
    )
    se, sp = tp / pos, tn / neg
    assert block["youden_j"] == pytest.approx(se + sp - 1)

    judged_supported = list(JUDGE).count(S) + REST.count(S)
    p_obs = judged_supported / 60
    assert block["naive_faithfulness"] == pytest.approx(p_obs)
    rg = min(max((p_obs + sp - 1) / (se + sp - 1), 0.0), 1.0)
    assert block["debiased_faithfulness"]["value"] == pytest.approx(rg)
    # The clustered Lang–Reiczigel interval, given the arrays built here (its arithmetic is
    # checked against statsmodels and Reiczigel's script in tests/metrics/stats/test_design.py).
    judge_all = np.array([v == S for v in list(JUDGE) + REST], dtype=float)
    expected_rg = stats.design_rogan_gladen(
        judge_all,
        np.concatenate([ids, rest_ids]),
        (gold == S).astype(float),
        judge_all[:40],
        ids,
    )
    rg_ci = list(expected_rg.ci)
    assert block["debiased_faithfulness"]["ci"] == pytest.approx(rg_ci)
    assert "Lang–Reiczigel" in block["debiased_faithfulness"]["method"]

    # PPI++: point and λ by ppi_py on the judge's confidences; the interval by hand with the
    # rectifier and the judge's mean each clustered by answer, t with G − 1 = 9 df.
    y = (gold == S).astype(float)
    theta, _, lam = ref.ppi(y, np.array(CONF), np.array(REST_CONF))
    assert block["ppi_faithfulness"]["lambda"] == pytest.approx(lam)
    assert block["ppi_faithfulness"]["value"] == pytest.approx(theta)
    var = _cr1_mean_variance(y - lam * np.array(CONF), ids) + lam**2 * _cr1_mean_variance(
        REST_CONF, rest_ids
    )
    half = student_t.ppf(0.975, 9) * math.sqrt(var)
    ci = (theta - half, theta + half)
    assert block["ppi_faithfulness"]["ci"] == pytest.approx(list(ci))

    gold_only_ci = ref.clustered_wilson(gold == S, ids)
    assert block["gold_only_faithfulness"]["n"] == 40
    assert block["gold_only_faithfulness"]["value"] == pytest.approx(pos / 40)
    assert block["gold_only_faithfulness"]["ci"] == pytest.approx(gold_only_ci)

    widths = {
        "gold_only": gold_only_ci[1] - gold_only_ci[0],
        "rogan_gladen": rg_ci[1] - rg_ci[0],
        "ppi": ci[1] - ci[0],
    }
    assert min(widths, key=widths.get) == "ppi"
    assert block["headline_estimate"] == "ppi_faithfulness"
    j = se + sp - 1
    assert 0 < j < 0.5  # a weak judge: the reason says why Rogan–Gladen is not the headline
    assert block["headline_reason"] == (
        f"The judge is barely better than chance (J = {j:.2f}): its correction is too uncertain "
        f"(±{widths['rogan_gladen'] / 2:.2f}); "
        f"PPI++ is the narrowest valid interval (±{widths['ppi'] / 2:.2f}): the judge's verdicts "
        "on the unaudited claims, corrected by its errors on the audit sample, add information "
        f"beyond the audit sample alone (±{widths['gold_only'] / 2:.2f})."
    )


def test_report_calibration_out_of_fold_grouped_by_answer(report):
    # Out-of-fold calibrations by scikit-learn on the seeded answer folds; ECE by definition.
    y = (np.array(GOLD) == S).astype(float)
    conf = np.array(CONF)
    answers = np.repeat(np.arange(10), 4)
    block = report["judge"]
    assert block["ece"]["raw"] == pytest.approx(ref.ece(conf, y))
    eces = {m: ref.ece(ref.out_of_fold(conf, y, answers, m), y) for m in ref.FITS}
    for method, value in eces.items():
        assert block["ece"][method] == pytest.approx(value, abs=1e-6)
    raw_bins = block["calibration"]["bins"]["raw"]
    assert sum(row["count"] for row in raw_bins) == 40
    assert min(eces, key=eces.get) == "isotonic"
    assert block["calibration"]["used_for_frontier"] == "isotonic"


def test_report_frontier_and_crc_on_seeded_answer_split(report):
    """Ten audited answers: five calibrate, and at α = 0.10 the budget (5 + 1)·0.10 − 1 < 0, so
    no cut certifies α and nothing is kept (`test_report_crc.py` has a project whose cut is
    finite)."""
    block = report["judge"]
    y = np.array(GOLD) == S
    answers = np.repeat(np.arange(10), 4)
    calibrated = np.round(ref.out_of_fold(np.array(CONF), y.astype(float), answers, "isotonic"), 4)
    # The frontier at τ = 0 keeps everything: faithfulness = the gold rate.
    first = block["frontier"][0]
    assert first["tau"] == 0.0
    assert first["claims_retained"] == 40
    assert first["faithfulness"] == pytest.approx(y.mean())
    for row in block["frontier"]:
        keep = calibrated >= row["tau"]
        assert row["claims_retained"] == int(keep.sum())
    assert any(0 < row["claims_retained"] < 40 for row in block["frontier"])
    calibration_answers = sorted(np.random.default_rng(0).permutation(10)[:5].tolist())
    cal = [calibrated[answers == a] for a in calibration_answers]
    assert math.isinf(ref.crc_cut(cal, [y[answers == a] for a in calibration_answers], 0.10))
    crc = block["crc"]
    assert crc["alpha"] == 0.10
    assert (crc["calibration_answers"], crc["test_answers"]) == (5, 5)
    assert crc["lambda_hat"] is None
    assert crc["retains_nothing"]
    assert (crc["retained"], crc["test_claims"], crc["retained_all_judged"]) == (0, 20, 0)
    assert crc["realized_false_claim_rate"] == 0.0
    assert "expectation over the calibration draw" in crc["caveat"]


def test_report_failures_by_tag_and_risk(report):
    gold, judge = _judge_expectations()
    failures = report["judge"]["failures"]
    by_tag = {row["group"]: row for row in failures["by_tag"]}
    numeric = [i for i, tags in TAGS.items() if "numeric" in tags]
    assert by_tag["numeric"]["n"] == len(numeric)
    assert by_tag["numeric"]["agreement"] == pytest.approx(np.mean(gold[numeric] == judge[numeric]))
    by_risk = {row["group"]: row for row in failures["by_risk_category"]}
    assert by_risk["health"]["agreement"] == pytest.approx(np.mean(gold[:20] == judge[:20]))
    agreements = [row["agreement"] for row in failures["by_risk_category"]]
    assert agreements == sorted(agreements)  # worst first


def test_report_each_instrument_audited_apart(planted):
    add_second_instrument(planted)
    report = report_compute(project=planted.project, judge=planted.judge)
    versions = [block["prompt_version"] for block in report["instruments"]]
    assert versions == ["p-2", "p-1"]  # the newest instrument first, and it is `judge`
    assert report["judge"]["prompt_version"] == "p-2"
    assert report["judge"]["n_audited"] == 8
    assert report["judge"]["n_judged"] == 8
    # p-2 says SUPPORTED for claims 0–7: agreement = gold-SUPPORTED share of those, < 80%.
    share = GOLD[:8].count(S) / 8
    assert report["judge"]["agreement"] == pytest.approx(share)
    assert "not measuring this project's definition" in report["judge"]["agreement_warning"]
    assert report["instruments"][1]["n_audited"] == 40


def test_report_names_the_newest_instrument_even_with_a_single_verdict(planted):
    """Kills `judge_audit._identity`'s `iloc[+1]` for `iloc[-1]` (MUTATION.md): the judge has
    verdicts from two prompt versions, the newest (model m-9, prompt p-9, backend openai) on one
    claim only. Each block must name its own instrument, and the newest is the report's judge."""
    from judges.models import JudgeVerdict
    from tests.factories import JudgeRunFactory

    run = JudgeRunFactory(judge=planted.judge, prompt_version="p-9", model="m-9", backend="openai")
    JudgeVerdict.objects.create(run=run, claim=planted.claims[0], verdict=S, confidence=0.8)
    report = report_compute(project=planted.project, judge=planted.judge)
    named = [
        (block["model"], block["prompt_version"], block["backend"])
        for block in report["instruments"]
    ]
    assert named == [("m-9", "p-9", "openai"), ("m-1", "p-1", planted.judge.backend)]
    judge = report["judge"]
    assert (judge["model"], judge["prompt_version"]) == ("m-9", "p-9")
    assert judge["instrument"] == f"{planted.judge.name} · m-9 · prompt p-9"
    assert judge["n_judged"] == 1


def test_report_empty_project_is_valid_json_with_nulls():
    project = ProjectFactory()
    judge = JudgeFactory(project=project)
    report = report_compute(project=project, judge=judge)
    text = json.dumps(report, allow_nan=False)
    assert report["claims"]["total"] == 0
    assert report["faithfulness"]["pooled"]["value"] is None
    assert report["faithfulness"]["pooled"]["ci"] == [None, None]
    assert report["coverage"]["value"] is None
    assert not report["coverage"]["measured"]
    assert report["citation_accuracy"]["status"] == "not measured"
    assert "Not measured" in report["method"]["citation_accuracy"]
    assert report["judge"]["n_audited"] == 0
    assert report["judge"]["kappa"] is None
    assert report["judge"]["headline_estimate"] is None
    assert report["judge"]["crc"]["lambda_hat"] is None
    assert "NaN" not in text


def test_report_large_audit_stores_a_grid_of_crc_cuts(planted, monkeypatch):
    from metrics import services

    monkeypatch.setattr(services.conformal, "CRC_INPUTS_MAX_CLAIMS", 10)
    built = report_build(project=planted.project, judge=planted.judge)
    report, inputs = built.data, built.crc_inputs[0]
    assert not any(key.startswith("_") for key in report)
    assert "confidence" not in inputs  # no per-claim arrays in the snapshot
    assert set(inputs["grid"]) == {f"{a:.2f}" for a in services.CRC_ALPHA_GRID}
    assert inputs["grid"]["0.10"] == report["judge"]["crc"]
    snapped = services.crc_from_inputs(inputs, alpha=0.22)
    assert snapped["alpha"] == 0.2
    assert snapped["alpha_snapped"]
    assert snapped["alpha_requested"] == 0.22


def test_report_judge_without_confidences_uses_its_verdicts_for_ppi(planted):
    from judges.models import JudgeVerdict

    JudgeVerdict.objects.filter(run__judge=planted.judge).update(confidence=None)
    report = report_compute(project=planted.project, judge=planted.judge)
    json.dumps(report, allow_nan=False)
    block = report["judge"]
    y = (np.array(GOLD) == S).astype(float)
    fg = (np.array(JUDGE) == S).astype(float)
    fr = (np.array(REST) == S).astype(float)
    ids, rest_ids = np.arange(40) // 4, 10 + np.arange(20) // 4
    theta, ci, lam = _clustered_ppi_ci(y, fg, fr, ids, rest_ids)
    assert block["ppi_faithfulness"]["lambda"] == pytest.approx(lam)
    assert block["ppi_faithfulness"]["value"] == pytest.approx(theta)
    assert block["ppi_faithfulness"]["ci"] == pytest.approx(list(ci))
    # Nothing to calibrate: the ECEs, the frontier and the CRC cut are empty, not invented.
    assert block["ece"] == {"raw": None, "platt": None, "isotonic": None}
    assert block["calibration"]["n"] == 0
    assert block["crc"]["lambda_hat"] is None
    assert block["crc"]["retained"] == 0


def test_report_leaves_out_judge_verdicts_made_on_a_claims_previous_text(planted):
    """A lead rewrites claims 0 and 10 (adjudicated gold, so their gold stands) and an unaudited
    claim: the judge's verdicts on the old texts drop out of every judge figure."""
    from annotate.services.claims import claim_edit
    from metrics.services import audit_card

    edited, edited_rest = [0, 10], [0]
    for index in edited:
        claim_edit(claim=planted.claims[index], text=f"Rewritten claim {index}.", user=planted.lead)
    for index in edited_rest:
        claim_edit(claim=planted.rest[index], text="Rewritten unaudited claim.", user=planted.lead)
    report = report_compute(project=planted.project, judge=planted.judge)
    block = report["judge"]

    keep = np.array([i not in edited for i in range(40)])
    keep_rest = np.array([i not in edited_rest for i in range(len(REST))])
    gold, judge = np.array(GOLD)[keep], np.array(JUDGE)[keep]
    rest = np.array(REST)[keep_rest]
    assert block["n_audited"] == 38
    assert block["n_judged"] == 57
    assert block["stale_verdicts"] == 3
    assert "3 verdicts made on a claim's previous text" in block["method"]
    order = [S, C, N]
    expected = [[int(np.sum((gold == g) & (judge == j))) for j in order] for g in order]
    assert block["confusion"]["matrix"] == expected
    assert block["agreement"] == pytest.approx(np.mean(gold == judge))
    assert block["kappa"] == pytest.approx(cohen_kappa_score(gold, judge))
    judged_supported = int(np.sum(judge == S) + np.sum(rest == S))
    assert block["naive_faithfulness"] == pytest.approx(judged_supported / 57)
    # PPI++ by ppi_py on the remaining confidences.
    y = (gold == S).astype(float)
    theta, ci, _ = _clustered_ppi_ci(
        y,
        np.array(CONF)[keep],
        np.array(REST_CONF)[keep_rest],
        (np.arange(40) // 4)[keep],
        (10 + np.arange(20) // 4)[keep_rest],
    )
    assert block["ppi_faithfulness"]["value"] == pytest.approx(theta)
    assert block["ppi_faithfulness"]["ci"] == pytest.approx(list(ci))
    # Claim 0 was cited: its citation verdict judged the old text too. Left: 1, 3 (S), 5 (N).
    assert_claim_rate(report["citation_accuracy"], [1, 1, 0], [0, 0, 1])
    card = audit_card(report=report)
    assert card["stale_verdicts_left_out"] == 3
    assert card["audit_sample_size"] == 38
    # Gold itself is untouched by the judge's staleness: 40 gold claims, as before.
    assert report["claims"]["total"] == 40


def test_report_names_an_instrument_whose_every_verdict_went_stale(planted):
    """A second prompt version judged 8 claims, then a lead edited all 8: that instrument has
    no verdict left to audit. It is not audited, and it is not silently gone: the report, its
    method text and the audit card name it with its count."""
    from judges.models import JudgeVerdict
    from metrics.services import audit_card
    from tests.metrics.factories_report import add_second_instrument

    add_second_instrument(planted)
    JudgeVerdict.objects.filter(run__judge=planted.judge, run__prompt_version="p-2").update(
        stale=True
    )
    report = report_compute(project=planted.project, judge=planted.judge)
    json.dumps(report, allow_nan=False)
    assert [(i["model"], i["prompt_version"]) for i in report["instruments"]] == [("m-1", "p-1")]
    assert report["instruments_left_out"] == [
        {"model": "m-1", "prompt_version": "p-2", "stale_verdicts": 8}
    ]
    assert "model m-1, prompt p-2: 8 verdicts" in report["method"]["judge_audit"]
    assert audit_card(report=report)["instruments_left_out_all_stale"] == [
        "model m-1, prompt p-2: 8 verdicts"
    ]


def test_report_leaves_nothing_out_while_every_instrument_has_current_verdicts(planted):
    from tests.metrics.factories_report import add_second_instrument

    add_second_instrument(planted)
    report = report_compute(project=planted.project, judge=planted.judge)
    assert len(report["instruments"]) == 2
    assert report["instruments_left_out"] == []
    assert "Left out" not in report["method"]["judge_audit"]


def test_report_lists_a_risk_category_that_has_only_an_abstention(planted):
    from tests.factories import AnswerFactory

    AnswerFactory(project=planted.project, risk_category="safety", abstention=True)
    report = report_compute(project=planted.project, judge=planted.judge)
    safety = report["by_risk_category"]["safety"]
    assert safety["claims"]["total"] == 0
    assert_rate(safety["abstention"]["rate"], 1, 1)
    assert "financial" not in report["by_risk_category"]  # no answer, no claim: not listed


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


def test_labels_at_compute_is_this_projects_newest_label_not_any_projects():
    planted = build_planted_project()
    claim = ClaimFactory(answer=planted.answers[0])
    label_save(claim=claim, annotator=planted.analyst, verdict="NOT_IN_PILE")
    own = LabelHistory.objects.filter(claim__project=planted.project).order_by("-id").first().id
    elsewhere = MembershipFactory(role=Role.ANALYST)
    for _ in range(3):
        other = ClaimFactory(answer__project=elsewhere.project)
        label_save(claim=other, annotator=elsewhere.user, verdict="NOT_IN_PILE")
    newest = LabelHistory.objects.order_by("-id").first().id
    assert newest > own
    report = report_compute(project=planted.project)
    assert report["labels_at_compute"] == own
    assert report_compute(project=elsewhere.project)["labels_at_compute"] == newest
