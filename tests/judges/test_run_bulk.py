"""A judge run over the answers list's filtered set, from the UI (issue 19 item 7): one verify
run whose claims are exactly the filtered answers' claims, its progress page, leads only; and
the split job's page names the filters it was started with."""

import pytest
from django.urls import reverse

from judges.models import JudgeRun, JudgeVerdict, SplitJob
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    MembershipFactory,
    PassageFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


@pytest.fixture
def listed(project):
    """Health answers h0 (2 claims) and h1 (1 claim), a health answer
    h2 without claims, and a legal answer l0 (3 claims): the filter risk=health lists h0, h1
    and h2, whose claims are h0's two and h1's one."""
    made = {}
    for name, risk in (("h0", "health"), ("h1", "health"), ("h2", "health"), ("l0", "legal")):
        made[name] = AnswerFactory(project=project, external_id=name, risk_category=risk)
    claims = {}
    for name, n_claims in (("h0", 2), ("h1", 1), ("h2", 0), ("l0", 3)):
        PassageFactory(answer=made[name], rank=1, text="Refunds take 14 days by card.")
        claims[name] = [
            ClaimFactory(answer=made[name], text=f"Refunds take {days} days.")
            for days in range(10, 10 + n_claims)
        ]
    return made, claims


def test_the_run_page_counts_the_filtered_answers_and_their_claims(lead_client, project, listed):
    JudgeFactory(project=project, name="lexical")
    url = reverse("judges:run-bulk", args=[project.slug])
    page = lead_client.get(url, {"risk": "health"}).content.decode()
    assert (
        "The 3 answers the answers list shows (filtered: risk category Health): "
        "<strong>3</strong> claims." in page
    )
    assert '<input type="hidden" name="risk" value="health"' in page
    everything = lead_client.get(url).content.decode()
    assert "All 4 answers of the project: <strong>6</strong> claims." in everything
    answers_list = lead_client.get(reverse("annotate:project-detail", args=[project.slug]))
    assert f'href="{url}">Run a judge…</a>' in answers_list.content.decode()


def test_a_run_on_the_filtered_answers_judges_exactly_their_claims(
    lead_client, project, listed, django_capture_on_commit_callbacks
):
    made, claims = listed
    judge = JudgeFactory(project=project, name="lexical")  # the offline baseline
    url = reverse("judges:run-bulk", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=True):  # the eager task runs the run
        response = lead_client.post(url, {"risk": "health", "judge": judge.pk, "scope": "all"})
    run = JudgeRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:run-detail", args=[project.slug, run.pk])
    assert (run.kind, run.judge_id, run.total) == ("verify", judge.pk, 3)
    assert run.answer_ids == sorted([made["h0"].pk, made["h1"].pk, made["h2"].pk])
    expected = {c.pk for c in claims["h0"] + claims["h1"]}
    assert set(JudgeVerdict.objects.values_list("claim_id", flat=True)) == expected
    run.refresh_from_db()
    assert run.status == "done"
    page = lead_client.get(response["Location"]).content.decode()
    assert "Over the claims of 3 answers of the answers list (filtered: risk category Health)." in (
        page
    )
    assert "3 of 3 claims processed" in page


def test_an_unjudged_run_over_all_answers_leaves_out_the_filtered_runs_claims(
    lead_client, project, listed, django_capture_on_commit_callbacks
):
    _, claims = listed
    judge = JudgeFactory(project=project, name="lexical")
    url = reverse("judges:run-bulk", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(url, {"risk": "health", "judge": judge.pk, "scope": "all"})
    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(url, {"judge": judge.pk, "scope": "unjudged"})
    second = JudgeRun.objects.latest("pk")
    assert (second.total, second.answer_ids, second.answers_filter) == (3, None, "")
    judged = set(JudgeVerdict.objects.filter(run=second).values_list("claim_id", flat=True))
    assert judged == {c.pk for c in claims["l0"]}


def test_a_filtered_set_without_claims_is_refused_and_starts_nothing(lead_client, project, listed):
    judge = JudgeFactory(project=project, name="lexical")
    url = reverse("judges:run-bulk", args=[project.slug])
    # The legal answer's claims have no gold.
    response = lead_client.post(url, {"risk": "legal", "judge": judge.pk, "scope": "gold"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "The answers listed have no claims in that scope: nothing to judge." in html
    assert not JudgeRun.objects.exists()


def test_analysts_may_not_run_a_judge_on_the_answers(client, project, listed):
    judge = JudgeFactory(project=project, name="lexical")
    analyst = MembershipFactory(project=project, role="analyst").user
    client.force_login(analyst)
    url = reverse("judges:run-bulk", args=[project.slug])
    for response in (
        client.get(url),
        client.post(url, {"judge": judge.pk, "scope": "all"}),
    ):
        html = response.content.decode()
        assert response.status_code == 404  # below the role: never 403 (ARCHITECTURE.md)
        assert "This page needs the role of lead or an owner in its project" in html
        assert "<nav" in html  # the site's styled page, with its navigation
    assert not JudgeRun.objects.exists()
    answers_list = client.get(reverse("annotate:project-detail", args=[project.slug]))
    assert "Run a judge…" not in answers_list.content.decode()


def test_the_split_job_page_names_the_filters_of_its_answers(lead_client, project, lead):
    judge = JudgeFactory(project=project, backend="openai", model="m", endpoint="x")
    job = SplitJob.objects.create(
        project=project,
        judge=judge,
        answer_ids=[1, 2],
        total=2,
        answers_filter="risk category Legal, analysts disagree",
    )
    page = lead_client.get(reverse("judges:split-job", args=[project.slug, job.pk]))
    assert "2 answers (filtered: risk category Legal, analysts disagree)" in page.content.decode()
    whole = SplitJob.objects.create(project=project, judge=judge, answer_ids=[1], total=1)
    page = lead_client.get(reverse("judges:split-job", args=[project.slug, whole.pk]))
    assert "1 answer of the project" in page.content.decode()
