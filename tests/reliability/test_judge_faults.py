"""A judge endpoint where a fifth of the calls fail (429 with Retry-After, 500, timeouts,
garbage), in-process and on a real Celery worker that is SIGKILLed mid-run and restarted.

What must hold: the run completes; each claim has at most one verdict or failure; the calls per
claim stay within max_retries + 1 (counted on the loopback server); garbage is stored as
UNPARSEABLE, never as a verdict; and the API key (a distinctive fake one in the environment) is
nowhere but the Authorization header: not in logs (caplog, the worker's log), database text,
pages or exports.
"""

import logging
import time
from pathlib import Path

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from judges.models import JudgeFailure, JudgeRun, JudgeVerdict
from judges.services import judge_run_start
from tests.factories import JudgeFactory, MembershipFactory, ProjectFactory
from tests.judges.conftest import make_claims
from tests.llm_server import start_server

KEY = "sk-reliability-Qv93LmZp0xTw5RkB7yHc"
KEY_ENV = "FA_RELIABILITY_JUDGE_KEY"
MAX_RETRIES = 2
WORKER_LOG = Path(__file__).resolve().parent.parent / ".worker.log"


def _plan(ctl, claims):
    """20% of the claims get a fault on their first call; two fail on every call."""
    texts = [c.text for c in claims]
    plan = {"429": [], "500": [], "slow": [], "garbage": [], "always-500": []}
    for i, text in enumerate(texts):
        if i % 5 != 0:
            continue
        kind = ("429", "500", "slow", "garbage")[(i // 5) % 4]
        plan[kind].append(text)
        if kind == "429":
            ctl.fail("429", claim=text, retry_after=0.2)
        elif kind == "slow":
            ctl.fail("slow", claim=text, delay=2.5)  # past the judge's 1 s timeout
        else:
            ctl.fail(kind, claim=text)
    for text in (texts[1], texts[2]):
        plan["always-500"].append(text)
        ctl.fail("500", claim=text, times=None)
    return plan


def _judge(project, base_url, declare):
    """An OpenAI-compatible judge on the loopback server, declared as the operator would."""
    declare({"name": "loopback", "base_url": base_url, "api_key_env": KEY_ENV})
    return JudgeFactory(
        project=project,
        backend="openai",
        model="loopback",
        endpoint="loopback",
        max_concurrency=4,
        timeout_seconds=1.0,
        max_retries=MAX_RETRIES,
        verify_prompt="",
        parameters={"backoff_base_s": 0.05, "backoff_cap_s": 0.2},
    )


def _check_run(run, ctl, plan, n_claims, figures, label):
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE, (run.status, run.error)
    verdict_claims = list(JudgeVerdict.objects.filter(run=run).values_list("claim_id", flat=True))
    failed_claims = list(JudgeFailure.objects.filter(run=run).values_list("claim_id", flat=True))
    assert len(verdict_claims) == len(set(verdict_claims)), "a claim has two verdicts"
    assert not set(verdict_claims) & set(failed_claims)
    assert len(verdict_claims) + len(failed_claims) == n_claims, "a claim was lost"
    calls = ctl.calls_per_claim()
    assert max(calls.values()) <= MAX_RETRIES + 1, "retries not bounded"
    for text in plan["429"] + plan["500"] + plan["slow"]:
        assert calls[text] >= 2, f"{text!r} was not retried"
    for text in plan["always-500"]:
        assert calls[text] == MAX_RETRIES + 1
    assert set(JudgeFailure.objects.filter(run=run).values_list("claim__text", flat=True)) == set(
        plan["always-500"]
    )
    garbage = set(
        JudgeVerdict.objects.filter(run=run, verdict="UNPARSEABLE").values_list(
            "claim__text", flat=True
        )
    )
    # A garbage reply is UNPARSEABLE, and nothing else is. One exception, and only where the
    # worker was killed: a garbage reply received by the killed worker whose chunk was never
    # written is asked again after the restart (at least once, as a lost in-flight call must
    # be) and gets the server's real verdict; such a claim shows two calls on the server.
    asked_again = {text for text in plan["garbage"] if calls[text] >= 2}
    assert garbage <= set(plan["garbage"]), "only garbage may be UNPARSEABLE"
    assert set(plan["garbage"]) - asked_again <= garbage, "garbage must be UNPARSEABLE"
    assert not asked_again or label == "worker", "garbage asked twice without a kill"
    assert (run.done, run.unparseable, run.failed) == (
        n_claims - len(garbage) - len(plan["always-500"]),
        len(garbage),
        len(plan["always-500"]),
    )
    verify_calls = sum(calls.values())
    faults = sum(len(v) for k, v in plan.items() if k != "always-500") + len(plan["always-500"]) * (
        MAX_RETRIES + 1
    )
    figures.add(
        "endpoint faults",
        **{
            f"{label} judge calls": verify_calls,
            f"{label} faults injected": faults,
            f"{label} retries": verify_calls - n_claims,
            f"{label} verdicts lost": n_claims - len(verdict_claims) - len(failed_claims),
        },
    )


def _assert_key_nowhere(project, run, judge, extra_texts):
    texts = list(extra_texts)
    for model in apps.get_models():
        texts.extend(repr(row) for row in model.objects.values())
    lead = MembershipFactory(project=project, role="lead").user
    client = Client()
    client.force_login(lead)
    for url in (
        reverse("judges:judge-detail", args=[project.slug, judge.pk]),
        reverse("judges:run-detail", args=[project.slug, run.pk]),
        reverse("annotate:export", args=[project.slug]) + "?format=jsonl",
        reverse("annotate:export", args=[project.slug]) + "?format=csv",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        body = (
            b"".join(response.streaming_content)
            if getattr(response, "streaming", False)
            else response.content
        )
        texts.append(body.decode())
    for text in texts:
        assert KEY not in text
        assert KEY[10:] not in text


@pytest.mark.django_db
def test_fifth_of_calls_failing_in_process(
    monkeypatch, caplog, figures, django_capture_on_commit_callbacks, llm_endpoints
):
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    base_url, ctl = start_server()
    try:
        project = ProjectFactory()
        claims = make_claims(project, [f"Claim {i} about refunds" for i in range(60)])
        plan = _plan(ctl, claims)
        judge = _judge(project, base_url, llm_endpoints)
        with django_capture_on_commit_callbacks(execute=True):
            run = judge_run_start(judge=judge)
        _check_run(run, ctl, plan, len(claims), figures, "in-process")
        assert {c.authorization for c in ctl.log} == {f"Bearer {KEY}"}  # the key was used
        assert "retry 1/" in caplog.text
        _assert_key_nowhere(project, run, judge, [caplog.text])
    finally:
        ctl.stop()


@pytest.fixture
def worker_log_start() -> int:
    return WORKER_LOG.stat().st_size if WORKER_LOG.exists() else 0


@pytest.fixture
def worker_env(monkeypatch):
    """Read by the worker when it starts: the key, fast lease expiry and redelivery."""
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("CELERY_VISIBILITY_TIMEOUT", "4")
    monkeypatch.setenv("JUDGE_RUN_LEASE_SECONDS", "5")
    monkeypatch.setenv("JUDGE_CHUNK_SIZE", "16")


def _wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.mark.worker
def test_fifth_of_calls_failing_with_the_worker_killed_mid_run(
    worker_log_start, worker_env, llm_endpoints, celery_worker, figures
):
    log_start = worker_log_start
    base_url, ctl = start_server(latency_s=0.03)
    try:
        project = ProjectFactory()
        claims = make_claims(project, [f"Claim {i} about refunds" for i in range(160)])
        plan = _plan(ctl, claims)
        judge = _judge(project, base_url, llm_endpoints)
        run = judge_run_start(judge=judge)
        _wait_for(lambda: JudgeVerdict.objects.filter(run=run).count() >= 32, 90, "some verdicts")
        celery_worker.kill()
        judged_at_kill = JudgeVerdict.objects.filter(run=run).count()
        assert judged_at_kill < len(claims), "the kill landed after the run"
        celery_worker.start()
        _wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE,
            180,
            "the run to finish after the restart",
        )
        _check_run(run, ctl, plan, len(claims), figures, "worker")
        figures.add("worker faults", sigkills=1, verdicts_before_kill=judged_at_kill)
        celery_worker.stop()
        log = WORKER_LOG.read_bytes()[log_start:].decode(errors="replace")
        assert "judge endpoint" in log or "run_judge" in log  # the log is the worker's
        _assert_key_nowhere(project, run, judge, [log])
    finally:
        ctl.stop()
