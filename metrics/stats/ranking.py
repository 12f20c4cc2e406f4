"""How well a score ranks supported above unsupported claims: the AUC with DeLong's interval.

No Django here (as everywhere in `metrics.stats`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import norm, rankdata

from ._common import NAN, check_confidence
from .intervals import wilson_interval


def auc_delong(positives: Any, negatives: Any, confidence: float = 0.95) -> dict[str, float | int]:
    """AUC = P(score of a positive > score of a negative) + ½ P(tie), with DeLong's variance.

    Formula: with midranks, the placement values are V10ᵢ = (R(xᵢ) − R_x(xᵢ))/n for the m
    positives and V01ⱼ = 1 − (R(yⱼ) − R_y(yⱼ))/m for the n negatives (R the rank in the pooled
    sample, R_x / R_y within its own sample); AUC = mean V10, Var = s²(V10)/m + s²(V01)/n.
    The interval is Wald on the logit scale (logit AUC ± z·SE/(AUC(1 − AUC))), which stays
    inside [0, 1]. Where the AUC is exactly 0 or 1 DeLong's variance is 0; the interval is then
    the Wilson interval of min(m, n) trials, an honest width for a separation that few claims
    show. Claims are taken as independent.

    Source: DeLong, DeLong & Clarke-Pearson (1988), Biometrics 44:837–845; Sun & Xu (2014) for
    the midrank form. nan when either group is empty.
    """
    check_confidence(confidence)
    x = np.asarray(positives, dtype=float)
    y = np.asarray(negatives, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    m, n = x.size, y.size
    out: dict[str, float | int] = {"auc": NAN, "se": NAN, "lo": NAN, "hi": NAN, "m": m, "n": n}
    if m == 0 or n == 0:
        return out
    pooled = rankdata(np.concatenate([x, y]))
    v10 = (pooled[:m] - rankdata(x)) / n
    v01 = 1.0 - (pooled[m:] - rankdata(y)) / m
    auc = float(v10.mean())
    var = (v10.var(ddof=1) / m if m > 1 else 0.0) + (v01.var(ddof=1) / n if n > 1 else 0.0)
    z = float(norm.ppf(0.5 + confidence / 2))
    out["auc"], out["se"] = auc, math.sqrt(var)
    if 0.0 < auc < 1.0 and var > 0:
        logit = math.log(auc / (1 - auc))
        half = z * math.sqrt(var) / (auc * (1 - auc))
        out["lo"] = 1 / (1 + math.exp(-(logit - half)))
        out["hi"] = 1 / (1 + math.exp(-(logit + half)))
    else:
        k = min(m, n)
        lo, hi = wilson_interval(round(auc * k), k, confidence)
        out["lo"], out["hi"] = lo, hi
    return out
