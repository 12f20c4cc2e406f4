"""systems_compare: what a lead reads, from imported answers of two systems."""

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from django.contrib.auth import get_user_model
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from annotate.models import Answer, PairwisePreference, System
from judges.models import Judge, JudgeRun, PairwiseVerdict
from metrics.services import compare as compare_module
from metrics.services.common import json_safe
from metrics.services.compare import (
    SystemNotFound,
    _finding,
    _judge_by_system,
    _pairwise_block,
    compare_gate,
    model_family,
    system_resolve,
    systems_compare,
)
from metrics.services.compare_pairwise_human import METHOD, pairwise_human_block
from tests.compare.builders import answer_record, import_records
from tests.factories import (
    JudgeFactory,
    JudgeRunFactory,
    ProjectFactory,
)

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def two_systems(project, per_question, **kwargs):
    """per_question: {question: (A claims, B claims)}."""
    records = []
    for question, (a_claims, b_claims) in per_question.items():
        records.append(answer_record(question, "rag@1", a_claims, **kwargs))
        records.append(answer_record(question, "rag@2", b_claims, **kwargs))
    import_records(project, records)
    return (
        system_resolve(project=project, ref="rag@1"),
        system_resolve(project=project, ref="rag@2"),
    )


def test_one_gold_claim_per_answer_is_the_paired_t_interval_of_scipy():
    rng = np.random.default_rng(8)
    a = rng.random(30) < 0.5
    b = np.where(rng.random(30) < 0.7, a, ~a) | (rng.random(30) < 0.3)
    verdict = {True: S, False: N}
    project = ProjectFactory()
    sa, sb = two_systems(
        project,
        {
            f"q{i}": ([(verdict[x], None)], [(verdict[y], None)])
            for i, (x, y) in enumerate(zip(a, b, strict=True))
        },
    )
    result = systems_compare(project=project, a=sa, b=sb)
    faith = result["rates"]["faithfulness"]
    lo, hi = scipy_stats.ttest_rel(b.astype(float), a.astype(float)).confidence_interval()
    assert faith["gold_only"]["value"] == pytest.approx(b.mean() - a.mean())
    assert faith["gold_only"]["ci"] == [pytest.approx(lo), pytest.approx(hi)]
    assert faith["headline"]["choice"] == "gold_only"
    assert result["shared_questions"] == 30
    # One claim per answer: the per-answer rate is the same figure.
    assert result["rates"]["faithfulness_per_answer"]["gold_only"]["value"] == pytest.approx(
        b.mean() - a.mean()
    )


def test_questions_of_one_system_only_are_left_out_and_rates_are_hand_checked():
    project = ProjectFactory()
    records = [
        # q1: A 1 of 2 supported, one contradicted; B 2 of 2.
        answer_record("q1", "rag@1", [(S, S), (C, C)]),
        answer_record("q1", "rag@2", [(S, S), (S, S)]),
        # q2: A 1 of 1; B 0 of 1 (not in pile).
        answer_record("q2", "rag@1", [(S, S)]),
        answer_record("q2", "rag@2", [(N, N)]),
        # q3: B abstains, A 1 of 1.
        answer_record("q3", "rag@1", [(S, S)]),
        answer_record("q3", "rag@2", [], abstention=True),
        # q4: only A answered: not shared, left out.
        answer_record("q4", "rag@1", [(N, N)]),
    ]
    import_records(project, records)
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b, judge=Judge.objects.get(name="j"))
    assert result["shared_questions"] == 3
    assert result["answers"] == {"a": 4, "b": 3}
    faith = result["rates"]["faithfulness"]["gold_only"]
    # Claims of shared questions (B's abstention has none): A 3 of 4, B 2 of 3; only q1 and
    # q2 have claims of both systems.
    assert faith["rate_a"] == pytest.approx(2 / 3)  # q1, q2 only: A 2 of 3
    assert faith["rate_b"] == pytest.approx(2 / 3)  # B 2 of 3
    assert faith["n_questions"] == 2
    contradiction = result["rates"]["contradiction_rate"]["gold_only"]
    assert contradiction["value"] == pytest.approx(0 - 1 / 3)
    unsupported = result["rates"]["unsupported_answer_share"]["gold_only"]
    assert (unsupported["rate_a"], unsupported["rate_b"]) == (0.5, 0.5)
    abstention = result["rates"]["abstention_rate"]["gold_only"]
    assert (abstention["rate_a"], abstention["rate_b"]) == (0.0, pytest.approx(1 / 3))
    assert result["rates"]["abstention_rate"]["ppi"] is None
    # B got worse on q2 (1 → 0) first, better on q1 (0.5 → 1) last.
    worst = result["worst_questions"]
    assert [row["question_key"] for row in worst] == ["q2", "q1"]
    assert worst[0]["delta"] == -1.0
    assert worst[0]["a"]["answers"][0]["claims"] == [
        {"text": "Claim 0 of rag@1 on q2.", "gold": S, "judge": S}
    ]
    assert worst[0]["b"]["answers"][0]["claims"][0]["gold"] == N


def _world(project, rng, g=120, gold_share=0.4, delta=0.3):
    per_question = {}
    for i in range(g):
        p = rng.uniform(0.2, 0.8)
        labelled = rng.random() < gold_share
        sides = []
        for bump in (0.0, delta):
            claims = []
            for _ in range(rng.integers(1, 4)):
                truth = S if rng.random() < min(p + bump, 1) else N
                judge = truth if rng.random() < 0.9 else (N if truth == S else S)
                claims.append((truth if labelled else None, judge))
            sides.append(claims)
        per_question[f"q{i}"] = tuple(sides)
    return two_systems(project, per_question, risk="financial")


def test_a_judge_covering_both_systems_adds_ppi_and_the_finding_says_so():
    project = ProjectFactory()
    a, b = _world(project, np.random.default_rng(1))
    result = systems_compare(project=project, a=a, b=b, judge=Judge.objects.get(name="j"))
    faith = result["rates"]["faithfulness"]
    assert faith["ppi"]["n_questions"] == 120
    assert faith["ppi"]["gold_questions"] == faith["gold_only"]["n_questions"]
    ppi_width = faith["ppi"]["ci"][1] - faith["ppi"]["ci"][0]
    gold_width = faith["gold_only"]["ci"][1] - faith["gold_only"]["ci"][0]
    assert ppi_width < gold_width
    assert faith["headline"]["choice"] == "ppi"
    finding = result["finding"]
    assert finding.startswith("rag@2 (B) is more faithful than rag@1 (A) by ")
    assert "on 120 shared questions; paired, PPI++ with judge j" in finding
    assert f"gold on {faith['gold_only']['n_questions']} of them." in finding
    low, high = faith["headline"]["ci"]
    assert f"[{100 * low:.1f}, {100 * high:.1f}]" in finding
    [financial] = result["by_risk_category"]
    assert financial["risk_category"] == "financial"
    assert financial["headline"]["value"] == pytest.approx(faith["headline"]["value"])
    worse, sentence = compare_gate(result, margin=0.02)
    assert not worse
    assert sentence.startswith("Not worse")
    # Swapped, B (now rag@1) is worse with 95% confidence.
    swapped = systems_compare(project=project, a=b, b=a, judge=Judge.objects.get(name="j"))
    worse, sentence = compare_gate(swapped, margin=0.02)
    assert worse
    assert "less faithful" in swapped["finding"]


def test_system_resolve_names_the_systems_there_are():
    project = ProjectFactory()
    two_systems(project, {"q1": ([(S, None)], [(S, None)])})
    import_records(project, [answer_record("q1", "rag@3", [(S, None)])])
    with pytest.raises(SystemNotFound, match="several versions"):
        system_resolve(project=project, ref="rag")
    with pytest.raises(SystemNotFound, match=r"systems: rag@1, rag@2, rag@3"):
        system_resolve(project=project, ref="other")


def test_no_gold_yet_says_so():
    project = ProjectFactory()
    a, b = two_systems(project, {"q1": ([(None, S)], [(None, N)])})
    result = systems_compare(project=project, a=a, b=b)
    assert result["rates"]["faithfulness"]["headline"]["choice"] is None
    assert result["finding"].startswith("No comparison of faithfulness yet: 1 shared questions")
    assert compare_gate(result)[0] is False


def test_model_family():
    from metrics.services.compare import model_family

    assert model_family("gpt-4o-mini") == "openai"
    assert model_family("meta-llama/Llama-3.1-8B-Instruct") == "llama"
    assert model_family("llama-3.1-8b-instruct") == "llama"
    assert model_family("claude-3-5-sonnet") == "anthropic"
    assert model_family("lexical-baseline") == "lexical"
    assert model_family("") == ""


def test_judge_audited_per_system_with_equality_test_and_self_preference():
    from annotate.models import System

    project = ProjectFactory()
    records = []
    # The judge is perfect on A's claims and calls every B claim SUPPORTED.
    for i in range(30):
        truth_a = S if i % 2 else N
        truth_b = S if i % 3 else N
        records.append(answer_record(f"q{i}", "rag@1", [(truth_a, truth_a)]))
        records.append(answer_record(f"q{i}", "rag@2", [(truth_b, S)]))
    import_records(project, records)
    Judge.objects.filter(project=project, name="j").update(model="gpt-4o")
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    System.objects.filter(pk=b.pk).update(metadata={"generator_model": "gpt-4o-mini"})
    b.refresh_from_db()
    result = systems_compare(project=project, a=a, b=b, judge=Judge.objects.get(name="j"))
    audit = result["judge_by_system"]
    first, second = audit["per_system"]
    assert first["specificity"]["value"] == 1.0
    assert second["specificity"]["value"] == 0.0
    assert (second["specificity"]["successes"], second["specificity"]["n"]) == (0, 10)
    assert audit["equality_p"]["specificity"] < 0.05
    assert audit["equality"].startswith("The judge's specificity differ")
    [warning] = audit["self_preference"]
    assert "rag@2" in warning
    assert "openai family" in warning


# --- metrics.services.compare: the JSON names both systems --------------------------------------


@pytest.mark.django_db
def test_compare_names_both_systems_by_name_version_and_label():
    """compare `systems_compare` `_44` (the B system's "name" key renamed: the compare JSON of
    `manage.py compare --format json` and the API lose B's name)."""
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records

    project = ProjectFactory()
    import_records(
        project,
        [
            answer_record("q1", "rag@1", [(S, None)]),
            answer_record("q1", "rag@2", [(N, None)]),
            answer_record("q2", "rag@1", [(S, None)]),
            answer_record("q2", "rag@2", [(S, None)]),
        ],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b)
    assert {k: result["a"][k] for k in ("name", "version", "label")} == {
        "name": "rag",
        "version": "1",
        "label": "rag@1",
    }
    assert {k: result["b"][k] for k in ("name", "version", "label")} == {
        "name": "rag",
        "version": "2",
        "label": "rag@2",
    }
    assert set(result["a"]) == set(result["b"]) == {"name", "version", "label", "metadata"}
    # B 1 of 2 supported, A 2 of 2: B − A = −0.5 by hand
    assert result["rates"]["faithfulness"]["gold_only"]["value"] == pytest.approx(-0.5)
    # compare `systems_compare` `_115`, `_107`: the method sentence the page and the JSON carry
    # (main since adds the audit design's sentence after it, so the test reads up to there)
    assert result["method"].startswith(
        "Paired by question: only questions both systems answered count; every interval is "
        "clustered by question (a question's claims and answers, of both systems, are one "
        "cluster), 95%. Gold only: the claims (answers) with gold. PPI++: the judge's verdicts "
        "on every claim of both systems, rectified by its errors on the gold claims, power-tuned "
        "for the difference. Headline: the narrowest valid interval."
    )


# --- metrics.services.compare: the pairwise block from stored verdicts, by hand ---------------


@pytest.mark.django_db
def test_compare_pairwise_block_from_both_orders_by_hand():
    """compare `_pairwise_block` `_51` (`setdefault(question)`: None, the block fails), `_77`
    (`incomplete_pairs` renamed) and `_164` (the method sentence changed); the whole block.

    Verdicts stored for six questions (position named, as the judge answers):
    q1 B-first "first", A-first "second": B's scores 1 and 1, p = 1, first-position share f = ½;
    q2 "first", "first": p = ½, f = 1; q3 "second", "first": p = 0, f = ½;
    q4 "tie", "second": p = (½ + 1)/2 = ¾, f = (½ + 0)/2 = ¼;
    q5 B-first only: incomplete; q6 B-first UNPARSEABLE, A-first "first": incomplete, 1 reply
    unparseable. Over the 4 complete pairs: P(B preferred) = mean p = 0.5625, the position bias
    mean f − ½ = 0.0625, each with the t interval of scipy over the pairs."""
    import numpy as np
    from scipy import stats as scipy_stats

    from judges.models import JudgeRun, PairwiseVerdict
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records
    from tests.factories import JudgeFactory, JudgeRunFactory

    project = ProjectFactory()
    import_records(
        project,
        [answer_record(f"q{i}", s, [(S, None)]) for i in range(1, 7) for s in ("rag@1", "rag@2")],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    judge = JudgeFactory(project=project, name="pj")
    run = JudgeRunFactory(
        judge=judge,
        kind=JudgeRun.Kind.PAIRWISE,
        parameters={"system_a": a.pk, "system_b": b.pk},
    )
    stored = {
        "q1": ("first", "second"),
        "q2": ("first", "first"),
        "q3": ("second", "first"),
        "q4": ("tie", "second"),
        "q5": ("first", None),
        "q6": ("UNPARSEABLE", "first"),
    }
    for question, (b_first, a_first) in stored.items():
        for order, verdict in (("b_first", b_first), ("a_first", a_first)):
            if verdict is not None:
                PairwiseVerdict.objects.create(
                    run=run, judge=judge, question_id=question, system_a=a, system_b=b,
                    order=order, verdict=verdict,
                )  # fmt: skip
    pw = systems_compare(project=project, a=a, b=b)["pairwise"]

    def t_interval(x):
        x = np.asarray(x, float)
        half = scipy_stats.t.ppf(0.975, x.size - 1) * scipy_stats.sem(x)
        return x.mean() - half, x.mean() + half

    p = [1.0, 0.5, 0.0, 0.75]
    f_minus_half = [0.0, 0.5, 0.0, -0.25]
    assert (pw["judge"], pw["run_id"], pw["n_pairs"]) == ("pj", run.pk, 4)
    assert (pw["incomplete_pairs"], pw["unparseable"]) == (2, 1)
    assert pw["preference_b"]["value"] == pytest.approx(0.5625)
    assert list(pw["preference_b"]["ci"]) == pytest.approx(t_interval(p))
    assert pw["position_bias"]["value"] == pytest.approx(0.0625)
    assert list(pw["position_bias"]["ci"]) == pytest.approx(t_interval(f_minus_half))
    assert pw["first_position_share"]["value"] == pytest.approx(0.5625)
    lo_p, hi_p = t_interval(p)
    lo_f, hi_f = (c + 0.5 for c in t_interval(f_minus_half))
    assert pw["finding"] == (
        f"The judge pj prefers whichever answer comes first in 56% [{100 * lo_f:.0f}, "
        f"{100 * hi_f:.0f}] of pairs; averaged over both orders, rag@2 (B) is preferred to "
        f"rag@1 (A) in 56% [{100 * lo_p:.0f}, {100 * hi_p:.0f}] of 4 pairs (ties count half)."
    )
    assert pw["method"] == (
        "asked in both orders and averaged; position bias = share of first-position wins − 50%, "
        "over both orders of every pair; t intervals over pairs, 95%; 1 unparseable reply "
        "counted apart and a pair counts only when both its orders have a verdict; ties count "
        "half."
    )


# --- metrics.services.compare: the judge audited per system counts only gold claims -----------


@pytest.mark.django_db
def test_compare_judge_by_system_audits_only_claims_with_gold():
    """compare `_judge_by_system` `_7` (`gold != "XXXX"`: claims the judge judged without gold
    entered the per-system audit). Each system: two gold claims the judge got right (S, N) and
    one judged claim without gold: 2 audited, sensitivity 1 of 1, specificity 1 of 1."""
    from judges.models import Judge
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records

    project = ProjectFactory()
    import_records(
        project,
        [answer_record("q1", s, [(S, S), (N, N), (None, S)]) for s in ("rag@1", "rag@2")],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b, judge=Judge.objects.get(name="j"))
    rows = result["judge_by_system"]["per_system"]
    assert [(r["system"], r["n_audited"]) for r in rows] == [("rag@1", 2), ("rag@2", 2)]
    for r in rows:
        assert (r["sensitivity"]["successes"], r["sensitivity"]["n"]) == (1, 1)
        assert (r["specificity"]["successes"], r["specificity"]["n"]) == (1, 1)


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


User = get_user_model()


NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


# question: (A's risk, A's claims, B's risk, B's claims or None for an abstention with one claim)
PLANT = {
    "q1": ("financial", [(S, S), (C, C)], "financial", [(S, S), (S, S)]),
    "q2": ("financial", [(S, S)], "financial", [(N, S)]),
    "q3": ("health", [(N, N), (S, S)], "health", [(S, S), (None, S)]),
    "q4": ("health", [(S, S), (N, None)], "health", [(C, N)]),
    "q5": ("financial", [(None, S), (S, S)], "none", [(S, S)]),
    "q6": ("health", [(S, N)], "health", None),
}


# The pairwise judge's (b_first, a_first) replies; None: not asked.
PAIRWISE = {
    "q1": ("first", "second"),
    "q2": ("first", "first"),
    "q3": ("tie", "first"),
    "q4": ("second", "first"),
    "q5": ("first", None),
    "q6": ("first", "UNPARSEABLE"),
}


# The analysts' marks: (analyst index, question, "B" | "A" | "tie").
MARKS = [
    (0, "q1", "B"),
    (0, "q2", "A"),
    (0, "q3", "tie"),
    (0, "q4", "A"),
    (0, "q5", "B"),
    (1, "q1", "B"),
    (1, "q3", "A"),
]


class _Clock:
    @staticmethod
    def now():
        return NOW


def plant(slug="whole", extra=()):
    project = ProjectFactory(slug=slug, name="Whole")
    records = []
    for q, (risk_a, a_claims, risk_b, b_claims) in PLANT.items():
        records.append(answer_record(q, "rag@1", a_claims, risk=risk_a))
        if b_claims is None:
            records.append(answer_record(q, "rag@2", [(N, N)], risk=risk_b, abstention=True))
        else:
            records.append(answer_record(q, "rag@2", b_claims, risk=risk_b))
    records.append(answer_record("q7", "rag@1", [(N, N)], risk="financial"))
    import_records(project, [*records, *extra])
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    System.objects.filter(pk=a.pk).update(metadata={"generator_model": "claude-3-haiku"})
    System.objects.filter(pk=b.pk).update(metadata={"generator_model": "gpt-4o-mini"})
    a.refresh_from_db()
    b.refresh_from_db()
    judge = Judge.objects.get(project=project, name="j")
    Judge.objects.filter(pk=judge.pk).update(model="gpt-4o")
    judge.refresh_from_db()
    return project, a, b, judge


def plant_pairwise(project, a, b, *, swapped=False):
    pj = JudgeFactory(project=project, name="pj", model="pair-model")
    run_a, run_b = (b, a) if swapped else (a, b)
    run = JudgeRunFactory(
        judge=pj,
        kind=JudgeRun.Kind.PAIRWISE,
        parameters={"system_a": run_a.pk, "system_b": run_b.pk},
    )
    flip = {"b_first": "a_first", "a_first": "b_first"}
    for q, replies in PAIRWISE.items():
        for order, verdict in zip(("b_first", "a_first"), replies, strict=True):
            if verdict is None:
                continue
            PairwiseVerdict.objects.create(
                run=run,
                judge=pj,
                question_id=q,
                system_a=run_a,
                system_b=run_b,
                order=flip[order] if swapped else order,
                verdict=verdict,
            )
    return run


def plant_marks(project, a, b, marks=MARKS):
    # Users without a password (hashing one costs a second): marks need no login.
    analysts = [User.objects.create(username=f"{project.slug}-analyst-{i}") for i in range(2)]
    answers = {
        (ans.system_id, ans.question_id): ans for ans in Answer.objects.filter(project=project)
    }
    for who, q, choice in marks:
        PairwisePreference.objects.create(
            project=project,
            question_key=q,
            system_1=a,
            system_2=b,
            answer_1=answers[(a.pk, q)],
            answer_2=answers[(b.pk, q)],
            left_system=a,
            analyst=analysts[who],
            choice={"B": "right", "A": "left", "tie": "tie"}[choice],
            preferred_system={"B": b, "A": a, "tie": None}[choice],
        )


def golden(run_id):
    """The whole result for the planted project, as the product gave it once (figures checked
    independently in the tests below)."""
    return {
        "project": {"slug": "whole", "name": "Whole"},
        "computed_at": "2026-01-02T03:04:05+00:00",
        "a": {
            "name": "rag",
            "version": "1",
            "label": "rag@1",
            "metadata": {"generator_model": "claude-3-haiku"},
        },
        "b": {
            "name": "rag",
            "version": "2",
            "label": "rag@2",
            "metadata": {"generator_model": "gpt-4o-mini"},
        },
        "judge": "j (no model, prompt imported)",
        "answers": {"a": 7, "b": 6},
        "shared_questions": 6,
        "rates": {
            "faithfulness": {
                "gold_only": {
                    "value": 0.04166666666666663,
                    "ci": [-0.7137015098046104, 0.7970348431379437],
                    "std_error": 0.2720630690868512,
                    "std_error_unpaired": 0.25133169142890105,
                    "ci_unpaired": [-0.6561419777821879, 0.7394753111155211],
                    "n_questions": 5,
                    "n_units": [8, 6],
                    "rate_a": 0.625,
                    "rate_b": 0.6666666666666666,
                    "method": "gold only, paired by question (clustered by "
                    "question, t interval), 5 shared questions "
                    "with gold on both systems",
                },
                "ppi": {
                    "value": -0.16666666666666674,
                    "ci": [-0.6544383517139349, 0.32110501838060146],
                    "std_error": 0.17568209223157663,
                    "std_error_unpaired": 0.17568209223157663,
                    "ci_unpaired": [-0.6544383517139349, 0.32110501838060146],
                    "n_questions": 5,
                    "n_units": [8, 7],
                    "rate_a": 1.0,
                    "rate_b": 0.8333333333333333,
                    "method": "PPI++ on the per-question differences (judge on "
                    "every claim, rectified by gold), clustered by "
                    "question: 5 shared questions, gold on 5 (λ = 1.00)",
                    "lambda": 1.0,
                    "gold_units": [7, 6],
                    "gold_questions": 5,
                },
                "headline": {
                    "choice": "ppi",
                    "value": -0.16666666666666674,
                    "ci": [-0.6544383517139349, 0.32110501838060146],
                    "reason": "PPI++ is the narrowest valid interval (±0.49): "
                    "the judge's verdicts on the unaudited claims, "
                    "corrected by its errors on the audit sample, "
                    "add information beyond the audit sample alone "
                    "(±0.76).",
                },
                "title": "faithfulness (pooled over claims)",
                "unit": "claim",
                "higher_is_better": True,
            },
            "faithfulness_per_answer": {
                "gold_only": {
                    "value": -0.3333333333333333,
                    "ci": [-1.0, 1.0],
                    "std_error": 0.4409585518440985,
                    "std_error_unpaired": 0.37267799624996495,
                    "ci_unpaired": [-1.9368373312158047, 1.2701706645491382],
                    "n_questions": 3,
                    "n_units": [3, 3],
                    "rate_a": 0.6666666666666666,
                    "rate_b": 0.3333333333333333,
                    "method": "gold only, paired by question "
                    "(clustered by question, t "
                    "interval), 3 shared questions with "
                    "gold on both systems",
                },
                "ppi": {
                    "value": -0.33333333333333337,
                    "ci": [-1.0, 0.666813050323637],
                    "std_error": 0.31426968052735443,
                    "std_error_unpaired": 0.31426968052735443,
                    "ci_unpaired": [-1.3334797169903037, 0.666813050323637],
                    "n_questions": 4,
                    "n_units": [4, 4],
                    "rate_a": 1.0,
                    "rate_b": 0.6666666666666666,
                    "method": "PPI++ on the per-question differences "
                    "(judge on every claim, rectified by "
                    "gold), clustered by question: 4 shared "
                    "questions, gold on 4 (λ = 1.00)",
                    "lambda": 1.0,
                    "gold_units": [3, 3],
                    "gold_questions": 4,
                },
                "headline": {
                    "choice": "ppi",
                    "value": -0.33333333333333337,
                    "ci": [-1.0, 0.666813050323637],
                    "reason": "PPI++ is the narrowest valid "
                    "interval (±0.83): the judge's "
                    "verdicts on the unaudited claims, "
                    "corrected by its errors on the "
                    "audit sample, add information "
                    "beyond the audit sample alone "
                    "(±1.00).",
                },
                "title": "faithfulness (mean per answer)",
                "unit": "answer",
                "higher_is_better": True,
            },
            "contradiction_rate": {
                "gold_only": {
                    "value": 0.04166666666666666,
                    "ci": [-0.6630995297932993, 0.7464328631266326],
                    "std_error": 0.2538376123988803,
                    "std_error_unpaired": 0.21190158911240897,
                    "ci_unpaired": [-0.5466664632081153, 0.6299997965414486],
                    "n_questions": 5,
                    "n_units": [8, 6],
                    "rate_a": 0.125,
                    "rate_b": 0.16666666666666666,
                    "method": "gold only, paired by question "
                    "(clustered by question, t interval), 5 "
                    "shared questions with gold on both "
                    "systems",
                },
                "ppi": {
                    "value": 0.16666666666666666,
                    "ci": [-0.32110501838060157, 0.6544383517139348],
                    "std_error": 0.17568209223157663,
                    "std_error_unpaired": 0.17568209223157663,
                    "ci_unpaired": [-0.32110501838060157, 0.6544383517139348],
                    "n_questions": 5,
                    "n_units": [8, 7],
                    "rate_a": 0.0,
                    "rate_b": 0.16666666666666666,
                    "method": "PPI++ on the per-question differences (judge "
                    "on every claim, rectified by gold), clustered "
                    "by question: 5 shared questions, gold on 5 (λ "
                    "= 1.00)",
                    "lambda": 1.0,
                    "gold_units": [7, 6],
                    "gold_questions": 5,
                },
                "headline": {
                    "choice": "ppi",
                    "value": 0.16666666666666666,
                    "ci": [-0.32110501838060157, 0.6544383517139348],
                    "reason": "PPI++ is the narrowest valid interval "
                    "(±0.49): the judge's verdicts on the "
                    "unaudited claims, corrected by its "
                    "errors on the audit sample, add "
                    "information beyond the audit sample "
                    "alone (±0.70).",
                },
                "title": "contradiction rate",
                "unit": "claim",
                "higher_is_better": False,
            },
            "unsupported_answer_share": {
                "gold_only": {
                    "value": 0.0,
                    "ci": [-1.0, 1.0],
                    "std_error": 0.5773502691896257,
                    "std_error_unpaired": 0.4714045207910317,
                    "ci_unpaired": [-2.028289948197769, 2.028289948197769],
                    "n_questions": 3,
                    "n_units": [3, 3],
                    "rate_a": 0.6666666666666666,
                    "rate_b": 0.6666666666666666,
                    "method": "gold only, paired by question "
                    "(clustered by question, t "
                    "interval), 3 shared questions "
                    "with gold on both systems",
                },
                "ppi": {
                    "value": 0.3333333333333333,
                    "ci": [-0.6668130503236371, 1.0],
                    "std_error": 0.31426968052735443,
                    "std_error_unpaired": 0.31426968052735443,
                    "ci_unpaired": [-0.6668130503236371, 1.3334797169903037],
                    "n_questions": 4,
                    "n_units": [4, 4],
                    "rate_a": 0.0,
                    "rate_b": 0.3333333333333333,
                    "method": "PPI++ on the per-question differences "
                    "(judge on every claim, rectified by "
                    "gold), clustered by question: 4 shared "
                    "questions, gold on 4 (λ = 1.00)",
                    "lambda": 1.0,
                    "gold_units": [3, 3],
                    "gold_questions": 4,
                },
                "headline": {
                    "choice": "ppi",
                    "value": 0.3333333333333333,
                    "ci": [-0.6668130503236371, 1.0],
                    "reason": "PPI++ is the narrowest valid "
                    "interval (±0.83): the judge's "
                    "verdicts on the unaudited claims, "
                    "corrected by its errors on the "
                    "audit sample, add information "
                    "beyond the audit sample alone "
                    "(±1.00).",
                },
                "title": "answers with an unsupported claim",
                "unit": "answer",
                "higher_is_better": False,
            },
            "abstention_rate": {
                "gold_only": {
                    "value": 0.16666666666666666,
                    "ci": [-0.2617636392727192, 0.5950969726060524],
                    "std_error": 0.16666666666666669,
                    "std_error_unpaired": 0.16666666666666669,
                    "ci_unpaired": [-0.2617636392727192, 0.5950969726060524],
                    "n_questions": 6,
                    "n_units": [6, 6],
                    "rate_a": 0.0,
                    "rate_b": 0.16666666666666666,
                    "method": "gold only, paired by question (clustered "
                    "by question, t interval), 6 shared "
                    "questions with gold on both systems",
                },
                "ppi": None,
                "headline": {
                    "choice": "gold_only",
                    "value": 0.16666666666666666,
                    "ci": [-0.2617636392727192, 0.5950969726060524],
                    "reason": "The audit sample alone is the better estimate (±0.43).",
                },
                "title": "abstention rate",
                "unit": "answer",
                "higher_is_better": False,
            },
        },
        "by_risk_category": [
            {
                "risk_category": "financial",
                "questions": 3,
                "gold_only": {
                    "value": 0.0,
                    "ci": [-1.0, 1.0],
                    "std_error": 0.4330127018922193,
                    "std_error_unpaired": 0.3423265984407288,
                    "ci_unpaired": [-1.4729124732468497, 1.4729124732468497],
                    "n_questions": 3,
                    "n_units": [4, 4],
                    "rate_a": 0.75,
                    "rate_b": 0.75,
                    "method": "gold only, paired by question (clustered by "
                    "question, t interval), 3 shared questions with "
                    "gold on both systems",
                },
                "ppi": {
                    "value": -0.25,
                    "ci": [-1.0, 0.98232698894908],
                    "std_error": 0.28641098093474,
                    "std_error_unpaired": 0.28641098093474,
                    "ci_unpaired": [-1.48232698894908, 0.98232698894908],
                    "n_questions": 3,
                    "n_units": [5, 4],
                    "rate_a": 1.0,
                    "rate_b": 0.75,
                    "method": "PPI++ on the per-question differences (judge on every "
                    "claim, rectified by gold), clustered by question: 3 "
                    "shared questions, gold on 3 (λ = 1.00)",
                    "lambda": 1.0,
                    "gold_units": [4, 4],
                    "gold_questions": 3,
                },
                "headline": {
                    "choice": "ppi",
                    "value": -0.25,
                    "ci": [-1.0, 0.98232698894908],
                    "reason": "PPI++ is the narrowest valid interval (±0.99): the "
                    "judge's verdicts on the unaudited claims, corrected "
                    "by its errors on the audit sample, add information "
                    "beyond the audit sample alone (±1.00).",
                },
            },
            {
                "risk_category": "health",
                "questions": 3,
                "gold_only": {
                    "value": 0.0,
                    "ci": [-1.0, 1.0],
                    "std_error": 0.5,
                    "std_error_unpaired": 0.5,
                    "ci_unpaired": [-6.353102368087347, 6.353102368087347],
                    "n_questions": 2,
                    "n_units": [4, 2],
                    "rate_a": 0.5,
                    "rate_b": 0.5,
                    "method": "gold only, paired by question (clustered by "
                    "question, t interval), 2 shared questions with "
                    "gold on both systems",
                },
                "ppi": {
                    "value": 0.33333333333333337,
                    "ci": [-1.0, 1.0],
                    "std_error": 0.2222222222222222,
                    "std_error_unpaired": 0.2222222222222222,
                    "ci_unpaired": [-2.490267719149932, 3.156934385816599],
                    "n_questions": 2,
                    "n_units": [3, 3],
                    "rate_a": 0.6666666666666666,
                    "rate_b": 1.0,
                    "method": "PPI++ on the per-question differences (judge on every "
                    "claim, rectified by gold), clustered by question: 2 "
                    "shared questions, gold on 2 (λ = 1.00)",
                    "lambda": 1.0,
                    "gold_units": [3, 2],
                    "gold_questions": 2,
                },
                "headline": {
                    "choice": "gold_only",
                    "value": 0.0,
                    "ci": [-1.0, 1.0],
                    "reason": "The audit sample alone is the better estimate "
                    "(±1.00); the judge's verdicts on the other claims "
                    "do not narrow it (±1.00, about equal).",
                },
            },
        ],
        "worst_questions": [
            {
                "question_key": "q2",
                "question": "Question q2?",
                "risk_category": "financial",
                "delta": -1.0,
                "a": {
                    "faithfulness": 1.0,
                    "answers": [
                        {
                            "answer_id": "rag@1:q2",
                            "text": "The answer of rag@1 to q2.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@1 on q2.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                }
                            ],
                        }
                    ],
                },
                "b": {
                    "faithfulness": 0.0,
                    "answers": [
                        {
                            "answer_id": "rag@2:q2",
                            "text": "The answer of rag@2 to q2.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@2 on q2.",
                                    "gold": "NOT_IN_PILE",
                                    "judge": "SUPPORTED",
                                }
                            ],
                        }
                    ],
                },
            },
            {
                "question_key": "q4",
                "question": "Question q4?",
                "risk_category": "health",
                "delta": -0.5,
                "a": {
                    "faithfulness": 0.5,
                    "answers": [
                        {
                            "answer_id": "rag@1:q4",
                            "text": "The answer of rag@1 to q4.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@1 on q4.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                                {
                                    "text": "Claim 1 of rag@1 on q4.",
                                    "gold": "NOT_IN_PILE",
                                    "judge": None,
                                },
                            ],
                        }
                    ],
                },
                "b": {
                    "faithfulness": 0.0,
                    "answers": [
                        {
                            "answer_id": "rag@2:q4",
                            "text": "The answer of rag@2 to q4.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@2 on q4.",
                                    "gold": "CONTRADICTED",
                                    "judge": "NOT_IN_PILE",
                                }
                            ],
                        }
                    ],
                },
            },
            {
                "question_key": "q5",
                "question": "Question q5?",
                "risk_category": "financial",
                "delta": 0.0,
                "a": {
                    "faithfulness": 1.0,
                    "answers": [
                        {
                            "answer_id": "rag@1:q5",
                            "text": "The answer of rag@1 to q5.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@1 on q5.",
                                    "gold": None,
                                    "judge": "SUPPORTED",
                                },
                                {
                                    "text": "Claim 1 of rag@1 on q5.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                            ],
                        }
                    ],
                },
                "b": {
                    "faithfulness": 1.0,
                    "answers": [
                        {
                            "answer_id": "rag@2:q5",
                            "text": "The answer of rag@2 to q5.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@2 on q5.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                }
                            ],
                        }
                    ],
                },
            },
            {
                "question_key": "q1",
                "question": "Question q1?",
                "risk_category": "financial",
                "delta": 0.5,
                "a": {
                    "faithfulness": 0.5,
                    "answers": [
                        {
                            "answer_id": "rag@1:q1",
                            "text": "The answer of rag@1 to q1.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@1 on q1.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                                {
                                    "text": "Claim 1 of rag@1 on q1.",
                                    "gold": "CONTRADICTED",
                                    "judge": "CONTRADICTED",
                                },
                            ],
                        }
                    ],
                },
                "b": {
                    "faithfulness": 1.0,
                    "answers": [
                        {
                            "answer_id": "rag@2:q1",
                            "text": "The answer of rag@2 to q1.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@2 on q1.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                                {
                                    "text": "Claim 1 of rag@2 on q1.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                            ],
                        }
                    ],
                },
            },
            {
                "question_key": "q3",
                "question": "Question q3?",
                "risk_category": "health",
                "delta": 0.5,
                "a": {
                    "faithfulness": 0.5,
                    "answers": [
                        {
                            "answer_id": "rag@1:q3",
                            "text": "The answer of rag@1 to q3.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@1 on q3.",
                                    "gold": "NOT_IN_PILE",
                                    "judge": "NOT_IN_PILE",
                                },
                                {
                                    "text": "Claim 1 of rag@1 on q3.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                            ],
                        }
                    ],
                },
                "b": {
                    "faithfulness": 1.0,
                    "answers": [
                        {
                            "answer_id": "rag@2:q3",
                            "text": "The answer of rag@2 to q3.",
                            "claims": [
                                {
                                    "text": "Claim 0 of rag@2 on q3.",
                                    "gold": "SUPPORTED",
                                    "judge": "SUPPORTED",
                                },
                                {
                                    "text": "Claim 1 of rag@2 on q3.",
                                    "gold": None,
                                    "judge": "SUPPORTED",
                                },
                            ],
                        }
                    ],
                },
            },
        ],
        "judge_by_system": {
            "per_system": [
                {
                    "system": "rag@1",
                    "n_audited": 8,
                    "sensitivity": {
                        "value": 0.8333333333333334,
                        "ci": [0.43649717781352987, 0.9699466302516935],
                        "successes": 5,
                        "n": 6,
                    },
                    "specificity": {
                        "value": 1.0,
                        "ci": [0.34238022750665303, 1.0],
                        "successes": 2,
                        "n": 2,
                    },
                    "youden_j": 0.8333333333333335,
                },
                {
                    "system": "rag@2",
                    "n_audited": 6,
                    "sensitivity": {
                        "value": 1.0,
                        "ci": [0.5101091635454027, 1.0],
                        "successes": 4,
                        "n": 4,
                    },
                    "specificity": {
                        "value": 0.5,
                        "ci": [0.09453120573423074, 0.9054687942657693],
                        "successes": 1,
                        "n": 2,
                    },
                    "youden_j": 0.5,
                },
            ],
            "equality_p": {"sensitivity": 1.0, "specificity": 1.0},
            "equality": "No evidence that the judge's sensitivity or specificity differ "
            "between the systems (Fisher's exact test, p ≥ 0.05); PPI++ "
            "rectifies each system by its own gold regardless.",
            "self_preference": [
                "Self-preference: the judge's model (gpt-4o) is of the "
                "openai family, as rag@2's generator (gpt-4o-mini): "
                "judges rate their own family's outputs higher. Audit it "
                "on this system's gold (above) or use a judge of another "
                "family."
            ],
            "model": "gpt-4o",
            "family": "openai",
        },
        "design": {
            "kind": "simple",
            "queue_design": "uniform",
            "strata": [],
            "gold_left_out": 0,
            "text": "The audit's gold is a simple random sample here (one design stratum, no "
            "inclusion probabilities): each gold claim counts once.",
        },
        "pairwise": {
            "judge": "pj",
            "run_id": run_id,
            "model": "pair-model",
            "prompt_version": "v-test",
            "n_pairs": 4,
            "incomplete_pairs": 2,
            "unparseable": 1,
            "preference_b": {
                "value": 0.4375,
                "ci": [-0.24188272094900376, 1.1168827209490038],
                "n": 4,
            },
            "position_bias": {
                "value": 0.1875,
                "ci": [-0.19337004520720308, 0.5683700452072031],
                "n": 4,
            },
            "first_position_share": {
                "value": 0.6875,
                "ci": [0.3066299547927969, 1.0683700452072031],
                "n": 4,
            },
            "single_order": {
                "b_first": {
                    "value": 0.625,
                    "ci": [-0.13674009041440616, 1.3867400904144063],
                    "n": 4,
                },
                "a_first": {"value": 0.25, "ci": [-0.545611576320927, 1.045611576320927], "n": 4},
            },
            "finding": "The judge pj prefers whichever answer comes first in 69% [31, 107] of "
            "pairs; averaged over both orders, rag@2 (B) is preferred to rag@1 (A) in "
            "44% [-24, 112] of 4 pairs (ties count half).",
            "method": "asked in both orders and averaged; position bias = share of "
            "first-position wins − 50%, over both orders of every pair; t intervals "
            "over pairs, 95%; 1 unparseable reply counted apart and a pair counts only "
            "when both its orders have a verdict; ties count half.",
        },
        "pairwise_human": {
            "n_preferences": 7,
            "n_pairs": 5,
            "n_analysts": 2,
            "sources": {"screen": 7, "file": 0},
            "preference_b": {
                "value": 0.5,
                "ci": [0.0, 1.0],
                "std_error": 0.22587697572631282,
                "n": 7,
                "n_clusters": 5,
            },
            # By hand from MARKS: decided B q1 q1 q5, A q2 q3 q4 (q3's tie aside): 3 of 6;
            # CR1 over 5 questions: sums of x − ½ are 1, ½, −½, −½, −½ → V = 5/4·2/36, V₀ =
            # ¼/6, so n* = 6/(V/V₀) = 3.6 and Wilson(½, 3.6). Per question B − A: q1 +2, q2 −1,
            # q3 −1, q4 −1, q5 +1 → B 2, A 3, binomial p = 1.
            "decided_b": {
                "value": 0.5,
                "ci": [0.14075638831899118, 0.8592436116810088],
                "n": 6,
                "n_clusters": 5,
                "n_effective": 3.6,
                "n_decided": 6,
                "n_ties": 1,
                "sign_test": {
                    "questions_b": 2,
                    "questions_a": 3,
                    "questions_even": 0,
                    "p_value": 1.0,
                },
            },
            "strength_b": None,
            # Two analysts on q1 (B, B) and q3 (tie, A): agree 1 of 2 (n* = 1), opposite 0 of
            # 2 (n* = G = 2); kappa: p_o = ½, p_e = ¼ → ⅓; leaving q3 out leaves one category
            # for both, kappa undefined: no jackknife interval.
            "analysts_agreement": {
                "comparisons": 2,
                "n_pairs": 2,
                "raw_agreement": {
                    "value": 0.5,
                    "ci": [0.05462075552885198, 0.945379244471148],
                    "n": 2,
                    "n_clusters": 2,
                    "n_effective": 1.0,
                },
                "opposite": {
                    "value": 0.0,
                    "ci": [0.0, 0.6576197724933469],
                    "n": 2,
                    "n_clusters": 2,
                    "n_effective": 2.0,
                },
                "kappa": {
                    "value": 1 / 3,
                    "ci": [None, None],
                    "std_error": None,
                    "n": 2,
                    "n_clusters": 2,
                },
            },
            "counts": {"B": 3, "A": 3, "tie": 1},
            "judge": {"judge": "pj", "run_id": run_id, "model": "pair-model"},
            "agreement": {
                "share": {
                    "value": 0.6666666666666666,
                    "ci": [0.2856626083670448, 0.9091118352488607],
                    "n": 6,
                    "n_clusters": 4,
                    "n_effective": 5.400000000000001,
                },
                "kappa": 0.4545454545454544,
                "confusion": {
                    "rows_human_columns_judge": ["B", "A", "tie"],
                    "counts": [[2, 0, 0], [0, 2, 1], [0, 1, 0]],
                },
                "n": 6,
                "n_pairs": 4,
            },
            "method": METHOD,
            "finding": "Analysts prefer rag@2 (B) to rag@1 (A) in 50% [0, 100] of 5 pairs "
            "(7 marks by 2 analysts; ties count half). Of the 6 marks that chose a side, 50% "
            "[14, 86] chose B (1 tie set aside); B won 2 questions and A 3, sign test p = "
            "1.000. Where two people marked the same pair (2 of 5 pairs, 2 comparisons), they "
            "agree on 50% [5, 95] and point opposite ways on 0% [0, 66]; Cohen's kappa 0.33 (no "
            "interval). On the 4 of these pairs the pairwise judge pj judged in both orders, "
            "its order-averaged verdict matches the analyst's on 67% [29, 91] of 6 marks; "
            "Cohen's kappa 0.45.",
        },
        "finding": "No clear difference in faithfulness between rag@2 (B) and rag@1 (A): B − A = -16.7 "
        "points [-65.4, 32.1] on 6 shared questions; paired, PPI++ with judge j (no model, "
        "prompt imported), gold on 5 of them. People prefer rag@2 (B) on 50% [14, 86] of 6 "
        "decided marks (5 pairs, 1 tie set aside; sign test p = 1.000).",
        "method": "Paired by question: only questions both systems answered count; every interval is "
        "clustered by question (a question's claims and answers, of both systems, are one "
        "cluster), 95%. Gold only: the claims (answers) with gold. PPI++: the judge's verdicts "
        "on every claim of both systems, rectified by its errors on the gold claims, "
        "power-tuned for the difference. Headline: the narrowest valid interval. The audit's "
        "gold is a simple random sample here (one design stratum, no inclusion probabilities): "
        "each gold claim counts once.",
    }


def approx_tree(value):
    """`value` with every float replaced by pytest.approx (rel 1e-9), for a whole-dict ==."""
    if isinstance(value, dict):
        return {key: approx_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [approx_tree(item) for item in value]
    if isinstance(value, tuple):
        return tuple(approx_tree(item) for item in value)
    if isinstance(value, float):
        return pytest.approx(value, rel=1e-9, abs=1e-12)
    return value


@pytest.fixture
def world(monkeypatch):
    monkeypatch.setattr(compare_module, "timezone", _Clock)
    project, a, b, judge = plant()
    run = plant_pairwise(project, a, b)
    plant_marks(project, a, b)
    result = systems_compare(project=project, a=a, b=b, judge=judge)
    return {"project": project, "a": a, "b": b, "judge": judge, "run": run, "result": result}


def test_the_whole_result_is_the_golden_dict(world):
    assert world["result"] == approx_tree(golden(world["run"].pk))


def _gold_units():
    """(side, question, y) of every gold claim of a non-abstaining answer, from PLANT by hand;
    only questions with gold claims of both systems."""
    units = []
    for q, (_ra, a_claims, _rb, b_claims) in PLANT.items():
        for side, claims in ((0, a_claims), (1, b_claims or [])):
            units += [(side, q, gold) for gold, _judge in claims if gold]
    sides = {}
    for side, q, _ in units:
        sides.setdefault(q, set()).add(side)
    return [u for u in units if sides[u[1]] == {0, 1}]


def _clustered_contrast(y, side, question):
    """B − A and its CR1 standard error (G/(G−1), no (N−1)/(N−K)) from statsmodels' OLS of y
    on [1, side] clustered by question, with the t interval on G − 1 degrees of freedom."""
    codes = np.unique(question, return_inverse=True)[1]
    g = codes.max() + 1
    x = sm.add_constant(np.asarray(side, dtype=float))
    fit = sm.OLS(np.asarray(y, dtype=float), x).fit(
        cov_type="cluster", cov_kwds={"groups": codes, "use_correction": False}
    )
    se = math.sqrt(fit.cov_params()[1, 1] * g / (g - 1))
    t = scipy_stats.t.ppf(0.975, g - 1)
    value = fit.params[1]
    return value, se, [max(value - t * se, -1.0), min(value + t * se, 1.0)], g


def test_gold_only_faithfulness_and_contradiction_are_statsmodels_clustered_ols(world):
    units = _gold_units()
    side = [s for s, _, _ in units]
    question = [q for _, q, _ in units]
    rates = world["result"]["rates"]
    for key, verdict in (("faithfulness", S), ("contradiction_rate", C)):
        y = [float(g == verdict) for _, _, g in units]
        value, se, ci, g = _clustered_contrast(y, side, question)
        block = rates[key]["gold_only"]
        assert block["value"] == pytest.approx(value, rel=1e-9)
        assert block["std_error"] == pytest.approx(se, rel=1e-9)
        assert block["ci"] == pytest.approx(ci, rel=1e-9)
        assert block["n_questions"] == g == 5
        assert block["n_units"] == [side.count(0), side.count(1)] == [8, 6]
    # By hand: A 5 of 8 supported, 1 of 8 contradicted; B 4 of 6, 1 of 6 (q6's B abstains).
    assert rates["faithfulness"]["gold_only"]["rate_a"] == pytest.approx(5 / 8)
    assert rates["faithfulness"]["gold_only"]["rate_b"] == pytest.approx(4 / 6)
    assert rates["contradiction_rate"]["gold_only"]["rate_a"] == pytest.approx(1 / 8)
    assert rates["contradiction_rate"]["gold_only"]["rate_b"] == pytest.approx(1 / 6)


def test_per_answer_rates_and_abstention_are_scipys_paired_t(world):
    rates = world["result"]["rates"]
    # Answers all of whose claims have gold, on questions where both have one: q1, q2, q4.
    a = np.array([1 / 2, 1.0, 1 / 2])
    b = np.array([1.0, 0.0, 0.0])
    lo, hi = scipy_stats.ttest_rel(b, a).confidence_interval()
    per_answer = rates["faithfulness_per_answer"]["gold_only"]
    assert per_answer["value"] == pytest.approx(b.mean() - a.mean())
    assert per_answer["ci"] == pytest.approx([max(lo, -1.0), min(hi, 1.0)])
    assert (per_answer["rate_a"], per_answer["rate_b"]) == (pytest.approx(2 / 3), 1 / 3)
    unsupported = rates["unsupported_answer_share"]["gold_only"]
    ua, ub = np.array([1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0])
    lo, hi = scipy_stats.ttest_rel(ub, ua).confidence_interval()
    assert unsupported["value"] == pytest.approx(ub.mean() - ua.mean())
    assert unsupported["ci"] == pytest.approx([max(lo, -1.0), min(hi, 1.0)])
    # Abstentions over all six shared questions' answers: B abstains on q6 only.
    aa, ab = np.zeros(6), np.array([0, 0, 0, 0, 0, 1.0])
    lo, hi = scipy_stats.ttest_rel(ab, aa).confidence_interval()
    abstention = rates["abstention_rate"]
    assert abstention["gold_only"]["value"] == pytest.approx(1 / 6)
    assert abstention["gold_only"]["ci"] == pytest.approx([lo, hi])
    assert abstention["ppi"] is None
    assert abstention["headline"]["choice"] == "gold_only"


def test_ppi_is_the_rectified_judge_mean_at_the_clipped_lambda(world):
    ppi = world["result"]["rates"]["faithfulness"]["ppi"]
    # λ = 1 (clipped): θ_s = ȳ_L + f̄_U − f̄_L over the judged claims of q1..q5 (q6: B has none).
    # A: gold S 5 of 7 labelled, judge S 5 of 7 there, 1 of 1 unlabelled (q5) → 1.
    # B: gold S 4 of 6, judge S 5 of 6 there, 1 of 1 unlabelled (q3) → 5/6.
    assert ppi["lambda"] == 1.0
    theta_a = 5 / 7 + 1 - 5 / 7
    theta_b = 4 / 6 + 1 - 5 / 6
    assert (ppi["rate_a"], ppi["rate_b"]) == (pytest.approx(theta_a), pytest.approx(theta_b))
    assert ppi["value"] == pytest.approx(theta_b - theta_a)
    assert ppi["gold_units"] == [7, 6]
    assert ppi["n_units"] == [8, 7]
    head = world["result"]["rates"]["faithfulness"]["headline"]
    gold_width = np.diff(world["result"]["rates"]["faithfulness"]["gold_only"]["ci"])[0]
    assert np.diff(ppi["ci"])[0] < gold_width
    assert head["choice"] == "ppi"


def test_judge_by_system_is_fishers_exact_test_and_wilson(world):
    audit = world["result"]["judge_by_system"]
    # A: sensitivity 5 of 6 gold S (q6 judged N), specificity 2 of 2; B: 4 of 4 and 1 of 2.
    tables = {"sensitivity": ((5, 6), (4, 4)), "specificity": ((2, 2), (1, 2))}
    for key, ((ka, na), (kb, nb)) in tables.items():
        p = scipy_stats.fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue
        assert audit["equality_p"][key] == pytest.approx(p)
        for row, (k, n) in zip(audit["per_system"], ((ka, na), (kb, nb)), strict=True):
            low, high = proportion_confint(k, n, method="wilson")
            assert row[key] == {
                "value": pytest.approx(k / n),
                "ci": [pytest.approx(low), pytest.approx(high)],
                "successes": k,
                "n": n,
            }
    assert [row["n_audited"] for row in audit["per_system"]] == [8, 6]


def test_the_worst_questions_are_in_the_order_of_the_hand_deltas(world):
    # Gold, else the judge: q1 0.5 → 1, q2 1 → 0, q3 0.5 → 1, q4 0.5 → 0, q5 1 → 1; q6's B
    # abstains (no claims), so q6 has no delta. Ties keep the questions' order.
    best = {
        "q1": ([S, C], [S, S]),
        "q2": ([S], [N]),
        "q3": ([N, S], [S, S]),
        "q4": ([S, N], [C]),
        "q5": ([S, S], [S]),
    }
    deltas = {
        q: np.mean([v == S for v in b]) - np.mean([v == S for v in a]) for q, (a, b) in best.items()
    }
    order = sorted(deltas, key=lambda q: (deltas[q], q))
    worst = world["result"]["worst_questions"]
    assert [row["question_key"] for row in worst] == order == ["q2", "q4", "q5", "q1", "q3"]
    assert [row["delta"] for row in worst] == [pytest.approx(deltas[q]) for q in order]
    assert [row["risk_category"] for row in worst] == [
        "financial",
        "health",
        "financial",
        "financial",
        "health",
    ]


def test_the_pairwise_judge_block_is_the_hand_scored_t_intervals(world):
    block = world["result"]["pairwise"]
    b_first = np.array([1.0, 1.0, 0.5, 0.0])  # q1..q4, B's answer first: B's score
    a_first = np.array([0.0, 1.0, 1.0, 1.0])  # A's answer first: the first position's score

    def t_ci(x):
        return list(scipy_stats.ttest_1samp(x, 0).confidence_interval())

    preference = (b_first + 1 - a_first) / 2
    position = (b_first + a_first) / 2
    assert block["preference_b"] == approx_tree(
        {"value": preference.mean(), "ci": t_ci(preference), "n": 4}
    )
    assert block["position_bias"] == approx_tree(
        {"value": position.mean() - 0.5, "ci": t_ci(position - 0.5), "n": 4}
    )
    assert block["first_position_share"] == approx_tree(
        {"value": position.mean(), "ci": t_ci(position), "n": 4}
    )
    assert block["single_order"] == approx_tree(
        {
            "b_first": {"value": b_first.mean(), "ci": t_ci(b_first), "n": 4},
            "a_first": {"value": (1 - a_first).mean(), "ci": t_ci(1 - a_first), "n": 4},
        }
    )
    assert (block["n_pairs"], block["incomplete_pairs"], block["unparseable"]) == (4, 2, 1)


def test_the_analysts_block_is_statsmodels_and_sklearn(world):
    block = world["result"]["pairwise_human"]
    score = {"B": 1.0, "tie": 0.5, "A": 0.0}
    y = np.array([score[c] for _, _, c in MARKS])
    codes = np.unique([q for _, q, _ in MARKS], return_inverse=True)[1]
    fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    assert block["preference_b"]["value"] == pytest.approx(fit.params[0])
    assert block["preference_b"]["std_error"] == pytest.approx(fit.bse[0])
    # The judge's order-averaged verdicts on q1..q4 by hand: B, tie, A, A.
    judged = {"q1": "B", "q2": "tie", "q3": "A", "q4": "A"}
    both = [(c, judged[q]) for _, q, c in MARKS if q in judged]
    agreement = block["agreement"]
    assert agreement["share"]["value"] == pytest.approx(np.mean([h == j for h, j in both]))
    assert agreement["kappa"] == pytest.approx(
        cohen_kappa_score([h for h, _ in both], [j for _, j in both])
    )
    assert (agreement["n"], agreement["n_pairs"]) == (len(both), 4) == (6, 4)


# -- compare_gate: both sides and exactly at the margin (no database) ---------------------------


def _gate_result(choice, high, finding="F."):
    return {
        "rates": {"faithfulness": {"headline": {"choice": choice, "ci": [-0.9, high]}}},
        "finding": finding,
    }


@pytest.mark.parametrize(
    ("high", "margin", "worse", "sentence"),
    [
        (
            -0.25,
            0.25,
            False,
            "Not worse: the upper end of B − A (-25.0 points) is not below −25.0. F.",
        ),
        (
            -0.26,
            0.25,
            True,
            "B is worse than A: the upper end of B − A (-26.0 points) is below −25.0. F.",
        ),
        (
            -0.03,
            None,
            True,
            "B is worse than A: the upper end of B − A (-3.0 points) is below −2.0. F.",
        ),
        (
            -0.02,
            None,
            False,
            "Not worse: the upper end of B − A (-2.0 points) is not below −2.0. F.",
        ),
        (0.4, 0.0, False, "Not worse: the upper end of B − A (40.0 points) is not below −0.0. F."),
    ],
)
def test_compare_gate_sides_and_the_margin_itself(high, margin, worse, sentence):
    kwargs = {} if margin is None else {"margin": margin}
    assert compare_gate(_gate_result("ppi", high), **kwargs) == (worse, sentence)


def test_compare_gate_without_an_interval_is_not_worse():
    expected = (False, "Not worse: no valid interval for B − A yet. No gold.")
    assert compare_gate(_gate_result(None, -0.5, "No gold.")) == expected
    assert compare_gate(_gate_result("gold_only", None, "No gold.")) == expected


# -- _finding, every branch (no database) --------------------------------------------------------


def _finding_result(choice, value, ci, judge="j"):
    return {
        "shared_questions": 6,
        "judge": judge,
        "rates": {
            "faithfulness": {
                "headline": {"choice": choice, "value": value, "ci": ci},
                "gold_only": {"n_questions": 4},
                "ppi": {"n_questions": 6},
            }
        },
    }


@pytest.mark.parametrize(
    ("choice", "value", "ci", "judge", "text"),
    [
        (
            "gold_only",
            0.1,
            [0.05, 0.15],
            "j",
            "B@2 (B) is more faithful than A@1 (A) by 10.0 points [5.0, 15.0] on 6 shared "
            "questions; paired, gold on 4 of them.",
        ),
        (
            "ppi",
            -0.1,
            [-0.15, -0.05],
            "j",
            "B@2 (B) is less faithful than A@1 (A) by 10.0 points [5.0, 15.0] on 6 shared "
            "questions; paired, PPI++ with judge j, gold on 4 of them.",
        ),
        (
            "ppi",
            0.1,
            [0.0, 0.2],
            "",
            "No clear difference in faithfulness between B@2 (B) and A@1 (A): B − A = +10.0 "
            "points [0.0, 20.0] on 6 shared questions; paired, PPI++ with judge —, gold on 4 of "
            "them.",
        ),
        (
            "ppi",
            -0.1,
            [-0.2, 0.0],
            None,
            "No clear difference in faithfulness between B@2 (B) and A@1 (A): B − A = -10.0 "
            "points [-20.0, 0.0] on 6 shared questions; paired, PPI++ with judge —, gold on 4 of "
            "them.",
        ),
        (
            "gold_only",
            0.0,
            [-0.1, 0.1],
            "j",
            "No clear difference in faithfulness between B@2 (B) and A@1 (A): B − A = +0.0 "
            "points [-10.0, 10.0] on 6 shared questions; paired, gold on 4 of them.",
        ),
        (
            None,
            None,
            [None, None],
            "j",
            "No comparison of faithfulness yet: 6 shared questions, and neither system has "
            "enough gold on them (label claims of both systems' answers to the same questions).",
        ),
    ],
)
def test_finding_every_branch(choice, value, ci, judge, text):
    result = _finding_result(choice, value, ci, judge)
    if choice == "gold_only":
        result["rates"]["faithfulness"]["ppi"]["n_questions"] = 99  # not read for gold only
    assert _finding(result, "A@1", "B@2") == text


# -- _judge_by_system on a hand-made pair (no database) -----------------------------------------


class _FakePair:
    def __init__(self, rows, *, name="judge-x", model="claude-3-opus"):
        self.claims = pd.DataFrame(rows, columns=["side", "gold", "judge"])
        self.judge_name = name
        self.judge_model = model


def _rate(k, n):
    low, high = proportion_confint(k, n, method="wilson")
    return {"value": k / n, "ci": (low, high), "successes": k, "n": n}


def test_judge_by_system_both_differ_and_self_preference_on_both():
    rows = [(0, S, S)] * 10 + [(0, N, C)] * 10 + [(1, S, N)] * 10 + [(1, C, S)] * 10
    rows += [(0, "", S), (1, S, ""), (1, "", "")]  # no gold or no verdict: not audited
    a = System(name="rag", version="1", metadata={"generator_model": "anthropic/claude-3-haiku"})
    b = System(name="rag", version="", metadata={"generator_model": "Claude-2"})
    audit = _judge_by_system(_FakePair(rows), (a, b))
    p = scipy_stats.fisher_exact([[10, 0], [0, 10]]).pvalue
    assert audit == approx_tree(
        {
            "per_system": [
                {
                    "system": "rag@1",
                    "n_audited": 20,
                    "sensitivity": _rate(10, 10),
                    "specificity": _rate(10, 10),
                    "youden_j": 1.0,
                },
                {
                    "system": "rag",
                    "n_audited": 20,
                    "sensitivity": _rate(0, 10),
                    "specificity": _rate(0, 10),
                    "youden_j": -1.0,
                },
            ],
            "equality_p": {"sensitivity": p, "specificity": p},
            "equality": (
                "The judge's sensitivity and specificity differ between the systems (Fisher's "
                "exact test, p < 0.05): its errors are not the same on both, so a comparison of "
                "its raw rates is biased; PPI++ above rectifies each system by its own gold."
            ),
            "self_preference": [
                "Self-preference: the judge's model (claude-3-opus) is of the anthropic family, "
                "as rag@1's generator (anthropic/claude-3-haiku): judges rate their own family's "
                "outputs higher. Audit it on this system's gold (above) or use a judge of another "
                "family.",
                "Self-preference: the judge's model (claude-3-opus) is of the anthropic family, "
                "as rag's generator (Claude-2): judges rate their own family's outputs higher. "
                "Audit it on this system's gold (above) or use a judge of another family.",
            ],
            "model": "claude-3-opus",
            "family": "anthropic",
        }
    )


def test_judge_by_system_one_side_empty_and_no_family():
    # B has no gold SUPPORTED claim: its sensitivity has n = 0 and no p-value; specificity
    # differs (A 10 of 10, B 0 of 10).
    rows = [(0, S, S)] * 3 + [(0, N, N)] * 10 + [(1, C, S)] * 10
    a = System(name="a", version="", metadata=None)
    b = System(name="b", version="", metadata={"generator_model": ""})
    audit = _judge_by_system(_FakePair(rows, model=""), (a, b))
    assert math.isnan(audit["equality_p"]["sensitivity"])
    assert audit["equality_p"]["specificity"] == pytest.approx(
        scipy_stats.fisher_exact([[10, 0], [0, 10]]).pvalue
    )
    assert audit["equality"] == (
        "The judge's specificity differ between the systems (Fisher's exact test, p < 0.05): "
        "its errors are not the same on both, so a comparison of its raw rates is biased; PPI++ "
        "above rectifies each system by its own gold."
    )
    assert (audit["self_preference"], audit["model"], audit["family"]) == ([], "", "")
    assert audit["per_system"][1]["sensitivity"]["n"] == 0
    assert [row["n_audited"] for row in audit["per_system"]] == [13, 10]
    # A generator of another family than the judge's: no warning.
    other = System(name="c", version="", metadata={"generator_model": "gpt-4o"})
    assert _judge_by_system(_FakePair(rows), (other, b))["self_preference"] == []
    assert _judge_by_system(_FakePair(rows, name=""), (a, b)) is None


# -- model_family (no database) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4o-mini", "openai"),
        ("o1-preview", "openai"),
        ("o3-mini", "openai"),
        ("o4-mini", "openai"),
        ("chatgpt-4o-latest", "openai"),
        ("claude-3-5-sonnet", "anthropic"),
        ("llama3.1", "llama"),
        ("meta-llama-3-70b", "llama"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama"),
        ("mistral-large", "mistral"),
        ("mixtral-8x7b", "mistral"),
        ("gemini-1.5-pro", "gemini"),
        ("gemma-2-9b", "gemini"),
        ("qwen2.5-72b", "qwen"),
        ("deepseek-r1", "deepseek"),
        ("phi-3-mini", "phi"),
        ("command-r-plus", "cohere"),
        ("  GPT-4 ", "openai"),
        ("org/team/gpt-4", "openai"),
        ("Org/Foo_Bar", "foo"),
        ("lexical-baseline", "lexical"),
        ("x:y", "x"),
        ("x_y", "x"),
        ("x.y-z", "x"),
        ("x y", "x"),
        ("bert", "bert"),
        ("", ""),
        (None, ""),
    ],
)
def test_model_family_table(model, family):
    assert model_family(model) == family


# -- system_resolve and systems_compare's refusals (database) ------------------------------------


def test_system_resolve_whole_messages():
    project = ProjectFactory()
    empty = ProjectFactory()
    a = System.objects.create(project=project, name="rag", version="1")
    b = System.objects.create(project=project, name="rag", version="2")
    other = System.objects.create(project=project, name="other", version="")
    assert system_resolve(project=project, ref=" rag @ 2 ") == b
    assert system_resolve(project=project, ref="rag@1") == a
    assert system_resolve(project=project, ref="other") == other
    known = "other, rag@1, rag@2"
    with pytest.raises(SystemNotFound) as err:
        system_resolve(project=project, ref="rag")
    assert str(err.value) == (
        f"'rag' names several versions of 'rag': write NAME@VERSION (systems of this project: {known})."
    )
    with pytest.raises(SystemNotFound) as err:
        system_resolve(project=project, ref="rag@9")
    assert str(err.value) == f"No system 'rag@9' in this project (systems: {known})."
    with pytest.raises(SystemNotFound) as err:
        system_resolve(project=empty, ref="rag")
    assert str(err.value) == "No system 'rag' in this project (systems: none)."
    with pytest.raises(ValueError, match=r"^compare two different systems$"):
        systems_compare(project=project, a=a, b=a)
    stranger = System.objects.create(project=empty, name="rag", version="1")
    for x, y in ((a, stranger), (stranger, a)):
        with pytest.raises(ValueError, match=r"^both systems must belong to the project$"):
            systems_compare(project=project, a=x, b=y)


# -- the pairwise judge's block: orientation, too few pairs, none (database, no import) --------


@pytest.fixture
def pairs():
    """Two systems with answers to q1..q4 and nothing else (no claims, no gold)."""
    project = ProjectFactory(slug="pairs", name="Pairs")
    a = System.objects.create(project=project, name="rag", version="1")
    b = System.objects.create(project=project, name="rag", version="2")
    for system in (a, b):
        for i in range(1, 5):
            Answer.objects.create(
                project=project,
                external_id=f"{system.version}-{i}",
                question=f"Question {i}?",
                question_id=f"q{i}",
                text=f"answer {system.version} {i}",
                system=system,
            )
    return project, a, b


def _pairwise_run(project, a, b, replies, *, swapped=False, name="pj"):
    pj = JudgeFactory(project=project, name=name, model="pair-model")
    run_a, run_b = (b, a) if swapped else (a, b)
    run = JudgeRunFactory(
        judge=pj,
        kind=JudgeRun.Kind.PAIRWISE,
        parameters={"system_a": run_a.pk, "system_b": run_b.pk},
    )
    flip = {"b_first": "a_first", "a_first": "b_first"}
    for q, both in replies.items():
        for order, verdict in zip(("b_first", "a_first"), both, strict=True):
            if verdict is not None:
                PairwiseVerdict.objects.create(
                    run=run,
                    judge=pj,
                    question_id=q,
                    system_a=run_a,
                    system_b=run_b,
                    order=flip[order] if swapped else order,
                    verdict=verdict,
                )
    return pj, run


REPLIES = {"q1": ("first", "second"), "q2": ("second", "second"), "q3": ("tie", "first")}


def test_a_run_stored_the_other_way_round_gives_the_same_block(pairs):
    project, a, b = pairs
    pj, run = _pairwise_run(project, a, b, REPLIES, swapped=True)
    block = _pairwise_block(a=a, b=b, judge=pj, a_label="rag@1", b_label="rag@2")
    b_first, a_first = np.array([1.0, 0.0, 0.5]), np.array([0.0, 0.0, 1.0])
    preference = (b_first + 1 - a_first) / 2  # 1, 0.5, 0.25
    position = (b_first + a_first) / 2 - 0.5  # 0, −0.5, 0.25
    assert block["run_id"] == run.pk
    assert block["preference_b"]["value"] == pytest.approx(preference.mean())
    assert block["position_bias"]["value"] == pytest.approx(position.mean())
    assert block["single_order"]["a_first"]["value"] == pytest.approx((1 - a_first).mean())
    assert (block["n_pairs"], block["incomplete_pairs"], block["unparseable"]) == (3, 0, 0)
    assert block["method"] == (
        "asked in both orders and averaged; position bias = share of first-position wins − 50%, "
        "over both orders of every pair; t intervals over pairs, 95%; 0 unparseable replies "
        "counted apart and a pair counts only when both its orders have a verdict; ties count half."
    )
    low, high = scipy_stats.ttest_1samp(preference, 0).confidence_interval()
    share_low, share_high = scipy_stats.ttest_1samp(position + 0.5, 0).confidence_interval()
    assert block["finding"] == (
        f"The judge pj prefers whichever answer comes first in {100 * (position.mean() + 0.5):.0f}% "
        f"[{100 * share_low:.0f}, {100 * share_high:.0f}] of pairs; averaged over both orders, "
        f"rag@2 (B) is preferred to rag@1 (A) in {100 * preference.mean():.0f}% "
        f"[{100 * low:.0f}, {100 * high:.0f}] of 3 pairs (ties count half)."
    )
    # The same replies stored straight: the same block but the run.
    pj2, run2 = _pairwise_run(project, a, b, REPLIES, name="pj2")
    straight = _pairwise_block(a=a, b=b, judge=pj2, a_label="rag@1", b_label="rag@2")
    assert straight["finding"] == block["finding"].replace("judge pj ", "judge pj2 ")
    assert {**straight, "judge": "pj", "run_id": run.pk, "finding": block["finding"]} == block


def test_too_few_complete_pairs_and_no_run(pairs):
    project, a, b = pairs
    other = JudgeFactory(project=project, name="verify-only")
    assert _pairwise_block(a=a, b=b, judge=other, a_label="A", b_label="B") is None
    assert _pairwise_block(a=a, b=b, judge=None, a_label="A", b_label="B") is None
    replies = {"q1": ("first", "tie"), "q2": ("first", None), "q3": ("UNPARSEABLE", "UNPARSEABLE")}
    _pj, run = _pairwise_run(project, a, b, replies)
    # `other` judged no pairs: the newest run of any judge.
    assert _pairwise_block(a=a, b=b, judge=other, a_label="A", b_label="B") == {
        "judge": "pj",
        "run_id": run.pk,
        "model": "pair-model",
        "prompt_version": "v-test",
        "n_pairs": 1,
        "incomplete_pairs": 1,
        "unparseable": 2,
        "preference_b": None,
        "position_bias": None,
        "first_position_share": None,
        "single_order": {"b_first": None, "a_first": None},
        "finding": (
            "Pairwise judge pj: 1 pair(s) judged in both orders so far; at least 2 are needed "
            "for an interval."
        ),
        "method": "asked in both orders and averaged; too few complete pairs to estimate",
    }


def test_no_pairwise_run_leaves_the_key_out_and_no_marks_says_so(pairs):
    project, a, b = pairs
    result = systems_compare(project=project, a=a, b=b)
    assert "pairwise" not in result
    assert result["pairwise_human"] == {
        "n_preferences": 0,
        "n_pairs": 0,
        "n_analysts": 0,
        "sources": {"screen": 0, "file": 0},
        "preference_b": None,
        "decided_b": None,
        "strength_b": None,
        "analysts_agreement": None,
        "counts": {"B": 0, "A": 0, "tie": 0},
        "judge": None,
        "agreement": None,
        "method": METHOD,
        "finding": (
            "No analyst has marked pairs of these two systems yet: the pairwise queue shows them "
            "one question at a time, blind, or import marks from a file."
        ),
    }
    assert result["worst_questions"] == []
    assert result["judge_by_system"] is None
    assert result["shared_questions"] == 4
    assert result["answers"] == {"a": 4, "b": 4}
    assert result["by_risk_category"][0]["risk_category"] == "none"
    assert result["by_risk_category"][0]["questions"] == 4


# -- the analysts' block, its other branches (database, no import) ------------------------------


def _marks(project, a, b, marks):
    users = {}
    answers = {(x.system_id, x.question_id): x for x in Answer.objects.filter(project=project)}
    for who, q, choice in marks:
        if who not in users:
            users[who] = User.objects.create(username=f"{project.slug}-m-{who}")
        PairwisePreference.objects.create(
            project=project,
            question_key=q,
            system_1=a,
            system_2=b,
            answer_1=answers[(a.pk, q)],
            answer_2=answers[(b.pk, q)],
            left_system=b,
            analyst=users[who],
            choice={"B": "left", "A": "right", "tie": "tie"}[choice],
            preferred_system={"B": b, "A": a, "tie": None}[choice],
        )


def _human(a, b, judge=None):
    return pairwise_human_block(a=a, b=b, judge=judge, a_label="rag@1", b_label="rag@2")


def test_one_mark_by_one_analyst_and_no_judge(pairs):
    project, a, b = pairs
    _marks(project, a, b, [(0, "q1", "B")])
    assert json_safe(_human(a, b)) == {
        "n_preferences": 1,
        "n_pairs": 1,
        "n_analysts": 1,
        "sources": {"screen": 1, "file": 0},
        "preference_b": {
            "value": 1.0,
            "ci": [None, None],
            "std_error": None,
            "n": 1,
            "n_clusters": 1,
        },
        # One B mark: θ = 1, no variation, so n* = G = 1 and Wilson(1, 1): centre
        # (1 + z²/2)/(1 + z²), half-width (z²/2)/(1 + z²), so [1/(1 + z²), 1].
        "decided_b": {
            "value": 1.0,
            "ci": [pytest.approx(1 / (1 + 1.959963984540054**2)), 1.0],
            "n": 1,
            "n_clusters": 1,
            "n_effective": 1.0,
            "n_decided": 1,
            "n_ties": 0,
            "sign_test": {"questions_b": 1, "questions_a": 0, "questions_even": 0, "p_value": 1.0},
        },
        "strength_b": None,
        "analysts_agreement": None,
        "counts": {"B": 1, "A": 0, "tie": 0},
        "judge": None,
        "agreement": None,
        "method": METHOD,
        "finding": (
            "Analysts prefer rag@2 (B) to rag@1 (A) in 100% [no interval] of 1 pair (1 mark by 1 "
            "analyst; ties count half). Of the 1 mark that chose a side, 100% [21, 100] chose B "
            "(0 ties set aside); B won 1 question and A 0, sign test p = 1.000. No pair has "
            "marks by two people yet, so the analysts' agreement with one another is not "
            "measured. The pairwise judge has not judged these two systems: press Run the "
            "pairwise judge (or run manage.py pairwise_judge) to measure its agreement with the "
            "analysts."
        ),
    }


def test_a_judge_that_judged_none_of_the_marked_pairs(pairs):
    project, a, b = pairs
    _marks(project, a, b, [(0, "q1", "B"), (1, "q1", "A"), (0, "q2", "tie")])
    pj, run = _pairwise_run(project, a, b, {"q3": ("first", "second"), "q4": ("tie", None)})
    block = _human(a, b, pj)
    assert block["judge"] == {"judge": "pj", "run_id": run.pk, "model": "pair-model"}
    assert block["agreement"] is None
    assert block["counts"] == {"B": 1, "A": 1, "tie": 1}
    assert block["finding"].endswith(
        "The pairwise judge pj judged none of the analysts' pairs in both orders: no agreement "
        "to measure yet."
    )
    assert "of 2 pairs (3 marks by 2 analysts; ties count half)." in block["finding"]


def test_one_choice_throughout_leaves_kappa_undefined(pairs):
    project, a, b = pairs
    _marks(project, a, b, [(0, "q1", "B"), (0, "q2", "B"), (1, "q1", "B")])
    replies = {"q1": ("first", "second"), "q2": ("first", "tie"), "q3": ("second", "UNPARSEABLE")}
    pj, _run = _pairwise_run(project, a, b, replies)
    block = _human(a, b, pj)
    agreement = block["agreement"]
    assert math.isnan(agreement["kappa"])
    assert agreement["share"]["value"] == 1.0
    assert (agreement["n"], agreement["n_pairs"]) == (3, 2)
    assert agreement["confusion"] == {
        "rows_human_columns_judge": ["B", "A", "tie"],
        "counts": [[3, 0, 0], [0, 0, 0], [0, 0, 0]],
    }
    low, high = agreement["share"]["ci"]
    assert block["finding"].startswith(
        "Analysts prefer rag@2 (B) to rag@1 (A) in 100% [100, 100] of 2 pairs (3 marks by 2 "
        "analysts; ties count half)."
    )
    # q1 marked B by both analysts: they agree, and their kappa is undefined too.
    assert "they agree on 100% [" in block["finding"]
    assert block["finding"].endswith(
        "On the 2 of these pairs the pairwise judge pj judged in both "
        f"orders, its order-averaged verdict matches the analyst's on 100% [{100 * low:.0f}, "
        f"{100 * high:.0f}] of 3 marks; Cohen's kappa undefined (one choice throughout)."
    )


def test_two_answers_of_one_system_to_a_question_count_the_question_once():
    project = ProjectFactory()
    first = answer_record("q1", "rag@1", [(S, S)], risk="legal")
    second = {**answer_record("q1", "rag@1", [(N, N)], risk="legal"), "id": "rag@1:q1:again"}
    records = [first, second, answer_record("q1", "rag@2", [(S, S)], risk="legal")]
    records += [
        answer_record("q2", system, [(S, S)], risk="legal") for system in ("rag@1", "rag@2")
    ]
    import_records(project, records)
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b)
    assert result["answers"] == {"a": 3, "b": 2}
    assert result["shared_questions"] == 2
    [legal] = result["by_risk_category"]
    assert (legal["risk_category"], legal["questions"]) == ("legal", 2)
    # A: 2 of 3 gold claims supported (q1 S and N, q2 S); B: 2 of 2.
    gold = legal["gold_only"]
    assert (gold["rate_a"], gold["rate_b"]) == (pytest.approx(2 / 3), 1.0)
    assert [row["question_key"] for row in result["worst_questions"]] == ["q2", "q1"]
    assert [len(row["a"]["answers"]) for row in result["worst_questions"]] == [1, 2]
