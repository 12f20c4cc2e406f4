"""A real Celery worker on Redis + PostgreSQL, SIGKILLed in the middle of a judge run.

After the restart the run comes back through the sweep a starting worker schedules
(`resume_stale_runs`: the run's heartbeat is stale); the lease lets only one execution work on
it at a time.
"""

import time

import pytest

from judges.models import JudgeRun, JudgeVerdict
from judges.services import judge_run_start
from tests.factories import JudgeFactory, ProjectFactory
from tests.judges.conftest import make_claims
from tests.llm_server import start_server

N_CLAIMS = 200


@pytest.fixture
def fast_redelivery(monkeypatch):
    """Worker environment (read when the worker starts): a run's lease goes stale after 5 s
    without a heartbeat (60 s by default)."""
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
def test_killed_worker_run_completes_with_one_verdict_per_claim_and_no_repeat_calls(
    llm_endpoints, fast_redelivery, celery_worker
):
    base_url, ctl = start_server(latency_s=0.05)
    llm_endpoints(loopback=base_url)  # the worker reads the same declaration
    try:
        project = ProjectFactory()
        claims = make_claims(
            project, [f"Claim number {i} about refunds" for i in range(N_CLAIMS)], per_answer=10
        )
        judge = JudgeFactory(
            project=project,
            backend="openai",
            model="loopback",
            endpoint="loopback",
            max_concurrency=4,
            timeout_seconds=5,
            max_retries=2,
            verify_prompt="",
        )
        run = judge_run_start(judge=judge)  # committed at once: the worker picks it up

        _wait_for(lambda: JudgeVerdict.objects.filter(run=run).count() >= 48, 60, "some verdicts")
        celery_worker.kill()
        killed_at = time.monotonic()
        judged_at_kill = set(
            JudgeVerdict.objects.filter(run=run).values_list("claim__text", flat=True)
        )
        run.refresh_from_db()
        assert run.status == JudgeRun.Status.RUNNING
        assert 48 <= len(judged_at_kill) < N_CLAIMS, "kill landed mid-run"

        celery_worker.start()
        _wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE,
            120,
            "the run to finish after the restart",
        )
        run.refresh_from_db()
        assert (run.done, run.failed, run.unparseable, run.total) == (N_CLAIMS, 0, 0, N_CLAIMS)
        assert JudgeVerdict.objects.filter(run=run).count() == N_CLAIMS
        assert set(JudgeVerdict.objects.filter(run=run).values_list("claim_id", flat=True)) == {
            c.pk for c in claims
        }
        calls = ctl.calls_per_claim()
        # No claim that had a verdict when the worker died was sent to the endpoint again...
        assert {text: calls[text] for text in judged_at_kill if calls[text] != 1} == {}
        # ...and the work after the restart really happened in the new worker.
        after_restart = [c for c in ctl.log if c.received_at > killed_at]
        assert len(after_restart) >= N_CLAIMS - len(judged_at_kill)
        assert not any(c.claim in judged_at_kill for c in after_restart)
    finally:
        ctl.stop()
