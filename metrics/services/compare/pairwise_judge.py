"""The pairwise judge's block: its verdicts on A and B in both orders, preference and position
bias."""

from __future__ import annotations

import math
from typing import Any

from annotate.models import System
from annotate.vocabulary import UNPARSEABLE
from judges.models import Judge
from metrics import format as fmt
from metrics import selectors
from metrics.stats.pairwise import pairwise_both_orders


def _pct(value: float | None) -> str:
    return fmt.percent(value, missing="n/a")


def _pct_ci(ci) -> str:
    low, high = ci
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "[no interval]"
    return f"[{fmt.whole_percent(low)}, {fmt.whole_percent(high)}]"


def _flip(estimate: dict) -> dict:
    """1 − an estimate (value and interval)."""
    low, high = estimate["ci"]
    return {**estimate, "value": 1.0 - estimate["value"], "ci": (1.0 - high, 1.0 - low)}


def _pairwise_block(
    *, a: System, b: System, judge: Judge | None, a_label: str, b_label: str
) -> dict[str, Any] | None:
    """The pairwise judge's verdicts on A and B, both orders (judges.PairwiseVerdict), through
    `pairwise_both_orders`; None when no such verdicts exist. A pair counts when both its
    orders have a parsed verdict; UNPARSEABLE replies are counted apart, never as a verdict."""
    found = selectors.pairwise_verdict_rows(a=a, b=b, judge=judge)
    if found["run"] is None and judge is not None:  # the chosen judge judged no pairs: any
        found = selectors.pairwise_verdict_rows(a=a, b=b)
    run = found["run"]
    if run is None:
        return None
    swap = {"a_first": "b_first", "b_first": "a_first"} if found["swapped"] else {}
    by_pair: dict[str, dict[str, str]] = {}
    unparseable = 0
    for question, order, verdict in found["rows"]:
        if verdict == UNPARSEABLE:
            unparseable += 1
            continue
        by_pair.setdefault(question, {})[swap.get(order, order)] = verdict
    complete = sorted(q for q, orders in by_pair.items() if len(orders) == 2)
    b_first = [by_pair[q]["b_first"] for q in complete]
    a_first = [by_pair[q]["a_first"] for q in complete]
    block: dict[str, Any] = {
        "judge": run.judge.name,
        "run_id": run.pk,
        "model": run.model,
        "prompt_version": run.prompt_version,
        "n_pairs": len(complete),
        "incomplete_pairs": len(by_pair) - len(complete),
        "unparseable": unparseable,
    }
    if len(complete) < 2:
        block.update(
            preference_b=None,
            position_bias=None,
            first_position_share=None,
            single_order={"b_first": None, "a_first": None},
            finding=(
                f"Pairwise judge {run.judge.name}: {len(complete)} pair(s) judged in both "
                "orders so far; at least 2 are needed for an interval."
            ),
            method="asked in both orders and averaged; too few complete pairs to estimate",
        )
        return block
    both = pairwise_both_orders(b_first, a_first)
    # The same verdicts with the orders' roles exchanged: its single order is "A first".
    exchanged = pairwise_both_orders(a_first, b_first)
    bias = both["position_bias"]
    share = {**bias, "value": bias["value"] + 0.5, "ci": tuple(c + 0.5 for c in bias["ci"])}
    preference = both["preference_b"]
    block.update(
        preference_b=preference,
        position_bias=bias,
        first_position_share=share,
        single_order={
            "b_first": both["single_order_preference_b"],
            "a_first": _flip(exchanged["single_order_preference_b"]),
        },
    )
    block["finding"] = (
        f"The judge {run.judge.name} prefers whichever answer comes first in "
        f"{_pct(share['value'])} {_pct_ci(share['ci'])} of pairs; averaged over both orders, "
        f"{b_label} (B) is preferred to {a_label} (A) in {_pct(preference['value'])} "
        f"{_pct_ci(preference['ci'])} of {len(complete)} pairs (ties count half)."
    )
    block["method"] = (
        "asked in both orders and averaged; position bias = share of first-position wins "
        "− 50%, over both orders of every pair; t intervals over pairs, 95%; "
        f"{unparseable} unparseable repl{'y' if unparseable == 1 else 'ies'} counted apart "
        "and a pair counts only when both its orders have a verdict; ties count half."
    )
    return block
