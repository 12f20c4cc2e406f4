"""The comparison's "Pairwise, analysts" block (metrics/services/compare_pairwise_human.py) on
the compare page, `manage.py compare --format json|text` and the API: the analysts' preference
for B with an interval clustered by question, and their agreement with the pairwise judge's
order-averaged verdicts — figures from statsmodels, scikit-learn and a hand table."""

import io
import json

import numpy as np
import pytest
import statsmodels.api as sm
from django.core.management import call_command
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotate.models import Answer, PairwisePreference, System
from judges.models import JudgeRun, PairwiseVerdict
from metrics.services.compare import systems_compare
from tests.factories import JudgeFactory, JudgeRunFactory, MembershipFactory, ProjectFactory

pytestmark = pytest.mark.django_db

N = 12
# The analysts' preferences per question: analyst 1 marks all 12, analyst 2 the first 6.
FIRST = ["B", "B", "A", "tie", "B", "B", "A", "B", "tie", "B", "A", "B"]
SECOND = ["B", "A", "A", "B", "B", "tie"]
# The judge's (b_first, a_first) verdicts on q0..q9 and, by hand from the rule "B's score
# p = (score(b_first) + 1 − score(a_first))/2; B above ½, A below, tie at ½", its verdict.
JUDGE = [
    (("first", "second"), "B"),
    (("first", "first"), "tie"),
    (("second", "first"), "A"),
    (("tie", "tie"), "tie"),
    (("first", "tie"), "B"),
    (("second", "second"), "tie"),
    (("second", "first"), "A"),
    (("first", "second"), "B"),
    (("first", "second"), "B"),
    (("tie", "second"), "B"),
]


@pytest.fixture
def world():
    project = ProjectFactory(slug="pairs", name="Pairs")
    lead = MembershipFactory(project=project, role="lead").user
    analysts = [MembershipFactory(project=project, role="analyst").user for _ in range(2)]
    a = System.objects.create(project=project, name="rag", version="1")
    b = System.objects.create(project=project, name="rag", version="2")
    answers = {}
    for i in range(N):
        for system in (a, b):
            answers[(system.pk, i)] = Answer.objects.create(
                project=project,
                external_id=f"{system.version}-{i}",
                question=f"Question {i}?",
                question_id=f"q{i:02d}",
                text=f"answer {system.version} {i}",
                system=system,
            )
    return {
        "project": project,
        "lead": lead,
        "analysts": analysts,
        "a": a,
        "b": b,
        "answers": answers,
    }


def _prefer(world, analyst, i, choice):
    """A stored preference with system_1 (A, the lower id) shown on the left."""
    a, b = world["a"], world["b"]
    preferred = {"B": b, "A": a, "tie": None}[choice]
    PairwisePreference.objects.create(
        project=world["project"],
        question_key=f"q{i:02d}",
        system_1=a,
        system_2=b,
        answer_1=world["answers"][(a.pk, i)],
        answer_2=world["answers"][(b.pk, i)],
        left_system=a,
        analyst=analyst,
        choice={"B": "right", "A": "left", "tie": "tie"}[choice],
        preferred_system=preferred,
    )


def _mark_all(world):
    for i, choice in enumerate(FIRST):
        _prefer(world, world["analysts"][0], i, choice)
    for i, choice in enumerate(SECOND):
        _prefer(world, world["analysts"][1], i, choice)


def _judge(world, *, system_a, system_b, name="pj"):
    """A pairwise run on q0..q9 (both orders) plus q10 with one order only and q11 with one
    UNPARSEABLE reply: those two pairs never count."""
    judge = JudgeFactory(project=world["project"], name=name)
    run = JudgeRunFactory(
        judge=judge,
        kind=JudgeRun.Kind.PAIRWISE,
        parameters={"system_a": system_a.pk, "system_b": system_b.pk},
    )
    # Stored in the run's own orientation: swapped when its A is our B.
    swap = system_a == world["b"]
    rows = [(f"q{i:02d}", verdicts) for i, (verdicts, _) in enumerate(JUDGE)]
    rows += [("q10", ("first", None)), ("q11", ("first", "UNPARSEABLE"))]
    for key, (b_first, a_first) in rows:
        for order, verdict in (("b_first", b_first), ("a_first", a_first)):
            if verdict is None:
                continue
            stored_order = {"b_first": "a_first", "a_first": "b_first"}[order] if swap else order
            PairwiseVerdict.objects.create(
                run=run,
                judge=judge,
                question_id=key,
                system_a=system_a,
                system_b=system_b,
                order=stored_order,
                verdict=verdict,
            )
    return judge


def _expected():
    human = FIRST + SECOND
    keys = [f"q{i:02d}" for i in range(N)] + [f"q{i:02d}" for i in range(6)]
    score = {"B": 1.0, "tie": 0.5, "A": 0.0}
    y = np.array([score[c] for c in human])
    codes = np.unique(keys, return_inverse=True)[1]
    fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    judged = {f"q{i:02d}": verdict for i, (_, verdict) in enumerate(JUDGE)}
    both = [(h, judged[k]) for h, k in zip(human, keys, strict=True) if k in judged]
    return {
        "preference": fit.params[0],
        "ci": tuple(fit.conf_int(alpha=0.05)[0]),
        "share": np.mean([h == j for h, j in both]),
        "kappa": cohen_kappa_score([h for h, _ in both], [j for _, j in both]),
        "n_agreement": len(both),
    }


def test_pairwise_human_block_pins_preference_and_agreement(world):
    _mark_all(world)
    judge = _judge(world, system_a=world["a"], system_b=world["b"])
    block = systems_compare(project=world["project"], a=world["a"], b=world["b"], judge=judge)[
        "pairwise_human"
    ]
    expected = _expected()
    assert (block["n_preferences"], block["n_pairs"], block["n_analysts"]) == (18, 12, 2)
    assert block["counts"] == {"B": 10, "A": 5, "tie": 3}
    assert block["preference_b"]["value"] == pytest.approx(expected["preference"])
    assert block["preference_b"]["ci"] == pytest.approx(list(expected["ci"]))
    agreement = block["agreement"]
    assert agreement["n"] == expected["n_agreement"] == 16  # marks on q0..q9
    assert agreement["n_pairs"] == 10
    assert agreement["share"]["value"] == pytest.approx(expected["share"])
    assert agreement["kappa"] == pytest.approx(expected["kappa"])
    low, high = agreement["share"]["ci"]
    assert low < expected["share"] < high
    assert block["judge"]["judge"] == "pj"
    # By hand from FIRST and SECOND: 15 decided marks, 10 of them B; per question B − A
    # marks: B ahead on q0 q3 q4 q5 q7 q9 q11, A on q2 q6 q10 → two-sided binomial
    # 2·(120+45+10+1)/1024 = 0.34375. Both analysts on q0..q5: agree on q0 q2 q4 (3 of 6),
    # opposite on q1 (1 of 6); kappa p_o = ½, p_e = (4·3 + 1·2 + 1·1)/36 → 1/7.
    decided = block["decided_b"]
    assert (decided["n_decided"], decided["value"]) == (15, pytest.approx(10 / 15))
    assert decided["sign_test"]["p_value"] == pytest.approx(352 / 1024)
    analysts = block["analysts_agreement"]
    raw, opposite = analysts["raw_agreement"], analysts["opposite"]
    assert (raw["value"], opposite["value"]) == (0.5, pytest.approx(1 / 6))
    assert analysts["kappa"]["value"] == pytest.approx(cohen_kappa_score(FIRST[:6], SECOND))
    assert analysts["kappa"]["value"] == pytest.approx(1 / 7)
    kappa_ci = analysts["kappa"]["ci"]
    assert block["finding"] == (
        f"Analysts prefer rag@2 (B) to rag@1 (A) in {100 * expected['preference']:.0f}% "
        f"[{100 * expected['ci'][0]:.0f}, {100 * expected['ci'][1]:.0f}] of 12 pairs "
        "(18 marks by 2 analysts; ties count half). "
        f"Of the 15 marks that chose a side, 67% [{100 * decided['ci'][0]:.0f}, "
        f"{100 * decided['ci'][1]:.0f}] chose B (3 ties set aside); B won 7 questions and A 3, "
        "sign test p = 0.344. Where two people marked the same pair (6 of 12 pairs, 6 "
        f"comparisons), they agree on 50% [{100 * raw['ci'][0]:.0f}, {100 * raw['ci'][1]:.0f}] "
        f"and point opposite ways on 17% [{100 * opposite['ci'][0]:.0f}, "
        f"{100 * opposite['ci'][1]:.0f}]; Cohen's kappa 0.14 [{kappa_ci[0]:.2f}, "
        f"{kappa_ci[1]:.2f}]. On the 10 of these pairs the pairwise judge pj "
        f"judged in both orders, its order-averaged verdict matches the analyst's on "
        f"{100 * expected['share']:.0f}% [{100 * low:.0f}, {100 * high:.0f}] of 16 marks; "
        f"Cohen's kappa {expected['kappa']:.2f}."
    )


def test_pairwise_human_block_reversed_comparison_and_reversed_run(world):
    """B and A exchanged on the page, and the judge's run stored the other way round: the
    preference for (the new) B is 1 − p and the agreement is the same."""
    _mark_all(world)
    judge = _judge(world, system_a=world["b"], system_b=world["a"])
    straight = systems_compare(project=world["project"], a=world["a"], b=world["b"], judge=judge)
    reverse_ = systems_compare(project=world["project"], a=world["b"], b=world["a"], judge=judge)
    expected = _expected()
    s, r = straight["pairwise_human"], reverse_["pairwise_human"]
    assert s["agreement"]["share"]["value"] == pytest.approx(expected["share"])
    assert s["agreement"]["kappa"] == pytest.approx(expected["kappa"])
    assert r["preference_b"]["value"] == pytest.approx(1 - expected["preference"])
    assert r["counts"] == {"B": 5, "A": 10, "tie": 3}
    assert r["agreement"]["share"]["value"] == pytest.approx(expected["share"])


def test_pairwise_human_block_says_when_the_judge_has_not_run_or_no_one_marked(world):
    empty = systems_compare(project=world["project"], a=world["a"], b=world["b"])
    assert empty["pairwise_human"]["n_preferences"] == 0
    assert empty["pairwise_human"]["finding"].startswith("No analyst has marked pairs")
    _mark_all(world)
    block = systems_compare(project=world["project"], a=world["a"], b=world["b"])["pairwise_human"]
    assert block["agreement"] is None
    assert block["judge"] is None
    assert "The pairwise judge has not judged these two systems" in block["finding"]


def test_compare_command_json_and_text_carry_the_analysts_block(world):
    _mark_all(world)
    _judge(world, system_a=world["a"], system_b=world["b"])
    out = io.StringIO()
    call_command(
        "compare",
        "--project",
        "pairs",
        "--a",
        "rag@1",
        "--b",
        "rag@2",
        "--judge",
        "pj",
        "--format",
        "json",
        stdout=out,
    )
    block = json.loads(out.getvalue())["pairwise_human"]
    expected = _expected()
    assert block["preference_b"]["value"] == pytest.approx(expected["preference"])
    assert block["agreement"]["kappa"] == pytest.approx(expected["kappa"])
    assert block["agreement"]["confusion"]["rows_human_columns_judge"] == ["B", "A", "tie"]
    text = io.StringIO()
    call_command(
        "compare",
        "--project",
        "pairs",
        "--a",
        "rag@1",
        "--b",
        "rag@2",
        "--judge",
        "pj",
        stdout=text,
    )
    assert "Pairwise, analysts:" in text.getvalue()
    assert f"Cohen's kappa {expected['kappa']:.2f}" in text.getvalue()
    assert f"agreement with the judge {100 * expected['share']:.1f}%" in text.getvalue()


def test_compare_page_shows_the_analysts_block_and_the_queue_link(client, world):
    _mark_all(world)
    judge = _judge(world, system_a=world["a"], system_b=world["b"])
    client.force_login(world["lead"])
    url = reverse("metrics:compare", args=["pairs"])
    page = client.get(url, {"a": world["a"].pk, "b": world["b"].pk, "judge": judge.pk}).text
    assert "Pairwise, analysts" in page
    assert "Analysts prefer rag@2 (B) to rag@1 (A)" in page
    assert f"{_expected()['kappa']:.2f}" in page
    queue = reverse("annotate:pairwise", args=["pairs", world["a"].pk, world["b"].pk])
    assert f'href="{queue}"' in page


def test_api_compare_json_carries_the_analysts_block(client, world):
    from api.tokens import token_create

    _mark_all(world)
    _judge(world, system_a=world["a"], system_b=world["b"])
    token = token_create(user=world["lead"], name="ci").secret
    response = client.get(
        "/api/v1/projects/pairs/compare",
        {"a": "rag@1", "b": "rag@2", "judge": "pj"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200
    block = response.json()["pairwise_human"]
    expected = _expected()
    assert block["preference_b"]["ci"] == pytest.approx(list(expected["ci"]))
    assert block["agreement"]["share"]["value"] == pytest.approx(expected["share"])
    assert block["agreement"]["kappa"] == pytest.approx(expected["kappa"])
