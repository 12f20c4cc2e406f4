"""Tests for the survivors of the seventh session's second mutation sample (seed 22,
tests/MUTATION.md), written after that run had reached them: outside mutmut's selection while the
run went on (mutmut recopies tests/ at every chunk), in it afterwards. Expected figures by hand
or by scipy, never by the function under test."""

import pytest

from metrics.services import report_compute

# --- active and paired: a missing standard deviation, the difference's clip -----------------


def test_inclusion_probabilities_refuse_a_missing_sd_with_a_clear_error():
    """active `inclusion_probabilities` `_6` (`np.asarray(list(error_sd))` without
    `dtype=float`: a None among the standard deviations gave NumPy's TypeError from `isnan` on
    an object array instead of the function's own message)."""
    from metrics import stats

    with pytest.raises(ValueError, match=r"^error_sd contains NaN or infinite values"):
        stats.inclusion_probabilities([0.1, None, 0.3], 1)


def test_paired_difference_interval_is_clipped_to_minus_one_one():
    """paired `_finish` `_58` (the upper end clipped at 2 for 1). Two questions, one unit each:
    A 0, 0 and B 1, 0: D = 0.5, SE = |1 − 0|/2 = 0.5 by hand, t₀.₉₇₅,₁ = 12.7 (scipy): the
    interval 0.5 ± 6.35 clipped to [−1, 1], a difference of two shares."""
    import numpy as np

    from metrics.stats.paired import paired_gold_difference

    est = paired_gold_difference(
        np.array([0.0, 0.0, 1.0, 0.0]), np.array([0, 0, 1, 1]), np.array(["q1", "q2", "q1", "q2"])
    )
    assert est.value == pytest.approx(0.5)
    assert est.std_error == pytest.approx(0.5)
    assert est.ci == (-1.0, 1.0)


# --- active: the selective-judging sentence names its level -------------------------------------


@pytest.mark.parametrize(("delta", "level"), [(0.1, 90), (0.05, 95)])
def test_selective_threshold_sentence_names_the_lower_bounds_level(delta, level):
    """active `selective_threshold` `_241` (the bound's level written as (2 − δ)·100%). 300
    audited claims, all agreeing, confidences 0.5–1: every cut certifies, the lowest is chosen;
    the exact one-sided lower bound of 300 of 300 at level 1 − δ is δ^(1/300) by hand (99.2%,
    99.0%)."""
    import numpy as np

    from metrics import stats

    result = stats.selective_threshold(
        np.linspace(0.5, 1, 300), np.ones(300, bool), target=0.9, delta=delta
    )
    assert result.threshold == 0.5
    assert result.n_accepted == 300  # confidence ≥ 0.5: all (kills `_108`, side "left")
    assert "(100% of audited claims;" in result.method  # kills `_234` (101·m/n)
    bound = 100 * delta ** (1 / 300)
    assert f"agreement 100.0%, lower {level}% bound {bound:.1f}%)" in result.method


def test_selective_threshold_refuses_a_delta_of_zero():
    """active `selective_threshold` `_41` (`0 <= delta`: δ = 0, a bound holding with certainty,
    accepted)."""
    import numpy as np

    from metrics import stats

    with pytest.raises(ValueError, match=r"^delta must be strictly between 0 and 1, got 0"):
        stats.selective_threshold(np.linspace(0.5, 1, 30), np.ones(30, bool), target=0.9, delta=0)


# --- conformal: fact coverage with several links per fact ----------------------------------------


def test_frontier_coverage_counts_each_fact_once_by_hand():
    """conformal `_facts_table` `_168` (`key[:-2]` for `key[:-1]`: with four or more supported
    fact links the arrays differ in length and the frontier fails; the old tests had three).
    Answer 1: claims at 0.9, 0.6, 0.3, all supported, grounding {a}, {a, b}, {c}, 3 facts;
    answer 2: 0.8 supported grounding {x}, 0.4 unsupported grounding {x}, 1 fact. Coverage
    (facts grounded by a kept supported claim / 4) by hand: τ = 0: 4/4; 0.5: a, b, x = 3/4;
    0.85: a = 1/4; 0.95: 0."""
    from metrics import stats

    table = stats.frontier(
        [[0.9, 0.6, 0.3], [0.8, 0.4]],
        [[1, 1, 1], [1, 0]],
        [[["a"], ["a", "b"], ["c"]], [["x"], ["x"]]],
        cuts=[0.0, 0.5, 0.85, 0.95],
        facts_total=[3, 1],
    )
    assert table["coverage"].tolist() == pytest.approx([1.0, 0.75, 0.25, 0.0])


# --- design: the cluster bootstrap drawn in small blocks ----------------------------------------


def test_cluster_bootstrap_in_blocks_smaller_than_the_resamples_is_the_plain_bootstrap():
    """design `cluster_bootstrap` `_102` (`n_boot + done` for `n_boot − done`: the last block
    overran the draws when `chunk` holds fewer than n_boot resamples). 10 answers of 3 claims,
    chunk = 30 index cells (3 resamples a block), 10 resamples: the percentile interval equals
    one computed here from the same generator's 10 × 10 draws of answers (numpy's stream does
    not depend on the block size)."""
    import numpy as np

    from metrics.stats.design import cluster_bootstrap

    y = np.array(
        [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1.0]
    )
    ids = np.repeat(np.arange(10), 3)
    est = cluster_bootstrap(y, answer_ids=ids, n_boot=10, seed=3, chunk=30)
    idx = np.random.default_rng(3).integers(0, 10, size=(10, 10))
    per_answer = np.bincount(ids, y, 10)
    draws = per_answer[idx].sum(axis=1) / 30
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert est.value == pytest.approx(y.mean())
    assert est.ci == (pytest.approx(lo), pytest.approx(hi))


# --- compare: the pairwise block of the judge asked for ------------------------------------------


@pytest.mark.django_db
def test_compare_pairwise_block_is_the_chosen_judges_not_the_newest():
    """compare `_pairwise_block` `_7` (the judge not passed: the newest pairwise run of any
    judge was shown). Judge "old" judged 2 pairs, B first both times ("first", "first") and A
    first ("second", "second"): B preferred in 2 of 2; judge "new", run later, the opposite. The
    comparison asked for "old" shows old's block, P(B preferred) = 1 by hand."""
    from judges.models import JudgeRun, PairwiseVerdict
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records
    from tests.factories import JudgeFactory, JudgeRunFactory, ProjectFactory

    project = ProjectFactory()
    import_records(
        project,
        [
            answer_record(f"q{i}", s, [("SUPPORTED", None)])
            for i in (1, 2)
            for s in ("rag@1", "rag@2")
        ],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    for name, (b_first, a_first) in (("old", ("first", "second")), ("new", ("second", "first"))):
        judge = JudgeFactory(project=project, name=name)
        run = JudgeRunFactory(
            judge=judge,
            kind=JudgeRun.Kind.PAIRWISE,
            parameters={"system_a": a.pk, "system_b": b.pk},
        )
        for q in ("q1", "q2"):
            for order, verdict in (("b_first", b_first), ("a_first", a_first)):
                PairwiseVerdict.objects.create(
                    run=run, judge=judge, question_id=q, system_a=a, system_b=b,
                    order=order, verdict=verdict,
                )  # fmt: skip
    old = JudgeRun.objects.get(judge__name="old")
    pw = systems_compare(project=project, a=a, b=b, judge=old.judge)["pairwise"]
    assert (pw["judge"], pw["run_id"], pw["n_pairs"]) == ("old", old.pk, 2)
    assert pw["preference_b"]["value"] == 1.0


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


# --- audit_design: a stratum drawn by a run's verdict names the run --------------------------------


def test_stratum_name_of_a_queue_by_a_runs_verdict_names_the_run():
    """audit_design `_stratum_name` `_23` (the ", run N" suffix read from a misspelt key: never
    written). By hand from the recorded queue condition."""
    from metrics.services.audit_design import _stratum_name

    recorded = {"judge": "lenient", "judge_verdict": "SUPPORTED", "judge_run": 7}
    assert _stratum_name(recorded) == "judge lenient verdict SUPPORTED, run 7"
    assert _stratum_name({"judge": "lenient", "judge_verdict": "SUPPORTED"}) == (
        "judge lenient verdict SUPPORTED"
    )
    assert _stratum_name({"risk_category": "health", **recorded}) == (
        "risk category health; judge lenient verdict SUPPORTED, run 7"
    )


# --- calibration: the report applies Platt when Platt is chosen ----------------------------------


def test_apply_calibrator_platt_is_platts_sigmoid_by_scikit_learn():
    """calibration `_apply_calibrator` `_17` (`method == "platt" and False`: isotonic applied
    where the report chose Platt). 40 audited claims; the calibrated confidences of 6 judged
    claims (one missing) against Platt's fit by scikit-learn (tests.metrics.independent)."""
    import math

    import numpy as np

    from metrics.services.calibration import _apply_calibrator
    from tests.metrics import independent as ref

    rng = np.random.default_rng(2)
    y = (rng.random(40) < 0.6).astype(float)
    c = np.clip(np.where(y > 0, 0.7, 0.4) + rng.normal(0, 0.15, 40), 0, 1)
    values = np.array([0.1, 0.35, math.nan, 0.5, 0.8, 0.95])
    out = _apply_calibrator("platt", c, y, values)
    expected = ref.platt_fit(c, y)(values[[0, 1, 3, 4, 5]])
    assert math.isnan(out[2])
    assert out[[0, 1, 3, 4, 5]] == pytest.approx(expected, abs=1e-6)


# --- summary: a figure without an interval says so -------------------------------------------------


def test_dashboard_summary_of_a_figure_without_an_interval_says_no_interval():
    """summary `_faithfulness` `_81` (`text -=`: a pooled figure without an interval made the
    summary fail). By hand: 2/3 → 67%, from 3 gold claims."""
    from metrics.services.summary import dashboard_summary

    report = {"claims": {"total": 3}, "faithfulness": {"pooled": {"value": 2 / 3, "ci": None}}}
    faith = dashboard_summary(report=report, audit=None)["faithfulness"]
    assert faith["text"] == "About 67% of claims are supported (from 3 gold claims; no interval)."
    assert (faith["low"], faith["high"]) == (None, None)


# --- active: today's constant-π figure has design effect 1 ----------------------------------------


def test_active_ppi_mean_constant_pi_one_claim_per_answer_has_design_effect_one():
    """active `_uniform_today` `_93` (the design effect None for 1.0 in the constant-π PPI++
    branch: one claim per answer is a simple random sample, design effect 1 by definition)."""
    import numpy as np

    from metrics import stats

    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.7).astype(float)
    f = np.clip(np.where(y > 0, 0.8, 0.3) + rng.normal(0, 0.1, 60), 0, 1)
    labelled = np.r_[np.ones(40, bool), np.zeros(20, bool)]
    est = stats.active_ppi_mean(np.where(labelled, y, np.nan), labelled, f, np.full(60, 0.5))
    assert est.design_effect == 1.0
    wilson = stats.active_ppi_mean(np.where(labelled, y, np.nan), labelled, None, np.full(60, 0.5))
    assert wilson.design_effect == 1.0


# --- by_category: the per-category PPI++ has no single λ ----------------------------------------


@pytest.mark.django_db
def test_per_category_ppi_has_no_single_lambda():
    """by_category `category_correction` `_37` (its `"lambda": None` written under another key:
    the per-category PPI++ kept a λ that belongs to no single category). The drifting judge of
    test_report_by_category.py (specificity 0.5 on health, 1.0 on legal)."""
    from tests.metrics.test_report_by_category import _project

    project, judge = _project(health_sp_hits=10)
    block = report_compute(project=project, judge=judge)["judge"]
    assert block["error_rates_by_risk_category"]["correction"] == "per_category"
    assert block["ppi_faithfulness"]["lambda"] is None
    assert "LAMBDA" not in block["ppi_faithfulness"]


# --- audit_design: one label outside the queue is singular --------------------------------------


def test_outside_queue_sentence_for_one_label_is_singular():
    """audit_design `outside_queue_sentence` `_29` ("IS" for "is")."""
    import numpy as np

    from metrics.services.audit_design import AuditDesign, outside_queue_sentence

    one = AuditDesign(stratum=np.zeros(0, np.int64), names=[], outside_queue_labels=1)
    assert outside_queue_sentence(one) == "1 label made outside the queue is not in the audit."
    two = AuditDesign(stratum=np.zeros(0, np.int64), names=[], outside_queue_labels=2)
    assert outside_queue_sentence(two) == "2 labels made outside the queue are not in the audit."


@pytest.mark.django_db
def test_compare_pairwise_block_with_one_complete_pair_has_no_estimate_yet():
    """compare `_pairwise_block` `_95` (the `a_first` key renamed in the block of fewer than two
    complete pairs). One pair judged in both orders: no preference, no bias, both single-order
    figures None, and the finding says 2 are needed."""
    from judges.models import JudgeRun, PairwiseVerdict
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records
    from tests.factories import JudgeFactory, JudgeRunFactory, ProjectFactory

    project = ProjectFactory()
    import_records(
        project, [answer_record("q1", s, [("SUPPORTED", None)]) for s in ("rag@1", "rag@2")]
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    judge = JudgeFactory(project=project, name="pj")
    run = JudgeRunFactory(
        judge=judge, kind=JudgeRun.Kind.PAIRWISE, parameters={"system_a": a.pk, "system_b": b.pk}
    )
    for order, verdict in (("b_first", "first"), ("a_first", "second")):
        PairwiseVerdict.objects.create(
            run=run, judge=judge, question_id="q1", system_a=a, system_b=b, order=order,
            verdict=verdict,
        )  # fmt: skip
    pw = systems_compare(project=project, a=a, b=b)["pairwise"]
    assert pw["n_pairs"] == 1
    assert (pw["preference_b"], pw["position_bias"], pw["first_position_share"]) == (
        None,
        None,
        None,
    )
    assert pw["single_order"] == {"b_first": None, "a_first": None}
    assert pw["finding"] == (
        "Pairwise judge pj: 1 pair(s) judged in both orders so far; at least 2 are needed for an "
        "interval."
    )
