"""The monitored streams' page: the confidence band, the alerts in one sentence each, and the
labels a week keeps the half-width under target."""

from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotate.access import project_view
from annotate.models import Role
from monitor.chart import band_chart
from monitor.selectors import streams_for_project


@require_GET
@project_view(Role.LEAD)
def streams(request, project, membership):
    items = streams_for_project(project=project)
    for item in items:
        fig = item["figures"]
        item["chart"] = band_chart(
            fig.debiased.lower,
            fig.debiased.upper,
            target=item["stream"].target,
            alert_days=item["alert_days"],
        )
    return render(request, "monitor/streams.html", {"project": project, "items": items})
