"""The report's method strings: how each figure was measured, with its counts, in words."""

from collections.abc import Mapping

from annotate.vocabulary import Verdict
from metrics import stats
from metrics.services.abstention_coverage import COVERAGE_BY_RISK_CATEGORY, COVERAGE_BY_TAG
from metrics.services.report_types import (
    Abstention,
    Citation,
    Coverage,
    Design,
    MethodStrings,
    ProjectRates,
)
from metrics.services.sections import plain

_BASE = (
    "Method: manual, claim level, against the retrieved pile; gold = unanimous analysts "
    "or a lead's adjudication; abstentions excluded."
)


def _coverage_method(cov: dict) -> str:
    if not cov["measured"]:
        return "Not measured: no facts are marked in this project's piles."
    return (
        f"{cov['numerator']} of {cov['denominator']} marked facts grounded by a "
        "gold-SUPPORTED claim whose evidence quote overlaps the fact. Method: manual fact "
        "marking, fact level."
    )


def _citation_method(cit: dict) -> str:
    if not cit["measured"]:
        return "Not measured: no citation run exists for this project."
    return (
        f"{cit['numerator']} of {cit['denominator']} checked cited claims are supported by "
        "their cited passages alone. Method: judge citation runs (verify call against the "
        "cited passages only)."
    )


def _interval_words(rate: dict) -> str:
    """How the rate's interval was made: Wilson when every answer holds one claim, else
    clustered by answer (and stratified), with the design effect."""
    answers = rate.get("answers") or 0
    if not rate.get("denominator") or answers == rate.get("denominator"):
        return "95% Wilson interval."
    text = f"95% interval clustered by answer, {answers} answers"
    if (rate.get("strata") or 1) > 1:
        text += f"; stratified by design stratum, {rate['strata']} strata (weights N_h/N)"
    deff = rate.get("design_effect")
    if deff is not None and deff == deff:
        text += f"; design effect {deff:.2f}"
    return text + "."


def _method_strings(report: Mapping) -> dict:
    """The gold figures' method strings, from `report`: a mapping holding the figures they
    describe (claims, faithfulness, contradiction_rate, answers_with_unsupported_rate,
    abstention, coverage, citation_accuracy)."""
    claims = report["claims"]
    answers = report["faithfulness"]["mean_per_answer"]["answers"]
    abst = report["abstention"]
    unsupported = report["answers_with_unsupported_rate"]
    return {
        "faithfulness": stats.method_string(
            claims[Verdict.SUPPORTED], claims["total"], answers, claims[Verdict.CONTRADICTED]
        )
        + " Gold = unanimous analysts or a lead's adjudication; abstentions excluded; "
        + _interval_words(report["faithfulness"]["pooled"]),
        "contradiction_rate": (
            f"{report['contradiction_rate']['numerator']} of {claims['total']} gold claims "
            f"contradicted by their own pile. {_BASE}"
        ),
        "answers_with_unsupported_rate": (
            f"{unsupported['numerator']} of {unsupported['denominator']} answers have at least "
            f"one claim that is not supported (what a reader experiences). {_BASE}"
        ),
        "abstention": (
            f"{abst['abstentions']} of {abst['answers']} answers are confirmed abstentions; "
            "on unanswerable questions an abstention is correct, on answerable ones it is a "
            "missed answer. Method: lead-confirmed abstention flag, answer level."
        ),
        "coverage": _coverage_method(report["coverage"]),
        "coverage_by_risk_category": COVERAGE_BY_RISK_CATEGORY,
        "coverage_by_tag": COVERAGE_BY_TAG,
        "citation_accuracy": _citation_method(report["citation_accuracy"]),
    }


def method_section(
    *,
    rates: ProjectRates,
    abstention: Abstention,
    coverage: Coverage,
    citation_accuracy: Citation,
    judge_methods: Mapping[str, str],
    design: Design,
) -> MethodStrings:
    """Every figure's method string, built after the sections it describes: the gold
    figures', the judge's (`judge_methods`), the design's; the faithfulness sentence ends
    with what the design says of labels outside the queue."""
    base = _method_strings(
        {
            **plain(rates),
            "abstention": plain(abstention),
            "coverage": plain(coverage),
            "citation_accuracy": plain(citation_accuracy),
        }
    )
    if design.outside_queue.text:
        base["faithfulness"] += " " + design.outside_queue.text
    return MethodStrings(**base, judge=dict(judge_methods), design=design.method)
