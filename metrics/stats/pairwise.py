"""Pairwise judging asked in both orders: the order-averaged preference and the position bias.

Each pair (one question, the answers of systems A and B) is shown to the judge twice: once
with B's answer first, once with A's first. A verdict is "first", "second" or "tie". Seed 004:
"run every comparison in both orders and average — this is not optional".

No Django import (see the package docstring).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import t as student_t

from ._common import NAN, check_confidence

__all__ = ["pairwise_both_orders"]

_SCORE = {"first": 1.0, "second": 0.0, "tie": 0.5}


def _scores(verdicts: Any, name: str) -> np.ndarray:
    values = list(verdicts)
    bad = sorted({str(v) for v in values if v not in _SCORE})
    if bad:
        raise ValueError(f"{name}: verdicts must be first, second or tie, got {', '.join(bad)}")
    return np.array([_SCORE[v] for v in values], dtype=float)


def _mean_ci(x: np.ndarray, confidence: float) -> dict[str, Any]:
    n = x.size
    if n < 2:
        return {"value": float(x.mean()) if n else NAN, "ci": (NAN, NAN), "n": int(n)}
    half = float(student_t.ppf(0.5 + confidence / 2, n - 1)) * float(x.std(ddof=1)) / np.sqrt(n)
    value = float(x.mean())
    return {"value": value, "ci": (value - half, value + half), "n": int(n)}


def pairwise_both_orders(b_first: Any, a_first: Any, confidence: float = 0.95) -> dict[str, Any]:
    """Order-averaged P(B preferred) and the judge's position bias, from both orders of every pair.

    `b_first[i]`, `a_first[i]`: the judge's verdict on pair i shown with B's (A's) answer first.
    Per pair, B's score in each order (1 win, ½ tie, 0 loss) is s_B = score(b_first) and
    s_A = 1 − score(a_first); the preference is p_i = (s_B + s_A)/2 and the first position's
    share f_i = (score(b_first) + score(a_first))/2. Reported: mean p (P(B preferred), ties
    half) and mean f − ½ (the position bias: share of first-position wins beyond 50%), each with
    a t interval over pairs (a pair's two verdicts are one unit). A judge that picks the first
    answer with probability q regardless of content gives f = q and p unbiased, while a single
    order (B always first) would report q as B's preference.
    Source: Zheng et al. (2023), "Judging LLM-as-a-judge with MT-Bench and Chatbot Arena",
    §3.3 (position bias, swap both orders); seed 004.
    """
    confidence = check_confidence(confidence)
    first_b = _scores(b_first, "b_first")
    first_a = _scores(a_first, "a_first")
    if first_b.size != first_a.size:
        raise ValueError(f"b_first and a_first differ in length: {first_b.size}, {first_a.size}")
    preference = (first_b + (1.0 - first_a)) / 2.0
    position = (first_b + first_a) / 2.0
    bias = _mean_ci(position - 0.5, confidence)
    return {
        "preference_b": _mean_ci(preference, confidence),
        "position_bias": bias,
        "single_order_preference_b": _mean_ci(first_b, confidence),
        "n_pairs": int(first_b.size),
        "method": (
            "every pair judged in both orders and the two verdicts averaged (ties half); "
            "position bias = share of first-position wins − 50%; t intervals over pairs"
        ),
    }
