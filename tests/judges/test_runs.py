"""Judge runs end to end in-process: verdicts, counts, failures, idempotency, resume, cancel."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from judges.models import JudgeFailure, JudgeRun, JudgeVerdict, prompt_version
from judges.prompts import DEFAULT_VERIFY_PROMPT
from judges.runner import run_execute
from judges.services import judge_run_cancel, judge_run_resume, judge_run_start
from judges.tasks import run_judge_task
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db

SUPPORTED = "Refunds are processed within 14 days"
CONTRADICTED = "Refunds are processed within 30 days"
ABSENT = "Shoes can be exchanged in any branch {}"


def start(judge, capture, **kwargs):
    with capture(execute=True):
        run = judge_run_start(judge=judge, **kwargs)
    run.refresh_from_db()
    return run


def test_run_stores_verdicts_confidences_and_counts(
    openai_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    claims = make_claims(project, [SUPPORTED, CONTRADICTED, ABSENT.format(1), ABSENT.format(2)])
    run = start(openai_judge, django_capture_on_commit_callbacks)

    assert run.status == JudgeRun.Status.DONE
    assert (run.total, run.done, run.failed, run.unparseable) == (4, 4, 0, 0)
    assert run.prompt_version == prompt_version(DEFAULT_VERIFY_PROMPT)
    assert run.prompt_text == DEFAULT_VERIFY_PROMPT
    stored = {v.claim_id: v for v in JudgeVerdict.objects.filter(run=run)}
    expected = {
        claims[0].pk: ("SUPPORTED", ctl.expected_confidence("SUPPORTED")),
        claims[1].pk: ("CONTRADICTED", ctl.expected_confidence("CONTRADICTED")),
        claims[2].pk: ("NOT_IN_PILE", ctl.expected_confidence("NOT_MENTIONED")),
        claims[3].pk: ("NOT_IN_PILE", ctl.expected_confidence("NOT_MENTIONED")),
    }
    for claim_id, (verdict, confidence) in expected.items():
        assert stored[claim_id].verdict == verdict
        assert stored[claim_id].confidence == pytest.approx(confidence)
    assert stored[claims[0].pk].confidence == pytest.approx(0.8 / 0.93)
    assert run.prompt_tokens == sum(v.prompt_tokens for v in stored.values()) > 0
    assert run.completion_tokens == 4
    assert run.mean_latency_ms is not None
    assert run.mean_latency_ms > 0


def test_garbage_unparseable_and_failing_claim_counted_and_run_completes(
    openai_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    make_claims(project, [SUPPORTED, CONTRADICTED, ABSENT.format(1), ABSENT.format(2)])
    ctl.fail("garbage", claim=CONTRADICTED, text="It is hard to say.")
    ctl.fail("500", claim=ABSENT.format(1), times=None)  # always fails
    ctl.fail("no_logprobs", claim=SUPPORTED)
    run = start(openai_judge, django_capture_on_commit_callbacks)

    assert run.status == JudgeRun.Status.DONE
    assert (run.done, run.unparseable, run.failed, run.total) == (2, 1, 1, 4)
    garbage = JudgeVerdict.objects.get(run=run, claim__text=CONTRADICTED)
    assert (garbage.verdict, garbage.raw_response) == ("UNPARSEABLE", "It is hard to say.")
    assert JudgeVerdict.objects.get(run=run, claim__text=SUPPORTED).confidence is None
    failure = JudgeFailure.objects.get(run=run)
    assert failure.claim.text == ABSENT.format(1)
    assert "HTTP 500" in failure.error
    assert ctl.calls_for(ABSENT.format(1)) == openai_judge.max_retries + 1
    assert not JudgeVerdict.objects.filter(run=run, claim=failure.claim).exists()


def test_retry_failed_claims_calls_only_them(
    openai_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    make_claims(project, [SUPPORTED, ABSENT.format(1)])
    ctl.fail("500", claim=ABSENT.format(1), times=openai_judge.max_retries + 1)
    run = start(openai_judge, django_capture_on_commit_callbacks)
    assert (run.done, run.failed) == (1, 1)
    with django_capture_on_commit_callbacks(execute=True):
        assert judge_run_resume(run=run)
    run.refresh_from_db()
    assert (run.status, run.done, run.failed) == (JudgeRun.Status.DONE, 2, 0)
    assert ctl.calls_for(SUPPORTED) == 1


def test_redelivered_task_makes_no_second_call_and_writes_one_verdict_per_claim(
    openai_judge, project, llm, django_capture_on_commit_callbacks, monkeypatch
):
    _, ctl = llm
    monkeypatch.setenv("JUDGE_CHUNK_SIZE", "4")
    texts = [ABSENT.format(i) for i in range(10)]
    claims = make_claims(project, texts)
    with django_capture_on_commit_callbacks(execute=False):
        run = judge_run_start(judge=openai_judge)
    # A worker died after writing its first chunk: 4 verdicts, a lease with an old heartbeat.
    for claim in claims[:4]:
        JudgeVerdict.objects.create(run=run, claim=claim, verdict="NOT_IN_PILE", confidence=0.1)
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running",
        done=4,
        lease_owner="dead-worker",
        heartbeat_at=timezone.now() - timedelta(hours=1),
    )
    run_judge_task.apply(args=[run.pk])
    run_judge_task.apply(args=[run.pk])  # and once more, as a redelivery would

    run.refresh_from_db()
    assert (run.status, run.done, run.total) == (JudgeRun.Status.DONE, 10, 10)
    assert JudgeVerdict.objects.filter(run=run).count() == 10
    calls = ctl.calls_per_claim()
    assert all(calls[c.text] == 0 for c in claims[:4])
    assert all(calls[c.text] == 1 for c in claims[4:])


def test_live_lease_keeps_a_second_execution_out(
    openai_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    make_claims(project, [SUPPORTED])
    with django_capture_on_commit_callbacks(execute=False):
        run = judge_run_start(judge=openai_judge)
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="alive", heartbeat_at=timezone.now()
    )
    assert run_execute(run.pk, owner="second") == "busy"
    assert ctl.total_calls == 0
    assert not judge_run_resume(run=run)  # a live run is not resumed


def test_stale_run_is_resumed(openai_judge, project, llm, django_capture_on_commit_callbacks):
    _, ctl = llm
    make_claims(project, [SUPPORTED, CONTRADICTED])
    with django_capture_on_commit_callbacks(execute=False):
        run = judge_run_start(judge=openai_judge)
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="dead", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert judge_run_resume(run=run)
    run.refresh_from_db()
    assert (run.status, run.done) == (JudgeRun.Status.DONE, 2)


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_the_run_between_chunks(openai_judge, project, llm, monkeypatch):
    _, ctl = llm
    monkeypatch.setenv("JUDGE_CHUNK_SIZE", "4")
    openai_judge.max_concurrency = 1
    openai_judge.save()
    make_claims(project, [ABSENT.format(i) for i in range(12)])
    run = judge_run_start(judge=openai_judge)  # transaction=True: on_commit runs at once...
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE  # ...so this one ran to the end: 12 calls
    assert ctl.total_calls == 12

    # Now cancel a second run from "another browser tab" while its 6th call is in flight.
    seen = []

    def cancel_on_sixth(claim, context):
        seen.append(claim)
        if len(seen) == 6:
            judge_run_cancel(run=JudgeRun.objects.get(pk=second_id))
            connection.close()
        return None

    ctl.script = cancel_on_sixth
    from judges import services

    monkeypatch.setattr(services, "_enqueue", lambda run_id: None)
    second = judge_run_start(judge=openai_judge)
    second_id = second.pk
    assert run_judge_task.apply(args=[second_id]).get() == "cancelled"
    second.refresh_from_db()
    assert second.status == JudgeRun.Status.CANCELLED
    # The chunk in flight (calls 5-8) finished and was written; no further chunk started.
    assert len(seen) == 8
    assert JudgeVerdict.objects.filter(run=second).count() == 8 == second.done
    assert run_judge_task.apply(args=[second_id]).get() == "finished"
    assert len(seen) == 8


def test_missing_api_key_variable_fails_the_run_with_a_clear_error(
    openai_judge, project, llm, llm_endpoints, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.delenv("FA_NO_SUCH_KEY", raising=False)
    llm_endpoints({"name": "loopback", "base_url": llm[0], "api_key_env": "FA_NO_SUCH_KEY"})
    make_claims(project, [SUPPORTED])
    run = start(openai_judge, django_capture_on_commit_callbacks)
    assert run.status == JudgeRun.Status.FAILED
    assert "API key of endpoint 'loopback' is not set" in run.error
    assert "FA_NO_SUCH_KEY" not in run.error  # the operator's variable names stay theirs
    assert llm[1].total_calls == 0


def test_scopes_gold_and_unjudged(openai_judge, project, llm, django_capture_on_commit_callbacks):
    from tests.factories import GoldFactory

    claims = make_claims(project, [SUPPORTED, CONTRADICTED, ABSENT.format(1)])
    GoldFactory(claim=claims[1], verdict="CONTRADICTED")
    gold_run = start(openai_judge, django_capture_on_commit_callbacks, scope="gold")
    assert gold_run.total == 1
    assert list(gold_run.verdicts.values_list("claim_id", flat=True)) == [claims[1].pk]
    unjudged = start(openai_judge, django_capture_on_commit_callbacks, scope="unjudged")
    assert unjudged.total == 2
    assert set(unjudged.verdicts.values_list("claim_id", flat=True)) == {claims[0].pk, claims[2].pk}


def test_watchdog_resumes_a_run_whose_heartbeat_is_stale(
    openai_judge, project, llm, django_capture_on_commit_callbacks
):
    from judges.tasks import watch_run

    make_claims(project, [SUPPORTED])
    with django_capture_on_commit_callbacks(execute=False):
        run = judge_run_start(judge=openai_judge)
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="alive", heartbeat_at=timezone.now()
    )
    assert watch_run.apply(args=[run.pk]).get() == "alive"
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert watch_run.apply(args=[run.pk]).get() == "resumed"
    run.refresh_from_db()
    assert (run.status, run.done) == (JudgeRun.Status.DONE, 1)
    assert watch_run.apply(args=[run.pk]).get() == "finished"
