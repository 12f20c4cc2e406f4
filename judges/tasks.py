"""Celery tasks of judges. They take ids, re-fetch, and are idempotent (see judges/runner.py).

How a run survives a dead worker: every execution holds a lease on the run with a heartbeat
(judges/runner.py), and a run whose heartbeat went stale is re-enqueued by

- `watch_run`, a per-run watchdog scheduled when the run starts (or resumes), which looks at
  the run once per lease period until it has finished;
- `resume_stale_runs`, a sweep scheduled when a worker starts, so restarting a crashed worker
  resumes its runs even though the watchdog's own message may have died with it;
- `python manage.py resume_runs` (cron) and the run page's Resume button, by hand.

Redis's redelivery of an unacknowledged task (acks_late, after the broker's visibility
timeout) is not relied on: Redis hands a long task to a second consumer under the same
delivery tag while the first still runs it, and the first one's ack then removes the only
copy, so a later crash leaves nothing to redeliver. Keep CELERY_VISIBILITY_TIMEOUT above
JUDGE_RUN_LEASE_SECONDS + 1 (the watchdog's countdown), or its messages are delivered twice.
"""

import uuid

from celery import shared_task
from celery.signals import worker_init, worker_ready

from judges.backends.openai_backend import preload
from judges.models import JudgeRun
from judges.pairwise_runner import pairwise_execute
from judges.runner import LIVE, lease_seconds, run_execute
from judges.services import judge_run_resume, judge_runs_resume_stale, run_is_stale
from judges.split_jobs import split_job_execute


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_judge(run_id: int) -> str:
    """Judge the remaining items of run `run_id`; safe to deliver more than once. A delivery
    that finds another execution's live lease returns "busy" and leaves the run to it."""
    if JudgeRun.objects.filter(pk=run_id, kind=JudgeRun.Kind.PAIRWISE).exists():
        return run_pairwise(run_id)  # a resume that named the generic task
    return run_execute(run_id, owner=uuid.uuid4().hex)


@shared_task(name="judges.tasks.run_pairwise", acks_late=True, reject_on_worker_lost=True)
def run_pairwise(run_id: int) -> str:
    """Judge the remaining (question, order) items of pairwise run `run_id`
    (judges/pairwise_runner.py); safe to deliver more than once, as `run_judge`."""
    return pairwise_execute(run_id, owner=uuid.uuid4().hex)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def split_claims(job_id: int) -> str:
    """Split the answers of split job `job_id` (by rule or by LLM); a redelivery carries on
    after the answers already counted."""
    return split_job_execute(job_id)


@shared_task(acks_late=True)
def watch_run(run_id: int) -> str:
    """Resume run `run_id` if its worker died; look again in a lease period while it lives."""
    run = JudgeRun.objects.filter(pk=run_id).first()
    if run is None or run.status not in LIVE:
        return "finished"
    if run_is_stale(run):
        judge_run_resume(run=run)  # schedules a fresh watchdog with the task
        return "resumed"
    watch_run_schedule(run_id)
    return "alive"


@shared_task(acks_late=True)
def resume_stale_runs() -> list[int]:
    """Re-enqueue every run whose heartbeat is stale."""
    return judge_runs_resume_stale()


def _in_process() -> bool:
    # Without a broker tasks run inline: a countdown would recurse, and nothing can die
    # unnoticed in the one process anyway.
    return bool(run_judge.app.conf.task_always_eager)


def watch_run_schedule(run_id: int) -> None:
    # judges.services._enqueue schedules the first watchdog the same way, by the task's name.
    if not _in_process():
        watch_run.apply_async(args=[run_id], countdown=lease_seconds() + 1)


@worker_init.connect
def backends_preload(sender=None, **kwargs):
    """Import the OpenAI client's lazily loaded parts once, in the worker's main process
    before it forks its pool: otherwise every pool process pays about a second of CPU inside
    its first judge run (measured: it was most of a short run's time before its first call).
    """
    preload()


@worker_ready.connect
def _sweep_when_a_worker_starts(sender=None, **kwargs):
    if not _in_process():
        # After a lease period, so runs of the worker that died just now count as stale.
        resume_stale_runs.apply_async(countdown=lease_seconds() + 1)


run_judge_task = run_judge
split_claims_task = split_claims
