"""A release gate on one figure of a report: pass or fail, with the figure, interval and method.

`gate_check(report, metric="faithfulness", minimum=0.9, on="lower")` passes when the figure's
95% interval's lower end is at least 0.9 (`on="value"`: the point estimate; `on="upper"`: the
upper end). `maximum` bounds a rate that should stay low (e.g. contradiction_rate, on="upper").
With a judge's audit in the report, faithfulness is the judge's headline estimate (the one the
audit card carries); otherwise it is the gold claims' pooled rate. No figure (no gold yet)
fails, saying so. `manage.py report --fail-under` and the API's gate both call this.
"""

from typing import Any

GATE_METRICS = (
    "faithfulness",
    "contradiction_rate",
    "not_in_pile_rate",
    "hallucination_rate",
    "answers_with_unsupported_rate",
)
GATE_ON = ("lower", "value", "upper")


class GateError(ValueError):
    """A gate that cannot be asked as given (the message names the parameter)."""


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
    if metric not in GATE_METRICS:
        raise GateError(f"metric: unknown metric {metric!r}; use one of {', '.join(GATE_METRICS)}")
    if on not in GATE_ON:
        raise GateError(f"on: use one of {', '.join(GATE_ON)}, got {on!r}")
    if minimum is None and maximum is None:
        raise GateError("min: give min (the figure must reach it) or max (must not exceed it)")
    block, method = _figure(report, metric)
    value = block.get("value")
    ci = block.get("ci")
    interval = list(ci) if ci and None not in ci else None
    judged = {"lower": interval[0] if interval else None, "value": value}.get(on)
    if on == "upper":
        judged = interval[1] if interval else None
    reasons = []
    if judged is None:
        passed = False
        reasons.append(f"no {metric} figure to judge (no gold claims yet, or no interval)")
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
