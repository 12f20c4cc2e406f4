"""A stream set up and changed by a lead: created with its anchor set drawn, and a rate change
recorded in its history (each claim keeps the π it was drawn with)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotate.models import Project

from .drift import anchors_choose
from .models import MonitoredStream
from .services import stream_rate_set


@transaction.atomic
def stream_create(*, project, data: dict) -> MonitoredStream:
    """A new stream of `project` from a StreamForm's cleaned data, its anchor set drawn."""
    fields = {k: v for k, v in data.items() if k != "sampling_rate"}
    rate = float(data.get("sampling_rate", 0.1))
    stream = MonitoredStream.objects.create(
        project=project,
        sampling_rate=rate,
        rate_history=[[timezone.now().isoformat(), rate]],
        **fields,
    )
    anchors_choose(stream=stream)
    _project_monitored(stream.project_id)
    return stream


def _project_monitored(project_id: int) -> None:
    """The queue's switch: a project with an active stream serves only sampled claims."""
    active = MonitoredStream.objects.filter(project_id=project_id, active=True).exists()
    Project.objects.filter(pk=project_id).update(monitored=active)


@transaction.atomic
def stream_update(*, stream: MonitoredStream, data: dict) -> MonitoredStream:
    """Change a stream's settings; a new rate goes through `stream_rate_set` (its history)."""
    old = MonitoredStream.objects.values_list("sampling_rate", flat=True).get(pk=stream.pk)
    fields = [k for k in data if k != "sampling_rate"]
    for key in fields:
        setattr(stream, key, data[key])
    stream.sampling_rate = old  # a form may have set it already; the history decides below
    stream.save(update_fields=fields)
    rate = data.get("sampling_rate")
    if rate is not None and float(rate) != old:
        stream_rate_set(stream=stream, rate=float(rate))
    _project_monitored(stream.project_id)
    return stream
