"""Judges' pages: leads only, runs started from the browser, progress polled until done."""

import pytest
from django.urls import reverse

from judges.models import Judge, JudgeRun
from tests.factories import PASSWORD, GoldFactory, JudgeFactory, MembershipFactory
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client, lead):
    client.login(username=lead.username, password=PASSWORD)
    return client


@pytest.fixture
def baseline(project):
    return JudgeFactory(project=project, name="baseline", backend="baseline", model="lexical")


def test_analyst_and_outsider_get_404(client, project, baseline):
    run = JudgeRun.objects.create(judge=baseline, project=project, backend="baseline")
    analyst = MembershipFactory(project=project, role="analyst").user
    outsider = MembershipFactory(role="lead").user  # a lead of another project
    urls = [
        reverse("judges:judge-list", args=[project.slug]),
        reverse("judges:judge-detail", args=[project.slug, baseline.pk]),
        reverse("judges:run-detail", args=[project.slug, run.pk]),
        reverse("judges:run-progress", args=[project.slug, run.pk]),
        reverse("judges:canary-list", args=[project.slug]),
    ]
    for user in (analyst, outsider):
        client.login(username=user.username, password=PASSWORD)
        for url in urls:
            assert client.get(url).status_code == 404, url
        start = reverse("judges:run-start", args=[project.slug, baseline.pk])
        assert client.post(start, {"kind": "verify", "scope": "all"}).status_code == 404
    assert JudgeRun.objects.count() == 1


def test_lead_creates_a_judge_on_a_declared_endpoint(lead_client, project, llm_endpoints):
    url = reverse("judges:judge-create", args=[project.slug])
    base = {
        "backend": "openai",
        "model": "gpt-x",
        "temperature": 0,
        "max_concurrency": 4,
        "timeout_seconds": 10,
        "max_retries": 2,
    }
    response = lead_client.post(url, {**base, "name": "none", "endpoint": "local"})
    assert response.status_code == 400
    assert "No LLM endpoint is declared on this deployment" in response.content.decode()
    assert "FAITHAUDIT_LLM_ENDPOINTS" in response.content.decode()  # how to declare one

    llm_endpoints(
        {"name": "local", "base_url": "http://127.0.0.1:9/v1", "models": ["gpt-x", "gpt-y"]}
    )
    form = lead_client.get(reverse("judges:judge-list", args=[project.slug])).content.decode()
    # A lead sees the endpoint's name and models; its base URL is for owners (issue 34).
    assert '<option value="local">local (models gpt-x, gpt-y)' in form
    assert "127.0.0.1:9" not in form
    response = lead_client.post(url, {**base, "name": "bad", "endpoint": "local", "model": "z"})
    assert response.status_code == 400
    assert "&#x27;z&#x27; is not one of them" in response.content.decode()
    assert not Judge.objects.filter(name__in=["none", "bad"]).exists()

    response = lead_client.post(url, {**base, "name": "gpt", "endpoint": "local"})
    judge = Judge.objects.get(name="gpt")
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:judge-detail", args=[project.slug, judge.pk])
    assert (judge.endpoint, judge.timeout_seconds, judge.max_retries) == ("local", 10, 2)
    assert "SUPPORTED, CONTRADICTED, or NOT_MENTIONED" in judge.verify_prompt
    page = lead_client.get(response["Location"]).content.decode()
    assert judge.prompt_version in page
    assert "local (models gpt-x, gpt-y)" in page
    assert "127.0.0.1:9" not in page

    blank = {**base, "timeout_seconds": "", "max_retries": "", "max_concurrency": ""}
    response = lead_client.post(url, {**blank, "name": "capped", "endpoint": "local"})
    capped = Judge.objects.get(name="capped")  # blank: the endpoint's caps (the defaults)
    assert (capped.timeout_seconds, capped.max_retries, capped.max_concurrency) == (60, 5, 16)


def test_a_judge_whose_endpoint_is_not_declared_says_which_to_choose(
    lead_client, project, llm_endpoints, django_capture_on_commit_callbacks
):
    """As every OpenAI-compatible judge is after the migration to declared endpoints."""
    llm_endpoints(local="http://127.0.0.1:9/v1", other="http://127.0.0.1:10/v1")
    judge = JudgeFactory(project=project, backend="openai", model="m", endpoint="")
    page = lead_client.get(reverse("judges:judge-detail", args=[project.slug, judge.pk]))
    problem = "This judge has no endpoint yet. Choose one of the endpoints the operator declared: local, other."
    assert problem in page.content.decode()
    start = reverse("judges:run-start", args=[project.slug, judge.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(start, {"kind": "verify", "scope": "all"}, follow=True)
    assert problem in response.content.decode()
    assert not JudgeRun.objects.exists()


def test_lead_starts_a_baseline_run_and_sees_agreement_with_gold(
    lead_client, project, baseline, django_capture_on_commit_callbacks
):
    claims = make_claims(
        project,
        [
            "Refunds are processed within 14 days.",  # baseline: SUPPORTED
            "Refunds are processed within 30 days.",  # baseline: CONTRADICTED
            "Gift cards are refundable.",  # baseline: CONTRADICTED (negation)
            "Shoes can be exchanged in any branch.",  # baseline: NOT_IN_PILE
        ],
    )
    GoldFactory(claim=claims[0], verdict="SUPPORTED")
    GoldFactory(claim=claims[1], verdict="CONTRADICTED")
    GoldFactory(claim=claims[2], verdict="SUPPORTED")  # the baseline gets this one wrong
    GoldFactory(claim=claims[3], verdict="NOT_IN_PILE")
    url = reverse("judges:run-start", args=[project.slug, baseline.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(url, {"kind": "verify", "scope": "all"})
    run = JudgeRun.objects.get()
    assert response["Location"] == reverse("judges:run-detail", args=[project.slug, run.pk])
    assert (run.status, run.done, run.total) == ("done", 4, 4)
    page = lead_client.get(response["Location"]).content.decode()
    assert "Agreement with gold" in page
    assert "75%" in page  # 3 of 4 claims agree
    assert "on 4 claims with gold" in page
    assert "Cohen&#x27;s kappa" in page
    assert "Below 80% agreement" in page
    assert "hx-trigger" not in page  # finished: nothing polls


def test_progress_polls_while_running_and_stops_when_done(
    lead_client, project, baseline, django_capture_on_commit_callbacks
):
    make_claims(project, ["Refunds are processed within 14 days."] * 3)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run_url = lead_client.post(
            reverse("judges:run-start", args=[project.slug, baseline.pk]),
            {"kind": "verify", "scope": "all"},
        )["Location"]
    run = JudgeRun.objects.get()
    progress = reverse("judges:run-progress", args=[project.slug, run.pk])

    page = lead_client.get(run_url).content.decode()  # no JavaScript: the whole page
    assert "0 of 3 claims processed" in page
    assert f'hx-get="{progress}"' in page
    assert 'hx-trigger="every 1s"' in page
    assert f'href="{run_url}"' in page  # the polling element is a real link

    partial = lead_client.get(progress, headers={"HX-Request": "true"})
    assert partial.status_code == 200
    body = partial.content.decode()
    assert body.lstrip().startswith('<section id="run-progress"')
    assert "<html" not in body
    assert 'hx-trigger="every 1s"' in body

    non_htmx = lead_client.get(progress)
    assert non_htmx.status_code == 200
    assert "<html" in non_htmx.content.decode()

    for callback in callbacks:
        callback()  # the task runs (in-process)
    done = lead_client.get(progress, headers={"HX-Request": "true"})
    assert done.status_code == 286  # htmx stops polling
    assert "3 of 3 claims processed" in done.content.decode()
    assert "hx-trigger" not in done.content.decode()


def test_cancel_button(lead_client, project, baseline, django_capture_on_commit_callbacks):
    make_claims(project, ["Refunds are processed within 14 days."])
    with django_capture_on_commit_callbacks(execute=False):
        lead_client.post(
            reverse("judges:run-start", args=[project.slug, baseline.pk]),
            {"kind": "verify", "scope": "all"},
        )
    run = JudgeRun.objects.get()
    response = lead_client.post(reverse("judges:run-cancel", args=[project.slug, run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"
    page = lead_client.get(response["Location"]).content.decode()
    assert "Run cancelled" in page
    assert "Cancel run" not in page


def test_unparseable_rows_are_listed_with_raw_text(lead_client, project, baseline):
    claims = make_claims(project, ["Refunds are processed within 14 days."])
    run = JudgeRun.objects.create(
        judge=baseline, project=project, backend="baseline", status="done", unparseable=1, total=1
    )
    run.verdicts.create(claim=claims[0], verdict="UNPARSEABLE", raw_response="Hmm, maybe yes?")
    page = lead_client.get(reverse("judges:run-detail", args=[project.slug, run.pk])).content
    assert "Unparseable replies" in page.decode()
    assert "Hmm, maybe yes?" in page.decode()


def test_canary_list_form_errors_name_the_line(lead_client, project):
    make_claims(project, ["Refunds are processed within 14 days."])
    answer = project.answers.get()
    url = reverse("judges:canary-add", args=[project.slug])
    lines = f"{answer.external_id} | Paris is the capital of France.\nnope | Water boils at 100 C."
    response = lead_client.post(url, {"lines": lines})
    assert response.status_code == 400
    assert "Line 2: answer external id &#x27;nope&#x27; is not in this project." in (
        response.content.decode()
    )
    assert project.canaries.count() == 0
    response = lead_client.post(url, {"lines": lines.splitlines()[0]})
    assert response.status_code == 302
    assert project.canaries.get().text == "Paris is the capital of France."


def test_editing_the_prompt_makes_a_new_version_and_old_runs_keep_theirs(
    lead_client, project, django_capture_on_commit_callbacks, llm_endpoints
):
    from judges.services import judge_create, judge_run_start

    llm_endpoints(local="http://127.0.0.1:9/v1")
    judge = judge_create(project=project, name="gpt", backend="openai", model="m", endpoint="local")
    with django_capture_on_commit_callbacks(execute=False):
        old_run = judge_run_start(judge=judge)
    old_version = judge.prompt_version
    assert old_run.prompt_version == old_version
    new_prompt = "Context:\n{context}\n\nClaim: {claim}\n\nOne word: SUPPORTED, CONTRADICTED or NOT_MENTIONED."
    url = reverse("judges:judge-update", args=[project.slug, judge.pk])
    data = {
        "name": "gpt",
        "backend": "openai",
        "model": "m",
        "endpoint": "local",
        "temperature": 0,
        "max_concurrency": 4,
        "timeout_seconds": 10,
        "max_retries": 2,
        "verify_prompt": new_prompt,
        "decompose_prompt": "",
    }
    response = lead_client.post(url, data)
    assert response.status_code == 302
    judge.refresh_from_db()
    assert judge.prompt_version != old_version
    old_run.refresh_from_db()
    assert old_run.prompt_version == old_version  # the frozen instrument is untouched
    response = lead_client.post(url, {**data, "verify_prompt": "Is it true? {context}"})
    assert response.status_code == 400
    assert "must contain {claim}" in response.content.decode()
