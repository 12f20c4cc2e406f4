"""A judge calls only the LLM endpoints the operator declared, with the key the operator named.

The attacker of these tests has no role to begin with: anyone may create a project, and so
owns it. Every path a project owner has to a judge's configuration (the judge form, the
services, `add_judge`, a stored run) is tried with the deployment's own secrets as the key
variable and a loopback listener of the attacker's as the URL; the listener must receive
nothing, and no request anywhere may carry a secret that is not the declared endpoint's key.
"""

import json
import os
import time

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import NoReverseMatch, reverse

from judges.models import Judge, JudgeFailure, JudgeRun
from judges.prompts import DEFAULT_VERIFY_PROMPT
from judges.runner import run_execute
from judges.services import judge_create, judge_run_start, judge_update
from tests.factories import (
    AnswerFactory,
    JudgeFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
)
from tests.judges.conftest import PILE, make_claims
from tests.judges.listeners import Listener
from tests.llm_server import start_server

pytestmark = pytest.mark.django_db

SECRET_VARIABLES = ["DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "FA_SOME_TOKEN"]
LOOPBACK_KEY = "loopback-key-8c1f0e"
ANSWER = "Refunds take 14 days. Refunds are issued to the original card."


@pytest.fixture
def secrets(monkeypatch):
    """A recognisable value in each variable (the real one where this run has it)."""
    values = {}
    for name in SECRET_VARIABLES:
        value = os.environ.get(name) or f"secret-of-{name.lower()}-Q7x9Lk2M"
        monkeypatch.setenv(name, value)
        values[name] = value
    return values


@pytest.fixture
def attacker():
    """A listener of the attacker's on loopback."""
    listener = Listener.start()
    yield listener
    listener.stop()


@pytest.fixture
def llm(monkeypatch):
    base_url, ctl = start_server()
    monkeypatch.setenv("FA_LOOPBACK_KEY", LOOPBACK_KEY)
    yield base_url, ctl
    ctl.stop()


@pytest.fixture
def declared(llm, llm_endpoints):
    """The operator declared one endpoint: the loopback server, its key in FA_LOOPBACK_KEY."""
    base_url, ctl = llm
    llm_endpoints(
        {
            "name": "loopback",
            "base_url": base_url,
            "api_key_env": "FA_LOOPBACK_KEY",
            "models": ["loopback"],
        }
    )
    return ctl


@pytest.fixture
def project():
    project = ProjectFactory()
    make_claims(project, ["Refunds are processed within 14 days", "Gift cards are refundable"])
    answer = AnswerFactory(project=project, text=ANSWER)
    PassageFactory(answer=answer, rank=1, text=PILE)
    return project


@pytest.fixture
def owner(project):
    return MembershipFactory(project=project, role="owner").user


def _form(**fields):
    base = {
        "name": "evil",
        "backend": "openai",
        "model": "loopback",
        "temperature": "0",
        "max_concurrency": "1",
        "timeout_seconds": "2",
        "max_retries": "0",
        "verify_prompt": "",
        "decompose_prompt": "",
    }
    return {**base, **fields}


def _no_secret_anywhere(listeners, secrets):
    seen = "\n".join(line for listener in listeners for line in listener)
    for name, value in secrets.items():
        assert value not in seen, f"the value of {name} was sent"


def _run_every_judge(project, capture):
    for judge in Judge.objects.filter(project=project):
        with capture(execute=True):
            judge_run_start(judge=judge)


def _split_by_llm(client, project, judge, capture):
    """Try every way the web has to split an answer by LLM with `judge`."""
    answer = project.answers.get(text=ANSWER)
    with capture(execute=True):
        client.post(
            reverse("annotate:claims-split", args=[project.slug, answer.pk]),
            {"method": "llm", "judge": judge.pk, "force": "on"},
        )
    try:
        url = reverse("judges:split-start", args=[project.slug])
    except NoReverseMatch:  # today's code has no split job
        return
    with capture(execute=True):
        client.post(url, {"judge": judge.pk, "answer": answer.pk, "force": "on"})


@pytest.mark.parametrize("variable", SECRET_VARIABLES)
def test_judge_form_sends_no_secret_to_a_url_of_the_owners_choice(
    client,
    owner,
    project,
    attacker,
    secrets,
    declared,
    variable,
    django_capture_on_commit_callbacks,
):
    client.force_login(owner)
    url = reverse("judges:judge-create", args=[project.slug])
    target = f"{attacker.url}/v1"
    refused = client.post(url, _form(base_url=target, api_key_env=variable, endpoint=target))
    _run_every_judge(project, django_capture_on_commit_callbacks)

    assert attacker.requests == []
    assert refused.status_code == 400
    assert not Judge.objects.filter(project=project, name="evil").exists()
    assert "not an endpoint declared by the operator" in refused.content.decode()


@pytest.mark.parametrize("variable", SECRET_VARIABLES)
def test_a_declared_endpoint_gets_only_its_own_key_whatever_else_is_posted(
    client,
    owner,
    project,
    attacker,
    secrets,
    declared,
    variable,
    django_capture_on_commit_callbacks,
):
    """Smuggling a URL and a key variable beside a declared endpoint changes nothing: the
    run and the LLM split call the declared endpoint with the declared key, and no one else."""
    client.force_login(owner)
    created = client.post(
        reverse("judges:judge-create", args=[project.slug]),
        _form(
            name="smuggler",
            base_url=f"{attacker.url}/v1",
            api_key_env=variable,
            endpoint="loopback",
        ),
    )
    assert created.status_code == 302
    judge = Judge.objects.get(project=project, name="smuggler")
    edit = reverse("judges:judge-update", args=[project.slug, judge.pk])
    client.post(edit, _form(name="smuggler", base_url=attacker.url, api_key_env=variable))
    _run_every_judge(project, django_capture_on_commit_callbacks)
    _split_by_llm(client, project, judge, django_capture_on_commit_callbacks)

    assert attacker.requests == []
    calls = {(c.kind, c.authorization) for c in declared.log}
    assert ("verify", f"Bearer {LOOPBACK_KEY}") in calls
    assert {auth for _, auth in calls} == {f"Bearer {LOOPBACK_KEY}"}
    _no_secret_anywhere([[c.authorization for c in declared.log]], secrets)


@pytest.mark.parametrize("variable", SECRET_VARIABLES)
def test_judge_services_take_no_url_and_no_key_variable(
    project, attacker, secrets, declared, variable, django_capture_on_commit_callbacks
):
    target = f"{attacker.url}/v1"
    existing = JudgeFactory(project=project, backend="baseline", name="base")
    attempts = [
        lambda: judge_create(
            project=project,
            name="s1",
            backend="openai",
            model="loopback",
            base_url=target,
            api_key_env=variable,
        ),
        lambda: judge_create(
            project=project, name="s2", backend="openai", model="loopback", endpoint=target
        ),
        lambda: judge_update(
            judge=existing, backend="openai", model="m", base_url=target, api_key_env=variable
        ),
    ]
    refused = 0
    for attempt in attempts:
        try:
            attempt()
        except (TypeError, ValidationError):
            refused += 1
    _run_every_judge(project, django_capture_on_commit_callbacks)

    assert attacker.requests == []
    assert refused == len(attempts)


@pytest.mark.parametrize("variable", SECRET_VARIABLES)
def test_add_judge_takes_no_url_and_no_key_variable(
    project, attacker, secrets, declared, variable, django_capture_on_commit_callbacks
):
    target = f"{attacker.url}/v1"
    attempts = [
        ["--base-url", target, "--api-key-env", variable],
        ["--endpoint", target],
    ]
    refused = 0
    for index, extra in enumerate(attempts):
        args = ["--project", project.slug, "--name", f"cli{index}", "--backend", "openai"]
        try:
            call_command("add_judge", *args, "--model", "loopback", *extra)
        except CommandError:
            refused += 1
    _run_every_judge(project, django_capture_on_commit_callbacks)

    assert attacker.requests == []
    assert refused == len(attempts)


def _tampered_run(project, **parameters) -> JudgeRun:
    """A run whose stored spec names a URL and a key variable (an old row, an edited row)."""
    judge = JudgeFactory(project=project, backend="baseline")
    run = judge_run_start(judge=judge, enqueue=False)
    run.backend = "openai"
    run.model = "loopback"
    run.prompt_text = DEFAULT_VERIFY_PROMPT
    run.parameters = {**run.parameters, "max_retries": 0, "timeout_seconds": 5, **parameters}
    run.save()
    return run


@pytest.mark.parametrize("variable", SECRET_VARIABLES)
def test_a_stored_run_spec_cannot_name_the_url_or_the_key(
    project, attacker, secrets, declared, variable
):
    target = f"{attacker.url}/v1"
    redirected = _tampered_run(project, endpoint="loopback", base_url=target, api_key_env=variable)
    undeclared = _tampered_run(project, endpoint="evil", base_url=target, api_key_env=variable)
    run_execute(redirected.pk, owner="test")
    run_execute(undeclared.pk, owner="test")

    assert attacker.requests == []
    redirected.refresh_from_db()
    undeclared.refresh_from_db()
    assert (redirected.status, redirected.done) == ("done", 2)
    assert {c.authorization for c in declared.log} == {f"Bearer {LOOPBACK_KEY}"}
    assert undeclared.status == "failed"
    assert "endpoint 'evil' is not declared" in undeclared.error


SSRF_URLS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://127.0.0.1:5432/v1",
    "http://[::1]:6379/v1",
    "ftp://127.0.0.1/v1",
    "file:///etc/passwd",
    "http://internal.example/v1",
]


@pytest.mark.parametrize("target", SSRF_URLS)
def test_judge_form_cannot_point_a_judge_at_any_url(client, owner, project, declared, target):
    """No run is started here: today's code would call these addresses."""
    client.force_login(owner)
    response = client.post(
        reverse("judges:judge-create", args=[project.slug]),
        _form(base_url=target, endpoint=target),
    )
    assert response.status_code == 400
    assert not Judge.objects.filter(project=project).exists()
    assert "loopback" in response.content.decode()  # the page names what may be chosen


def test_an_endpoint_that_redirects_is_not_followed(project, llm_endpoints):
    elsewhere = Listener.start()
    redirecting = Listener.start(status=302, location=f"{elsewhere.url}/v1/chat/completions")
    try:
        llm_endpoints(a=f"{redirecting.url}/v1")
        run = _tampered_run(project, endpoint="a", base_url=f"{redirecting.url}/v1")
        run_execute(run.pk, owner="test")
        assert elsewhere.requests == []
        from judges.backends import JudgeCallFailed, backend_for_spec

        backend = backend_for_spec(
            {"backend": "openai", "model": "m", "endpoint": "a", "max_retries": 0}
        )
        with pytest.raises(JudgeCallFailed, match="302"):
            backend.decompose(ANSWER)
    finally:
        redirecting.stop()
        elsewhere.stop()
    run.refresh_from_db()
    assert len(redirecting.requests) == 3  # two verify calls (async client), one decompose
    assert elsewhere.requests == []
    assert (run.done, run.failed) == (0, 2)
    errors = set(JudgeFailure.objects.filter(run=run).values_list("error", flat=True))
    assert errors == {"HTTP 302 Found (redirects are not followed)"}


MARKER = "INTERNAL-ONLY-" + "x" * 400


def test_an_endpoints_error_reply_is_summarised_not_echoed(client, project, llm_endpoints):
    body = json.dumps({"error": {"message": MARKER, "type": "server_error"}})
    failing = Listener.start(status=500, body=body)
    try:
        llm_endpoints(failing=f"{failing.url}/v1")
        run = _tampered_run(project, endpoint="failing", base_url=f"{failing.url}/v1")
        run_execute(run.pk, owner="test")
    finally:
        failing.stop()
    lead = MembershipFactory(project=project, role="lead").user
    client.force_login(lead)
    page = client.get(reverse("judges:run-detail", args=[project.slug, run.pk])).content.decode()
    errors = set(JudgeFailure.objects.filter(run=run).values_list("error", flat=True))
    assert errors == {"gave up after 1 attempt: HTTP 500 Internal Server Error (server_error)"}
    assert "HTTP 500 Internal Server Error (server_error)" in page
    assert "INTERNAL-ONLY" not in page
    assert all("INTERNAL-ONLY" not in e for e in errors)


def test_a_judge_asking_for_more_time_or_retries_than_the_cap_is_refused(
    client, owner, project, llm, llm_endpoints
):
    base_url, _ = llm
    llm_endpoints({"name": "capped", "base_url": base_url, "timeout_seconds": 10, "max_retries": 2})
    client.force_login(owner)
    url = reverse("judges:judge-create", args=[project.slug])
    response = client.post(url, _form(endpoint="capped", timeout_seconds="500", max_retries="15"))
    content = response.content.decode()
    assert response.status_code == 400
    assert not Judge.objects.filter(project=project).exists()
    assert "At most 10 s for endpoint capped (the operator&#x27;s cap)" in content
    assert "At most 2 retries for endpoint capped" in content
    lower = client.post(url, _form(endpoint="capped", timeout_seconds="4", max_retries="1"))
    assert lower.status_code == 302  # lowering is always allowed


def test_a_stored_spec_over_the_cap_is_clamped_at_call_time(project, llm, llm_endpoints):
    """The operator lowered the cap after the run was started: the lower cap wins."""
    base_url, ctl = llm
    llm_endpoints(
        {"name": "capped", "base_url": base_url, "timeout_seconds": 0.5, "max_retries": 1}
    )
    ctl.fail("500", claim="Refunds are processed within 14 days", times=None)
    ctl.fail("slow", claim="Gift cards are refundable", times=None, delay=3.0)
    run = _tampered_run(
        project,
        endpoint="capped",
        base_url=base_url,
        max_retries=50,
        timeout_seconds=60,
        backoff_base_s=0.001,
        backoff_cap_s=0.002,
    )
    started = time.monotonic()
    run_execute(run.pk, owner="test")
    elapsed = time.monotonic() - started
    run.refresh_from_db()
    assert (run.done, run.failed) == (0, 2)
    assert ctl.calls_for("Refunds are processed within 14 days") == 2  # 1 + 1 retry
    assert ctl.calls_for("Gift cards are refundable") == 2
    assert elapsed < 2.9  # two 0.5 s timeouts, not one 3 s wait


def test_the_web_never_calls_the_endpoint_to_split(
    client, owner, project, llm, declared, django_capture_on_commit_callbacks, monkeypatch
):
    """The split request returns with the job queued; the endpoint is called by the task."""
    base_url, _ = llm
    client.force_login(owner)
    client.post(
        reverse("judges:judge-create", args=[project.slug]),
        _form(
            name="splitter", endpoint="loopback", base_url=base_url, api_key_env="FA_LOOPBACK_KEY"
        ),
    )
    judge = Judge.objects.get(project=project, name="splitter")
    answer = project.answers.get(text=ANSWER)
    with django_capture_on_commit_callbacks(execute=True):
        old = client.post(
            reverse("annotate:claims-split", args=[project.slug, answer.pk]),
            {"method": "llm", "judge": judge.pk},
        )
    assert [c for c in declared.log if c.kind == "decompose"] == []  # not in the request
    assert old.status_code in (200, 302)
    assert answer.claims.count() == 0

    queued = []
    from judges import tasks

    monkeypatch.setattr(tasks.split_claims_task, "delay", lambda job_id: queued.append(job_id))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("judges:split-start", args=[project.slug]),
            {"judge": judge.pk, "answer": answer.pk},
            HTTP_HX_REQUEST="true",
        )
    assert [c for c in declared.log if c.kind == "decompose"] == []
    assert answer.claims.count() == 0
    from judges.models import SplitJob

    job = SplitJob.objects.get()
    assert queued == [job.pk]
    assert (job.status, job.total, job.done) == ("pending", 1, 0)
    assert response.status_code == 200
    assert 'data-testid="split-job"' in response.content.decode()

    tasks.split_claims(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.claims_created) == ("done", 1, 2)
    assert [c.kind for c in declared.log] == ["decompose"]
    assert list(answer.claims.order_by("position").values_list("text", flat=True)) == [
        "Refunds take 14 days.",
        "Refunds are issued to the original card.",
    ]
