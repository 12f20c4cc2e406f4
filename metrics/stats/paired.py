"""Paired comparison of two systems on the questions both answered: B − A with an interval
clustered by question, from gold alone or prediction-powered (PPI++) on the differences.

The unit is whatever the rate is a mean over: a claim (faithfulness pooled over claims,
contradiction rate) or an answer (mean per-answer faithfulness, share of answers with an
unsupported claim, abstention rate). Each unit carries its value y (1/0, or a per-answer score in
[0, 1]), its system (0 = A, 1 = B) and its question key. System s's rate is the mean of its
units, θ_s = Σ_q S_sq / Σ_q n_sq (S_sq the sum of y over s's units of question q, n_sq their
count), and the estimate is D = θ_B − θ_A.

Why paired: both systems answer the same questions, and a question that is hard for A (an empty
or misleading pile) is hard for B too. Those per-question effects cancel in B − A, so an
interval clustered by question — which keeps the covariance of the two systems' rates — is
narrower than the difference of two separate intervals, and, unlike an interval that treats
claims as independent, it is valid when claims of one question are correlated.

No Django import (see the package docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact
from scipy.stats import t as student_t

from metrics.format import percent

from ._common import NAN, check_confidence
from .estimate import Estimate

__all__ = [
    "PairedEstimate",
    "paired_design_difference",
    "paired_gold_difference",
    "paired_ppi_difference",
    "shared_questions",
]


@dataclass(frozen=True)
class PairedEstimate(Estimate):
    """B − A with its interval: an `Estimate` whose `n` is the questions it uses. `se_unpaired`
    is what the two systems' rates, each with its own interval clustered by question, would give
    if their covariance were ignored (the comparison of two separate reports)."""

    se_unpaired: float = NAN
    n_units: tuple[int, int] = (0, 0)  # units of A, units of B
    rates: tuple[float, float] = (NAN, NAN)  # θ_A, θ_B
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_questions(self) -> int:
        return self.n

    @property
    def width_unpaired(self) -> float:
        return 2 * self._t * self.se_unpaired

    @property
    def _t(self) -> float:
        return self.extra.get("t", NAN)

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci": [self.lower, self.upper],
            "std_error": self.se,
            "std_error_unpaired": self.se_unpaired,
            "ci_unpaired": [
                self.value - self._t * self.se_unpaired,
                self.value + self._t * self.se_unpaired,
            ],
            "n_questions": self.n,
            "n_units": list(self.n_units),
            "rate_a": self.rates[0],
            "rate_b": self.rates[1],
            "method": self.method,
            **{key: value for key, value in self.extra.items() if key != "t"},
        }


def _nan(method: str, n_questions: int = 0) -> PairedEstimate:
    return PairedEstimate(NAN, method=method, n=n_questions)


def _inputs(values: Any, system: Any, question: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(values, dtype=float).reshape(-1)
    s = np.asarray(system).reshape(-1)
    q = np.asarray(question).reshape(-1)
    if not (y.size == s.size == q.size):
        raise ValueError(
            f"values, system and question differ in length: {y.size}, {s.size}, {q.size}"
        )
    if s.size and not np.isin(s, (0, 1)).all():
        raise ValueError("system must be 0 (A) or 1 (B) for every unit")
    return y, s.astype(np.int64), q


def shared_questions(system: Any, question: Any) -> np.ndarray:
    """Mask of the units whose question has at least one unit of each system."""
    s = np.asarray(system).reshape(-1).astype(np.int64)
    codes, _ = pd.factorize(np.asarray(question).reshape(-1))
    if codes.size == 0:
        return np.zeros(0, bool)
    g = int(codes.max()) + 1
    has = np.zeros((2, g), bool)
    has[s, codes] = True
    both = has[0] & has[1]
    return both[codes]


def _ratio_influence(y: np.ndarray, codes: np.ndarray, g: int) -> tuple[float, np.ndarray]:
    """Mean of y and, per question, the linearised contribution (S_q − θ n_q)/n of the ratio
    Σ S_q / Σ n_q (Binder 1983): Var(θ̂) ≈ G/(G−1) Σ_q z_q²."""
    n = y.size
    if n == 0:
        return NAN, np.zeros(g)
    theta = float(y.mean())
    z = np.bincount(codes, weights=y - theta, minlength=g) / n
    return theta, z


def _finish(
    value: float,
    z_a: np.ndarray,
    z_b: np.ndarray,
    g: int,
    df: int,
    confidence: float,
) -> tuple[float, float, float, float, float]:
    """(low, high, se, se unpaired, t) from the per-question contributions of A and B."""
    c = g / (g - 1) if g > 1 else NAN
    diff = z_b - z_a
    se = float(np.sqrt(c * float(diff @ diff)))
    se_unpaired = float(np.sqrt(c * (float(z_a @ z_a) + float(z_b @ z_b))))
    t = float(student_t.ppf(0.5 + confidence / 2.0, max(df, 1))) if df >= 1 else NAN
    low = max(value - t * se, -1.0)
    high = min(value + t * se, 1.0)
    return low, high, se, se_unpaired, t


def paired_gold_difference(
    values: Any, system: Any, question: Any, confidence: float = 0.95
) -> PairedEstimate:
    """B − A from gold (true values) alone, paired by question.

    Only questions with units of both systems count. Formula: θ_s = Σ_q S_sq / n_s with
    n_s = Σ_q n_sq; per question z_q = (S_Bq − θ_B n_Bq)/n_B − (S_Aq − θ_A n_Aq)/n_A;
    SE² = G/(G−1)·Σ_q z_q² (CR1, G questions); CI = D ± t_{G−1}·SE, clipped to [−1, 1].
    The unpaired SE drops the cross term: G/(G−1)·Σ_q (z_Aq² + z_Bq²).
    With one unit per system and question this is the paired t interval on the per-question
    differences d_q = y_Bq − y_Aq (SE² = Var(d)/G, ddof 1).
    Source: Binder (1983), linearised ratio variance; Cameron & Miller (2015), "A
    Practitioner's Guide to Cluster-Robust Inference" (CR1); the paired design as in any paired
    t test (Student 1908).
    """
    confidence = check_confidence(confidence)
    y, s, q = _inputs(values, system, question)
    keep = shared_questions(s, q)
    method = "gold only, paired by question (clustered by question, t interval)"
    if not keep.any():
        return _nan(method)
    y, s, q = y[keep], s[keep], q[keep]
    codes, _ = pd.factorize(q)
    g = int(codes.max()) + 1
    theta_a, z_a = _ratio_influence(y[s == 0], codes[s == 0], g)
    theta_b, z_b = _ratio_influence(y[s == 1], codes[s == 1], g)
    value = theta_b - theta_a
    low, high, se, se_unpaired, t = _finish(value, z_a, z_b, g, g - 1, confidence)
    n_units = (int((s == 0).sum()), int((s == 1).sum()))
    if g < 2:
        return _nan(method, g)
    return PairedEstimate(
        value=value,
        lower=low,
        upper=high,
        se=se,
        se_unpaired=se_unpaired,
        n=g,
        n_units=n_units,
        rates=(theta_a, theta_b),
        method=f"{method}, {g} shared questions with gold on both systems",
        extra={"t": t},
    )


def _ppi_parts(
    y: np.ndarray, f: np.ndarray, codes: np.ndarray, g: int
) -> tuple[float, float, np.ndarray, np.ndarray, int]:
    """One system's PPI pieces: θ̂(λ) = ȳ_L + λ·(f̄_U − f̄_L), linear in λ, with per-question
    linearised contributions z(λ) = z_y + λ·z_f (z_y of ȳ_L, z_f of f̄_U − f̄_L).

    A system whose units are all labelled has no judge part (f̄_U − f̄_L := 0)."""
    labelled = ~np.isnan(y)
    y_bar, z_y = _ratio_influence(y[labelled], codes[labelled], g)
    if labelled.all():
        return y_bar, 0.0, z_y, np.zeros(g), int(labelled.sum())
    f_l_bar, z_fl = _ratio_influence(f[labelled], codes[labelled], g)
    f_u_bar, z_fu = _ratio_influence(f[~labelled], codes[~labelled], g)
    return y_bar, f_u_bar - f_l_bar, z_y, z_fu - z_fl, int(labelled.sum())


def paired_ppi_difference(
    gold: Any,
    judge: Any,
    system: Any,
    question: Any,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PairedEstimate:
    """B − A, prediction-powered: the judge's values on every unit, rectified per system by its
    error on the gold-labelled units, paired by question.

    `gold` holds the true value of each labelled unit and nan for the others; `judge` the
    judge's value of every unit (a 0/1 verdict, a probability or a per-answer score). Only
    questions with units of both systems count.

    Formula, per system s: θ̂_s(λ) = λ·mean(f_U,s) + mean(y_L,s − λ f_L,s), one λ for both;
    D(λ) = θ̂_B − θ̂_A = D_y + λ·D_f; per question z_q(λ) = zY_q + λ·zF_q, the linearised
    contributions of D_y and D_f (see `_ppi_parts`); SE²(λ) = G/(G−1) Σ_q z_q(λ)² over the G
    shared questions, so a question's labelled and unlabelled units, of both systems, are one
    cluster. λ is PPI++'s power tuning for the difference itself — the minimiser of SE²(λ),
    λ̂ = −Σ zY·zF / Σ zF², clipped to [0, 1] (`lam` fixes it) — not one λ per system: tuned per
    system, λ follows each system's level, and a judge whose errors differ between the two
    systems' answers would then make the difference wider than gold alone. λ̂ = 0 is the gold-only
    estimate. CI = D ± t_{G_L−1}·SE (G_L questions with gold).
    With one unit per system and question, the same questions labelled for both, and one fixed
    λ, D is `ppi_py.ppi_mean_pointestimate` on the per-question differences and SE² is its
    variance times G/(G−1); λ̂ is then ppi_py's Cov(Y, Ŷ)/((1 + n/N)·Var Ŷ) on the differences
    up to its pooled variance's ddof.
    Source: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), "Prediction-powered
    inference", Science 382:669; Angelopoulos, Duchi & Zrnic (2023), "PPI++", arXiv:2311.01453;
    Boyeau, Angelopoulos, Yosef, Malik & Jordan (2024), "AutoEval Done Right", arXiv:2403.07008
    (PPI for comparing models on the same inputs).
    """
    confidence = check_confidence(confidence)
    y, s, q = _inputs(gold, system, question)
    f = np.asarray(judge, dtype=float).reshape(-1)
    if f.size != y.size:
        raise ValueError(f"gold and judge differ in length: {y.size} vs {f.size}")
    if np.isnan(f).any():
        raise ValueError("judge needs a value for every unit (leave unjudged units out)")
    keep = shared_questions(s, q)
    method = "PPI++ on the per-question differences (judge on every claim, rectified by gold)"
    y, f, s, q = y[keep], f[keep], s[keep], q[keep]
    labelled = ~np.isnan(y)
    if not (labelled & (s == 0)).any() or not (labelled & (s == 1)).any():
        return _nan(method)
    codes, _ = pd.factorize(q)
    g = int(codes.max()) + 1
    ya, fa, zya, zfa, n_la = _ppi_parts(y[s == 0], f[s == 0], codes[s == 0], g)
    yb, fb, zyb, zfb, n_lb = _ppi_parts(y[s == 1], f[s == 1], codes[s == 1], g)
    if lam is None:
        z_y, z_f = zyb - zya, zfb - zfa
        ss = float(z_f @ z_f)
        lam = 0.0 if ss <= 0 else float(min(max(-float(z_y @ z_f) / ss, 0.0), 1.0))
    theta_a, theta_b = ya + lam * fa, yb + lam * fb
    z_a, z_b = zya + lam * zfa, zyb + lam * zfb
    value = theta_b - theta_a
    g_gold = int(np.unique(codes[labelled]).size)
    low, high, se, se_unpaired, t = _finish(value, z_a, z_b, g, g_gold - 1, confidence)
    if g < 2 or g_gold < 2:
        return _nan(method, g)
    return PairedEstimate(
        value=value,
        lower=low,
        upper=high,
        se=se,
        se_unpaired=se_unpaired,
        n=g,
        n_units=(int((s == 0).sum()), int((s == 1).sum())),
        rates=(theta_a, theta_b),
        method=(
            f"{method}, clustered by question: {g} shared questions, gold on {g_gold} "
            f"(λ = {lam:.2f})"
        ),
        extra={
            "t": t,
            "lambda": float(lam),
            "gold_units": [n_la, n_lb],
            "gold_questions": g_gold,
        },
    )


def _design_trivial(labelled: np.ndarray, stratum: np.ndarray, weight: np.ndarray) -> bool:
    """One stratum among the units and one weight among the labelled ones: a simple random
    sample, today's estimators."""
    one_stratum = pd.unique(stratum).size <= 1
    w = weight[labelled]
    return bool(one_stratum and (w.size == 0 or np.ptp(w) == 0))


def paired_design_difference(
    gold: Any,
    system: Any,
    question: Any,
    *,
    judge: Any = None,
    stratum: Any = None,
    weight: Any = None,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PairedEstimate:
    """B − A paired by question when the gold was drawn by a design: strata with their own
    sampling rates and/or unequal inclusion probabilities π (weight w = 1/π).

    `gold` holds the true value of each labelled unit and nan for the others (every unit of
    both systems, labelled or not: the unlabelled ones are the population the strata weigh);
    `stratum` each unit's design stratum; `weight` each labelled unit's design weight 1/π
    (ignored elsewhere); `judge` (optional) the judge's value of every unit, for PPI++.
    With one stratum and one weight (a simple random sample) this returns exactly
    `paired_gold_difference` on the labelled units (`paired_ppi_difference` with a judge):
    today's figures.

    Formula, per system s and stratum h (N_sh units of s in h, L_sh the labelled ones):
    Ȳ_sh = Σ_L w·y / Σ_L w (the Hájek mean; the plain mean when w is constant in h);
    W_sh = N_sh / Σ_h' N_sh' over the strata where s has gold (a stratum with no gold is not
    extrapolated over: `unseen_share` says which share of s's units it is);
    gold only: θ̂_s = Σ_h W_sh Ȳ_sh; PPI++: θ̂_s(λ) = Σ_h W_sh [Ȳ_sh + λ(F̄_sh − F̄_L,sh)], F̄_L
    the weighted judge mean on L, F̄_sh the judge's mean over the unlabelled units of h (over
    all of h's units when w varies within h: the unlabelled ones are then not a random part of
    it); D = θ̂_B − θ̂_A.
    Variance: each unit's linearised influence, W_sh·w_i·(y_i − Ȳ_sh)/Σ_L w for gold (centred
    in its stratum: strata are sampled separately), and, with a judge, the λ-part
    −W_sh·w_i·(f_i − F̄_L,sh)/Σ_L w + W_sh·(f_i − F̄_sh)/m_sh; summed per question with sign
    (+ B, − A) into z_q; SE² = G/(G−1)·Σ_q z_q² (CR1 clustered by question: a question's
    units of both systems, in any stratum, are one cluster; the with-replacement variance,
    which leaves out the finite-population correction 1 − π and so errs wide). λ as
    `paired_ppi_difference` (the minimiser of SE² for the difference, clipped to [0, 1]).
    CI = D ± t_{G_L−1}·SE, G_L the questions with gold, clipped to [−1, 1].
    Source: Horvitz & Thompson (1952) and Hájek (1971) for the weighted means; Cochran (1977)
    ch. 5 for the stratified estimator; Binder (1983) for the linearised variance; Fisch et
    al. (2024), "Stratified Prediction-Powered Inference", arXiv:2406.04291, and Zrnic &
    Candès (2024), "Active Statistical Inference", arXiv:2403.03208, for PPI with strata and
    inclusion probabilities; Boyeau et al. (2024), arXiv:2403.07008, for PPI on differences.
    """
    confidence = check_confidence(confidence)
    y, s, q = _inputs(gold, system, question)
    strata, w, f, labelled = _design_inputs(y.size, stratum, weight, judge, np.isnan(y))
    if _design_trivial(labelled, strata, w):
        if f is None:
            return paired_gold_difference(y[labelled], s[labelled], q[labelled], confidence)
        return paired_ppi_difference(y, f, s, q, confidence, lam)
    keep = shared_questions(s, q)
    y, s, q, strata, w, labelled = y[keep], s[keep], q[keep], strata[keep], w[keep], labelled[keep]
    f = None if f is None else f[keep]
    kind = "gold only" if f is None else "PPI++ on the per-question differences"
    method = f"{kind}, paired by question, weighted by the audit's design"
    if not (labelled & (s == 0)).any() or not (labelled & (s == 1)).any():
        return _nan(method)
    codes, _ = pd.factorize(q)
    g = int(codes.max()) + 1
    z_y, z_f, d_y, d_f, unseen, seen_strata = _design_sides(y, s, strata, w, f, labelled, codes, g)
    if f is None:
        lam = 0.0
    elif lam is None:
        zy, zf = z_y[1] - z_y[0], z_f[1] - z_f[0]
        ss = float(zf @ zf)
        lam = 0.0 if ss <= 0 else float(min(max(-float(zy @ zf) / ss, 0.0), 1.0))
    theta_a, theta_b = d_y[0] + lam * d_f[0], d_y[1] + lam * d_f[1]
    z_a, z_b = z_y[0] + lam * z_f[0], z_y[1] + lam * z_f[1]
    gold_codes = codes[labelled]
    g_gold = int(np.unique(gold_codes).size)
    if f is None:
        # Gold only: the clusters are the questions holding gold (the others add nothing).
        present = np.unique(gold_codes)
        z_a, z_b, g_var = z_a[present], z_b[present], g_gold
    else:
        g_var = g
    value = theta_b - theta_a
    low, high, se, se_unpaired, t = _finish(value, z_a, z_b, g_var, g_gold - 1, confidence)
    if g_var < 2 or g_gold < 2:
        return _nan(method, g_var)
    n_strata = int(pd.unique(strata).size)
    parts = _design_text_parts(g, g_gold, n_strata, w, labelled, unseen, f, lam)
    extra: dict[str, Any] = {
        "t": t,
        "design": "stratified" if n_strata > 1 else "weighted",
        "n_strata": n_strata,
        "strata_with_gold": seen_strata,
        "unseen_share": [float(unseen[0]), float(unseen[1])],
        "gold_questions": g_gold,
        "gold_units": [int((labelled & (s == 0)).sum()), int((labelled & (s == 1)).sum())],
    }
    if f is not None:
        extra["lambda"] = float(lam)
    return PairedEstimate(
        value=value,
        lower=low,
        upper=high,
        se=se,
        se_unpaired=se_unpaired,
        n=g_var,
        # units the estimate reads: gold ones (gold only), every unit (PPI++), as today's
        n_units=tuple(extra["gold_units"])
        if f is None
        else (int((s == 0).sum()), int((s == 1).sum())),
        rates=(theta_a, theta_b),
        method=f"{method} ({'; '.join(parts)}), clustered by question, t interval",
        extra=extra,
    )


def _design_inputs(n: int, stratum, weight, judge, missing: np.ndarray):
    """(strata, weights, judge or None, labelled) per unit, checked: one entry per unit, a
    positive weight on every labelled unit, a judge value on every unit."""
    strata = np.zeros(n, np.int64) if stratum is None else np.asarray(stratum).reshape(-1)
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float).reshape(-1)
    f = None if judge is None else np.asarray(judge, dtype=float).reshape(-1)
    if strata.size != n or w.size != n or (f is not None and f.size != n):
        raise ValueError("gold, system, question, stratum, weight and judge differ in length")
    labelled = ~missing
    if labelled.any() and not (np.isfinite(w[labelled]) & (w[labelled] > 0)).all():
        raise ValueError("weight must be a positive number (1/π) for every labelled unit")
    if f is not None and np.isnan(f).any():
        raise ValueError("judge needs a value for every unit (leave unjudged units out)")
    return strata, w, f, labelled


def _design_sides(y, s, strata, w, f, labelled, codes, g):
    """Per system: the gold and judge influences summed per question (z_y, z_f), the gold and
    judge parts of θ̂ (d_y, d_f), the share of its units in strata without gold, and how many
    strata have gold."""
    h_codes, h_names = pd.factorize(strata)
    z_y = np.zeros((2, g))
    z_f = np.zeros((2, g))
    d_y = np.zeros(2)
    d_f = np.zeros(2)
    unseen = [0.0, 0.0]
    seen_strata = [0, 0]
    for side in (0, 1):
        mine = s == side
        n_side = int(mine.sum())
        cells = []
        for h in range(h_names.size):
            cell = mine & (h_codes == h)
            if not cell.any():
                continue
            if (cell & labelled).any():
                cells.append(cell)
            else:
                unseen[side] += cell.sum() / n_side
        seen_total = float(sum(int(c.sum()) for c in cells))
        seen_strata[side] = len(cells)
        for cell in cells:
            _design_cell(cell, cell.sum() / seen_total, side, y, w, f, labelled, codes, g,
                         z_y, z_f, d_y, d_f)  # fmt: skip
    return z_y, z_f, d_y, d_f, unseen, seen_strata


def _design_cell(cell, big_w, side, y, w, f, labelled, codes, g, z_y, z_f, d_y, d_f) -> None:
    """Add one stratum of one system (weight W_sh) to the sums: its Hájek gold mean and
    influences, and with a judge its λ-part."""
    lab = cell & labelled
    wl = w[lab]
    sum_w = float(wl.sum())
    y_bar = float(wl @ y[lab]) / sum_w
    d_y[side] += big_w * y_bar
    z_y[side] += np.bincount(codes[lab], weights=big_w * wl * (y[lab] - y_bar) / sum_w, minlength=g)
    rest = cell & ~labelled
    if f is None or not rest.any():
        return  # gold only, or every unit of the stratum labelled: no judge part
    f_l_bar = float(wl @ f[lab]) / sum_w
    z_f[side] -= np.bincount(
        codes[lab], weights=big_w * wl * (f[lab] - f_l_bar) / sum_w, minlength=g
    )
    pool = rest if np.ptp(wl) == 0 else cell
    f_bar = float(f[pool].mean())
    z_f[side] += np.bincount(
        codes[pool], weights=big_w * (f[pool] - f_bar) / pool.sum(), minlength=g
    )
    d_f[side] += big_w * (f_bar - f_l_bar)


def _design_text_parts(g, g_gold, n_strata, w, labelled, unseen, f, lam) -> list[str]:
    """The method text's parts: questions, strata, weights, unseen strata, λ."""
    parts = [f"{g} shared questions, gold on {g_gold}"]
    if n_strata > 1:
        parts.append(f"stratified over {n_strata} design strata (weights N_h/N per system)")
    if np.ptp(w[labelled]) > 0:
        parts.append("each gold unit weighted by 1/π, its inclusion probability (Hájek)")
    if max(unseen) > 0:
        parts.append(
            f"strata with no gold not estimated: {percent(unseen[0])} of A's units, "
            f"{percent(unseen[1])} of B's"
        )
    if f is not None:
        parts.append(f"λ = {lam:.2f}")
    return parts


def proportions_equal(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test that two binomial proportions are equal
    (k1 of n1 against k2 of n2); nan when either n is 0.

    Used for the judge's sensitivity (specificity) on one system's claims against the other's.
    Source: Fisher (1935), "The logic of inductive inference"; computed by
    ``scipy.stats.fisher_exact`` on the 2×2 table [[k1, n1 − k1], [k2, n2 − k2]].
    """
    if n1 <= 0 or n2 <= 0:
        return NAN
    if not (0 <= k1 <= n1 and 0 <= k2 <= n2):
        raise ValueError(f"need 0 <= k <= n, got {k1}/{n1} and {k2}/{n2}")
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)
