"""The report's `ground_truth` key on a small world whose every figure is counted by hand:
five claims of two test answers (a financial and a health question), their gold verdicts,
the automatic check's verdicts (tests/testsets/test_truth.py derives them) and one analyst's
correctness mark, which is used before the automatic check."""

import pytest
from django.urls import reverse

from annotate.models import Label, Role
from metrics.services import snapshot_compute, snapshot_create
from metrics.services.report import report_compute
from tests.factories import (
    PASSWORD,
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)
from tests.testsets.test_truth import DOSE_SAME, NEGATED, OTHER_FIGURE, OUTSIDE, SAME
from tests.testsets.truth_world import truth_world_build
from testsets.services.truth import truth_check_run

pytestmark = pytest.mark.django_db

GOLD = {
    SAME: "SUPPORTED",
    OTHER_FIGURE: "CONTRADICTED",
    OUTSIDE: "NOT_IN_PILE",
    NEGATED: "NOT_IN_PILE",
    DOSE_SAME: "NOT_IN_PILE",
}


def _world():
    world = truth_world_build(
        claims_refund=[SAME, OTHER_FIGURE, OUTSIDE], claims_dose=[NEGATED, DOSE_SAME]
    )
    truth_check_run(run=world.run)
    for text, verdict in GOLD.items():
        GoldFactory(claim=world.claims[text], verdict=verdict)
    # The analyst says NEGATED is correct (the automatic check said INCORRECT): theirs counts.
    Label.objects.create(
        claim=world.claims[NEGATED], annotator=UserFactory(), verdict="NOT_IN_PILE", correct="yes"
    )
    # A claim of an answer from a file, not from a test question: no ground truth.
    outsider = AnswerFactory(project=world.project, system=world.system, question_id="file-1")
    GoldFactory(claim=ClaimFactory(answer=outsider, text="Refunds take 14 days."))
    return world


def _rate(block, name):
    figure = block[name]
    assert figure["ci"][0] <= figure["value"] <= figure["ci"][1]
    return figure["numerator"], figure["denominator"], round(figure["value"], 12)


def test_unfaithful_claims_split_into_hallucination_and_self_knowledge_by_hand():
    world = _world()
    truth = report_compute(project=world.project)["ground_truth"]
    assert truth["claims_with_ground_truth"] == 5  # the file's claim has none
    assert truth["correctness_source"] == {"analyst": 1, "automatic": 4, "unchecked": 0}
    gold = truth["gold"]
    # Faithful: SAME alone. Correct: SAME, DOSE_SAME (check) and NEGATED (analyst).
    assert _rate(gold, "faithfulness") == (1, 5, 0.2)
    assert _rate(gold, "correctness") == (3, 5, 0.6)
    # Unfaithful: OTHER_FIGURE (incorrect), OUTSIDE (not addressed), NEGATED, DOSE_SAME (correct).
    assert _rate(gold, "hallucination") == (1, 5, 0.2)
    assert _rate(gold, "self_knowledge") == (2, 5, 0.4)
    assert gold["counts"]["unfaithful"] == 4
    assert gold["counts"]["unfaithful_not_addressed"] == 1
    financial, health = gold["by_risk_category"]["financial"], gold["by_risk_category"]["health"]
    assert set(gold["by_risk_category"]) == {"financial", "health"}
    assert _rate(financial, "faithfulness") == (1, 3, round(1 / 3, 12))
    assert _rate(financial, "hallucination") == (1, 3, round(1 / 3, 12))
    assert _rate(financial, "self_knowledge") == (0, 3, 0.0)
    assert _rate(health, "faithfulness") == (0, 2, 0.0)
    assert _rate(health, "correctness") == (2, 2, 1.0)
    assert _rate(health, "self_knowledge") == (2, 2, 1.0)
    assert "judge" not in truth


def test_the_judges_figures_stand_beside_gold_when_a_judge_is_audited():
    world = _world()
    judge = JudgeFactory(project=world.project)
    run = JudgeRunFactory(judge=judge)
    judge_says = {
        SAME: "SUPPORTED",
        OTHER_FIGURE: "SUPPORTED",
        OUTSIDE: "NOT_IN_PILE",
        NEGATED: "SUPPORTED",
        DOSE_SAME: "CONTRADICTED",
    }
    for text, verdict in judge_says.items():
        JudgeVerdictFactory(run=run, claim=world.claims[text], verdict=verdict)
    truth = report_compute(project=world.project, judge=judge)["ground_truth"]
    by_judge = truth["judge"]
    assert by_judge["claims"] == 5
    assert _rate(by_judge, "faithfulness") == (3, 5, 0.6)
    # Unfaithful by the judge: OUTSIDE (not addressed) and DOSE_SAME (correct).
    assert _rate(by_judge, "hallucination") == (0, 5, 0.0)
    assert _rate(by_judge, "self_knowledge") == (1, 5, 0.2)
    assert _rate(by_judge["by_risk_category"]["health"], "self_knowledge") == (1, 2, 0.5)
    assert truth["gold"]["claims"] == 5  # the gold figures are unchanged beside it


def test_a_project_without_test_answers_has_no_ground_truth_key():
    project = ProjectFactory()
    GoldFactory(claim=ClaimFactory(answer=AnswerFactory(project=project)))
    assert "ground_truth" not in report_compute(project=project)


def _lead_client(client, project):
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    client.login(username=lead.username, password=PASSWORD)


def _row(html: str, table: str, risk: str) -> str:
    start = html.index(f'data-testid="ground-truth-{table}"')
    start = html.index(f'data-risk="{risk}"', start)
    return html[start : html.index("</tr>", start)]


def test_the_dashboard_shows_the_partition_by_risk_class(client):
    world = _world()
    _lead_client(client, world.project)
    snapshot = snapshot_create(project=world.project, judge=None)
    snapshot_compute(snapshot_id=snapshot.pk)
    html = client.get(reverse("metrics:dashboard", args=[world.project.slug])).content.decode()
    assert 'data-testid="ground-truth-panel"' in html
    assert "Used here: 1 analysts' mark, 4 automatic checks." in html
    assert 'data-figure="hallucination">20%' in _row(html, "gold", "all")
    assert 'data-figure="self_knowledge">40%' in _row(html, "gold", "all")
    assert 'data-figure="faithfulness">33%' in _row(html, "gold", "financial")
    assert 'data-figure="self_knowledge">100%' in _row(html, "gold", "health")
    assert 'data-testid="ground-truth-judge"' not in html  # no judge audited


def test_the_dashboard_hides_the_panel_without_test_answers(client):
    project = ProjectFactory()
    GoldFactory(claim=ClaimFactory(answer=AnswerFactory(project=project)))
    _lead_client(client, project)
    snapshot_compute(snapshot_id=snapshot_create(project=project, judge=None).pk)
    html = client.get(reverse("metrics:dashboard", args=[project.slug])).content.decode()
    assert 'data-figure="faithfulness"' in html  # the report is there
    assert "ground-truth-panel" not in html
