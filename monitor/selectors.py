"""What the stream page shows: each stream's figures, its alerts and the labels it needs."""

from __future__ import annotations

import numpy as np

from .models import Alert, MonitoredStream
from .services import stream_figures
from .stats import labels_for_halfwidth


def streams_for_project(*, project) -> list[dict]:
    out = []
    for stream in MonitoredStream.objects.filter(project=project).select_related("judge"):
        fig = stream_figures(stream)
        last = fig.n_days - 1
        lo, hi = fig.debiased.lower[last], fig.debiased.upper[last]
        mid = 0.9 if np.isnan(lo) else (lo + hi) / 2
        alerts = list(Alert.objects.filter(stream=stream))
        per_week = fig.claims / max(fig.n_days, 1) * 7
        out.append(
            {
                "stream": stream,
                "figures": fig,
                "alerts": alerts,
                "alert_days": [(a.raised_at.date() - fig.start).days for a in alerts],
                "now": (lo, hi),
                "gold_now": (fig.gold_only.lower[last], fig.gold_only.upper[last]),
                "labels_per_week": labels_for_halfwidth(
                    claims=per_week,
                    halfwidth=stream.halfwidth_target,
                    var_y=mid * (1 - mid),
                    disagreement=0.1,
                ),
                "rows": [
                    (d + 1, fig.debiased.lower[d], fig.debiased.upper[d])
                    for d in range(fig.n_days)
                    if not np.isnan(fig.debiased.lower[d])
                ],
            }
        )
    return out
