"""The Celery task of a test set's generation: takes an id, re-fetches, and is safe to deliver
more than once (testsets/services/generate.py writes each document once)."""

from celery import shared_task

from testsets.services.generate import generation_execute


@shared_task(name="testsets.generate_testset", acks_late=True, reject_on_worker_lost=True)
def generate_testset(job_id: int) -> str:
    return generation_execute(job_id=job_id)
