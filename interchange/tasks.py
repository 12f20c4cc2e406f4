"""Celery tasks of the interchange. They take ids, re-fetch, and are idempotent: a job already
finished, or running with a live heartbeat, is left alone (see interchange/services/import_jobs.py).
"""

from celery import shared_task

from interchange.services.import_jobs import import_job_execute


# Named as before the move to interchange: messages already queued carry this name.
@shared_task(name="annotate.tasks.run_import", acks_late=True, reject_on_worker_lost=True)
def run_import(job_id: int) -> str:
    """Import the file of ImportJob `job_id`; safe to deliver more than once."""
    return import_job_execute(job_id=job_id)


run_import_task = run_import
