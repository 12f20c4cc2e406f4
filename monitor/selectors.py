"""What the stream pages show: each stream's figures, its alerts, its judge-drift watch, the
labels it needs, and an alert's evidence in words."""

from __future__ import annotations

import datetime as dt

import numpy as np

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
        judged = AnchorJudgement.objects.filter(anchor_set__stream=alert.stream).values_list(
            "judged_on", "gold_supported", "judge_supported"
        )
        # per week: [gold not SUPPORTED, judge said SUPPORTED, gold SUPPORTED, judge said not]
        by_week: dict[dt.date, list[int]] = {}
        for day, gold, judge in judged:
            counts = by_week.setdefault(day - dt.timedelta(days=day.weekday()), [0, 0, 0, 0])
            if gold:
                counts[2] += 1
                counts[3] += not judge
            else:
                counts[0] += 1
                counts[1] += judge
        weeks = [
            {
                "week": monday,
                "fp": (fp / fp_n) if fp_n else None,
                "fp_n": fp_n,
                "fn": (fn / fn_n) if fn_n else None,
                "fn_n": fn_n,
            }
            for monday, (fp_n, fp, fn_n, fn) in sorted(by_week.items())
        ]
    return {"facts": rows, "weeks": weeks}
