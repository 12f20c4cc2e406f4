"""The dashboard's "at scale" page (issue 30): the headline from rollups, for a project too
large for the full report — computed by a task on the lead's Refresh, read from one row."""

from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.models import Role
from metrics import selectors
from metrics.models import RollupHeadline
from metrics.scope import Scope, judge_from, judge_param
from metrics.services.rollup_headline import (
    newest_verify_run,
    rollup_headline_get,
    rollup_headline_request,
)


def _chosen(request, project, params):
    judge = judge_from(project, params.get("judge"))
    scope = Scope(project, params.get("system"), pooled_default=True)
    return judge, newest_verify_run(judge), scope


@require_GET
@project_view(Role.LEAD)
def rollups_page(request, project, membership):
    judge, run, scope = _chosen(request, project, request.GET)
    row = rollup_headline_get(project=project, run=run, system=scope.system)
    busy = row is not None and row.status in (
        RollupHeadline.Status.PENDING,
        RollupHeadline.Status.RUNNING,
    )
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "judge_param": judge_param(judge),
        "judges": selectors.judges_for_project(project=project),
        "run": run,
        "scope": scope,
        "system_qs": scope.query,
        "row": row,
        "busy": busy,
        "figures": row.figures if row is not None and row.status == "done" else None,
    }
    if request.htmx and request.htmx.target == "rollup-status":
        if not busy:  # done or failed: the whole page shows the figures
            response = HttpResponseStopPolling()
            response["HX-Refresh"] = "true"
            return response
        return render(request, "metrics/rollups.html#status", context)
    return render(request, "metrics/rollups.html", context)


@require_POST
@project_view(Role.LEAD)
def rollups_refresh(request, project, membership):
    judge, run, scope = _chosen(request, project, request.POST)
    rollup_headline_request(project=project, run=run, system=scope.system)
    return redirect(
        f"{reverse('metrics:rollups', args=[project.slug])}?judge={judge_param(judge)}{scope.query}"
    )
