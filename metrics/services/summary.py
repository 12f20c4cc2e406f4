"""The dashboard's answer first: one sentence on how faithful the claims are, one on whether
the judge can be trusted, and what to do next, read from a stored report (nothing recounted).

Figures are rounded for reading by the pages' one rule (metrics/format.py: whole percents,
halves up); the report keeps full precision.
"""

from typing import Any

from metrics import format as fmt
from metrics.format import whole_percent
from metrics.services.judge_audit import AGREEMENT_WARNING_BELOW

__all__ = ["dashboard_summary", "headline_faithfulness", "system_headline", "whole_percent"]


def headline_faithfulness(report: dict, audit: dict | None) -> dict | None:
    """The headline estimate of the chosen judge's instrument when it has one, else the
    project's gold-only pooled faithfulness."""
    estimate, source, n = None, "", 0
    if audit and audit.get("headline_estimate"):
        estimate = audit.get(audit["headline_estimate"])
        n, source = audit.get("n_audited") or 0, "audited"
    if not estimate or estimate.get("value") is None:
        estimate = (report.get("faithfulness") or {}).get("pooled")
        n, source = (report.get("claims") or {}).get("total") or 0, "gold"
    if not estimate or estimate.get("value") is None or not n:
        return None
    ci = estimate.get("ci") or [None, None]
    value = whole_percent(estimate["value"])
    text = f"About {value}% of claims are supported"
    if None not in ci:
        lo, hi = whole_percent(ci[0]), whole_percent(ci[1])
        text += f" (95% interval {lo}–{hi}%, from {n} {source} claim{'s' if n != 1 else ''})."
    else:
        lo = hi = None
        text += f" (from {n} {source} claim{'s' if n != 1 else ''}; no interval)."
    return {"value": value, "low": lo, "high": hi, "n": n, "source": source, "text": text}


def _judge(audit: dict | None) -> dict | None:
    if not audit:
        return None
    name = audit.get("name") or "the judge"
    needs = whole_percent(AGREEMENT_WARNING_BELOW)
    if not audit.get("n_audited") or audit.get("agreement") is None:
        return {
            "trustworthy": None,
            "agreement": None,
            "needs": needs,
            "text": f"The {name} judge cannot be checked yet: none of its verdicts has a gold "
            "verdict to compare with.",
        }
    agreement = audit["agreement"]
    trustworthy = agreement >= AGREEMENT_WARNING_BELOW
    shown = whole_percent(agreement)
    verdict = "trustworthy" if trustworthy else "not trustworthy"
    return {
        "trustworthy": trustworthy,
        "agreement": shown,
        "needs": needs,
        "text": f"The {name} judge is {verdict} here: it agrees with analysts on {shown}% of "
        f"claims (needs ≥ {needs}%).",
    }


def _next_step(report: dict) -> dict | None:
    """From the active audit's forecast (absent from reports that have none): how many more
    labels reach the target precision under the audit's design (uniform sampling's forecast
    where the design has none)."""
    active = report.get("active_audit") or {}
    forecasts = active.get("forecast") or {}
    # The audit's own design when its forecast is there, else uniform sampling's.
    uniform = forecasts.get(active.get("design") or "uniform") or forecasts.get("uniform") or {}
    target = uniform.get("target_half_width")
    if target is None:
        return None
    points = whole_percent(target)
    if active.get("reached"):
        return {
            "labels_more": 0,
            "target": points,
            "text": f"The audit has reached ±{points} "
            "points: more labels would narrow the interval further, but it is not needed.",
        }
    more = uniform.get("labels_more")
    if more is None:
        return None
    if uniform.get("answers_more"):  # more labels than claims exist (forecast_within_claims)
        answers = uniform["answers_more"]
        return {
            "labels_more": more,
            "answers_more": answers,
            "target": points,
            "text": f"Import about {answers} more answer{'s' if answers != 1 else ''} to reach "
            f"±{points} points: these answers hold {uniform['claims']} claims, "
            f"{uniform['claims_unlabelled']} not labelled yet, and the target needs about "
            f"{uniform['labels_total']} labels.",
        }
    return {
        "labels_more": more,
        "target": points,
        "text": f"Label about {more} more claim{'s' if more != 1 else ''} to reach ±{points} "
        "points.",
    }


def dashboard_summary(*, report: dict, audit: dict | None) -> dict[str, Any]:
    """{faithfulness, judge, next}: each {…, "text"} or None where the report cannot say.
    `audit` is the instrument block shown (None for the gold-only report)."""
    return {
        "faithfulness": headline_faithfulness(report, audit),
        "judge": _judge(audit),
        "next": _next_step(report),
    }


def system_headline(report: dict | None, instrument: int = 0) -> dict | None:
    """One system's headline beside the pooled one (issue 32: the dashboard of every system):
    the headline of the report's `instrument` (the one the page shows, else the first), or
    the gold-only faithfulness; None before that system's report is computed."""
    if not report:
        return None
    audit = None
    if report.get("judge"):
        instruments = report.get("instruments") or [report["judge"]]
        audit = instruments[min(instrument, len(instruments) - 1)]
    return headline_faithfulness(report, audit)


PACE_LABELS_MIN = 5  # timed labels before a pace is quoted


def labels_time_text(labels: int | None, pace: dict) -> str | None:
    """`labels` more labels as analyst time at the team's measured pace (issue 32):
    "about 90 labels ≈ 2.5 hours at this team's pace (median 1 min 40 s a label over 120 timed
    labels)"; None without a count or with fewer than PACE_LABELS_MIN timed labels."""
    median = pace.get("median_seconds")
    if not labels or median is None or pace["timed_labels"] < PACE_LABELS_MIN:
        return None
    return (
        f"about {labels} label{'s' if labels != 1 else ''} ≈ {fmt.duration(labels * median)} "
        f"of analyst time at this team's pace (median {fmt.duration(median)} a label over "
        f"{pace['timed_labels']} timed labels)"
    )
