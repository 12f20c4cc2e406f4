"""The audit design and what every design-based estimate shares: the record `DesignEstimate`,
the design `_Design` read from the strata/clusters/weights, the cluster-robust covariance of
means, the ratio estimator and the Wilson-type interval at the effective sample size."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from metrics.format import percent

from ._common import NAN, as_label_array, z_value
from .estimate import Estimate

#: effective size of a census (the judge's verdict on every claim): no sampling error
_CENSUS = 1e15


#: The finite-population correction applies when the audit holds at least this share of the
#: claims it describes (Cochran 1977 §2.5: below 5% the factor 1 − f is ignorable). Below it the
#: figures are exactly the infinite-population ones, so small audits keep today's intervals.
FPC_MIN_FRACTION = 0.05


@dataclass(frozen=True)
class DesignEstimate(Estimate):
    """One figure with its design-based interval, ready for the report: an `Estimate` (value,
    lower, upper, se, n, method, design_effect) with what a design adds.

    ``design_effect`` is V_design / V_independent: the estimator's variance under the real design
    divided by its variance were every claim its own answer (same strata and weights); 1.0 means
    clustering costs nothing, 2.0 that the audit is worth half its claims. ``n_clusters`` the
    answers it used, ``df`` the t's degrees of freedom, ``n_strata`` the strata with gold.
    ``unseen_share`` is the share of the population in strata with no gold, which the estimate
    does not cover.
    """

    n_clusters: int = 0
    df: float = NAN
    n_strata: int = 1
    unseen_share: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The published form (keys as the report has always written them)."""
        return {
            "value": self.value,
            "low": self.lower,
            "high": self.upper,
            "method": self.method,
            "design_effect": self.design_effect,
            "n_clusters": self.n_clusters,
            "n": self.n,
            "std_error": self.se,
            "df": self.df,
            "n_strata": self.n_strata,
            "unseen_share": self.unseen_share,
            "extra": deepcopy(self.extra),
            "ci": self.ci,
        }


# --------------------------------------------------------------------------------------------
# the design: cluster codes, strata, weights


@dataclass(frozen=True)
class _Design:
    cluster: np.ndarray  # per claim, codes 0..G-1
    stratum: np.ndarray  # per claim, codes 0..H-1 (seen strata only, after dropping unseen)
    keep: np.ndarray  # per claim, in a seen stratum
    weights: np.ndarray  # W_h over seen strata, sums to 1
    n_h: np.ndarray  # claims per seen stratum
    labels: list[Any]  # seen stratum labels
    unseen: list[Any]
    unseen_share: float
    n_clusters: int
    nested: bool
    g_h: np.ndarray  # answers per seen stratum (nested only)
    # per claim: the design weight 1/π (None: equal weights within each stratum, today's)
    w: np.ndarray | None = None
    # per claim: √(1 − π̃) the finite-population factor on its influence (None: no correction)
    fpc_scale: np.ndarray | None = None
    sampled_share: float = 0.0  # audited claims / claims of the seen strata

    @property
    def simple(self) -> bool:
        """One stratum and one claim per answer, equal weights, no finite-population
        correction: today's independent-claims design."""
        return (
            self.weights.size == 1
            and self.n_clusters == int(self.keep.sum())
            and self.w is None
            and self.fpc_scale is None
        )


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if (codes < 0).any():
        raise ValueError("answer and stratum ids must not be missing (None/NaN)")
    return codes, np.asarray(uniques, dtype=object)


def _design(
    n: int,
    cluster: Iterable[Any] | None,
    stratum: Iterable[Any] | None,
    stratum_sizes: Mapping[Any, float] | None,
    domain: np.ndarray | None = None,
    weights: Iterable[float] | None = None,
    fpc: bool = False,
) -> _Design:
    """Build the design for n claims; ``domain`` (bool) restricts which claims count as sampled.

    ``weights`` (per claim, > 0): the claim's design weight 1/π within its stratum (an active,
    inverse-probability design); within-stratum means become Hájek means Σ w x / Σ w. None: equal
    weights (today's arithmetic, unchanged to the last bit). ``fpc``: apply the finite-population
    correction when ``stratum_sizes`` are the population's N_h and the audit holds at least
    `FPC_MIN_FRACTION` of the seen strata's claims: each claim's influence is multiplied by
    √(1 − π̃_i), π̃_i = (Σ_{j∈s_h} w_j / N_h) / w_i its inclusion probability calibrated so the
    weights sum to N_h (equal weights: π̃ = n_h/N_h, the textbook 1 − f of Cochran 1977 §5.3;
    unequal: the Poisson-sampling factor 1 − π_i of Särndal, Swensson & Wretman 1992 §3.4)."""
    w_all = _design_weights(weights, n)
    ids = np.arange(n) if cluster is None else as_label_array(cluster)
    if ids.size != n:
        raise ValueError(f"answer_ids has {ids.size} entries for {n} claims")
    strata, labels_all = _design_strata(stratum, n)
    dom = np.ones(n, dtype=bool) if domain is None else np.asarray(domain, dtype=bool)
    counts = np.bincount(strata[dom], minlength=labels_all.size)
    sizes = _stratum_sizes(stratum_sizes, stratum is not None, labels_all, counts)
    total = sum(sizes.values())
    seen_mask = counts > 0
    seen = [lab for lab, ok in zip(labels_all, seen_mask, strict=True) if ok]
    unseen = [lab for lab, v in sizes.items() if v > 0 and lab not in set(seen)]
    seen_total = sum(sizes[lab] for lab in seen)
    unseen_share = (total - seen_total) / total if total > 0 else 0.0
    remap = np.full(labels_all.size, -1, dtype=np.int64)
    remap[np.flatnonzero(seen_mask)] = np.arange(len(seen))
    new_strata = remap[strata] if n else strata
    keep = dom & (new_strata >= 0)
    strata_w = np.array([sizes[lab] for lab in seen], dtype=float)
    strata_w = strata_w / strata_w.sum() if strata_w.size else strata_w
    cl, _ = _factorize(ids[keep]) if keep.any() else (np.empty(0, np.int64), None)
    cluster_codes = np.full(n, -1, dtype=np.int64)
    cluster_codes[keep] = cl
    g = int(cl.max()) + 1 if cl.size else 0
    st_k = new_strata[keep]
    nested, g_h = _nesting(cl, st_k, g, len(seen))
    n_h = np.bincount(st_k, minlength=len(seen)).astype(float)
    sampled_share = float(keep.sum() / seen_total) if seen_total > 0 else 0.0
    fpc_scale = None
    if fpc and stratum_sizes is not None and sampled_share >= FPC_MIN_FRACTION and keep.any():
        big_n_h = np.array([sizes[lab] for lab in seen], dtype=float)
        w_k = np.ones(int(keep.sum())) if w_all is None else w_all[keep]
        sw_h = np.bincount(st_k, weights=w_k, minlength=len(seen))
        pi_tilde = (sw_h[st_k] / big_n_h[st_k]) / w_k
        fpc_scale = np.zeros(n)
        fpc_scale[keep] = np.sqrt(np.clip(1.0 - pi_tilde, 0.0, 1.0))
    return _Design(
        cluster=cluster_codes,
        stratum=new_strata,
        keep=keep,
        weights=strata_w,
        n_h=n_h,
        labels=seen,
        unseen=unseen,
        unseen_share=float(unseen_share),
        n_clusters=g,
        nested=nested,
        g_h=g_h,
        w=w_all,
        fpc_scale=fpc_scale,
        sampled_share=sampled_share,
    )


def _design_weights(weights, n: int) -> np.ndarray | None:
    """The per-claim design weights 1/π, checked (None: equal weights)."""
    if weights is None:
        return None
    w_all = np.asarray(
        weights if isinstance(weights, np.ndarray) else list(weights), dtype=float
    ).reshape(-1)
    if w_all.size != n:
        raise ValueError(f"weights has {w_all.size} entries for {n} claims")
    if not np.all(np.isfinite(w_all) & (w_all > 0)):
        raise ValueError("weights must be finite and positive (1/π of each claim)")
    return w_all


def _design_strata(stratum, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each claim's stratum code and the stratum labels (one unnamed stratum without strata)."""
    if stratum is None:
        return np.zeros(n, dtype=np.int64), np.array([None], dtype=object)
    s = as_label_array(stratum)
    if s.size != n:
        raise ValueError(f"strata has {s.size} entries for {n} claims")
    return _factorize(s) if n else (np.empty(0, np.int64), np.array([], object))


def _stratum_sizes(stratum_sizes, stratified: bool, labels_all, counts) -> dict[Any, float]:
    """N_h per stratum label: the given sizes, checked against the gold counts, or the counts
    themselves for one stratum."""
    if stratum_sizes is None:
        if stratified and labels_all.size > 1:
            raise ValueError("stratum_sizes (claims per stratum in the project, N_h) are required")
        return {lab: float(c) for lab, c in zip(labels_all, counts, strict=True)}
    sizes = {k: float(v) for k, v in stratum_sizes.items()}
    missing = [lab for lab in labels_all if lab not in sizes]
    if missing:
        raise ValueError(f"stratum {missing[0]!r} has gold claims but no size in stratum_sizes")
    bad = [k for k, v in sizes.items() if not (np.isfinite(v) and v >= 0)]
    if bad:
        raise ValueError(f"stratum_sizes[{bad[0]!r}] must be a non-negative number")
    for lab, count in zip(labels_all, counts, strict=True):
        if count > 0 and sizes[lab] < count:
            raise ValueError(
                f"stratum {lab!r} has {count} gold claims but stratum_sizes says N_h = "
                f"{sizes[lab]:g} (N_h counts every claim of the stratum in the project)"
            )
    return sizes


def _nesting(cl: np.ndarray, st_k: np.ndarray, g: int, h: int) -> tuple[bool, np.ndarray]:
    """Whether every answer's counted claims lie in one stratum, and then the answers per
    stratum G_h (zeros when not nested)."""
    if not g:
        return True, np.zeros(h, np.int64)
    # one claim's stratum per answer; nested iff every claim of the answer agrees with it
    # (O(n) where ufunc.at / unique were the report's slowest lines at 1M claims)
    some = np.empty(g, dtype=np.int64)
    some[cl] = st_k
    nested = bool(np.all(some[cl] == st_k))
    g_h = np.bincount(some, minlength=h) if nested else np.zeros(h, np.int64)
    return nested, g_h


def _means_and_cov(
    x: np.ndarray, d: _Design, *, independent: bool = False, active: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Population means μ_k = Σ_h W_h μ_hk of the columns of x, their linearised covariance, df.

    ``independent=True`` gives the same estimator's variance with every claim its own answer
    (the denominator of the design effect). ``active`` (per claim) marks the claims of the
    domain (e.g. gold-supported claims for sensitivity): only answers holding one count in G and
    G_h, as when the domain alone is analysed.
    """
    k = d.keep
    xk, st = x[k], d.stratum[k]
    h = d.weights.size
    sums = np.zeros((h, x.shape[1]))
    if d.w is None:
        for col in range(x.shape[1]):
            sums[:, col] = np.bincount(st, weights=xk[:, col], minlength=h)
        mu_h = sums / d.n_h[:, None]
        mu = d.weights @ mu_h
        infl = (d.weights / d.n_h)[st, None] * (xk - mu_h[st])
    else:
        # Hájek within each stratum: μ_h = Σ w x / Σ w; influence W_h·w_i(x_i − μ_h)/Σ_h w.
        wk = d.w[k]
        sw_h = np.bincount(st, weights=wk, minlength=h)
        for col in range(x.shape[1]):
            sums[:, col] = np.bincount(st, weights=xk[:, col] * wk, minlength=h)
        mu_h = sums / sw_h[:, None]
        mu = d.weights @ mu_h
        infl = ((d.weights / sw_h)[st] * wk)[:, None] * (xk - mu_h[st])
    if d.fpc_scale is not None:
        infl = infl * d.fpc_scale[k][:, None]
    act = np.ones(xk.shape[0], bool) if active is None else np.asarray(active, bool)[k]
    if independent:
        # Every claim its own cluster: the per-cluster sums are the influences themselves
        # (a bincount over 0…n−1 adds each weight to 0.0, exactly), so none is taken.
        g, nested = xk.shape[0], True
        st_g, live, z = st, act, infl
    else:
        cl, g, nested = d.cluster[k], d.n_clusters, d.nested
        st_g = np.zeros(g, dtype=np.int64)
        st_g[cl] = st
        live = np.zeros(g, dtype=bool)
        live[cl[act]] = True
        z = np.zeros((g, x.shape[1]))
        for col in range(x.shape[1]):
            z[:, col] = np.bincount(cl, weights=infl[:, col], minlength=g)
    g_live = int(live.sum())
    g_h = np.bincount(st_g[live], minlength=h) if nested else np.zeros(h, np.int64)
    if nested:
        # per-stratum factor G_h/(G_h − 1)
        g_hg = g_h[st_g]
        fac = np.where(g_hg <= 1, 0.0, g_hg / np.maximum(g_hg - 1, 1))
        cov = (z * fac[:, None]).T @ z
        if np.any(g_h[:h] == 1):
            # A stratum with a single answer has no between-answer variance to measure: fall back
            # to its claims as if independent (W_h² s²_h / (n_h − 1)), never to zero.
            for s in np.flatnonzero(g_h == 1):
                rows = (st == s) & act
                nh = d.n_h[s]
                if d.w is None and d.fpc_scale is None:
                    dev = xk[rows] - mu_h[s]
                    cov += d.weights[s] ** 2 * (dev.T @ dev) / (nh * max(nh - 1.0, 1.0))
                else:
                    # the same, from the (weighted, corrected) influences: Σ u uᵀ·n_h/(n_h − 1)
                    u = infl[rows]
                    cov += (u.T @ u) * nh / max(nh - 1.0, 1.0)
        df = float(max(g_live - int(np.count_nonzero(g_h)), 1))
    else:
        cov = (g_live / max(g_live - 1, 1)) * (z.T @ z)
        df = float(max(g_live - 1, 1))
    return mu, cov, df


def _method(base: str, d: _Design, extra: str = "") -> str:
    parts = [base]
    if d.weights.size > 1:
        parts.append(f"weighted over {d.weights.size} strata by their share of the project (N_h/N)")
    if d.w is not None:
        parts.append(
            "each label weighted by 1/π, the inverse of the probability the queue drew it with "
            "(Hájek)"
        )
    if d.fpc_scale is not None:
        parts.append(
            f"finite-population corrected ({percent(d.sampled_share)} of the claims audited)"
        )
    if d.unseen:
        names = ", ".join(str(u) for u in d.unseen)
        parts.append(
            f"covers only the strata with gold: {percent(d.unseen_share)} of the project "
            f"(stratum {names}) has no audited claim and is not estimated"
        )
    if extra:
        parts.append(extra)
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _wilson_eff(theta: float, var: float, var0: float, df: float, g: int, confidence: float):
    """Wilson interval at the effective sample size n* = θ(1−θ)/max(V, V₀)·(z/t)².

    V₀ is the same estimator's variance with independent claims: the interval never credits
    clustering with more information than independent claims would give (design effect ≥ 1,
    Korn & Graubard 1998), while strata weights keep their own effect on n*.
    """
    z = z_value(confidence)
    t = float(student_t.ppf(0.5 + confidence / 2.0, df))
    if theta <= 0.0 or theta >= 1.0 or not var > 0.0:
        n_eff = float(g)  # no variation to measure clustering: each answer counted once
    else:
        n_eff = theta * (1.0 - theta) / max(var, var0 if np.isfinite(var0) else 0.0)
    n_star = n_eff * (z / t) ** 2
    centre = (theta + z**2 / (2 * n_star)) / (1 + z**2 / n_star)
    half = z * np.sqrt(theta * (1 - theta) / n_star + z**2 / (4 * n_star**2)) / (1 + z**2 / n_star)
    lo = 0.0 if theta <= 0.0 else float(min(max(centre - half, 0.0), theta))
    hi = 1.0 if theta >= 1.0 else float(max(min(centre + half, 1.0), theta))
    return lo, hi, n_eff


def _deff_text(deff: float, floored: bool = False) -> str:
    """`floored`: the interval took V₀ where V < V₀ (see `_wilson_eff`), which the text says, so
    "design effect 0.27" beside an effective size near the claims' count reads as it is."""
    if not np.isfinite(deff):
        return "design effect not measurable (a share of 0 or 1): each answer counted once"
    if floored and deff < 1.0 - 1e-9:
        return f"design effect {deff:.2f}, counted as 1: never narrower than independent claims"
    return f"design effect {deff:.2f}"


def _nan_estimate(method: str, d: _Design | None = None, n: int = 0) -> DesignEstimate:
    return DesignEstimate(
        value=NAN,
        lower=NAN,
        upper=NAN,
        method=method,
        design_effect=NAN,
        n_clusters=0 if d is None else d.n_clusters,
        n=n,
        n_strata=0 if d is None else int(d.weights.size),
        unseen_share=1.0 if d is None or not d.weights.size else d.unseen_share,
    )


def _undefined(method: str, like: DesignEstimate) -> DesignEstimate:
    """An estimate that cannot be made, saying why; its strata and unseen share are the
    audit's (from `like`, an input estimate), never the 1.0 of "nothing audited"."""
    return DesignEstimate(
        value=NAN,
        lower=NAN,
        upper=NAN,
        method=method[0].upper() + method[1:],
        design_effect=NAN,
        n_clusters=like.n_clusters,
        n=0,
        n_strata=like.n_strata,
        unseen_share=like.unseen_share if np.isfinite(like.unseen_share) else 0.0,
        extra={"undefined": True},
    )


def _ratio(
    num: np.ndarray,
    den: np.ndarray,
    d: _Design,
    confidence: float,
    what: str,
) -> DesignEstimate:
    """θ = Σ_h W_h mean_h(num) / Σ_h W_h mean_h(den), Wilson at the effective size."""
    n_claims = int(den[d.keep].sum())
    if n_claims == 0 or d.weights.size == 0:
        return _nan_estimate(f"No {what} to estimate from", d, n_claims)
    x = np.column_stack([num, den]).astype(float)
    active = den > 0
    mu, cov, df = _means_and_cov(x, d, active=active)
    _, cov0, _ = _means_and_cov(x, d, independent=True, active=active)
    g_dom = int(np.count_nonzero(np.bincount(d.cluster[d.keep & active], minlength=d.n_clusters)))
    theta = float(mu[0] / mu[1])
    grad = np.array([1.0 / mu[1], -theta / mu[1]])
    var = float(grad @ cov @ grad)
    var0 = float(grad @ cov0 @ grad)
    deff = var / var0 if var0 > 0 else NAN
    census = d.fpc_scale is not None and not np.any(d.fpc_scale[d.keep & active] > 0)
    if census:
        # every claim of the strata audited: the rate is the project's own, known exactly
        lo = hi = theta
        n_eff = float(n_claims)
        base = (
            f"Every claim audited ({n_claims} claims): the rate is known exactly, no sampling error"
        )
    else:
        lo, hi, n_eff = _wilson_eff(theta, var, var0, df, g_dom, confidence)
        size = (
            f"{n_eff:.0f} from {n_claims} audited claims"
            if d.fpc_scale is not None
            else f"{n_eff:.0f} of {n_claims} claims"
        )
        base = (
            f"Wilson interval at the effective sample size ({size}), "
            f"cluster-robust by answer ({g_dom} answers, {_deff_text(deff, floored=True)}), "
            f"t with {df:.0f} df"
        )
    return DesignEstimate(
        value=theta,
        lower=lo,
        upper=hi,
        method=_method(base, d),
        design_effect=deff,
        n_clusters=g_dom,
        n=n_claims,
        se=float(np.sqrt(max(var, 0.0))),  # rounding may leave -1e-18
        df=df,
        n_strata=int(d.weights.size),
        unseen_share=d.unseen_share,
        extra={
            "effective_n": n_eff,
            "unseen_strata": list(d.unseen),
            **({"weighted": True} if d.w is not None else {}),
            **({"fpc_share": d.sampled_share} if d.fpc_scale is not None else {}),
        },
    )


def _simple(value: float, ci: tuple[float, float], n: int, base: str) -> DesignEstimate:
    """Today's independent-claims figure, wrapped (one claim per answer, one stratum)."""
    v = float(value)
    return DesignEstimate(
        value=v,
        lower=float(ci[0]),
        upper=float(ci[1]),
        method=base[0].upper() + base[1:] + ".",
        design_effect=1.0,
        n_clusters=n,
        n=n,
        se=float(np.sqrt(v * (1.0 - v) / n)) if n else NAN,
        df=float("inf"),
        extra={"independent": True},
    )
