"""Design-based rates: a proportion, a two-phase rate, sensitivity/specificity, Rogan–Gladen."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from ._common import NAN, as_binary, as_label_array, check_confidence
from .design_core import (
    _CENSUS,
    DesignEstimate,
    _deff_text,
    _Design,
    _design,
    _means_and_cov,
    _method,
    _nan_estimate,
    _ratio,
    _simple,
    _undefined,
)
from .intervals import wilson_interval
from .prevalence import (
    _lang_reiczigel,
    rogan_gladen,
    rogan_gladen_interval,
)

# --------------------------------------------------------------------------------------------
# public functions


def design_proportion(
    outcome: Iterable[Any],
    answer_ids: Iterable[Any] | None = None,
    strata: Iterable[Any] | None = None,
    stratum_sizes: Mapping[Any, float] | None = None,
    confidence: float = 0.95,
    *,
    weights: Iterable[float] | None = None,
    fpc: bool = False,
) -> DesignEstimate:
    """A pooled claim rate (faithfulness, gold-only, any 0/1 share) under the audit's design.

    Formula: θ̂ = Σ_h (N_h/N)·p̂_h, p̂_h = Σ_{i∈h} y_i / n_h (one stratum: the pooled share);
    V = CR1 linearised variance clustered by answer (module docstring); Wilson interval at
    n* = θ̂(1 − θ̂)/V·(z/t_{G−H})². ``stratum_sizes`` maps each stratum to its claims in the project
    (N_h); strata listed there with no gold are reported in ``unseen_share``, not estimated.
    ``weights`` (per claim, 1/π): an inverse-probability (active) design, p̂_h the Hájek mean
    Σ w y / Σ w; ``fpc``: the finite-population correction (see `_design`).
    With one stratum and one claim per answer (equal weights, no correction): exactly
    `wilson_interval`.
    Source: Binder (1983); Liang & Zeger (1986); Korn & Graubard (1998); Dean & Pagano (2015);
    Miller (2024) arXiv:2411.00640; Cochran (1977) §5.3 for the stratified mean; Hájek (1971).
    """
    check_confidence(confidence)
    y = as_binary(outcome, "outcome")
    d = _design(y.size, answer_ids, strata, stratum_sizes, weights=weights, fpc=fpc)
    if d.simple:
        k, n = int(y.sum()), int(y.size)
        return _simple(
            k / n, wilson_interval(k, n, confidence), n, "Wilson interval, one claim per answer"
        )
    return _ratio(y, np.ones_like(y), d, confidence, "claims")


def two_phase_rate(
    gold: Iterable[Any],
    judge_on_gold: Iterable[Any],
    judge_counts: Mapping[Any, float],
    answer_ids: Iterable[Any] | None = None,
    confidence: float = 0.95,
) -> DesignEstimate:
    """The true supported rate from an audit stratified by the judge's own verdict (two-phase).

    Phase one: the judge labels every claim (``judge_counts``: claims per verdict in the project).
    Phase two: gold on a sample drawn per verdict, at any rates. Formula:
    π̂ = Σ_v (N_v/N)·PPV_v with PPV_v = the gold-supported share among audited claims the judge put
    in verdict v (its predictive value); variance as `design_proportion` (answers span verdicts,
    so CR1 over answers, t with G − 1 df). A verdict with no audited claim is not extrapolated
    over (``unseen_share``). Source: Neyman (1938) double sampling for stratification;
    Cochran (1977) §12.2; DESIGN.md "Sampling".
    """
    return design_proportion(
        gold, answer_ids, as_label_array(judge_on_gold), judge_counts, confidence
    )


def design_sensitivity_specificity(
    gold: Iterable[Any],
    judge: Iterable[Any],
    answer_ids: Iterable[Any] | None = None,
    strata: Iterable[Any] | None = None,
    stratum_sizes: Mapping[Any, float] | None = None,
    confidence: float = 0.95,
    *,
    weights: Iterable[float] | None = None,
    fpc: bool = False,
) -> dict[str, Any]:
    """The judge's sensitivity and specificity as ratio estimators clustered by answer.

    Formula: se = Σ_h W_h·#(judge S ∧ gold S)_h/n_h ÷ Σ_h W_h·#(gold S)_h/n_h, sp likewise over
    gold-unsupported claims; CR1 linearised variance of the ratio (gradient (1/μ_b, −θ/μ_b));
    Wilson at the effective size. With strata (e.g. the judge's verdict) the weights N_h/n_h undo
    the oversampling; ``weights`` (1/π per claim) undo an active design's, as Hájek ratios
    Σ w·TP / Σ w·P within each stratum; ``fpc`` as `design_proportion`. With one stratum and one
    claim per answer (equal weights, no correction): exactly today's Wilson intervals
    (`sensitivity_specificity`). Returns ``{"sensitivity", "specificity": DesignEstimate,
    "youden_j": float, "covariance": Cov(se, sp)}``. Source: Yerushalmy (1947); Binder (1983) for
    the linearised ratio; Miller (2024).
    """
    check_confidence(confidence)
    g = as_binary(gold, "gold")
    j = as_binary(judge, "judge")
    if g.shape != j.shape:
        raise ValueError(f"gold and judge differ in length: {g.size} vs {j.size}")
    d = _design(g.size, answer_ids, strata, stratum_sizes, weights=weights, fpc=fpc)
    cols = np.column_stack([g * j, g, (1 - g) * (1 - j), 1 - g])
    out: dict[str, Any] = {}
    if d.simple:
        tp, pos = int(cols[:, 0].sum()), int(cols[:, 1].sum())
        tn, neg = int(cols[:, 2].sum()), int(cols[:, 3].sum())
        for name, k, n in (("sensitivity", tp, pos), ("specificity", tn, neg)):
            if n == 0:
                out[name] = _nan_estimate(f"No gold claims for {name}", d, 0)
            else:
                out[name] = _simple(
                    k / n,
                    wilson_interval(k, n, confidence),
                    n,
                    "Wilson interval, one claim per answer",
                )
        out["covariance"] = 0.0
    else:
        out["sensitivity"] = _ratio(cols[:, 0], cols[:, 1], d, confidence, "gold-supported claims")
        out["specificity"] = _ratio(
            cols[:, 2], cols[:, 3], d, confidence, "gold-unsupported claims"
        )
        out["covariance"] = _se_sp_cov(cols, d)
    out["youden_j"] = out["sensitivity"].value + out["specificity"].value - 1.0
    return out


def _se_sp_cov(cols: np.ndarray, d: _Design) -> float:
    if d.weights.size == 0 or cols[d.keep, 1].sum() == 0 or cols[d.keep, 3].sum() == 0:
        return NAN
    mu, cov, _ = _means_and_cov(cols, d)
    se, sp = mu[0] / mu[1], mu[2] / mu[3]
    ga = np.array([1 / mu[1], -se / mu[1], 0.0, 0.0])
    gb = np.array([0.0, 0.0, 1 / mu[3], -sp / mu[3]])
    return float(ga @ cov @ gb)


def design_rogan_gladen(
    judge_all: Iterable[Any],
    answer_ids_all: Iterable[Any] | None,
    gold: Iterable[Any],
    judge_on_gold: Iterable[Any],
    answer_ids_gold: Iterable[Any] | None = None,
    strata: Iterable[Any] | None = None,
    stratum_sizes: Mapping[Any, float] | None = None,
    confidence: float = 0.95,
    *,
    judge_is_census: bool = False,
    weights_gold: Iterable[float] | None = None,
    fpc: bool = False,
) -> DesignEstimate:
    """Rogan–Gladen with the clustered uncertainty of p_obs, se and sp.

    ``judge_all`` are the judge's verdicts on every judged claim (p_obs, clustered by
    ``answer_ids_all``); ``gold``/``judge_on_gold`` the audit (se, sp, clustered by
    ``answer_ids_gold``, optionally stratified). Formula: π̂ = (p_obs + sp − 1)/(se + sp − 1),
    clipped; interval: the Lang–Reiczigel adjusted Wald interval (today's method) evaluated at
    each input's effective sample size θ_k(1 − θ_k)/V_k (as its Wilson interval) and with t_{G−H}
    in place of z —
    the Korn–Graubard device applied to each of the three binomial inputs — plus the
    within-answer covariance of se and sp by the delta method (−2π(1 − π)·Cov(se, sp)/J² added to
    the squared half-width / t²), which Lang–Reiczigel, built for independent samples, lacks.
    With one claim per answer everywhere and one
    stratum: exactly `rogan_gladen_interval` (Lang–Reiczigel). ``judge_is_census=True`` says
    the judge labelled every claim of the project and the target is the project's own rate:
    p_obs then carries no sampling error (an unbounded effective size); the default keeps
    today's treatment, p_obs as a sample. Source: Rogan & Gladen (1978);
    Lang & Reiczigel (2014); Korn & Graubard (1998).
    """
    check_confidence(confidence)
    ja = as_binary(judge_all, "judge_all")
    pa = design_proportion(ja, answer_ids_all, confidence=confidence)
    sesp = design_sensitivity_specificity(
        gold, judge_on_gold, answer_ids_gold, strata, stratum_sizes, confidence,
        weights=weights_gold, fpc=fpc,
    )  # fmt: skip
    se, sp = sesp["sensitivity"], sesp["specificity"]
    if not (ja.size and se.n and sp.n):
        return _undefined("Rogan–Gladen needs judged claims and gold of both kinds", se)
    point = rogan_gladen(pa.value, se.value, sp.value)
    if np.isnan(point):
        return _undefined(
            f"Rogan–Gladen is undefined: the judge is no better than chance on this audit "
            f"(J = se + sp − 1 = {se.value + sp.value - 1:.2f} ≤ 0)",
            se,
        )
    weighted_or_fpc = bool(se.extra.get("weighted") or se.extra.get("fpc_share"))
    if (
        not judge_is_census
        and not weighted_or_fpc
        and all(est.extra.get("independent") for est in (pa, se, sp))
    ):
        return _rg_independent(ja, pa, se, sp, point, confidence)
    effs, df = _rg_effective_sizes(pa, se, sp, judge_is_census)
    t = float(student_t.ppf(0.5 + confidence / 2.0, df))
    (k, m), (ks, ms), (kp, mp) = effs
    lo_a, hi_a, j2 = _lang_reiczigel(k, m, ks, ms, kp, mp, t)
    if not float(j2) > 0.0:
        return _undefined(
            "Rogan–Gladen is undefined after the Lang–Reiczigel adjustment: the judge is barely "
            "better than chance on this audit",
            se,
        )
    j = se.value + sp.value - 1.0
    # Claims of one answer inform both se and sp: add their covariance by the delta method,
    # ∂π/∂se = −π/J, ∂π/∂sp = (1 − π)/J (with verdict strata it is large and negative, and
    # without it the interval would be several times too wide).
    cov = sesp["covariance"] if np.isfinite(sesp["covariance"]) else 0.0
    lo, hi = _rg_with_covariance(lo_a, hi_a, t, point, cov, j)
    var, var0 = _rg_variances(point, pa, se, sp, cov, j, judge_is_census)
    deff = var / var0 if var0 > 0 else NAN
    judged = "every claim, a census" if judge_is_census else f"{pa.n} claims worth {m:.0f}"
    base = (
        f"Rogan–Gladen, Lang–Reiczigel interval at effective sample sizes (judged: {judged}; "
        f"gold-supported: {se.n} claims worth {ms:.0f}; gold-unsupported: {sp.n} claims worth "
        f"{mp:.0f}), clustered by answer ({_deff_text(deff)}), t with {df:.0f} df"
    )
    return DesignEstimate(
        value=point,
        lower=min(lo, point),
        upper=max(hi, point),
        method=_method(base, _rg_design_of(se)),
        design_effect=deff,
        n_clusters=se.n_clusters,
        n=se.n + sp.n,
        se=float(np.sqrt(max(var, 0.0))),  # rounding may leave -1e-18
        df=df,
        n_strata=se.n_strata,
        unseen_share=se.unseen_share,
        extra={"se_sp_covariance": sesp["covariance"], "judged_answers": pa.n_clusters},
    )


def _rg_independent(ja, pa, se, sp, point, confidence) -> DesignEstimate:
    """One claim per answer everywhere: today's Lang–Reiczigel interval on the counts."""
    k, m = int(ja.sum()), int(ja.size)
    ks, ms = round(se.value * se.n), se.n
    kp, mp = round(sp.value * sp.n), sp.n
    lo, hi = rogan_gladen_interval(k, m, ks, ms, kp, mp, confidence, "lang-reiczigel")
    return DesignEstimate(
        value=point,
        lower=lo,
        upper=hi,
        method="Rogan–Gladen, Lang–Reiczigel interval, one claim per answer.",
        design_effect=1.0,
        n_clusters=pa.n_clusters,
        n=m,
    )


def _rg_with_covariance(lo_a, hi_a, t, point, cov, j) -> tuple[float, float]:
    """The Lang–Reiczigel interval widened (or narrowed) by −2π(1 − π)·Cov(se, sp)/J² on its
    squared half-width / t², clipped to [0, 1]."""
    centre, sd2 = (float(lo_a) + float(hi_a)) / 2.0, ((float(hi_a) - float(lo_a)) / (2 * t)) ** 2
    sd2 = max(sd2 - 2.0 * point * (1.0 - point) * cov / j**2, 1e-12)
    lo = float(min(max(centre - t * np.sqrt(sd2), 0.0), 1.0))
    hi = float(min(max(centre + t * np.sqrt(sd2), 0.0), 1.0))
    return lo, hi


def _rg_effective_sizes(pa, se, sp, judge_is_census):
    """((k, m) at the effective size of p_obs, se and sp), and the smallest of their df."""
    effs = []
    dfs = []
    for est in (pa, se, sp):
        # Kish's effective size of the figure (θ(1−θ)/V, as its own Wilson interval uses)
        n_eff = float(est.extra.get("effective_n", est.n))
        if est is pa and judge_is_census:
            n_eff = _CENSUS
        effs.append((est.value * n_eff, n_eff))
        if np.isfinite(est.df) and not (est is pa and judge_is_census):
            dfs.append(est.df)
    return effs, (min(dfs) if dfs else np.inf)


def _rg_variances(point, pa, sens, spec, cov, j, judge_is_census) -> tuple[float, float]:
    """The delta-method variance of π̂ with the se/sp covariance, and the same as if independent."""
    v_p = 0.0 if judge_is_census else pa.se**2
    var = (
        v_p
        + point**2 * sens.se**2
        + (1 - point) ** 2 * spec.se**2
        - 2.0 * point * (1.0 - point) * cov
    ) / j**2
    var0 = (
        (v_p / pa.design_effect if v_p > 0 and pa.design_effect > 0 else 0.0)
        + point**2 * sens.se**2 / sens.design_effect
        + (1 - point) ** 2 * spec.se**2 / spec.design_effect
    ) / j**2
    return var, var0


def _rg_design_of(se: DesignEstimate) -> _Design:
    """The design the audit's sensitivity was estimated under, for the method text."""
    return _Design(
        cluster=np.empty(0, np.int64),
        stratum=np.empty(0, np.int64),
        keep=np.empty(0, bool),
        weights=np.ones(se.n_strata),
        n_h=np.ones(se.n_strata),
        labels=[],
        unseen=list(se.extra.get("unseen_strata", [])),
        unseen_share=se.unseen_share,
        n_clusters=se.n_clusters,
        nested=True,
        g_h=np.zeros(se.n_strata, np.int64),
        w=np.ones(1) if se.extra.get("weighted") else None,
        fpc_scale=np.ones(1) if se.extra.get("fpc_share") else None,
        sampled_share=float(se.extra.get("fpc_share") or 0.0),
    )
