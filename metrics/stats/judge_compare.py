"""Two judge versions compared on the same held-out gold claims (issue 28).

Pure functions over arrays; claims are clustered by answer (the sampling unit) and the clusters
nested in design strata. Rates are ratio estimators R = Σ w·y·g / Σ w·g over the claims of a
gold class g (sensitivity: gold SUPPORTED, y = judge SUPPORTED; specificity: gold not SUPPORTED,
y = judge not SUPPORTED; agreement: every claim, y = judge equals gold), with the linearised
(Taylor) variance of a stratified cluster sample:

    z_i = w_i g_i (y_i − R) / Σ w g,   V = Σ_h n_h/(n_h − 1) Σ_{c ∈ h} (z_c − z̄_h)²

(Wolter 2007, *Introduction to Variance Estimation*, §6.11; Cochran 1977 §6.11). The paired
difference of two versions on the same claims linearises y_A − y_B, so the covariance of the
two versions' errors, shared by their claims and answers, cancels; the unpaired interval adds
the two variances as if the versions had been audited on different claims.

The exact test is McNemar's on the discordant claims (b: A right and B wrong, c: the reverse),
a two-sided binomial test of b against b + c at 1/2 (McNemar 1947; exact form, Fagerland, Lydersen
& Laake 2013). It treats claims as independent; the clustered Wald test beside it does not.

The PPI break-even (Mani, Xu, Lipton & Oberst 2025, "No Free Lunch", arXiv 2505.20178):
in finite samples PPI++ beats gold alone only when the correlation between the judge's score and
gold exceeds about 1/√(n − 2), n the labelled claims.
"""

import math
from typing import Any

import numpy as np
from scipy import stats as sps

from metrics.stats._common import check_confidence, z_value


def _clusters(answer_ids: np.ndarray, strata: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Cluster code of each claim (answer within stratum) and each cluster's stratum code."""
    strata = np.zeros(answer_ids.size, dtype=np.int64) if strata is None else np.asarray(strata)
    keys = np.rec.fromarrays([strata.astype(str), np.asarray(answer_ids).astype(str)])
    uniq, codes = np.unique(keys, return_inverse=True)
    _, stratum_codes = np.unique(uniq.f0, return_inverse=True)
    return codes.ravel(), stratum_codes.ravel()


def _linear_variance(z: np.ndarray, clusters: np.ndarray, cluster_strata: np.ndarray) -> float:
    totals = np.bincount(clusters, weights=z, minlength=cluster_strata.size)
    var = 0.0
    for h in np.unique(cluster_strata):
        zc = totals[cluster_strata == h]
        n_h = zc.size
        if n_h >= 2:
            var += n_h / (n_h - 1) * float(np.sum((zc - zc.mean()) ** 2))
    return var


def ratio_rate(
    y: Any,
    g: Any,
    answer_ids: Any,
    *,
    strata: Any = None,
    weights: Any = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """R = Σ w y g / Σ w g with its clustered, stratified Wald interval (clipped to [0, 1])."""
    z = z_value(check_confidence(confidence))
    y, g = np.asarray(y, dtype=float), np.asarray(g, dtype=float)
    w = np.ones(y.size) if weights is None else np.asarray(weights, dtype=float)
    den = float(np.sum(w * g))
    if den <= 0:
        return {"value": math.nan, "ci": (math.nan, math.nan), "se": math.nan, "n": 0}
    r = float(np.sum(w * g * y) / den)
    clusters, cstrata = _clusters(np.asarray(answer_ids), strata)
    se = math.sqrt(_linear_variance(w * g * (y - r) / den, clusters, cstrata))
    ci = (max(0.0, r - z * se), min(1.0, r + z * se))
    return {"value": r, "ci": ci, "se": se, "n": int(np.sum(g > 0))}


def paired_difference(
    y_a: Any,
    y_b: Any,
    g: Any,
    answer_ids: Any,
    *,
    strata: Any = None,
    weights: Any = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """D = R_A − R_B on the same claims: its paired interval (the linearised y_A − y_B,
    clustered by answer), the unpaired interval (V_A + V_B), the clustered Wald p-value and
    McNemar's exact p-value on the discordant claims of the class."""
    zq = z_value(check_confidence(confidence))
    y_a, y_b = np.asarray(y_a, dtype=float), np.asarray(y_b, dtype=float)
    g = np.asarray(g, dtype=float)
    w = np.ones(y_a.size) if weights is None else np.asarray(weights, dtype=float)
    den = float(np.sum(w * g))
    nan_pair = (math.nan, math.nan)
    if den <= 0:
        return {
            "value": math.nan,
            "ci": nan_pair,
            "unpaired_ci": nan_pair,
            "se": math.nan,
            "unpaired_se": math.nan,
            "p_wald": math.nan,
            "discordant": (0, 0),
            "p_mcnemar": math.nan,
            "n": 0,
        }
    r_a, r_b = float(np.sum(w * g * y_a) / den), float(np.sum(w * g * y_b) / den)
    d = r_a - r_b
    clusters, cstrata = _clusters(np.asarray(answer_ids), strata)
    se = math.sqrt(_linear_variance(w * g * (y_a - y_b - d) / den, clusters, cstrata))
    se_a = _linear_variance(w * g * (y_a - r_a) / den, clusters, cstrata)
    se_b = _linear_variance(w * g * (y_b - r_b) / den, clusters, cstrata)
    unpaired = math.sqrt(se_a + se_b)
    in_class = g > 0
    b = int(np.sum(in_class & (y_a > 0.5) & (y_b < 0.5)))
    c = int(np.sum(in_class & (y_a < 0.5) & (y_b > 0.5)))
    p_exact = float(sps.binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    p_wald = float(2 * sps.norm.sf(abs(d) / se)) if se > 0 else (1.0 if d == 0 else 0.0)
    return {
        "value": d,
        "ci": (d - zq * se, d + zq * se),
        "unpaired_ci": (d - zq * unpaired, d + zq * unpaired),
        "se": se,
        "unpaired_se": unpaired,
        "p_wald": p_wald,
        "discordant": (b, c),
        "p_mcnemar": p_exact,
        "n": int(in_class.sum()),
    }


def ppi_break_even(score: Any, gold: Any) -> dict[str, Any]:
    """The judge's correlation with gold on the n labelled claims against 1/√(n − 2)
    (Mani et al. 2025): `narrows` is True when the correlation exceeds it (PPI++ can beat gold
    alone at this audit size), False when gold alone is as good, None when undefined (n ≤ 2 or
    a constant score or gold)."""
    score, gold = np.asarray(score, dtype=float), np.asarray(gold, dtype=float)
    n = int(score.size)
    threshold = 1 / math.sqrt(n - 2) if n > 2 else math.nan
    if n <= 2 or np.ptp(score) == 0 or np.ptp(gold) == 0:
        return {"correlation": math.nan, "threshold": threshold, "n": n, "narrows": None}
    corr = float(np.corrcoef(score, gold)[0, 1])
    return {"correlation": corr, "threshold": threshold, "n": n, "narrows": bool(corr > threshold)}
