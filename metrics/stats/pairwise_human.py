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

import re
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest
from scipy.stats import t as student_t

from ._common import NAN, check_confidence, z_value
from .agreement import cohen_kappa

__all__ = [
    "CHOICES",
    "analysts_agreement",
    "clustered_mean",
    "clustered_share",
    "decided_preference",
    "human_judge_agreement",
    "human_preference",
    "judge_pair_verdict",
    "kappa_clustered",
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


def clustered_mean(
    values: Any, clusters: Any, confidence: float = 0.95, bounds: tuple[float, float] = (0.0, 1.0)
) -> dict[str, Any]:
    """Mean of `values` with a t interval clustered by `clusters`, clipped to `bounds`.

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
        "ci": (max(mean - half, bounds[0]), min(mean + half, bounds[1])),
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


def _kappa_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each k×k contingency table in `tables` (…, k, k); nan where undefined
    (no pair, or A_e = 1). Formula as `agreement.cohen_kappa`."""
    n = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(tables, axis1=-2, axis2=-1) / n
        p_e = np.einsum("...i,...i->...", tables.sum(axis=-1), tables.sum(axis=-2)) / n**2
        kappa = (p_o - p_e) / (1.0 - p_e)
    return np.where((n > 0) & (p_e < 1.0), kappa, np.nan)


def kappa_clustered(
    first: Any, second: Any, clusters: Any, confidence: float = 0.95
) -> dict[str, Any]:
    """Cohen's kappa between paired marks `first[i]`, `second[i]` ("B", "A" or "tie"), with an
    interval clustered by `clusters[i]` (here the question: several analyst pairs on one
    question share its difficulty, so they are not independent).

    κ as `agreement.cohen_kappa` (Cohen 1960). Interval: the delete-one-cluster jackknife,
    SE² = (G−1)/G · Σ_g (κ₍₋g₎ − κ̄₍·₎)², CI = κ ± t_{G−1}·SE, clipped to [−1, 1] (Efron &
    Stein 1981; the jackknife for clustered agreement statistics: Fleiss & Davies 1982 use the
    same cluster-deletion idea for kappa in repeated measurements). Written here because
    neither scikit-learn nor statsmodels gives a clustered interval for kappa (statsmodels'
    `cohens_kappa` assumes independent items). With one pair per cluster it is the ordinary
    jackknife over items. Fewer than 2 clusters, or a κ undefined when any one cluster is left
    out: no interval (nan).
    """
    confidence = check_confidence(confidence)
    x = _choices(first, "first")
    y = _choices(second, "second")
    if x.size != y.size:
        raise ValueError(f"first and second differ in length: {x.size}, {y.size}")
    c = np.asarray(clusters, dtype=object).reshape(-1)
    if c.size != x.size:
        raise ValueError(f"marks and clusters differ in length: {x.size}, {c.size}")
    index = {choice: k for k, choice in enumerate(CHOICES)}
    cells = np.array([index[v] for v in x], dtype=np.int64) * 3 + np.array(
        [index[v] for v in y], dtype=np.int64
    )
    codes, uniques = pd.factorize(c)
    g = int(uniques.size)
    per_cluster = np.zeros((g, 9))
    np.add.at(per_cluster, (codes, cells), 1.0)
    total = per_cluster.sum(axis=0)
    kappa = float(_kappa_tables(total.reshape(3, 3)))
    out = {"value": kappa, "ci": (NAN, NAN), "std_error": NAN, "n": int(x.size), "n_clusters": g}
    if g < 2 or not np.isfinite(kappa):
        return out
    left_out = _kappa_tables((total[None, :] - per_cluster).reshape(g, 3, 3))
    if not np.isfinite(left_out).all():
        return out
    se = float(np.sqrt((g - 1) / g * np.sum((left_out - left_out.mean()) ** 2)))
    half = float(student_t.ppf(0.5 + confidence / 2.0, g - 1)) * se
    out.update(ci=(max(kappa - half, -1.0), min(kappa + half, 1.0)), std_error=se)
    return out


def _natural(name: str) -> tuple:
    """Sort key reading digit runs as numbers: "annotator-2" before "annotator-10"."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def analysts_agreement(
    questions: Any, analysts: Any, choices: Any, confidence: float = 0.95
) -> dict[str, Any] | None:
    """How the analysts agree with one another on the pairs several of them marked.

    Every two analysts' marks on one question form a comparison (a question three analysts
    marked gives three), the analyst named first in sort order (digits read as numbers) as the first rater. Reported:
    raw agreement (the share of comparisons with the same mark) and opposite directions (one
    preferred A, the other B), each a share clustered by question (`clustered_share`), and
    Cohen's kappa over the comparisons with its clustered interval (`kappa_clustered`; with
    two analysts on every pair it is their ordinary Cohen's kappa). None when no question has
    two marks.
    """
    frame = pd.DataFrame(
        {
            "q": list(questions),
            "who": [str(a) for a in analysts],
            "mark": list(_choices(choices, "choices")),
        }
    )
    first, second, where = [], [], []
    for question, group in frame.groupby("q", sort=True):
        marks = sorted(zip(group["who"], group["mark"], strict=True), key=lambda m: _natural(m[0]))
        names, values = [m[0] for m in marks], [m[1] for m in marks]
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                if names[i] != names[j]:
                    first.append(values[i])
                    second.append(values[j])
                    where.append(question)
    if not first:
        return None
    x, y = np.array(first, dtype=object), np.array(second, dtype=object)
    same = (x == y).astype(float)
    opposite = (((x == "A") & (y == "B")) | ((x == "B") & (y == "A"))).astype(float)
    return {
        "comparisons": len(first),
        "n_pairs": len(set(where)),
        "raw_agreement": clustered_share(same, where, confidence),
        "opposite": clustered_share(opposite, where, confidence),
        "kappa": kappa_clustered(x, y, where, confidence),
    }


def decided_preference(choices: Any, questions: Any, confidence: float = 0.95) -> dict[str, Any]:
    """P(B preferred | not a tie): the share of B among the marks that chose a side, clustered
    by question (`clustered_share`), with a sign test over questions.

    The sign test counts each question once (its marks pooled: more B than A marks is a B
    question, more A an A question; questions with as many of each, or only ties, are set
    aside) and asks whether B questions are as likely as A questions: two-sided exact binomial
    test at ½ (`scipy.stats.binomtest`; Dixon & Mood 1946). One unit per question, so several
    analysts on one pair cannot inflate its significance.
    """
    arr = _choices(choices, "choices")
    q = np.asarray(list(questions), dtype=object)
    decided = arr != "tie"
    share = clustered_share((arr[decided] == "B").astype(float), q[decided], confidence)
    frame = pd.DataFrame({"q": q, "score": np.where(arr == "B", 1, np.where(arr == "A", -1, 0))})
    net = frame.groupby("q")["score"].sum()
    wins_b, wins_a = int((net > 0).sum()), int((net < 0).sum())
    sign = {
        "questions_b": wins_b,
        "questions_a": wins_a,
        "questions_even": int((net == 0).sum()),
        "p_value": float(binomtest(wins_b, wins_b + wins_a, 0.5).pvalue)
        if wins_a + wins_b
        else NAN,
    }
    return {
        **share,
        "n_decided": int(decided.sum()),
        "n_ties": int((~decided).sum()),
        "sign_test": sign,
    }
