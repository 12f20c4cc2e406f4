"""Celery tasks of metrics: computing a report snapshot.

The task imports its service; the service enqueues it by name (`metrics.services.snapshots`).
"""

from celery import shared_task

from metrics.services.snapshots import snapshot_compute


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def compute_report(snapshot_id: int) -> None:
    """Compute snapshot `snapshot_id`'s report into its row; progress is written to the row.

    Idempotent: a done snapshot is left alone, and a redelivered task (the worker died
    mid-compute) recomputes into the same row rather than creating another one.
    """
    snapshot_compute(snapshot_id=snapshot_id)
