"""Celery tasks of metrics: computing a report snapshot.

The task imports its service; the service enqueues it by name (`metrics.services.snapshots`).
"""

from celery import shared_task

from metrics.services.active_design import active_design_job_run
from metrics.services.rollup_headline import rollup_headline_compute
from metrics.services.snapshots import snapshot_compute


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def compute_report(snapshot_id: int) -> None:
    """Compute snapshot `snapshot_id`'s report into its row; progress is written to the row.

    Idempotent: a done snapshot is left alone, and a redelivered task (the worker died
    mid-compute) recomputes into the same row rather than creating another one.
    """
    snapshot_compute(snapshot_id=snapshot_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def apply_active_design(project_id: int, design: str, run_id: int | None, budget: int | None):
    """Put project `project_id`'s queue under `design` from judge run `run_id` with `budget`
    labels (`metrics.services.active_design`); state and progress on `Project.design_job`.
    Idempotent: applied twice, the second finds the same π (frozen for labelled claims)."""
    active_design_job_run(project_id=project_id, design=design, run_id=run_id, budget=budget)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def refresh_rollup_headline(row_id: int) -> None:
    """Compute the dashboard's headline from rollups into row `row_id`
    (`metrics.services.rollup_headline`); idempotent, its stage written to the row."""
    rollup_headline_compute(row_id=row_id)
