"""Splitting the answers list's filtered set into claims by LLM, from the UI, as one split job
(issue 19 item 7): the job holds exactly the filtered answers without claims, runs through the
existing split job machinery, and refuses clearly when nothing is left to split."""

import pytest
from django.urls import reverse

from judges.models import SplitJob
from judges.split_jobs import split_job_execute
from tests.factories import AnswerFactory, ClaimFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


@pytest.fixture
def answers(project):
    made = [
        AnswerFactory(
            project=project,
            external_id=f"r{n}",
            position=n,
            risk_category="legal" if n % 2 else "none",
            text=f"Rule {n} applies. Rule {n} has exceptions.",
        )
        for n in range(6)
    ]
    ClaimFactory(answer=made[1], project=project)  # a legal answer already split
    return made


def test_the_bulk_split_page_counts_the_filtered_answers(
    lead_client, project, answers, openai_judge
):
    url = reverse("judges:split-bulk", args=[project.slug])
    page = lead_client.get(url, {"risk": "legal"}).content.decode()
    assert "The 3 answers the answers list shows with its filters" in page
    assert "<strong>2</strong> without claims yet" in page  # r3, r5 (r1 has a claim)
    assert '<input type="hidden" name="risk" value="legal"' in page
    everything = lead_client.get(url).content.decode()
    assert "All 6 answers of the project" in everything


def test_a_bulk_split_of_the_filtered_set_splits_those_answers_only(
    lead_client, project, answers, openai_judge, django_capture_on_commit_callbacks
):
    url = reverse("judges:split-bulk", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=False):
        response = lead_client.post(url, {"risk": "legal", "judge": openai_judge.pk})
    job = SplitJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:split-job", args=[project.slug, job.pk])
    assert job.answer_ids == [answers[3].pk, answers[5].pk]
    assert split_job_execute(job.pk) == "done"
    job.refresh_from_db()
    assert (job.done, job.failed, job.claims_created) == (2, 0, 4)
    assert answers[0].claims.count() == 0  # not in the filtered set
    assert answers[1].claims.count() == 1  # had claims: left alone without "split again"
    page = lead_client.get(response["Location"]).content.decode()
    assert "Split 2 answers into 4 new claims" in page
    assert "2 answers (filtered: risk category Legal)" in page


def test_a_bulk_split_with_nothing_left_says_so_and_queues_nothing(
    lead_client, project, answers, openai_judge
):
    url = reverse("judges:split-bulk", args=[project.slug])
    response = lead_client.post(url, {"q": "Rule 1 ", "judge": openai_judge.pk})
    assert response.status_code == 400
    assert "Every answer listed already has claims" in response.content.decode()
    assert not SplitJob.objects.exists()


def test_a_bulk_split_refuses_an_unknown_filter_naming_it(
    lead_client, project, answers, openai_judge
):
    url = reverse("judges:split-bulk", args=[project.slug])
    response = lead_client.post(url, {"gold": "perhaps", "judge": openai_judge.pk})
    assert response.status_code == 400
    assert "gold: Select a valid choice" in response.content.decode()
    assert not SplitJob.objects.exists()


def test_a_bulk_split_is_for_leads_only(client, project, answers, openai_judge):
    from tests.factories import MembershipFactory

    analyst = MembershipFactory(project=project, role="analyst").user
    client.force_login(analyst)
    url = reverse("judges:split-bulk", args=[project.slug])
    assert client.get(url).status_code == 404
    assert client.post(url, {"judge": openai_judge.pk}).status_code == 404
    assert not SplitJob.objects.exists()
