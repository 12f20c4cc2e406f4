"""Paired comparison of two systems of a project on the questions both answered.

select (`metrics.selectors.system_answer_columns`, `system_claim_columns`, the judge's verify
verdicts) → per-unit arrays (claims, answers) → `metrics.stats.paired` → a JSON-safe dict:
each rate's B − A from gold alone and, when the judge covers both systems, PPI++ on the
per-question differences, the headline chosen as the report chooses its own (the narrowest
valid interval), by risk category, the questions where B got worse first, and the finding in
words. `compare_gate` is what `manage.py compare --fail-if-worse` decides on.

What counts (as the report, DESIGN.md "Metrics: definitions"): claim rates are over claims of
answers that are not abstentions; a per-answer rate needs the verdict of every claim of the
answer (gold: an answer all of whose claims have gold); the abstention rate is over all answers
and needs no verdict. Gold carries over through the audit's design, as in the report: each
claim's design stratum (`metrics.services.audit_design`, weights N_h/N of each system's claims)
and, under the active design, its inclusion probability π (each gold claim weighted 1/π), in
`metrics.stats.paired.paired_design_difference`; gold claims whose labels were all made outside
the queue are left out, as the report leaves them out. With one stratum and no π (a simple
random sample) the estimators are today's, figure for figure.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from annotate.models import Project, System
from judges.models import Judge
from metrics.services.common import json_safe
from metrics.services.compare.judge_by_system import _judge_by_system, model_family
from metrics.services.compare.pair import _Pair
from metrics.services.compare.pairwise_judge import _pairwise_block, _pct, _pct_ci
from metrics.services.compare.rates import RATES, Rate, _by_risk_category, _rate_block
from metrics.services.compare.systems import SystemNotFound, system_label, system_resolve
from metrics.services.compare.worst import _worst_questions
from metrics.services.compare_pairwise_human import pairwise_human_block, sign_test_words

__all__ = [
    "COMPARE_WORST_LISTED",
    "model_family",
    "RATES",
    "Rate",
    "SystemNotFound",
    "compare_gate",
    "system_label",
    "system_resolve",
    "systems_compare",
]

COMPARE_WORST_LISTED = 50


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def _finding(result: dict, a_label: str, b_label: str) -> str:
    rate = result["rates"]["faithfulness"]
    head = rate["headline"]
    n = result["shared_questions"]
    if head["choice"] is None:
        return (
            f"No comparison of faithfulness yet: {n} shared questions, and neither system has "
            "enough gold on them (label claims of both systems' answers to the same questions)."
        )
    value, (low, high) = head["value"], head["ci"]
    estimate = rate[head["choice"]]
    gold_questions = rate["gold_only"]["n_questions"]
    if head["choice"] == "ppi":
        how = f"paired, PPI++ with judge {result['judge'] or '—'}, gold on {gold_questions} of them"
    else:
        how = f"paired, gold on {estimate['n_questions']} of them"
    ci = f"[{_points(low)}, {_points(high)}]"
    if low > 0:
        lead = f"{b_label} (B) is more faithful than {a_label} (A) by {_points(value)} points {ci}"
    elif high < 0:
        lead = (
            f"{b_label} (B) is less faithful than {a_label} (A) by {_points(-value)} points "
            f"[{_points(-high)}, {_points(-low)}]"
        )
    else:
        lead = (
            f"No clear difference in faithfulness between {b_label} (B) and {a_label} (A): "
            f"B − A = {'+' if value >= 0 else ''}{_points(value)} points {ci}"
        )
    return f"{lead} on {n} shared questions; {how}."


def _preference_finding(result: dict, b_label: str) -> str:
    """Which answer people prefer, from the analysts' marks when there are any, else from the
    pairwise judge (saying so); "" when neither exists."""
    human = result["pairwise_human"]
    decided = human.get("decided_b")
    if human["n_preferences"] and decided and decided["n_decided"]:
        test = sign_test_words(decided["sign_test"]["p_value"])
        return (
            f"People prefer {b_label} (B) on {_pct(decided['value'])} {_pct_ci(decided['ci'])} "
            f"of {decided['n_decided']} decided marks ({human['n_pairs']} pairs, "
            f"{decided['n_ties']} tie{'' if decided['n_ties'] == 1 else 's'} set aside; {test})."
        )
    if human["n_preferences"]:
        return f"People's {human['n_preferences']} pairwise marks are all ties."
    judged = result.get("pairwise")
    if judged and judged.get("preference_b"):
        preference = judged["preference_b"]
        return (
            f"The pairwise judge {judged['judge']} prefers {b_label} (B) on "
            f"{_pct(preference['value'])} {_pct_ci(preference['ci'])} of {judged['n_pairs']} "
            "pairs (both orders, ties half); no person has marked these pairs yet."
        )
    return ""


def systems_compare(
    *,
    project: Project,
    a: System,
    b: System,
    judge: Judge | None = None,
    worst: int = COMPARE_WORST_LISTED,
) -> dict[str, Any]:
    """B − A on the questions both systems answered, as a JSON-safe dict (see the module)."""
    if a.project_id != project.pk or b.project_id != project.pk:
        raise ValueError("both systems must belong to the project")
    if a.pk == b.pk:
        raise ValueError("compare two different systems")
    pair = _Pair(project=project, a=a, b=b, judge=judge)
    a_label, b_label = system_label(a), system_label(b)
    result: dict[str, Any] = {
        "project": {"slug": project.slug, "name": project.name},
        "computed_at": timezone.now().isoformat(),
        "a": {"name": a.name, "version": a.version, "label": a_label, "metadata": a.metadata},
        "b": {"name": b.name, "version": b.version, "label": b_label, "metadata": b.metadata},
        "judge": pair.judge_name,
        "answers": {"a": pair.questions_a, "b": pair.questions_b},
        "shared_questions": pair.n_questions,
        "rates": {rate.key: _rate_block(pair, rate) for rate in RATES},
        "by_risk_category": _by_risk_category(pair),
        "worst_questions": _worst_questions(pair, worst),
        "judge_by_system": _judge_by_system(pair, (a, b)),
        "design": {
            key: pair.design[key]
            for key in ("kind", "queue_design", "strata", "gold_left_out", "text")
        },
    }
    pairwise = _pairwise_block(a=a, b=b, judge=judge, a_label=a_label, b_label=b_label)
    if pairwise is not None:
        result["pairwise"] = pairwise
    result["pairwise_human"] = pairwise_human_block(
        a=a, b=b, judge=judge, a_label=a_label, b_label=b_label
    )
    result["finding"] = " ".join(
        part
        for part in (_finding(result, a_label, b_label), _preference_finding(result, b_label))
        if part
    )
    result["method"] = (
        "Paired by question: only questions both systems answered count; every interval is "
        "clustered by question (a question's claims and answers, of both systems, are one "
        "cluster), 95%. Gold only: the claims (answers) with gold. PPI++: the judge's verdicts "
        "on every claim of both systems, rectified by its errors on the gold claims, power-tuned "
        "for the difference. Headline: the narrowest valid interval. " + pair.design["text"]
    )
    return json_safe(result)


def compare_gate(result: dict, *, margin: float = 0.02) -> tuple[bool, str]:
    """(B is worse, the sentence): worse when the upper end of the headline B − A faithfulness
    interval lies below −margin, i.e. B is worse than A by more than `margin` with 95%
    confidence. No valid interval is not "worse"."""
    head = result["rates"]["faithfulness"]["headline"]
    high = head["ci"][1] if head["choice"] else None
    if high is None:
        return False, "Not worse: no valid interval for B − A yet. " + result["finding"]
    worse = high < -margin
    verdict = (
        f"B is worse than A: the upper end of B − A ({_points(high)} points) is below "
        f"−{_points(margin)}."
        if worse
        else f"Not worse: the upper end of B − A ({_points(high)} points) is not below "
        f"−{_points(margin)}."
    )
    return worse, f"{verdict} {result['finding']}"
