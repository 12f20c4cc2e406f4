"""Monitoring's Celery tasks: take ids, re-fetch, call a service (idempotent)."""

from __future__ import annotations

from celery import shared_task

from monitor.models import MonitoredStream
from monitor.services import alert_notify, stream_evaluate, streams_ingest


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def notify_alert(alert_id: int) -> None:
    alert_notify(alert_id=alert_id)


@shared_task(acks_late=True)
def evaluate_streams() -> int:
    """Beat entry: evaluate every active stream once a day."""
    raised = 0
    for stream in MonitoredStream.objects.filter(active=True):
        raised += stream_evaluate(stream=stream) is not None
    return raised


@shared_task(acks_late=True)
def ingest_streams(project_id: int) -> int:
    """New answers arrived in a project: its monitored streams sample and judge them."""
    return streams_ingest(project_id=project_id)
