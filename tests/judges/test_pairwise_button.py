"""The compare page's *Run the pairwise judge* button (issue 32 item 5: a button where pages
said "run manage.py pairwise_judge"): a lead starts the both-orders run from the page against
the loopback endpoint and is brought back to the comparison, which then shows the judge's
figures; a judge that cannot judge pairs is refused with the reason; analysts cannot start it."""

import pytest
from django.urls import reverse

from judges.models import JudgeRun, PairwiseVerdict
from tests.factories import JudgeFactory, MembershipFactory
from tests.judges.test_pairwise import Planted, _systems

pytestmark = pytest.mark.django_db


def test_a_lead_runs_the_pairwise_judge_from_the_compare_page(
    client, project, openai_judge, llm, django_capture_on_commit_callbacks
):
    _base, ctl = llm
    ctl.script = Planted(pf=0.4, c=0.5)
    a, b = _systems(project, n=12)
    lead = MembershipFactory(project=project, role="lead").user
    client.force_login(lead)
    compare = reverse("metrics:compare", args=[project.slug])
    page = client.get(compare, {"a": a.pk, "b": b.pk, "judge": openai_judge.pk}).text
    assert 'data-testid="pairwise-run-form"' in page
    assert "Pairwise judge, both orders" not in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("metrics:compare-pairwise-run", args=[project.slug]),
            {"a": a.pk, "b": b.pk, "judge": openai_judge.pk},
        )
    assert response.status_code == 302
    assert response["Location"] == f"{compare}?a={a.pk}&b={b.pk}&judge={openai_judge.pk}"
    run = JudgeRun.objects.get(judge=openai_judge, kind="pairwise")
    assert run.status == "done"
    assert PairwiseVerdict.objects.filter(run=run).count() == 24  # 12 questions, both orders
    page = client.get(response["Location"]).text
    assert f"Pairwise judge {openai_judge.name} on A and B, both orders: run {run.pk} (" in page
    assert "Pairwise judge, both orders" in page
    assert "12 pairs judged in both orders" in page


def test_a_judge_that_cannot_judge_pairs_is_refused_with_the_reason(client, project, llm):
    a, b = _systems(project, n=3)
    other = JudgeFactory(project=project, name="verify-only", backend="openai", endpoint="nope")
    lead = MembershipFactory(project=project, role="lead").user
    client.force_login(lead)
    response = client.post(
        reverse("metrics:compare-pairwise-run", args=[project.slug]),
        {"a": a.pk, "b": b.pk, "judge": other.pk},
        follow=True,
    )
    assert "endpoint:" in response.text
    assert not JudgeRun.objects.filter(judge=other).exists()


def test_analysts_cannot_start_a_pairwise_run(client, project, openai_judge):
    a, b = _systems(project, n=3)
    analyst = MembershipFactory(project=project, role="analyst").user
    client.force_login(analyst)
    response = client.post(
        reverse("metrics:compare-pairwise-run", args=[project.slug]),
        {"a": a.pk, "b": b.pk, "judge": openai_judge.pk},
    )
    assert response.status_code in (403, 404)
    assert not JudgeRun.objects.exists()
