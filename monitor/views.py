"""The monitored streams' pages: the confidence band, the alerts in one sentence each, the
judge-drift watch and the labels a week keep the half-width under target; a stream's setup;
an alert's page with its evidence. Leads and owners only."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.access import project_view
from annotate.models import Role
from monitor.chart import band_chart
from monitor.drift import drift_clear
from monitor.forms import StreamForm
from monitor.models import Alert, MonitoredStream
from monitor.selectors import alert_evidence_rows, streams_for_project
from monitor.streams import stream_create, stream_update


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
            outline=(fig.judge_alone.lower, fig.judge_alone.upper),
        )
    return render(
        request,
        "monitor/streams.html",
        {"project": project, "membership": membership, "items": items},
    )


def _stream_form_page(request, project, membership, form, stream=None, status=200):
    context = {"project": project, "membership": membership, "form": form, "stream": stream}
    return render(request, "monitor/stream_form.html", context, status=status)


@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def stream_new(request, project, membership):
    form = StreamForm(request.POST or None, project=project)
    if request.method == "POST":
        if form.is_valid():
            stream = stream_create(project=project, data=form.cleaned_data)
            drawn = stream.anchor_set.claims.count()
            messages.success(
                request,
                f"Stream {stream.pk} is monitored: new answers are sampled at π = "
                f"{stream.sampling_rate:g}; {drawn} gold claims form its anchor set.",
            )
            return redirect(reverse("monitor:streams", args=[project.slug]))
        return _stream_form_page(request, project, membership, form, status=422)
    return _stream_form_page(request, project, membership, form)


@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def stream_edit(request, project, membership, stream_id: int):
    stream = get_object_or_404(MonitoredStream, pk=stream_id, project=project)
    form = StreamForm(request.POST or None, instance=stream, project=project)
    if request.method == "POST":
        if form.is_valid():
            stream_update(stream=stream, data=form.cleaned_data)
            messages.success(request, f"Stream {stream.pk} saved.")
            return redirect(reverse("monitor:streams", args=[project.slug]))
        return _stream_form_page(request, project, membership, form, stream, status=422)
    return _stream_form_page(request, project, membership, form, stream)


@require_GET
@project_view(Role.LEAD)
def alert_detail(request, project, membership, alert_id: int):
    alert = get_object_or_404(
        Alert.objects.select_related("stream__judge"), pk=alert_id, stream__project=project
    )
    context = {
        "project": project,
        "membership": membership,
        "alert": alert,
        "stream": alert.stream,
        "rows": alert_evidence_rows(alert),
    }
    return render(request, "monitor/alert.html", context)


@require_POST
@project_view(Role.LEAD)
def drift_cleared(request, project, membership, stream_id: int):
    stream = get_object_or_404(MonitoredStream, pk=stream_id, project=project)
    drift_clear(stream=stream)
    messages.success(
        request,
        f"The drift flag on {stream.judge.name} is cleared; the anchors' calibration restarts "
        "today.",
    )
    return redirect(reverse("monitor:streams", args=[project.slug]))
