"""The comparison's "Pairwise, analysts" block: the analysts' blind preferences between A and B
(annotate.PairwisePreference) and their agreement with the pairwise judge on the same pairs.

Kept apart from `metrics.services.compare` (which calls `pairwise_human_block` once) so the
per-system figures there and this block change independently.

Figures (metrics/stats/pairwise_human.py): P(B preferred) over every analyst's mark (ties
half), clustered by question because several analysts may mark one pair; where the pairwise
judge judged a pair in both orders, its order-averaged verdict (both orders for B → B, one B
and one tie → B, B and A split → tie) against each analyst's mark: the share of marks that
agree with a Wilson interval at the clustered effective size, and Cohen's kappa over B / A /
tie.
"""

from __future__ import annotations

import math
from typing import Any

from annotate.models import System
from judges.models import Judge
from metrics import selectors
from metrics.stats.pairwise_human import (
    human_judge_agreement,
    human_preference,
    judge_pair_verdict,
)

METHOD = (
    "Analysts marked pairs blind (no system names, left/right drawn at random per analyst and "
    "pair); P(B preferred) counts ties half, over every analyst's mark, with a t interval "
    "clustered by question (several analysts may mark one pair), 95%. Agreement with the "
    "pairwise judge, on the marks whose pair the judge judged in both orders: the judge's "
    "order-averaged verdict is B when it preferred B in both orders or in one with a tie in "
    "the other, A likewise, and a tie when its two orders split (or tied); the share of marks "
    "where it equals the analyst's, with a Wilson interval at the effective size clustered by "
    "question, and Cohen's kappa over B / A / tie."
)


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{100 * value:.0f}%"


def _pct_ci(ci) -> str:
    low, high = ci
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "[no interval]"
    return f"[{100 * low:.0f}, {100 * high:.0f}]"


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
        if verdict != "UNPARSEABLE":
            orders.setdefault(question, {})[swap.get(order, order)] = verdict
    verdicts = {
        key: judge_pair_verdict(both["b_first"], both["a_first"])
        for key, both in orders.items()
        if len(both) == 2
    }
    return {"judge": run.judge.name, "run_id": run.pk, "model": run.model}, verdicts


def pairwise_human_block(
    *, a: System, b: System, judge: Judge | None, a_label: str, b_label: str
) -> dict[str, Any]:
    """The block for `systems_compare`'s `pairwise_human` key (JSON-safe once passed through
    `json_safe`)."""
    rows = selectors.pairwise_preference_rows(a=a, b=b)
    keys = [key for key, _, _ in rows]
    choices = [choice for _, _, choice in rows]
    n_pairs, n_analysts = len(set(keys)), len({analyst for _, analyst, _ in rows})
    run, verdicts = _judge_verdicts(a=a, b=b, judge=judge)
    block: dict[str, Any] = {
        "n_preferences": len(rows),
        "n_pairs": n_pairs,
        "n_analysts": n_analysts,
        "preference_b": None,
        "counts": {"B": 0, "A": 0, "tie": 0},
        "judge": run,
        "agreement": None,
        "method": METHOD,
    }
    if not rows:
        block["finding"] = (
            "No analyst has marked pairs of these two systems yet: the pairwise queue shows "
            "them one question at a time, blind."
        )
        return block
    preference = human_preference(choices, keys)
    block["counts"] = preference.pop("counts")
    block["preference_b"] = preference
    marks = "mark" if len(rows) == 1 else "marks"
    who = "analyst" if n_analysts == 1 else "analysts"
    words = [
        f"Analysts prefer {b_label} (B) to {a_label} (A) in {_pct(preference['value'])} "
        f"{_pct_ci(preference['ci'])} of {n_pairs} pair{'s' if n_pairs != 1 else ''} "
        f"({len(rows)} {marks} by {n_analysts} {who}; ties count half)."
    ]
    if run is None:
        words.append(
            "The pairwise judge has not judged these two systems: run manage.py pairwise_judge "
            "to measure its agreement with the analysts."
        )
    else:
        both = [(key, choice) for key, choice in zip(keys, choices, strict=True) if key in verdicts]
        if not both:
            words.append(
                f"The pairwise judge {run['judge']} judged none of the analysts' pairs in both "
                "orders: no agreement to measure yet."
            )
        else:
            agreement = human_judge_agreement(
                [choice for _, choice in both],
                [verdicts[key] for key, _ in both],
                [key for key, _ in both],
            )
            shared = len({key for key, _ in both})
            agreement["n_pairs"] = shared
            block["agreement"] = agreement
            kappa = agreement["kappa"]
            kappa_text = (
                f"Cohen's kappa {kappa:.2f}"
                if math.isfinite(kappa)
                else "Cohen's kappa undefined (one choice throughout)"
            )
            words.append(
                f"On the {shared} of them the pairwise judge {run['judge']} judged in both "
                f"orders, its order-averaged verdict matches the analyst's on "
                f"{_pct(agreement['share']['value'])} {_pct_ci(agreement['share']['ci'])} of "
                f"{agreement['n']} {'mark' if agreement['n'] == 1 else 'marks'}; {kappa_text}."
            )
    block["finding"] = " ".join(words)
    return block
