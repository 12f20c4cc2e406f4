"""systems_compare: what a lead reads, from imported answers of two systems."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from judges.models import Judge
from metrics.services.compare import (
    SystemNotFound,
    compare_gate,
    system_resolve,
    systems_compare,
)
from tests.compare.builders import answer_record, import_records
from tests.factories import ProjectFactory

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
