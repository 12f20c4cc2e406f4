"""Monitoring's Celery tasks: take ids, re-fetch, call a service (idempotent)."""

from __future__ import annotations

from celery import shared_task

from monitor.drift import anchors_rejudge, drift_evaluate
from monitor.models import MonitoredStream
from monitor.services import alert_notify, stream_evaluate, streams_ingest


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def notify_alert(alert_id: int) -> None:
    alert_notify(alert_id=alert_id)


@shared_task(acks_late=True)
def evaluate_streams() -> int:
    """Beat entry: evaluate every active stream once a day (faithfulness and judge drift);
    returns the alerts standing after it."""
    raised = 0
    for stream in MonitoredStream.objects.filter(active=True):
        raised += stream_evaluate(stream=stream) is not None
        raised += drift_evaluate(stream=stream) is not None
    return raised


@shared_task(acks_late=True)
def rejudge_anchors() -> int:
    """Beat entry: the live judge re-judges every active stream's anchor set (a queued
    ordinary run each: the endpoint's caps hold); returns the runs started."""
    started = 0
    for stream in MonitoredStream.objects.filter(active=True).select_related("judge"):
        started += anchors_rejudge(stream=stream) is not None
    return started


@shared_task(acks_late=True)
def ingest_streams(project_id: int) -> int:
    """New answers arrived in a project: its monitored streams sample and judge them."""
    return streams_ingest(project_id=project_id)
