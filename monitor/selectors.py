"""What the stream pages show: each stream's figures, its alerts, its judge-drift watch, the
labels it needs, and an alert's evidence in words."""

from __future__ import annotations

import datetime as dt

import numpy as np
from django.db.models import Count, Q
from django.db.models.functions import TruncWeek

from .drift import drift_figures
from .models import Alert, AnchorJudgement, MonitoredStream
from .services import stream_figures
from .stats import labels_for_halfwidth


def _drift_item(stream: MonitoredStream) -> dict | None:
    fig = drift_figures(stream)
    if fig is None:
        return None
    return {
        "anchors": stream.anchor_set.claims.count(),
        "judged": fig.judged,
        "calibrating": fig.n_days <= fig.calibration_days,
        "calibration_days": fig.calibration_days,
        "specificity": fig.false_positive,
        "sensitivity": fig.false_negative,
        "alarm": fig.alarm,
    }


def _ends(sequence, day: int) -> tuple[float | None, float | None]:
    """A sequence's interval on `day`, (None, None) before it has any data."""
    lo, hi = sequence.lower[day], sequence.upper[day]
    return (None, None) if np.isnan(lo) else (float(lo), float(hi))


def streams_for_project(*, project) -> list[dict]:
    out = []
    streams = MonitoredStream.objects.filter(project=project).select_related("judge", "system")
    for stream in streams:
        fig = stream_figures(stream)
        last = fig.n_days - 1
        lo, hi = fig.debiased.lower[last], fig.debiased.upper[last]
        # The cumulative sequence is of one constant faithfulness: once it has moved, the
        # running intersection empties (NaN after data). Said in words; the windows remain.
        bounded = np.flatnonzero(~np.isnan(fig.debiased.lower))
        emptied = int(bounded[-1]) + 2 if bounded.size and np.isnan(lo) and fig.labelled else None
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
                "emptied_day": emptied,
                "gold_now": (fig.gold_only.lower[last], fig.gold_only.upper[last]),
                "judge_now": _ends(fig.judge_alone, last),
                "week": fig.windows["week"],
                "day": fig.windows["day"],
                "drift": _drift_item(stream),
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


EVIDENCE_WORDS = {
    "since": "Faithfulness below target since",
    "detected_on": "Detected on",
    "target": "Target",
    "alpha": "Error allowed over the horizon (α)",
    "cumulative_debiased": "Debiased faithfulness on that day (confidence sequence)",
    "claims": "Claims the stream had seen",
    "labelled": "Claims with gold among them",
    "rate": "The judge's rate that moved",
    "direction": "Which way",
    "calibration_range": "Its error rate in the calibration days",
    "calibration_days": "Calibration days",
    "anchor_judgements": "Anchor judgements recorded",
}


def _evidence_value(key: str, value) -> str:
    if value is None:
        return "not computed"
    if key in ("cumulative_debiased", "calibration_range"):
        if all(v is None for v in value):
            return "empty: the level moved within the stream (the windows show it)"
        return "–".join("—" if v is None else f"{v:.1%}" for v in value)
    if key in ("target", "alpha"):
        return f"{value:.0%}" if key == "target" else f"{value:g}"
    if key == "direction":
        return {"up": "more errors (worse)", "down": "fewer errors"}.get(value, value)
    if key in ("since", "detected_on"):
        return dt.date.fromisoformat(value).strftime("%d %b %Y")
    return str(value)


def alert_evidence_rows(alert: Alert) -> dict:
    """The alert's evidence as (words, value) rows, and for a drift alert the anchors' error
    rates week by week (the table a lead checks the sentence against)."""
    rows = [
        (EVIDENCE_WORDS.get(key, key.replace("_", " ")), _evidence_value(key, value))
        for key, value in alert.evidence.items()
    ]
    weeks = []
    if alert.kind == Alert.Kind.JUDGE_DRIFT:
        negative, positive = Q(gold_supported=False), Q(gold_supported=True)
        counted = (
            AnchorJudgement.objects.filter(anchor_set__stream=alert.stream)
            .annotate(week=TruncWeek("judged_on"))
            .values("week")
            .annotate(
                fp_n=Count("id", filter=negative),
                fp=Count("id", filter=negative & Q(judge_supported=True)),
                fn_n=Count("id", filter=positive),
                fn=Count("id", filter=positive & Q(judge_supported=False)),
            )
            .order_by("week")
        )
        weeks = [
            {
                **row,
                "fp": row["fp"] / row["fp_n"] if row["fp_n"] else None,
                "fn": row["fn"] / row["fn_n"] if row["fn_n"] else None,
            }
            for row in counted
        ]
    return {"facts": rows, "weeks": weeks}
