"""Splitting by LLM as a job: started from the claims page, run by a worker, with progress."""

import json
import subprocess
import sys
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judges.models import SplitJob
from judges.split_jobs import split_job_execute
from tests.factories import AnswerFactory, ClaimFactory, JudgeFactory, MembershipFactory
from tests.llm_server import start_server

pytestmark = pytest.mark.django_db

ANSWER = "Refunds take 14 days. Refunds are issued to the original card."
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def answer(project):
    return AnswerFactory(project=project, text=ANSWER)


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


def _panel(project, answer, **params):
    url = reverse("judges:split-panel", args=[project.slug, answer.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def test_with_no_endpoint_declared_the_panel_says_how_to_declare_one(
    lead_client, project, answer, llm_endpoints
):
    JudgeFactory(project=project)  # the baseline: it does not split by LLM
    page = lead_client.get(_panel(project, answer), **HTMX).content.decode()
    assert "No LLM endpoint is declared on this deployment" in page
    assert "FAITHAUDIT_LLM_ENDPOINTS" in page
    assert "<form" not in page


def test_the_panel_offers_judges_and_disables_one_without_a_usable_endpoint(
    lead_client, project, answer, openai_judge
):
    stranded = JudgeFactory(project=project, backend="openai", model="m", endpoint="gone")
    page = lead_client.get(_panel(project, answer), **HTMX).content.decode()
    assert f'<option value="{openai_judge.pk}">' in page
    assert f'<option value="{stranded.pk}" disabled>' in page
    assert "no usable endpoint" in page


def test_starting_a_split_names_what_is_missing(lead_client, project, answer, openai_judge):
    url = reverse("judges:split-start", args=[project.slug])
    response = lead_client.post(url, {"answer": answer.pk}, **HTMX)
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    ClaimFactory(answer=answer, project=project)
    response = lead_client.post(url, {"answer": answer.pk, "judge": openai_judge.pk}, **HTMX)
    assert "already has 1 claims" in response.content.decode()
    assert not SplitJob.objects.exists()


def test_progress_polls_until_done_then_stops_and_reloads_the_claims_page(
    lead_client, project, answer, openai_judge, llm, django_capture_on_commit_callbacks, monkeypatch
):
    from judges import tasks

    queued = []
    monkeypatch.setattr(tasks.split_claims_task, "delay", queued.append)
    url = reverse("judges:split-start", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(url, {"answer": answer.pk, "judge": openai_judge.pk}, **HTMX)
    job = SplitJob.objects.get()
    page = response.content.decode()
    assert 'hx-trigger="every 1s"' in page
    assert f"?poll={job.pk}" in page
    assert "Waiting for a worker" in page
    polled = lead_client.get(_panel(project, answer, poll=job.pk), **HTMX)
    assert polled.status_code == 200  # still pending: keep polling

    split_job_execute(job.pk)
    polled = lead_client.get(_panel(project, answer, poll=job.pk), **HTMX)
    assert polled.status_code == 286  # htmx: stop polling
    assert polled["HX-Refresh"] == "true"
    assert "Split 1 answer into 2 new claims" in polled.content.decode()
    loaded = lead_client.get(_panel(project, answer), **HTMX)  # the page's first load
    assert loaded.status_code == 200
    assert "HX-Refresh" not in loaded
    detail = reverse("judges:split-job", args=[project.slug, job.pk])
    assert lead_client.get(detail, **HTMX).status_code == 286
    assert "Split by LLM #" in lead_client.get(detail).content.decode()


def test_a_project_split_goes_on_past_an_answer_that_fails_and_lists_it(
    lead_client, project, openai_judge, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    first = AnswerFactory(project=project, text="Refunds take 14 days.", position=0)
    failing = AnswerFactory(project=project, text="Gift cards are not refundable.", position=1)
    already = AnswerFactory(project=project, text="Shoes fly.", position=2)
    ClaimFactory(answer=already, project=project)
    ctl.fail("500", claim=failing.text, times=None)
    url = reverse("judges:split-start", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=False):
        response = lead_client.post(url, {"judge": openai_judge.pk})
    job = SplitJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:split-job", args=[project.slug, job.pk])
    assert job.answer_ids == [first.pk, failing.pk]  # the one with claims is left alone
    assert split_job_execute(job.pk) == "done"
    job.refresh_from_db()
    assert (job.done, job.failed, job.claims_created) == (1, 1, 1)
    page = lead_client.get(response["Location"]).content.decode()
    # The judge's 3 retries, then the endpoint's error summarised (its body's message is not).
    assert (
        f"answer {failing.external_id}: gave up after 4 attempts: "
        "HTTP 500 Internal Server Error (server_error)"
    ) in page
    assert "internal error" not in page
    assert "1 could not be split" in page
    assert not failing.claims.exists()


def test_split_claims_command_runs_the_llm_split_in_process_with_progress(
    project, openai_judge, llm
):
    AnswerFactory(project=project, text=ANSWER)
    AnswerFactory(project=project, text="Gift cards are not refundable.")
    out = StringIO()
    call_command(
        "split_claims",
        project=project.slug,
        method="llm",
        judge=openai_judge.name,
        stdout=out,
    )
    text = out.getvalue()
    assert "[1/2] answer" in text
    assert "[2/2] answer" in text
    assert "Done: 2 answers split into 3 new claims; 0 failed." in text
    assert [c.kind for c in llm[1].log] == ["decompose", "decompose"]


def test_an_endpoint_declaration_is_checked_at_start_naming_the_entry(tmp_path):
    bad = [
        ({"name": "ok", "base_url": "ftp://127.0.0.1/v1"}, "entry 1 ('ok'), field 'base_url'"),
        (
            {"name": "k", "base_url": "http://h/v1", "api_key_env": "DJANGO_SECRET_KEY"},
            "own secret",
        ),
        ({"name": "k", "base_url": "http://h/v1", "api_key": "sk-x"}, "unknown field 'api_key'"),
        ({"name": "t", "base_url": "http://h/v1", "timeout_seconds": 9000}, "'timeout_seconds'"),
        ({"name": "u", "base_url": "http://user:pw@h/v1"}, "no user or password"),
    ]
    from judges.endpoints import EndpointsError, endpoints_parse

    for entry, message in bad:
        with pytest.raises(EndpointsError, match=message.replace("(", r"\(").replace(")", r"\)")):
            endpoints_parse(json.dumps([entry]))
    # A process refuses to start on it (web, worker and manage.py alike).
    env = {
        "PATH": "/usr/bin:/bin",
        "FAITHAUDIT_LLM_ENDPOINTS": json.dumps([{"name": "x", "base_url": "file:///etc/passwd"}]),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "FAITHAUDIT_LLM_ENDPOINTS, entry 1 ('x'), field 'base_url'" in result.stderr
    assert "scheme 'file' is not allowed" in result.stderr


def test_a_model_outside_the_endpoints_list_fails_at_call_time(project, llm, llm_endpoints):
    """The operator narrowed the models after the judge was saved: the run says so."""
    from judges.runner import run_execute
    from judges.services import judge_run_start
    from tests.judges.conftest import make_claims

    make_claims(project, ["Refunds are processed within 14 days"])
    judge = JudgeFactory(project=project, backend="openai", model="loopback", endpoint="loopback")
    run = judge_run_start(judge=judge, enqueue=False)
    llm_endpoints({"name": "loopback", "base_url": llm[0], "models": ["other"]})
    assert run_execute(run.pk, owner="t") == "failed"
    run.refresh_from_db()
    assert "model 'loopback' is not offered by endpoint 'loopback' (models: other)" in run.error
    assert llm[1].total_calls == 0


@pytest.mark.worker
def test_the_worker_splits_and_the_request_returns_at_once(
    llm_endpoints, celery_worker, client, django_capture_on_commit_callbacks
):
    base_url, ctl = start_server(latency_s=0.5)
    llm_endpoints(loopback=base_url)  # read by the worker from the same file
    try:
        lead = MembershipFactory(role="lead").user
        project = lead.memberships.get().project
        judge = JudgeFactory(
            project=project, backend="openai", model="loopback", endpoint="loopback"
        )
        answer = AnswerFactory(project=project, text=ANSWER)
        client.force_login(lead)
        response = client.post(
            reverse("judges:split-start", args=[project.slug]),
            {"answer": answer.pk, "judge": judge.pk},
            **HTMX,
        )
        assert response.status_code == 200
        assert ctl.total_calls == 0 or [c.kind for c in ctl.log] == ["decompose"]
        # The request returned at once: the endpoint answers after 0.5 s, and the job it
        # started is not finished yet (a view waiting for the worker would find it finished).
        job = SplitJob.objects.get()
        assert not job.finished
        deadline = time.monotonic() + 60
        statuses = {job.status}
        while time.monotonic() < deadline:
            # Poll, then read the job: a job finished between the two reads is seen as finished
            # (the poll may already have said "stop": 286), never as a running job that stopped.
            polled = client.get(_panel(project, answer, poll=job.pk), **HTMX)
            job.refresh_from_db()
            statuses.add(job.status)
            if job.finished:
                break
            assert polled.status_code == 200
            time.sleep(0.1)
        assert job.status == "done", job.error
        # Once finished, the panel tells htmx to stop polling.
        assert client.get(_panel(project, answer, poll=job.pk), **HTMX).status_code == 286
        assert (job.done, job.claims_created) == (1, 2)
        assert [c.kind for c in ctl.log] == ["decompose"]
        assert answer.claims.count() == 2
        assert statuses & {"pending", "running"}  # progress was visible before the end
    finally:
        ctl.stop()
