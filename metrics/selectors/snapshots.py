"""The stored reports pages read (never recounting): the newest done, unfinished or failed
snapshot of a scope, and one by id.
"""

from django.db.models import Q
from django.http import Http404

from annotate.models import (
    Project,
    System,
)
from judges.models import Judge
from metrics.models import ReportSnapshot


def _snapshot_scope(system: System | None, all_systems: bool, default: bool) -> Q:
    """Snapshots of these answers: one system's, all systems' pooled, or the project's default
    (`default`: the scope asked for is the project's default one, which snapshots stored
    without a scope — the default's, as every snapshot before systems were picked — cover)."""
    scope = Q(system=system, all_systems=all_systems)
    if default:
        scope |= Q(system__isnull=True, all_systems=False)
    return scope


def snapshot_latest_done(
    *,
    project: Project,
    judge: Judge | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> ReportSnapshot | None:
    return (
        ReportSnapshot.objects.filter(
            _snapshot_scope(system, all_systems, default),
            project=project,
            judge=judge,
            status=ReportSnapshot.Status.DONE,
        )
        .order_by("-computed_at", "-id")
        .first()
    )


def snapshot_unfinished(
    *,
    project: Project,
    judge: Judge | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> ReportSnapshot | None:
    return (
        ReportSnapshot.objects.filter(
            _snapshot_scope(system, all_systems, default),
            project=project,
            judge=judge,
            status__in=[ReportSnapshot.Status.PENDING, ReportSnapshot.Status.RUNNING],
        )
        .order_by("-created_at", "-id")
        .first()
    )


def snapshot_latest_failed_after(
    *,
    project: Project,
    judge: Judge | None,
    after: ReportSnapshot | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> ReportSnapshot | None:
    """A failed snapshot newer than the shown one: the page says the recompute failed."""
    failed = ReportSnapshot.objects.filter(
        _snapshot_scope(system, all_systems, default),
        project=project,
        judge=judge,
        status=ReportSnapshot.Status.FAILED,
    )
    if after is not None:
        failed = failed.filter(created_at__gt=after.created_at)
    return failed.order_by("-created_at", "-id").first()


def snapshot_get_for_project(*, project: Project, snapshot_id: int) -> ReportSnapshot:
    snapshot = (
        ReportSnapshot.objects.select_related("judge")
        .filter(project=project, pk=snapshot_id)
        .first()
    )
    if snapshot is None:
        raise Http404("No such report.")
    return snapshot


def snapshot_active_audit(
    *,
    project: Project,
    judge: Judge | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> dict | None:
    """The `active_audit` block of the latest done report of these answers (only that key is
    read)."""
    row = (
        ReportSnapshot.objects.filter(
            _snapshot_scope(system, all_systems, default),
            project=project,
            judge=judge,
            status=ReportSnapshot.Status.DONE,
        )
        .order_by("-computed_at", "-id")
        .values_list("data__active_audit", flat=True)
        .first()
    )
    return row or None
