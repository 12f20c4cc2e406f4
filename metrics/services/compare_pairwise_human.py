"""The comparison's "Pairwise, analysts" block: the analysts' blind preferences between A and B
(annotate.PairwisePreference) and their agreement with the pairwise judge on the same pairs.

Kept apart from `metrics.services.compare` (which calls `pairwise_human_block` once) so the
per-system figures there and this block change independently.

The marks come from the blind pairwise screen and from files (`manage.py import_preferences`,
the API's `POST …/preferences`, the compare page's upload: RAGChecker's human study reads in
as it is). Figures (metrics/stats/pairwise_human.py), every interval clustered by question
because several people may mark one pair:
- P(B preferred) over every mark, ties half; and P(B preferred | a side was chosen), the B
  share of the decided marks, with a sign test over questions (each question counted once);
- the analysts' agreement with one another on the pairs several marked: raw agreement,
  opposite directions (one A, the other B) and Cohen's kappa with a jackknife interval;
- where files grade the preference (−2..2), the mean grade toward B;
- where the pairwise judge judged a pair in both orders, its order-averaged verdict (both
  orders for B → B, one B and one tie → B, B and A split → tie) against each mark: the share
  of marks that agree with a Wilson interval at the clustered effective size, and Cohen's
  kappa over B / A / tie.
"""

from __future__ import annotations

import math
from typing import Any

from annotate.models import System
from annotate.vocabulary import UNPARSEABLE
from judges.models import Judge
from metrics import format as fmt
from metrics import selectors
from metrics.stats.pairwise_human import (
    analysts_agreement,
    clustered_mean,
    decided_preference,
    human_judge_agreement,
    human_preference,
    judge_pair_verdict,
)

METHOD = (
    "Analysts marked pairs blind (no system names, left/right drawn at random per analyst and "
    "pair), or their marks were imported from a file; P(B preferred) counts ties half, over "
    "every mark, with a t interval clustered by question (several analysts may mark one "
    "pair), 95%. B share of decided: the share of B among the marks that chose a side, a "
    "Wilson interval at the effective size clustered by question, with a two-sided exact sign "
    "test over questions (each question once: more B marks than A is a B question; even "
    "questions set aside). Analysts' agreement, over every two analysts' marks on one pair: "
    "raw agreement and opposite directions (one A, the other B) as clustered shares, Cohen's "
    "kappa with a delete-one-question jackknife t interval. Agreement with the "
    "pairwise judge, on the marks whose pair the judge judged in both orders: the judge's "
    "order-averaged verdict is B when it preferred B in both orders or in one with a tie in "
    "the other, A likewise, and a tie when its two orders split (or tied); the share of marks "
    "where it equals the analyst's, with a Wilson interval at the effective size clustered by "
    "question, and Cohen's kappa over B / A / tie."
)


def _pct(value: float | None) -> str:
    return fmt.percent(value, missing="n/a")


def _pct_ci(ci) -> str:
    low, high = ci
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "[no interval]"
    return f"[{fmt.whole_percent(low)}, {fmt.whole_percent(high)}]"


def _judge_verdicts(*, a: System, b: System, judge: Judge | None) -> tuple[dict | None, dict]:
    """(the run's description or None, {question key: "B" | "A" | "tie"}) from the newest
    pairwise run on A and B (of `judge` when it judged pairs, else any), pairs with both
    orders parsed only."""
    found = selectors.pairwise_verdict_rows(a=a, b=b, judge=judge)
    if found["run"] is None and judge is not None:
        found = selectors.pairwise_verdict_rows(a=a, b=b)
    run = found["run"]
    if run is None:
        return None, {}
    swap = {"a_first": "b_first", "b_first": "a_first"} if found["swapped"] else {}
    orders: dict[str, dict[str, str]] = {}
    for question, order, verdict in found["rows"]:
        if verdict != UNPARSEABLE:
            orders.setdefault(question, {})[swap.get(order, order)] = verdict
    verdicts = {
        key: judge_pair_verdict(both["b_first"], both["a_first"])
        for key, both in orders.items()
        if len(both) == 2
    }
    return {"judge": run.judge.name, "run_id": run.pk, "model": run.model}, verdicts


def _signed_grades(rows) -> tuple[list[float], list[str]]:
    """The graded marks as −2..2 toward B (B positive), with their questions."""
    sign = {"B": 1.0, "A": -1.0, "tie": 0.0}
    graded = [
        (key, sign[choice] * strength) for key, _, choice, strength in rows if strength is not None
    ]
    return [g for _, g in graded], [key for key, _ in graded]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def sign_test_words(p: float) -> str:
    """The sign test's p-value as the findings say it."""
    if not math.isfinite(p):
        return "no sign test (no question has more marks for one side)"
    return "sign test p < 0.001" if p < 0.001 else f"sign test p = {p:.3f}"


def _agreement_words(agreement: dict | None, n_pairs: int) -> str:
    if agreement is None:
        return (
            "No pair has marks by two people yet, so the analysts' agreement with one another "
            "is not measured."
        )
    kappa = agreement["kappa"]
    kappa_text = (
        f"Cohen's kappa {kappa['value']:.2f} [{kappa['ci'][0]:.2f}, {kappa['ci'][1]:.2f}]"
        if math.isfinite(kappa["value"]) and math.isfinite(kappa["ci"][0])
        else f"Cohen's kappa {kappa['value']:.2f} (no interval)"
        if math.isfinite(kappa["value"])
        else "Cohen's kappa undefined (one choice throughout)"
    )
    return (
        f"Where two people marked the same pair ({agreement['n_pairs']} of {n_pairs} pairs, "
        f"{agreement['comparisons']} comparisons), they agree on "
        f"{_pct(agreement['raw_agreement']['value'])} {_pct_ci(agreement['raw_agreement']['ci'])} "
        f"and point opposite ways on {_pct(agreement['opposite']['value'])} "
        f"{_pct_ci(agreement['opposite']['ci'])}; {kappa_text}."
    )


def pairwise_human_block(
    *, a: System, b: System, judge: Judge | None, a_label: str, b_label: str
) -> dict[str, Any]:
    """The block for `systems_compare`'s `pairwise_human` key (JSON-safe once passed through
    `json_safe`)."""
    rows = selectors.pairwise_preference_rows(a=a, b=b)
    keys = [key for key, _, _, _ in rows]
    who = [marker for _, marker, _, _ in rows]
    choices = [choice for _, _, choice, _ in rows]
    n_pairs, n_analysts = len(set(keys)), len(set(who))
    run, verdicts = _judge_verdicts(a=a, b=b, judge=judge)
    block: dict[str, Any] = {
        "n_preferences": len(rows),
        "n_pairs": n_pairs,
        "n_analysts": n_analysts,
        "sources": {
            "screen": sum(1 for m in who if m.startswith("analyst:")),
            "file": sum(1 for m in who if m.startswith("imported:")),
        },
        "preference_b": None,
        "decided_b": None,
        "strength_b": None,
        "analysts_agreement": None,
        "counts": {"B": 0, "A": 0, "tie": 0},
        "judge": run,
        "agreement": None,
        "method": METHOD,
    }
    if not rows:
        block["finding"] = (
            "No analyst has marked pairs of these two systems yet: the pairwise queue shows "
            "them one question at a time, blind, or import marks from a file."
        )
        return block
    preference = human_preference(choices, keys)
    block["counts"] = preference.pop("counts")
    block["preference_b"] = preference
    decided = decided_preference(choices, keys)
    block["decided_b"] = decided
    grades, graded_keys = _signed_grades(rows)
    if grades:
        block["strength_b"] = clustered_mean(grades, graded_keys, bounds=(-2.0, 2.0))
    agreement = analysts_agreement(keys, who, choices)
    block["analysts_agreement"] = agreement
    marks = "mark" if len(rows) == 1 else "marks"
    people = "analyst" if n_analysts == 1 else "analysts"
    words = [
        f"Analysts prefer {b_label} (B) to {a_label} (A) in {_pct(preference['value'])} "
        f"{_pct_ci(preference['ci'])} of {n_pairs} pair{'s' if n_pairs != 1 else ''} "
        f"({len(rows)} {marks} by {n_analysts} {people}; ties count half)."
    ]
    if decided["n_decided"]:
        sign = decided["sign_test"]
        words.append(
            f"Of the {_count(decided['n_decided'], 'mark')} that chose a side, "
            f"{_pct(decided['value'])} {_pct_ci(decided['ci'])} chose B "
            f"({_count(decided['n_ties'], 'tie')} set aside); B won "
            f"{_count(sign['questions_b'], 'question')} and A {sign['questions_a']}, "
            f"{sign_test_words(sign['p_value'])}."
        )
    else:
        words.append("Every mark is a tie: no side was chosen.")
    words.append(_agreement_words(agreement, n_pairs))
    block["agreement"], judge_words = _judge_agreement(run, verdicts, keys, choices)
    words.append(judge_words)
    block["finding"] = " ".join(words)
    return block


def _judge_agreement(run, verdicts, keys, choices) -> tuple[dict[str, Any] | None, str]:
    """The pairwise judge's agreement with the analysts' marks on the pairs it judged in both
    orders (None when there is none to measure), and the finding's sentence on it."""
    if run is None:
        return None, (
            "The pairwise judge has not judged these two systems: press Run the pairwise "
            "judge (or run manage.py pairwise_judge) to measure its agreement with the analysts."
        )
    both = [(key, choice) for key, choice in zip(keys, choices, strict=True) if key in verdicts]
    if not both:
        return None, (
            f"The pairwise judge {run['judge']} judged none of the analysts' pairs in both "
            "orders: no agreement to measure yet."
        )
    judged = human_judge_agreement(
        [choice for _, choice in both],
        [verdicts[key] for key, _ in both],
        [key for key, _ in both],
    )
    shared = len({key for key, _ in both})
    judged["n_pairs"] = shared
    kappa = judged["kappa"]
    kappa_text = (
        f"Cohen's kappa {kappa:.2f}"
        if math.isfinite(kappa)
        else "Cohen's kappa undefined (one choice throughout)"
    )
    return judged, (
        f"On the {shared} of these pairs the pairwise judge {run['judge']} judged in "
        f"both orders, its order-averaged verdict matches the analyst's on "
        f"{_pct(judged['share']['value'])} {_pct_ci(judged['share']['ci'])} of "
        f"{judged['n']} {'mark' if judged['n'] == 1 else 'marks'}; {kappa_text}."
    )
