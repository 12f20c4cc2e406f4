"""A release gate on one figure of a report: pass or fail, with the figure, interval and method.

`gate_check(report, metric="faithfulness", minimum=0.9, on="lower")` passes when the figure's
95% interval's lower end is at least 0.9 (`on="value"`: the point estimate; `on="upper"`: the
upper end). `maximum` bounds a rate that should stay low (e.g. contradiction_rate, on="upper").
With a judge's audit in the report, faithfulness is the judge's headline estimate (the one the
audit card carries); otherwise it is the gold claims' pooled rate. No figure (no gold yet), or
one that could not be computed (not a finite number), fails, saying so: a gate fails closed.
Thresholds are finite numbers in the metric's range (every gate metric is a rate, 0 to 1):
`min=NaN` compares false with everything, so it would pass any figure. `manage.py report
--fail-under` and the API's gate both call this.
"""

import math
from typing import Any

GATE_METRICS = (
    "faithfulness",
    "contradiction_rate",
    "not_in_pile_rate",
    "hallucination_rate",
    "answers_with_unsupported_rate",
)
GATE_ON = ("lower", "value", "upper")
# The range of every metric above: each is a rate.
GATE_RANGE = (0.0, 1.0)


class GateError(ValueError):
    """A gate that cannot be asked as given (the message names the parameter)."""


def _threshold(name: str, value: float | None, metric: str) -> float | None:
    if value is None:
        return None
    low, high = GATE_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GateError(f"{name}: expected a number between {low:g} and {high:g}, got {value!r}")
    if not math.isfinite(value):
        raise GateError(
            f"{name}: {value} is not a finite number; give a {metric} between {low:g} and {high:g}"
        )
    if not low <= value <= high:
        raise GateError(f"{name}: {value:g} is outside {metric}'s range, {low:g} to {high:g}")
    return float(value)


def gate_validate(
    *,
    metric: str = "faithfulness",
    minimum: float | None = None,
    maximum: float | None = None,
    on: str = "lower",
) -> tuple[float | None, float | None]:
    """(minimum, maximum) as floats; GateError, its message starting with the parameter's name
    (`min: …`), when the gate cannot be asked as given."""
    if metric not in GATE_METRICS:
        raise GateError(f"metric: unknown metric {metric!r}; use one of {', '.join(GATE_METRICS)}")
    if on not in GATE_ON:
        raise GateError(f"on: use one of {', '.join(GATE_ON)}, got {on!r}")
    if minimum is None and maximum is None:
        raise GateError("min: give min (the figure must reach it) or max (must not exceed it)")
    return _threshold("min", minimum, metric), _threshold("max", maximum, metric)


def _finite(value: Any) -> float | None:
    """A figure as a float, or None when there is none or it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _figure(report: dict, metric: str) -> tuple[dict, str]:
    judge = report.get("judge")
    if metric == "faithfulness" and judge and judge.get("headline_estimate"):
        key = judge["headline_estimate"]
        block = judge.get(key) or {}
        return block, block.get("method") or key
    block = report.get(metric) or {}
    if metric == "faithfulness":
        block = block.get("pooled") or {}
    method = (report.get("method") or {}).get(metric) or "gold claims, 95% Wilson interval"
    return block, method


def gate_check(
    report: dict,
    *,
    metric: str = "faithfulness",
    minimum: float | None = None,
    maximum: float | None = None,
    on: str = "lower",
) -> dict[str, Any]:
    minimum, maximum = gate_validate(metric=metric, minimum=minimum, maximum=maximum, on=on)
    block, method = _figure(report, metric)
    value = _finite(block.get("value"))
    ci = block.get("ci")
    ends = list(ci) if isinstance(ci, list | tuple) and len(ci) == 2 else [None, None]
    interval = [_finite(end) for end in ends]
    interval = interval if None not in interval else None
    raw = {"lower": ends[0], "value": block.get("value"), "upper": ends[1]}[on]
    # An end is judged only with the whole interval: [None, 0.95] is no interval.
    judged = _finite(raw) if on == "value" or interval else None
    reasons = []
    if judged is None:
        passed = False
        if raw is None or (on != "value" and None in ends):
            reasons.append(f"no {metric} figure to judge (no gold claims yet, or no interval)")
        else:
            reasons.append(
                f"the {metric} figure could not be computed ({raw!r} is not a finite number), "
                "so the gate fails"
            )
    else:
        passed = True
        if minimum is not None and judged < minimum:
            passed = False
            reasons.append(f"{on} {judged:.4f} is below the minimum {minimum}")
        if maximum is not None and judged > maximum:
            passed = False
            reasons.append(f"{on} {judged:.4f} is above the maximum {maximum}")
    return {
        "pass": passed,
        "metric": metric,
        "on": on,
        "min": minimum,
        "max": maximum,
        "figure": value,
        "interval": interval,
        "judged_value": judged,
        "method": method,
        "reason": "; ".join(reasons) or f"{on} end {judged:.4f} meets the threshold",
        "project": (report.get("project") or {}).get("slug"),
        "judge": (report.get("judge") or {}).get("name"),
        "computed_at": report.get("computed_at"),
    }
