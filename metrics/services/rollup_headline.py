"""The headline from rollups on the dashboard's "at scale" page (issue 30): a lead asks for it,
a task computes it — the project's rollups brought up to date (`rollups.rollups_read`: on
PostgreSQL only the answers written since the last time), faithfulness pooled and per stratum,
the judge's design PPI++ and its calibration — and stores it as JSON in a `RollupHeadline`
row the page reads. Memory and time are bounded by gold, strata and answers written, not by
claims (docs/SCALE.md), so this works where the full report (every claim into Python) cannot.

The task is sent by name, in-process when eager (as `snapshots` does for the report).
"""

import logging
import math
import time
from datetime import timedelta

from celery import current_app
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import Project, System
from judges.models import Judge, JudgeRun
from metrics.models import RollupHeadline
from metrics.services.rollups import (
    CONFIDENCE_DIGITS,
    calibration_from_rollups,
    headline_from_rollups,
    rollups_confidences,
    rollups_read,
)

logger = logging.getLogger(__name__)

REFRESH_TASK = "metrics.tasks.refresh_rollup_headline"
# A request unfinished for this long is taken to have lost its worker: asking again re-sends it.
STALE_AFTER = timedelta(hours=1)


def newest_verify_run(judge: Judge | None) -> JudgeRun | None:
    """The judge's newest finished verify run: the scores the rollups read (None: no judge)."""
    if judge is None:
        return None
    return (
        JudgeRun.objects.filter(judge=judge, kind=JudgeRun.Kind.VERIFY, status=JudgeRun.Status.DONE)
        .order_by("-id")
        .first()
    )


def _key(project: Project, run: JudgeRun | None, system: System | None) -> str:
    return f"{project.pk}:{run.pk if run else ''}:{system.pk if system else ''}"


def rollup_headline_get(
    *, project: Project, run: JudgeRun | None, system: System | None = None
) -> RollupHeadline | None:
    return RollupHeadline.objects.filter(key=_key(project, run, system)).first()


def rollup_headline_request(
    *, project: Project, run: JudgeRun | None, system: System | None = None
) -> RollupHeadline:
    """The row of this project × run × system, marked pending with the task enqueued when
    this transaction commits; while a request is pending or running (and not stale) it is
    returned as it is."""
    row, _ = RollupHeadline.objects.get_or_create(
        key=_key(project, run, system),
        defaults={
            "project": project,
            "run_id": run.pk if run else None,
            "system_id": system.pk if system else None,
        },
    )
    busy = row.status in (RollupHeadline.Status.PENDING, RollupHeadline.Status.RUNNING)
    if busy and row.requested_at and row.requested_at > timezone.now() - STALE_AFTER:
        return row
    row.status, row.stage, row.error = RollupHeadline.Status.PENDING, "waiting for a worker", ""
    row.requested_at = timezone.now()
    row.save(update_fields=["status", "stage", "error", "requested_at"])
    transaction.on_commit(lambda: _enqueue_or_fail(row.pk))
    return row


def _enqueue_or_fail(row_id: int) -> None:
    try:
        if current_app.conf.task_always_eager:
            rollup_headline_compute(row_id=row_id)
        else:
            current_app.send_task(REFRESH_TASK, args=(row_id,))
    except BrokerUnreachable:
        logger.exception("could not enqueue rollup headline %s", row_id)
        RollupHeadline.objects.filter(pk=row_id, status=RollupHeadline.Status.PENDING).update(
            status=RollupHeadline.Status.FAILED,
            error="the task queue (Redis) could not be reached; press Refresh once it is back",
        )


def _stage(row: RollupHeadline, stage: str) -> None:
    row.stage = stage
    row.save(update_fields=["stage"])


def rollup_headline_compute(*, row_id: int) -> RollupHeadline | None:
    """Compute row `row_id`'s figures into it. Idempotent: a row already done since its last
    request is left alone; a redelivered task computes again into the same row. A project
    whose gold the rollups cannot weight (drawn by the active or stratified queue) fails with
    the reason, never a raw figure."""
    row = RollupHeadline.objects.select_related("project").filter(pk=row_id).first()
    if row is None:
        return None
    if row.status == RollupHeadline.Status.DONE:
        return row
    row.status = RollupHeadline.Status.RUNNING
    row.save(update_fields=["status"])
    started = time.perf_counter()
    try:
        run = JudgeRun.objects.filter(pk=row.run_id).first() if row.run_id else None
        system = System.objects.filter(pk=row.system_id).first() if row.system_id else None
        _stage(row, "bringing the rollups up to date (the first time: every claim, once)")
        rollups = rollups_read(project=row.project, run=run, system=system)
        figures = {
            "rows_read": rollups.rows_read,
            "answers_refreshed": rollups.answers_refreshed,
            "gold": int(rollups.gold_verdict.size),
            "claims": int(sum(rollups.sizes.values())),
            **headline_from_rollups(rollups),
        }
        if run is not None:
            _stage(row, "counting the judge's confidences")
            confidences = rollups_confidences(project=row.project, run=run, system=system)
            figures["confidence_rows_read"] = int(confidences[0].size)
            figures["confidence_digits"] = CONFIDENCE_DIGITS
            figures["calibration"] = calibration_from_rollups(rollups, confidences)
    except ValueError as error:  # refused: gold the rollups cannot weight
        row.status, row.error, row.stage = RollupHeadline.Status.FAILED, str(error), ""
        row.save(update_fields=["status", "error", "stage"])
        return row
    except Exception:
        logger.exception("rollup headline %s failed", row_id)
        row.status, row.stage = RollupHeadline.Status.FAILED, ""
        row.error = "the computation failed; the server log has the details"
        row.save(update_fields=["status", "error", "stage"])
        raise
    row.figures = plain(figures)
    row.status, row.stage = RollupHeadline.Status.DONE, ""
    row.seconds = time.perf_counter() - started
    row.computed_at = timezone.now()
    row.save(update_fields=["figures", "status", "stage", "seconds", "computed_at"])
    return row


def plain(value):
    """numpy numbers and tuples as JSON numbers and lists, NaN and ∞ as null (as the report's
    JSON form), keys as text."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if value is None or isinstance(value, str | bool):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return None
    return int(number) if isinstance(value, int) else number
