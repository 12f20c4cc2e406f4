"""The Celery task of the system-under-test run: takes an id, re-fetches, and is safe to
deliver more than once (testsets/services/sut.py settles each item once)."""

from celery import shared_task

from testsets.services.sut import sut_run_execute


@shared_task(name="testsets.run_sut", acks_late=True, reject_on_worker_lost=True)
def run_sut(run_id: int) -> str:
    return sut_run_execute(run_id=run_id)
