"""Report snapshots: the row the dashboard reads, requested by a lead and computed by the
`metrics.tasks.compute_report` task (which imports this module, never the reverse).

The task is enqueued by its registered name through Celery's `send_task`, so this module does
not import `metrics.tasks`: the task module depends on its service and not the other way round,
and importing the task module here would be a cycle. `send_task` ignores
CELERY_TASK_ALWAYS_EAGER (no broker configured: tasks run in-process), so in eager mode the
service runs the computation itself, which is what an eager `.delay()` did.
"""

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import Claim, Project, System
from judges.models import Judge
from metrics import selectors
from metrics.models import ReportSnapshot
from metrics.services.report import report_build
from metrics.services.rollups import designs_not_weighted

logger = logging.getLogger(__name__)

# An unfinished snapshot older than this is taken to have lost its worker and is re-enqueued
# into the same row; a 1M-claim report takes about a minute.
SNAPSHOT_STALE_AFTER = timedelta(minutes=10)
COMPUTE_REPORT_TASK = "metrics.tasks.compute_report"
# The full report's peak memory per claim read (bench/RESULTS.md row 3: 850 MB at 1M claims).
REPORT_BYTES_PER_CLAIM = 850


def _too_large(snapshot: ReportSnapshot) -> str:
    """Why the full report is not computed for `snapshot` (its claims past
    FAITHAUDIT_REPORT_MAX_CLAIMS), or "" when it may be."""
    cap = settings.FAITHAUDIT_REPORT_MAX_CLAIMS
    if not cap:
        return ""
    claims = Claim.objects.filter(project=snapshot.project_id)
    if snapshot.system_id is not None:
        claims = claims.filter(answer__system=snapshot.system_id)
    count = claims.count()
    if count <= cap:
        return ""
    gigabytes = count * REPORT_BYTES_PER_CLAIM / 1e9
    memory = f"about {gigabytes:.1f} GB" if gigabytes >= 0.1 else "under 0.1 GB"
    refused = (
        f"the full report reads every claim into memory, {count:,} here ({memory}), and this "
        f"server computes it up to {cap:,} claims (FAITHAUDIT_REPORT_MAX_CLAIMS). "
    )
    drawn = designs_not_weighted(project=snapshot.project_id)
    if drawn:
        # The headline at scale would refuse too: say so rather than send the lead there.
        return refused + (
            f'"Headline at scale" does not weight gold drawn by the {" or ".join(drawn)} '
            "queue yet, so it gives no figure for this project either: compute the report on "
            "a worker with the memory, with the cap raised."
        )
    return refused + (
        '"Headline at scale" shows the faithfulness, the judge\'s PPI++, calibration and CRC '
        "from rollups, read in memory bounded by the gold."
    )


def snapshot_create(
    *,
    project: Project,
    judge: Judge | None = None,
    system: System | None = None,
    all_systems: bool = False,
) -> ReportSnapshot:
    return ReportSnapshot.objects.create(
        project=project, judge=judge, system=system, all_systems=all_systems
    )


@transaction.atomic
def snapshot_request(
    *,
    project: Project,
    judge: Judge | None = None,
    system: System | None = None,
    all_systems: bool = False,
) -> ReportSnapshot:
    """A pending snapshot with `compute_report` enqueued when this transaction commits.

    `system` / `all_systems`: the answers it covers (a project of two systems or more; neither:
    the project's default, see `report_system`). While one of the same judge and answers is
    already pending or running it is returned instead of a duplicate; if it has been unfinished
    longer than SNAPSHOT_STALE_AFTER (its worker died), it is enqueued again into the same row.
    """
    if system is not None and system.project_id != project.pk:
        raise ValueError("the system must belong to the project")
    existing = (
        ReportSnapshot.objects.select_for_update()
        .filter(
            project=project,
            judge=judge,
            system=system,
            all_systems=all_systems,
            status__in=[ReportSnapshot.Status.PENDING, ReportSnapshot.Status.RUNNING],
        )
        .order_by("-created_at")
        .first()
    )
    if existing is not None and existing.created_at > timezone.now() - SNAPSHOT_STALE_AFTER:
        return existing
    snapshot = existing or snapshot_create(
        project=project, judge=judge, system=system, all_systems=all_systems
    )
    transaction.on_commit(lambda: _enqueue_or_fail(snapshot.pk))
    return snapshot


def snapshot_request_every_system(
    *, project: Project, judge: Judge | None = None
) -> ReportSnapshot:
    """The dashboard's default report of a project with two systems or more (issue 32): all
    systems pooled, and each system's own report for the headlines shown beside it. Returns
    the pooled snapshot (the one whose progress the page follows); with one system or none,
    the project's default snapshot alone."""
    systems = list(selectors.systems_for_project(project=project))
    if len(systems) < 2:
        return snapshot_request(project=project, judge=judge)
    pooled = snapshot_request(project=project, judge=judge, all_systems=True)
    for system in systems:
        snapshot_request(project=project, judge=judge, system=system)
    return pooled


def _enqueue(snapshot_id: int) -> None:
    """Send `compute_report` by name (see the module docstring); in-process when eager."""
    if current_app.conf.task_always_eager:
        snapshot_compute(snapshot_id=snapshot_id)
    else:
        current_app.send_task(COMPUTE_REPORT_TASK, args=(snapshot_id,))


def _enqueue_or_fail(snapshot_id: int) -> None:
    """With the broker down, fail the snapshot with a clear message (the dashboard shows it)
    instead of a 500 and a snapshot pending forever."""
    try:
        _enqueue(snapshot_id)
    except BrokerUnreachable:
        logger.exception("could not enqueue report snapshot %s", snapshot_id)
        ReportSnapshot.objects.filter(pk=snapshot_id, status=ReportSnapshot.Status.PENDING).update(
            status=ReportSnapshot.Status.FAILED,
            error="the task queue (Redis) could not be reached; press Recompute once it is back",
        )


def snapshot_compute(*, snapshot_id: int) -> ReportSnapshot | None:
    """Compute a snapshot's report into its own row; idempotent.

    A snapshot already done is left alone; one of a project past FAITHAUDIT_REPORT_MAX_CLAIMS
    fails at once, saying why (`_too_large`). Redelivered after a crash (pending, running or
    failed), the whole report is recomputed from scratch into the same row; if two deliveries
    race, the first to finish writes and the other's result is dropped, so a snapshot
    completes once.
    """
    snapshot = (
        ReportSnapshot.objects.select_related("project", "judge", "system")
        .filter(pk=snapshot_id)
        .first()
    )
    if snapshot is None or snapshot.status == ReportSnapshot.Status.DONE:
        return snapshot
    rows = ReportSnapshot.objects.filter(pk=snapshot_id).exclude(status=ReportSnapshot.Status.DONE)
    refused = _too_large(snapshot)
    if refused:
        rows.update(status=ReportSnapshot.Status.FAILED, stage="refused", error=refused)
        snapshot.refresh_from_db()
        return snapshot
    rows.update(status=ReportSnapshot.Status.RUNNING, progress=0.0, stage="starting", error="")

    def progress(fraction: float, stage: str) -> None:
        rows.update(progress=round(min(max(fraction, 0.0), 1.0), 3), stage=stage[:200])

    try:
        built = report_build(
            project=snapshot.project,
            judge=snapshot.judge,
            progress=progress,
            system=snapshot.system,
            all_systems=snapshot.all_systems,
        )
    except Exception as error:
        logger.exception("report snapshot %s failed", snapshot_id)
        rows.update(status=ReportSnapshot.Status.FAILED, error=f"{type(error).__name__}: {error}")
        snapshot.refresh_from_db()
        return snapshot
    rows.update(
        status=ReportSnapshot.Status.DONE,
        progress=1.0,
        stage="done",
        data=built.data,
        crc_inputs=built.crc_inputs,
        labels_at_compute=built.data["labels_at_compute"],
        computed_at=timezone.now(),
    )
    snapshot.refresh_from_db()
    return snapshot
