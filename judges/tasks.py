"""Celery tasks of judges. They take ids, re-fetch, and are idempotent (see judges/runner.py)."""

import uuid

from celery import shared_task

from judges.runner import lease_seconds, run_execute


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_judge(self, run_id: int) -> str:
    """Judge the remaining items of run `run_id`; safe to deliver more than once."""
    outcome = run_execute(run_id, owner=uuid.uuid4().hex)
    if outcome == "busy" and not self.request.is_eager:
        # Another execution holds a live lease. Check again once it could have gone stale:
        # if its worker died meanwhile, this delivery carries the run on.
        raise self.retry(countdown=lease_seconds())
    return outcome


run_judge_task = run_judge
