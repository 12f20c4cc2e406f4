"""The system-under-test pages: a lead picks a published test set and a declared RAG endpoint
by name (its URL and key never on a page), starts a run, follows its progress, reads the
failures per question, resumes an interrupted run and reaches the answers it wrote."""

import json

import pytest
from django.urls import reverse

from annotate.models import Answer, System
from tests.rag_server import start_rag_server
from tests.testsets.review_world import review_world_build
from testsets.models import SutRun, SutRunItem, TestSet
from testsets.services.review import item_accept, item_reject, set_publish

pytestmark = pytest.mark.django_db
SECRET = "sk-page-secret-987"
HX = {"HX-Request": "true"}


@pytest.fixture
def server():
    base_url, ctl = start_rag_server(stall_s=1.0)
    yield base_url, ctl
    ctl.stop()


def _declare(settings, monkeypatch, base_url):
    monkeypatch.setenv("RAG_PAGE_KEY", SECRET)
    settings.FAITHAUDIT_RAG_ENDPOINTS = json.dumps([{
        "name": "team-rag", "base_url": base_url, "api_key_env": "RAG_PAGE_KEY",
        "timeout_seconds": 0.3, "max_retries": 1,
    }])  # fmt: skip
    settings.FAITHAUDIT_SUT_BACKOFF_SECONDS = 0.01


def _published(world, accept=(0, 1), reject=(2,)):
    for n in accept:
        item_accept(item=world.items[n], user=world.lead)
    for n in reject:
        item_reject(item=world.items[n], user=world.lead, reason="no")
    return set_publish(test_set=world.test_set, user=world.lead)


def _start(client, world, **fields):
    data = {"test_set": world.test_set.pk, "endpoint": "reference", "system_name": "bm25",
            "system_version": "1", **fields}  # fmt: skip
    return client.post(reverse("testsets:run-start", args=["kb"]), data)


def test_the_run_form_names_the_endpoints_never_their_url_or_key(settings, monkeypatch):
    _declare(settings, monkeypatch, "http://127.0.0.1:9/hidden-rag-path")
    world = review_world_build()
    _published(world)
    TestSet.objects.create(project=world.project, name="draft-one")
    page = world.client("lead").get(reverse("testsets:runs", args=["kb"])).content.decode()
    assert '<option value="reference">reference (built-in BM25 baseline)</option>' in page
    assert '<option value="team-rag">team-rag</option>' in page
    assert "critical v1" in page
    assert "draft-one" not in page  # only published sets can be run
    assert "hidden-rag-path" not in page
    assert "127.0.0.1" not in page
    assert SECRET not in page
    assert "RAG_PAGE_KEY" not in page


def test_a_lead_runs_the_reference_system_over_the_accepted_items_only():
    world = review_world_build()
    _published(world)  # q0, q1 accepted; q2 rejected
    lead = world.client("lead")
    response = _start(lead, world)
    run = SutRun.objects.get()
    assert response["Location"] == reverse("testsets:run-detail", args=["kb", run.pk])
    assert (run.status, run.done, run.total) == ("done", 2, 2)
    answers = Answer.objects.filter(project=world.project)
    assert sorted(answers.values_list("question_id", flat=True)) == ["q0", "q1"]
    system = System.objects.get(project=world.project, name="bm25", version="1")
    page = lead.get(response["Location"]).content.decode()
    assert (
        '<span data-testid="run-done">2 of 2</span> questions asked: 2 answered, 0 failed' in page
    )
    answers_url = reverse("annotate:project-detail", args=["kb"]) + f"?system={system.pk}"
    assert f'href="{answers_url}"' in page
    assert "Resume run" not in page
    listed = lead.get(answers_url).content.decode()
    assert "How long do refunds take?" in listed


def test_failures_are_listed_per_question_without_the_url_or_key(settings, monkeypatch, server):
    base_url, _ctl = server
    _declare(settings, monkeypatch, base_url)
    world = review_world_build()
    second = world.items[1]
    second.question = "garbage please"
    second.save()
    _published(world, accept=(0, 1, 2), reject=())
    lead = world.client("lead")
    response = _start(lead, world, endpoint="team-rag", system_name="team")
    run = SutRun.objects.get()
    assert run.total == 3
    failed = SutRunItem.objects.get(run=run, state="failed")
    assert failed.item == second
    page = lead.get(response["Location"]).content.decode()
    assert 'data-testid="run-failures"' in page
    assert "garbage please" in page
    assert failed.error == "field 'answer': expected a string"  # the field the contract wants
    assert "field &#x27;answer&#x27;: expected a string" in page
    assert base_url not in page
    assert SECRET not in page


def test_progress_polls_while_running_and_stops_when_done():
    world = review_world_build()
    _published(world)
    run = SutRun.objects.create(project=world.project, test_set=world.test_set,
                                endpoint="reference", system_name="s", status="running",
                                total=2, done=1)  # fmt: skip
    lead = world.client("lead")
    url = reverse("testsets:run-progress", args=["kb", run.pk])
    response = lead.get(url, headers=HX)
    assert response.status_code == 200
    text = response.content.decode()
    assert 'hx-trigger="every 1s"' in text
    assert "1 of 2" in text
    assert "<html" not in text
    SutRun.objects.filter(pk=run.pk).update(status="done", done=2)
    response = lead.get(url, headers=HX)
    assert response.status_code == 286  # htmx: stop polling
    assert response["HX-Refresh"] == "true"


def test_an_interrupted_run_is_resumed_from_its_page_without_duplicates():
    world = review_world_build()
    _published(world)
    run = SutRun.objects.create(project=world.project, test_set=world.test_set,
                                endpoint="reference", system_name="bm25", status="interrupted",
                                total=2)  # fmt: skip
    for item in world.items[:2]:
        SutRunItem.objects.create(run=run, item=item)
    lead = world.client("lead")
    detail = reverse("testsets:run-detail", args=["kb", run.pk])
    assert "Resume run" in lead.get(detail).content.decode()
    # The first question was answered before the worker died.
    from testsets.services.sut import sut_run_execute

    sut_run_execute(run_id=run.pk, limit=1)
    assert Answer.objects.filter(project=world.project).count() == 1
    response = lead.post(reverse("testsets:run-resume", args=["kb", run.pk]), follow=True)
    assert "Run resumed" in response.content.decode()
    run.refresh_from_db()
    assert (run.status, run.done) == ("done", 2)
    assert Answer.objects.filter(project=world.project).count() == 2
    response = lead.post(reverse("testsets:run-resume", args=["kb", run.pk]), follow=True)
    assert "The run is done: nothing to resume." in response.content.decode()


def test_a_draft_or_another_projects_set_cannot_be_run():
    world = review_world_build()
    lead = world.client("lead")
    response = _start(lead, world)  # still a draft: not among the choices
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    other = review_world_build("other")
    _published(other)
    response = _start(lead, other)
    assert response.status_code == 400
    assert not SutRun.objects.exists()


def test_an_undeclared_endpoint_or_an_empty_system_name_is_refused():
    world = review_world_build()
    _published(world)
    lead = world.client("lead")
    assert _start(lead, world, endpoint="nowhere").status_code == 400
    response = _start(lead, world, system_name="")
    assert response.status_code == 400
    assert not SutRun.objects.exists()


def test_an_analyst_cannot_start_or_see_runs():
    """Below the role a project page answers 404, never 403 (tests/reliability)."""
    world = review_world_build()
    _published(world)
    analyst = world.client("analyst")
    assert analyst.get(reverse("testsets:runs", args=["kb"])).status_code == 404
    assert _start(analyst, world).status_code == 404
    assert not SutRun.objects.exists()
    page = analyst.get(reverse("testsets:index", args=["kb"])).content.decode()
    assert "Run a system" not in page
    lead_page = world.client("lead").get(reverse("testsets:index", args=["kb"])).content.decode()
    assert "Run a system" in lead_page


def test_a_published_set_without_an_accepted_item_is_not_run():
    """A set published by an older path, all its items pending: nothing to ask."""
    world = review_world_build()
    TestSet.objects.filter(pk=world.test_set.pk).update(status=TestSet.Status.PUBLISHED)
    response = _start(world.client("lead"), world)
    assert response.status_code == 400
    assert "the test set has no accepted item: nothing to ask" in response.content.decode()
    assert not SutRun.objects.exists()
