"""Figures pulled out (`/projects/{slug}/report`, its snapshots, the audit card, the gate, the
comparison of two systems): the same JSON as `manage.py report`, `export_audit` and `compare`.
Leads and owners, as the dashboard."""

from ninja import Router, Status

from annotate.models import Role
from api import schemas as s
from api.routes.access import (
    ERRORS,
    WRITE_ERRORS,
    invalid,
    judge_for_report,
    project_get_for_request,
    system_scope,
)
from metrics import selectors as metric_selectors
from metrics.models import ReportSnapshot
from metrics.services import audit_card, report_compute, report_public, snapshot_request
from metrics.services.compare import SystemNotFound, system_resolve, systems_compare
from metrics.services.gate import GateError, gate_check, gate_validate

router = Router()


@router.get("/projects/{slug}/report", response={200: s.ReportJson, **ERRORS}, tags=["reports"])
def report_read(request, slug: str, judge: str | None = None, system: str | None = None):
    """The report computed now: the same JSON as `manage.py report --format json` (with
    `judge`, as `--judge`; `system`, as `--system`: NAME@VERSION, NAME or all). Leads and
    owners, as the dashboard."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    found = judge_for_report(project, judge)
    scope = system_scope(project, system)
    return report_public(report_compute(project=project, judge=found, **scope))


def _snapshot_out(snapshot: ReportSnapshot) -> dict:
    out = {
        "id": snapshot.pk,
        "status": snapshot.status,
        "progress": snapshot.progress,
        "stage": snapshot.stage,
        "error": snapshot.error,
        "judge": snapshot.judge.name if snapshot.judge_id else None,
        "created_at": snapshot.created_at,
        "computed_at": snapshot.computed_at,
        "report": None,
    }
    if snapshot.status == ReportSnapshot.Status.DONE and snapshot.data:
        out["report"] = report_public(snapshot.data)
    return out


@router.post(
    "/projects/{slug}/report/snapshots",
    response={202: s.SnapshotOut, **WRITE_ERRORS},
    tags=["reports"],
)
def snapshot_create(request, slug: str, judge: str | None = None, system: str | None = None):
    """Request a recompute (as the dashboard's Recompute, of `system`'s answers as its
    picker: NAME@VERSION, NAME or all); poll the snapshot until done."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    found = judge_for_report(project, judge)
    snapshot = snapshot_request(project=project, judge=found, **system_scope(project, system))
    snapshot.refresh_from_db()
    return Status(202, _snapshot_out(snapshot))


@router.get(
    "/projects/{slug}/report/snapshots/{snapshot_id}",
    response={200: s.SnapshotOut, **ERRORS},
    tags=["reports"],
)
def snapshot_read(request, slug: str, snapshot_id: int):
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    return _snapshot_out(
        metric_selectors.snapshot_get_for_project(project=project, snapshot_id=snapshot_id)
    )


@router.get("/projects/{slug}/audit-card", response={200: dict, **ERRORS}, tags=["reports"])
def audit_card_read(request, slug: str, judge: str, instrument: int = 0, system: str | None = None):
    """A judge's audit card computed now (as `manage.py export_audit --format json`; `system`
    as its `--system`)."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    found = judge_for_report(project, judge)
    report = report_compute(project=project, judge=found, **system_scope(project, system))
    instruments = report.get("instruments") or ([report["judge"]] if report.get("judge") else [])
    if not 0 <= instrument < len(instruments):
        raise invalid(
            f"instrument must be between 0 and {len(instruments) - 1} ({len(instruments)} instrument(s))"
            if instruments
            else f"judge {judge!r} has no verdicts to audit yet",
            "instrument",
        )
    return audit_card(report=report, instrument=instrument)


@router.get(
    "/projects/{slug}/gate",
    response={200: s.GateOut, **ERRORS},
    tags=["reports"],
    by_alias=True,
)
def gate(
    request,
    slug: str,
    metric: str = "faithfulness",
    min: float | None = None,  # noqa: A002 - the query parameter's name
    max: float | None = None,  # noqa: A002
    on: str = "lower",
    judge: str | None = None,
):
    """Pass or fail on one figure of the report computed now, judged on its interval's
    lower end by default; the same as `manage.py report --fail-under MIN --on lower`. `min`
    and `max` are finite numbers from 0 to 1 (422 naming the parameter otherwise); a figure
    that is missing or could not be computed fails, the reason saying which."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    found = judge_for_report(project, judge)
    try:
        gate_validate(metric=metric, minimum=min, maximum=max, on=on)
    except GateError as error:
        raise invalid(str(error), str(error).split(":")[0]) from None
    report = report_compute(project=project, judge=found)
    return gate_check(report, metric=metric, minimum=min, maximum=max, on=on)


@router.get("/projects/{slug}/compare", response={200: dict, **ERRORS}, tags=["reports"])
def compare_read(request, slug: str, a: str, b: str, judge: str | None = None):
    """Two systems compared on the questions both answered: the same JSON as `manage.py
    compare --a A --b B [--judge NAME] --format json` (`a`, `b`: a system as `name@version`
    or its name alone). Leads and owners, as the comparison page."""
    project, _ = project_get_for_request(request, slug, Role.LEAD)
    found = judge_for_report(project, judge)
    systems = []
    for field, ref in (("a", a), ("b", b)):
        try:
            systems.append(system_resolve(project=project, ref=ref))
        except SystemNotFound as error:
            raise invalid(str(error), field, status=404) from None
    if systems[0].pk == systems[1].pk:
        raise invalid("a and b name the same system", "b")
    return systems_compare(project=project, a=systems[0], b=systems[1], judge=found)
