"""The dashboard: reads the stored report snapshot, never recounts on page load; the glossary;
the recompute button and its progress."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.models import Role
from annotate.selectors import label_pace
from metrics import charts, selectors
from metrics.glossary import GLOSSARY
from metrics.models import ReportSnapshot
from metrics.scope import DEFAULT_ALPHA, Scope, judge_from, judge_param
from metrics.services import (
    crc_from_inputs,
    estimators,
    instruments_left_out_text,
    snapshot_request,
    snapshot_request_every_system,
)
from metrics.services.summary import (
    dashboard_summary,
    labels_time_text,
    system_headline,
    whole_percent,
)

# metrics.services pulls in scikit-learn, SciPy and statsmodels through metrics.stats; the
# URLconf imports this module on any page's first request, so the services are imported where
# used and a labeller's first page does not pay for them.


class DashboardForm(forms.Form):
    judge = forms.CharField(required=False)
    system = forms.CharField(required=False)
    alpha = forms.FloatField(required=False, min_value=0.001, max_value=0.999)
    instrument = forms.IntegerField(required=False, min_value=0)
    open = forms.ChoiceField(choices=[("all", "every section")], required=False)


def _dashboard_context(
    project, judge, alpha: float | None, instrument: int, scope: Scope | None = None
) -> dict:
    scope = scope or Scope(project, "")
    kwargs = scope.selectors_kwargs()
    snapshot = selectors.snapshot_latest_done(project=project, judge=judge, **kwargs)
    report = snapshot.data if snapshot else None
    context = {
        "snapshot": snapshot,
        "report": report,
        "scope": scope,
        "system_qs": scope.query,
        "pending": selectors.snapshot_unfinished(project=project, judge=judge, **kwargs),
        "failed": selectors.snapshot_latest_failed_after(
            project=project, judge=judge, after=snapshot, **kwargs
        ),
        "labels_since": selectors.labels_since_count(
            project=project, since_id=snapshot.labels_at_compute
        )
        if snapshot
        else 0,
        "alpha": alpha if alpha is not None else DEFAULT_ALPHA,
    }
    if report and report.get("judge"):
        instruments = report.get("instruments") or [report["judge"]]
        instrument = min(instrument, len(instruments) - 1)
        block = instruments[instrument]
        crc = block["crc"]
        if alpha is not None and abs(alpha - crc["alpha"]) > 1e-12:
            inputs = (snapshot.crc_inputs or [{}] * len(instruments))[instrument]
            crc = crc_from_inputs(inputs, alpha=alpha)

        context.update(
            {
                "instruments": instruments,
                "instrument_index": instrument,
                "audit": block,
                "instruments_left_out_text": (
                    instruments_left_out_text(report["instruments_left_out"])
                    if report.get("instruments_left_out")
                    else ""
                ),
                "crc": crc,
                "confusion_svg": charts.confusion_heatmap(block["confusion"]),
                "confusion_rows": list(
                    zip(block["confusion"]["labels"], block["confusion"]["matrix"], strict=True)
                ),
                "reliability_svg": charts.reliability_diagram(block["calibration"]["bins"]),
                "frontier_svg": charts.frontier_chart(block["frontier"], crc["lambda_hat"]),
                "estimates": [
                    {
                        "key": e.key,
                        "label": e.label,
                        "term": e.term,
                        "estimate": block[e.key],
                        "detail": e.detail(block[e.key]),
                    }
                    for e in estimators.shown()
                    if e.key in block
                ],
            }
        )
    return context


def _systems_headlines(project, judge, scope: Scope, instrument: int, pooled) -> dict | None:
    """All systems pooled and each system's own headline beside it, from each one's stored
    report (the default dashboard of a project with two systems or more, issue 32); None on
    a one-system scope."""
    if not scope.all_systems:
        return None
    rows = []
    for index, system in enumerate(scope.systems):
        snapshot = selectors.snapshot_latest_done(
            project=project, judge=judge, system=system, default=index == 0
        )
        name = f"{system.name}@{system.version}" if system.version else system.name
        rows.append(
            {
                "system": system,
                "label": name,
                "headline": system_headline(snapshot.data if snapshot else None, instrument),
                "gold": (snapshot.data.get("claims") or {}).get("total") if snapshot else None,
            }
        )
    pooled_row = {
        "label": "all systems pooled",
        "headline": system_headline(pooled, instrument),
        "gold": ((pooled or {}).get("claims") or {}).get("total"),
    }
    chart_rows = [
        {"label": row["label"], **(row["headline"] or {"value": None})}
        for row in [pooled_row, *rows]
    ]
    return {
        "pooled": pooled_row,
        "rows": rows,
        "missing": sum(row["headline"] is None for row in rows),
        "svg": charts.systems_intervals(chart_rows),
    }


def _estimates_picture(context: dict) -> dict | None:
    """One system's first-screen picture (issue 32 item 6): the judge's instrument's estimates
    of the faithfulness side by side with their intervals, the headline first; None without a
    judge's audit (the gold-only report's one figure is the summary itself)."""
    audit = context.get("audit")
    if not audit:
        return None
    headline = audit.get("headline_estimate")
    rows = []
    for entry in sorted(context["estimates"], key=lambda e: e["key"] != headline):
        estimate = entry["estimate"] or {}
        if estimate.get("value") is None:
            continue
        ci = estimate.get("ci") or [None, None]
        rows.append(
            {
                "label": entry["label"],
                "value": whole_percent(estimate["value"]),
                "low": whole_percent(ci[0]) if ci[0] is not None else None,
                "high": whole_percent(ci[1]) if ci[1] is not None else None,
                "headline": entry["key"] == headline,
            }
        )
    if len(rows) < 2:
        return None
    title = "Faithfulness by each estimate, with its 95% interval"
    short = [{**row, "label": row["label"].split(" (")[0]} for row in rows]  # "PPI++"
    return {
        "rows": rows,
        "svg": charts.intervals_chart(short, title),
        # the headline estimate may be missing from the rows (not computed): then none is it
        "headline": any(row["headline"] for row in rows),
    }


def _dashboard_summary(context: dict) -> dict | None:
    """The answer first (metrics.services.summary), or None before any report."""
    if not context.get("report"):
        return None

    return dashboard_summary(report=context["report"], audit=context.get("audit"))


@require_GET
@login_required
def glossary(request):
    """Every term the dashboard and the audit card use, in plain words (metrics.glossary)."""
    entries = [(key, name, text) for key, (name, text) in GLOSSARY.items()]
    return render(request, "metrics/glossary.html", {"entries": entries})


@require_GET
@project_view(Role.LEAD)
def dashboard(request, project, membership):
    form = DashboardForm(request.GET)
    if not form.is_valid():
        raise Http404("Bad dashboard parameters.")
    judge = judge_from(project, form.cleaned_data["judge"])
    scope = Scope(project, form.cleaned_data["system"], pooled_default=True)
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "judge_param": judge_param(judge),
        "judges": selectors.judges_for_project(project=project),
        "form": form,
        **_dashboard_context(
            project,
            judge,
            form.cleaned_data["alpha"],
            form.cleaned_data["instrument"] or 0,
            scope,
        ),
    }
    context["summary"] = _dashboard_summary(context)
    context["systems_headlines"] = _systems_headlines(
        project, judge, scope, context.get("instrument_index") or 0, context["report"]
    )
    if not context["systems_headlines"] and context.get("estimates"):
        context["estimates_picture"] = _estimates_picture(context)
    context["pace"] = label_pace(project=project)
    labels_more = ((context["summary"] or {}).get("next") or {}).get("labels_more")
    context["pace_text"] = labels_time_text(labels_more, context["pace"])
    context["open_all"] = form.cleaned_data["open"] == "all"
    template = "metrics/dashboard.html"
    if request.htmx and request.htmx.target == "crc":
        template += "#crc"
    elif request.htmx:
        template += "#report"
    return render(request, template, context)


@require_POST
@project_view(Role.LEAD)
def recompute(request, project, membership):

    judge = judge_from(project, request.POST.get("judge"))
    scope = Scope(project, request.POST.get("system"), pooled_default=True)
    if scope.all_systems:  # and each system's own report, for the headlines beside it
        snapshot = snapshot_request_every_system(project=project, judge=judge)
    else:
        snapshot = snapshot_request(project=project, judge=judge, system=scope.system)
    if request.htmx:
        snapshot.refresh_from_db()
        response = render(
            request,
            "metrics/dashboard.html#progress",
            {
                "project": project,
                "pending": snapshot,
                "judge_param": judge_param(judge),
                "system_qs": scope.query,
            },
        )
        if snapshot.status == ReportSnapshot.Status.DONE:
            response["HX-Refresh"] = "true"  # computed in-process already: show it
        return response
    return redirect(
        f"{reverse('metrics:dashboard', args=[project.slug])}?judge={judge_param(judge)}"
        f"{scope.query}"
    )


@require_GET
@project_view(Role.LEAD)
def snapshot_progress(request, project, membership, snapshot_id: int):
    snapshot = selectors.snapshot_get_for_project(project=project, snapshot_id=snapshot_id)
    context = {
        "project": project,
        "membership": membership,
        "pending": snapshot,
        "judge_param": judge_param(snapshot.judge),
        "system_qs": Scope.of_snapshot(project, snapshot).query,
    }
    if not request.htmx:
        return render(request, "metrics/snapshot_progress.html", context)
    finished = snapshot.status in (ReportSnapshot.Status.DONE, ReportSnapshot.Status.FAILED)
    response = render(request, "metrics/dashboard.html#progress", context)
    if not finished:
        return response
    stop = HttpResponseStopPolling(response.content)
    if snapshot.status == ReportSnapshot.Status.DONE:
        stop["HX-Refresh"] = "true"  # reload the page to show the new report
    return stop
