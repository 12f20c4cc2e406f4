"""Analysts' pairwise preferences between two systems, and their agreement with the pairwise
judge on the same pairs.

A pair is one question both systems answered. An analyst's preference is "B", "A" or "tie"
(the screen showed the answers blind, in a random left/right order; `annotate` resolved the
side to the system). Several analysts may mark one pair, so a question is a cluster: every
interval here is clustered by question.

The judge's order-averaged verdict on a pair combines its two verdicts (one with B's answer
first, one with A's first; `metrics.stats.pairwise`): with first = 1, tie = ½, second = 0,
B's score is p = (score(b_first) + 1 − score(a_first)) / 2 and the verdict is B when p > ½, A
when p < ½, tie when p = ½. So both orders for B → B; B in one order and a tie in the other →
B; a split (B in one order, A in the other: the position decided) → tie; tie and tie → tie.

No Django import (see the package docstring).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from ._common import NAN, check_confidence, z_value
from .agreement import cohen_kappa

__all__ = [
    "CHOICES",
    "clustered_mean",
    "clustered_share",
    "human_judge_agreement",
    "human_preference",
    "judge_pair_verdict",
]

#: The three outcomes of a pair, in the order tables use.
CHOICES: tuple[str, str, str] = ("B", "A", "tie")
_PREFERENCE_SCORE = {"B": 1.0, "tie": 0.5, "A": 0.0}
_POSITION_SCORE = {"first": 1.0, "tie": 0.5, "second": 0.0}


def judge_pair_verdict(b_first: str, a_first: str) -> str:
    """The judge's order-averaged verdict on one pair, "B", "A" or "tie" (module docstring)."""
    if b_first not in _POSITION_SCORE or a_first not in _POSITION_SCORE:
        raise ValueError(f"verdicts must be first, second or tie, got {b_first!r} and {a_first!r}")
    p = (_POSITION_SCORE[b_first] + 1.0 - _POSITION_SCORE[a_first]) / 2.0
    return "B" if p > 0.5 else "A" if p < 0.5 else "tie"


def _cr1(x: np.ndarray, clusters: Any) -> tuple[float, float, int]:
    """(mean, CR1 variance of the mean clustered by `clusters`, number of clusters G):
    V = G/(G−1) · Σ_g (Σ_{i∈g} (x_i − x̄))² / n²."""
    n = x.size
    codes, uniques = pd.factorize(np.asarray(clusters, dtype=object).reshape(-1))
    g = int(uniques.size)
    mean = float(x.mean())
    if g < 2:
        return mean, NAN, g
    z = np.bincount(codes, weights=x - mean, minlength=g)
    return mean, g / (g - 1) * float(z @ z) / n**2, g


def _check(values: Any, clusters: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(values, dtype=float).reshape(-1)
    c = np.asarray(clusters, dtype=object).reshape(-1)
    if x.size != c.size:
        raise ValueError(f"{name} and clusters differ in length: {x.size}, {c.size}")
    return x, c


def clustered_mean(values: Any, clusters: Any, confidence: float = 0.95) -> dict[str, Any]:
    """Mean of `values` with a t interval clustered by `clusters`, clipped to [0, 1].

    Formula: SE² = G/(G−1)·Σ_g (Σ_{i∈g}(x_i − x̄))²/n² (CR1), CI = x̄ ± t_{G−1}·SE. With one
    value per cluster this is the ordinary t interval (SE² = s²/n, ddof 1).
    Source: Cameron & Miller (2015), "A Practitioner's Guide to Cluster-Robust Inference", §II
    (CR1; statsmodels' OLS on a constant with cov_type="cluster" gives the same SE).
    Fewer than 2 clusters: no interval (nan).
    """
    confidence = check_confidence(confidence)
    x, c = _check(values, clusters, "values")
    if x.size == 0:
        return {"value": NAN, "ci": (NAN, NAN), "std_error": NAN, "n": 0, "n_clusters": 0}
    mean, var, g = _cr1(x, c)
    if not np.isfinite(var):
        return {
            "value": mean,
            "ci": (NAN, NAN),
            "std_error": NAN,
            "n": int(x.size),
            "n_clusters": g,
        }
    se = float(np.sqrt(var))
    half = float(student_t.ppf(0.5 + confidence / 2.0, g - 1)) * se
    return {
        "value": mean,
        "ci": (max(mean - half, 0.0), min(mean + half, 1.0)),
        "std_error": se,
        "n": int(x.size),
        "n_clusters": g,
    }


def clustered_share(successes: Any, clusters: Any, confidence: float = 0.95) -> dict[str, Any]:
    """A share of 0/1 outcomes with a Wilson interval at the effective sample size.

    θ = mean; V = the CR1 variance clustered by `clusters` (see `clustered_mean`), V₀ = θ(1−θ)/n
    the independent one; design effect d = V/V₀ and n* = n/max(d, 1), so clustering never
    credits more information than independent outcomes; at θ = 0 or 1 (no variation to measure
    it) n* = G, each cluster counted once. CI = Wilson(θ, n*) (Wilson 1927 at an effective size:
    Korn & Graubard 1998). With one outcome per cluster, d ≈ 1 and this is Wilson's interval.
    """
    confidence = check_confidence(confidence)
    x, c = _check(successes, clusters, "successes")
    if x.size and not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("successes must be 0 or 1")
    n = int(x.size)
    if n == 0:
        return {"value": NAN, "ci": (NAN, NAN), "n": 0, "n_clusters": 0, "n_effective": NAN}
    theta, var, g = _cr1(x, c)
    var0 = theta * (1.0 - theta) / n
    if theta in (0.0, 1.0) or not np.isfinite(var) or var0 == 0.0:
        n_eff = float(g)
    else:
        n_eff = n / max(var / var0, 1.0)
    z = z_value(confidence)
    centre = (theta + z**2 / (2 * n_eff)) / (1 + z**2 / n_eff)
    half = z * np.sqrt(theta * (1 - theta) / n_eff + z**2 / (4 * n_eff**2)) / (1 + z**2 / n_eff)
    low = 0.0 if theta == 0.0 else float(max(centre - half, 0.0))
    high = 1.0 if theta == 1.0 else float(min(centre + half, 1.0))
    return {
        "value": theta,
        "ci": (low, high),
        "n": n,
        "n_clusters": g,
        "n_effective": float(n_eff),
    }


def _choices(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(list(values), dtype=object)
    bad = sorted({str(v) for v in arr if v not in _PREFERENCE_SCORE})
    if bad:
        raise ValueError(f"{name}: preferences must be B, A or tie, got {', '.join(bad)}")
    return arr


def human_preference(choices: Any, questions: Any, confidence: float = 0.95) -> dict[str, Any]:
    """P(B preferred) over the analysts' preferences (B = 1, tie = ½, A = 0), clustered by
    question (`clustered_mean`); with the counts of each choice."""
    arr = _choices(choices, "choices")
    scores = np.array([_PREFERENCE_SCORE[v] for v in arr], dtype=float)
    result = clustered_mean(scores, questions, confidence)
    result["counts"] = {choice: int(np.sum(arr == choice)) for choice in CHOICES}
    return result


def human_judge_agreement(
    human: Any, judge: Any, questions: Any, confidence: float = 0.95
) -> dict[str, Any]:
    """How often the judge's order-averaged verdict equals the analyst's preference, over the
    (analyst, pair) marks whose pair the judge judged in both orders.

    `human[i]`, `judge[i]`: "B", "A" or "tie" on mark i (the judge's verdict repeats on every
    mark of its pair); `questions[i]` its pair's question key. Reported: the share of marks
    that agree (`clustered_share`, clustered by question), Cohen's kappa over the marks
    (`agreement.cohen_kappa`; Cohen 1960; nan when undefined) and the 3×3 table (rows the
    analysts, columns the judge, in `CHOICES` order).
    """
    h = _choices(human, "human")
    j = _choices(judge, "judge")
    if h.size != j.size:
        raise ValueError(f"human and judge differ in length: {h.size}, {j.size}")
    agree = (h == j).astype(float)
    share = clustered_share(agree, questions, confidence)
    table = [[int(np.sum((h == r) & (j == c))) for c in CHOICES] for r in CHOICES]
    return {
        "share": share,
        "kappa": cohen_kappa(list(h), list(j)) if h.size else NAN,
        "confusion": {"rows_human_columns_judge": list(CHOICES), "counts": table},
        "n": int(h.size),
    }
