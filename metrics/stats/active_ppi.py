"""Inclusion probabilities, sequential Poisson keys and the active (and stratified active) PPI++ mean."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from metrics.format import percent

from ._common import NAN, as_binary, as_label_array, check_confidence
from .design_core import DesignEstimate, _deff_text, _wilson_eff
from .intervals import wilson_interval
from .prevalence import _as_judge, ppi_mean_interval

# --------------------------------------------------------------------------------------------
# 1. inclusion probabilities


def inclusion_probabilities(error_sd: Iterable[float], budget: float, floor: float = 0.05):
    """Per-claim inclusion probabilities π_i ∝ the judge's error sd, floored, summing to the budget.

    Formula: s_i = max(sd_i, floor · mean(sd)); π_i = min(1, c · s_i) with c the unique constant
    making Σ π_i = budget (water-filling: the claims whose c·s_i would pass 1 are capped at 1 and
    the rest rescaled). budget ≥ N gives every claim π = 1; sd all zero gives the uniform
    budget/N. O(N log N) (one sort), a few ms at 100k claims.

    Why √(error variance): the active estimator's variance is Σ_i e_i²/π_i (e_i the judge's
    error on claim i) under Σ π_i = n, minimised by π_i ∝ |e_i|; its expectation given the
    judge's output is minimised by π_i ∝ √E[e_i² | f_i] (Zrnic & Candès 2024, §3 and
    Proposition 1). The floor keeps every π_i > 0 so that 1/π_i is bounded (their "mixing with
    the uniform rule", which guards against an overconfident judge).
    Source: Zrnic & Candès (2024), arXiv:2403.03208; Särndal, Swensson & Wretman (1992) §3.6
    for π ∝ size with the cap at 1.
    """
    sd = np.asarray(error_sd if isinstance(error_sd, np.ndarray) else list(error_sd), dtype=float)
    sd = sd.reshape(-1)
    if sd.size == 0:
        raise ValueError("error_sd is empty: no claims to draw from")
    if np.isnan(sd).any() or not np.isfinite(sd).all():
        raise ValueError("error_sd contains NaN or infinite values")
    if (sd < 0).any():
        raise ValueError("error_sd must be non-negative (a standard deviation)")
    try:
        b = float(budget)
    except (TypeError, ValueError):
        raise ValueError(f"budget must be a number of labels, got {budget!r}") from None
    if not np.isfinite(b) or b <= 0:
        raise ValueError(f"budget must be a positive number of labels, got {budget!r}")
    fl = float(floor)
    if not (np.isfinite(fl) and 0.0 < fl <= 1.0):
        raise ValueError(f"floor must be in (0, 1], got {floor!r}")
    n = sd.size
    if b >= n:
        return np.ones(n)
    mean = float(sd.mean())
    if mean <= 0.0:
        return np.full(n, b / n)
    s = np.maximum(sd, fl * mean)
    # Water-filling by rounds: cap at 1 whatever c·s reaches 1, rescale the rest; each round is
    # O(N) and real data need a handful. Pathological sizes fall back to the exact sort.
    capped = np.zeros(n, bool)
    for _ in range(64):
        c = (b - np.count_nonzero(capped)) / float(s[~capped].sum())
        new = ~capped & (c * s >= 1.0)
        if not new.any():
            pi = np.minimum(c * s, 1.0)
            pi[capped] = 1.0
            return pi
        capped |= new
    order = np.argsort(-s, kind="stable")
    desc = s[order]
    # k = number of capped claims; c_k = (b − k) / Σ_{j ≥ k} desc_j; valid when c_k·desc_k ≤ 1
    suffix = np.cumsum(desc[::-1])[::-1]
    c_k = (b - np.arange(n)) / suffix
    first = int(np.argmax(c_k * desc <= 1.0 + 1e-12))  # monotone: False … False True … True
    pi = np.minimum(1.0, c_k[first] * s)
    pi[order[:first]] = 1.0
    return pi


def sequential_poisson_keys(pi: Iterable[float], seed: int | None = None, u=None) -> np.ndarray:
    """The queue's serving keys u_i/π_i (serve ascending): Ohlsson's sequential Poisson sampling.

    Stopping after the first n claims in this order draws each claim with probability ≈ n·π_i/Σπ
    (exactly proportional to π_i in the limit), so the Hájek estimate of `active_ppi_mean` is
    valid whenever labelling stops. ``u`` (uniforms in (0, 1), one per claim) may be given, as the
    queue stores them; else drawn from ``numpy.random.default_rng(seed)``.
    Source: Ohlsson (1998), "Sequential Poisson Sampling", J. Official Statistics 14:149–162.
    """
    p = _check_pi(pi)
    if u is None:
        u = np.random.default_rng(seed).random(p.size)
    u = np.asarray(u, dtype=float).reshape(-1)
    if u.size != p.size:
        raise ValueError(f"u has {u.size} entries for {p.size} claims")
    return u / p


def _check_pi(pi: Iterable[float]) -> np.ndarray:
    p = np.asarray(pi if isinstance(pi, np.ndarray) else list(pi), dtype=float).reshape(-1)
    if p.size and (np.isnan(p).any() or p.min() <= 0.0 or p.max() > 1.0):
        raise ValueError("pi must hold inclusion probabilities in (0, 1] (no NaN, none zero)")
    return p


# --------------------------------------------------------------------------------------------
# 2. the active estimate


def active_ppi_mean(
    y: Iterable[Any],
    labelled: Iterable[bool],
    prediction: Iterable[Any] | None,
    pi: Iterable[float],
    cluster: Iterable[Any] | None = None,
    confidence: float = 0.95,
    tune: bool = True,
) -> DesignEstimate:
    """Active inference: the mean of gold y over all N claims from labels drawn with prob. π.

    Arrays are per claim, over all N claims of the project: ``y`` the gold 0/1 (read only where
    ``labelled``; elsewhere any value, e.g. nan), ``prediction`` the judge's f_i ∈ [0, 1] on
    every claim (None: gold only, the inverse-probability estimate), ``pi`` the probability each
    claim was drawn with (any scale: only ratios matter), ``cluster`` the answer id.

    Formula (w_i = 1/π_i, sums over labelled claims L, W = Σ_L w_i):
      θ̂ = λ·mean_N(f) + Σ_L w_i (y_i − λ f_i) / W            (Hájek form of Zrnic & Candès' eq. 3)
      influence of claim i: φ_i = λ(f_i − f̄)/N + 1[i ∈ L]·w_i·((y_i − ȳ_w) − λ(f_i − f̄_w))/W
      V = G/(G − 1)·Σ_g (Σ_{i∈g} φ_i)²                        (CR1 by answer; Binder 1983)
    λ (``tune``) minimises V over [0, 1] (V is quadratic in λ: λ = −Σ A_g B_g / Σ B_g², the
    power tuning of PPI++ for this estimator, clustered); λ = 1 without tuning; λ = 0 (no
    prediction) is the Hájek IPW mean of the labels. Interval: with a prediction θ̂ ± t·√V,
    t with G_L − 1 df (G_L answers with a label), clipped to [0, 1]; gold only, the Wilson
    interval at the effective size n* = θ̂(1 − θ̂)/V·(z/t)² (as `design_proportion`).
    When π is constant and every claim is its own answer the figure is exactly today's:
    `ppi_mean_interval` on (labelled, unlabelled) with tuned λ, or the Wilson interval on the labels.
    Source: Zrnic & Candès (2024), "Active Statistical Inference", arXiv:2403.03208;
    Angelopoulos, Duchi & Zrnic (2023) PPI++; Hájek (1971); Ohlsson (1998); Miller (2024),
    arXiv:2411.00640 for clustered errors.
    """
    check_confidence(confidence)
    lab, p, yl, f, ids = _active_inputs(y, labelled, prediction, pi, cluster)
    big_n = lab.size
    n = int(lab.sum())
    if n < 2:
        return _too_few_labels(yl, f, n, big_n)
    cl, g_all = _answer_codes(ids, big_n)
    uniform = bool(np.ptp(p) == 0.0)
    own_answers = g_all == big_n
    if uniform and own_answers and (f is None or tune):
        return _uniform_today(yl, lab, f, n, big_n, confidence)
    fit = _active_fit(yl, lab, f, p, cl, g_all, tune)
    lam, theta, var, var0, g_lab = fit
    df = float(max(g_lab - 1, 1))
    deff = var / var0 if var0 > 0 else NAN
    w = 1.0 / p[lab]
    kish = float(w.sum()) ** 2 / float(w @ w)
    answers = "" if ids is None else f", clustered by answer ({g_lab} labelled answers of {g_all})"
    weights = "Hájek weights 1/π" if not uniform else "uniform inclusion (equal weights)"
    extra = {
        "lambda": lam,
        "labelled": n,
        "N": big_n,
        "answers": g_all,
        "labelled_answers": g_lab,
        "kish_n": kish,
        "tuned": bool(tune and f is not None),
    }
    if f is None:
        lo, hi, n_eff = _wilson_eff(theta, var, var0, df, g_lab, confidence)
        extra["effective_n"] = n_eff
        method = (
            f"Inverse-probability estimate from gold alone ({weights}, {n} labels of {big_n} "
            f"claims){answers}; Wilson interval at the effective sample size ({n_eff:.0f}), "
            f"{_deff_text(deff)}, t with {df:.0f} df."
        )
        value = theta
    else:
        t = float(student_t.ppf(0.5 + confidence / 2.0, df))
        half = t * float(np.sqrt(var))
        value = float(min(max(theta, 0.0), 1.0))
        lo = float(min(max(theta - half, 0.0), 1.0))
        hi = float(min(max(theta + half, 0.0), 1.0))
        tuned = f"power-tuned λ={lam:.2f}" if tune else f"λ={lam:.0f} (not tuned)"
        method = (
            f"Active inference (Zrnic & Candès 2024), {weights}, {tuned}, {n} labels of "
            f"{big_n} claims{answers}; {_deff_text(deff)}, t with {df:.0f} df."
        )
    return DesignEstimate(
        value=float(value),
        lower=float(lo),
        upper=float(hi),
        method=method,
        design_effect=deff,
        n_clusters=g_lab,
        n=n,
        se=float(np.sqrt(var)),
        df=df,
        extra=extra,
    )


def _active_inputs(y, labelled, prediction, pi, cluster):
    """(labelled mask, π, labelled y as 0/1, judge f or None, cluster ids or None), each
    checked to have one entry per claim."""
    lab = np.asarray(
        labelled if isinstance(labelled, np.ndarray) else list(labelled), dtype=bool
    ).reshape(-1)
    big_n = lab.size
    p = _check_pi(pi)
    if p.size != big_n:
        raise ValueError(f"pi has {p.size} entries for {big_n} claims")
    y_all = np.asarray(y if isinstance(y, np.ndarray) else list(y), dtype=object).reshape(-1)
    if y_all.size != big_n:
        raise ValueError(f"y has {y_all.size} entries for {big_n} claims")
    yl = as_binary(
        np.asarray(y, dtype=float)[lab]
        if isinstance(y, np.ndarray) and y.dtype.kind in "biuf"
        else y_all[lab],
        "y",
    )
    f = None
    if prediction is not None:
        f = _as_judge(prediction, "prediction")
        if f.size != big_n:
            raise ValueError(f"prediction has {f.size} entries for {big_n} claims")
    ids = None if cluster is None else as_label_array(cluster)
    if ids is not None and ids.size != big_n:
        raise ValueError(f"cluster has {ids.size} entries for {big_n} claims")
    return lab, p, yl, f, ids


def _too_few_labels(yl, f, n: int, big_n: int) -> DesignEstimate:
    """Fewer than two labels: one label has no spread to measure, so no interval (never a
    zero-width one)."""
    return DesignEstimate(
        value=float(yl[0]) if n == 1 and f is None else NAN,
        lower=NAN,
        upper=NAN,
        method=(
            "No labelled claim yet: nothing to estimate from."
            if n == 0
            else "One labelled claim: too few to estimate a variance; label more."
        ),
        design_effect=NAN,
        n_clusters=n,
        n=n,
        extra={"labelled": n, "N": big_n},
    )


def _answer_codes(ids, big_n: int) -> tuple[np.ndarray, int]:
    """Each claim's answer code and the number of answers (every claim its own without ids)."""
    if ids is None:
        return np.arange(big_n), big_n
    cl, uniq = pd.factorize(ids, use_na_sentinel=True)
    if (cl < 0).any():
        raise ValueError("cluster ids must not be missing (None/NaN)")
    return cl, uniq.size


def _active_fit(yl, lab, f, p, cl, g_all, tune):
    """(λ, θ̂, V, V₀, G_L): the active estimate, its CR1 variance by answer, the variance as if
    independent, and the number of answers with a label (the docstring's formulas)."""
    big_n = lab.size
    n = int(lab.sum())
    w = 1.0 / p[lab]
    big_w = float(w.sum())
    ybar_w = float(w @ yl) / big_w
    a = np.zeros(big_n)
    a[lab] = w * (yl - ybar_w) / big_w
    cl_lab = cl[lab]
    g_lab = int(np.count_nonzero(np.bincount(cl_lab, minlength=g_all)))
    big_a = np.bincount(cl, weights=a, minlength=g_all)
    if f is None:
        lam, theta = 0.0, ybar_w
        b = np.zeros(big_n)
        big_b = np.zeros(g_all)
    else:
        fl = f[lab]
        fbar, fbar_w = float(f.mean()), float(w @ fl) / big_w
        b = (f - fbar) / big_n
        b[lab] -= w * (fl - fbar_w) / big_w
        big_b = np.bincount(cl, weights=b, minlength=g_all)
        if tune:
            bb = float(big_b @ big_b)
            lam = float(np.clip(-float(big_a @ big_b) / bb, 0.0, 1.0)) if bb > 0 else 0.0
        else:
            lam = 1.0
        theta = lam * fbar + ybar_w - lam * fbar_w
    z = big_a + lam * big_b
    phi = a + lam * b
    # units carrying influence: answers with a label (gold only) or every answer (with a judge)
    if lam > 0.0:
        g_fac, n_fac, phi0 = g_all, big_n, phi
    else:
        g_fac, n_fac, phi0 = g_lab, n, phi[lab]
    var = g_fac / max(g_fac - 1, 1) * float(z @ z)
    var0 = n_fac / max(n_fac - 1, 1) * float(phi0 @ phi0)
    return lam, theta, var, var0, g_lab


def stratified_active_ppi_mean(
    y: Iterable[Any],
    labelled: Iterable[bool],
    prediction: Iterable[Any] | None,
    weights: Iterable[float],
    strata: Iterable[Any] | None = None,
    cluster: Iterable[Any] | None = None,
    confidence: float = 0.95,
    census: Iterable[bool] | None = None,
) -> DesignEstimate:
    """Active inference within strata: the report's PPI++ under an active (1/π) audit design.

    Arrays are per claim over the N claims the figure describes. ``weights`` are each labelled
    claim's 1/π (any scale within a stratum: only ratios matter; unlabelled claims' entries are
    not read). ``census`` marks strata (by any claim of theirs) whose every claim is labelled —
    e.g. the claims labelled under an earlier design before the active queue took over: their
    mean is known exactly (no variance).

    Formula: θ̂ = Σ_h W_h θ̂_h, W_h = N_h/N over the strata with two labels or more, each θ̂_h
    `active_ppi_mean` on the stratum's claims (Hájek form of Zrnic & Candès' active inference,
    power-tuned λ_h, CR1 by answer); V = Σ_h W_h² V_h (strata drawn independently; an answer
    whose claims span strata is counted in each, which the sum treats as independent — the
    strata here are design phases, which answers rarely span); CI θ̂ ± t_{G−H}·√V, clipped.
    With one stratum it is exactly `active_ppi_mean`. Strata with fewer than two labels are not
    estimated (``unseen_share``). Source: Zrnic & Candès (2024) arXiv:2403.03208; Cochran
    (1977) §5.3 (the stratified combination); Fisch et al. (2024) arXiv:2406.04291.
    """
    check_confidence(confidence)
    lab, w, s, ids, y_arr, f, cen = _stratified_inputs(
        y, labelled, prediction, weights, strata, cluster, census
    )
    big_n = lab.size
    parts, seen_n, unseen = _seen_strata(s, lab)
    if not parts:
        return DesignEstimate(
            value=NAN,
            lower=NAN,
            upper=NAN,
            method="Fewer than 2 labelled claims in every stratum: not estimated.",
            design_effect=NAN,
            n_clusters=0,
            n=int(lab.sum()),
            extra={"labelled": int(lab.sum()), "N": big_n},
        )
    if len(parts) == 1 and not unseen and not cen.any():
        pi = np.where(lab, 1.0 / np.where(lab, w, 1.0), 1.0)
        pi[~lab] = float(np.mean(pi[lab]))
        return active_ppi_mean(
            np.where(lab, y_arr, 0.0), lab, f, pi, cluster=ids, confidence=confidence
        )
    theta = var = var0 = 0.0
    g_total = 0
    lambdas = {}
    for value, m in parts:
        weight = int(m.sum()) / seen_n
        est_value, v_h, v0_h, g_h, lambdas[str(value)] = _stratum_part(
            m, lab, w, y_arr, f, ids, cen, confidence
        )
        theta += weight * est_value
        var += weight**2 * v_h
        var0 += weight**2 * v0_h
        g_total += g_h
    h = len(parts)
    df = float(max(g_total - h, 1))
    t = float(student_t.ppf(0.5 + confidence / 2.0, df))
    half = t * float(np.sqrt(max(var, 0.0)))
    unseen_share = 1.0 - seen_n / big_n if big_n else 0.0
    deff = var / var0 if var0 > 0 else NAN
    method = (
        f"Active inference (Zrnic & Candès 2024) within {h} strata, each label weighted by 1/π "
        f"(Hájek), power-tuned λ per stratum, {int(lab.sum())} labels of {big_n} claims, "
        f"clustered by answer ({_deff_text(deff)}), t with {df:.0f} df"
    )
    if cen.any():
        method += "; claims labelled under the earlier design form a stratum known exactly"
    if unseen:
        method += (
            f"; {percent(unseen_share)} of the claims are in strata with fewer than two labels "
            f"({', '.join(str(u) for u in unseen)}) and are not estimated"
        )
    clip = lambda v: float(min(max(v, 0.0), 1.0))  # noqa: E731
    return DesignEstimate(
        value=clip(theta),
        lower=clip(theta - half),
        upper=clip(theta + half),
        method=method + ".",
        design_effect=deff,
        n_clusters=g_total,
        n=int(lab.sum()),
        se=float(np.sqrt(max(var, 0.0))),
        df=df,
        n_strata=h,
        unseen_share=float(unseen_share),
        extra={"lambda": lambdas, "labelled": int(lab.sum()), "N": big_n, "weighted": True},
    )


def _stratified_inputs(y, labelled, prediction, weights, strata, cluster, census):
    """(labelled, weights, strata, clusters, y, f or None, census) per claim, the weights and
    strata checked to have one entry per claim."""
    lab = np.asarray(labelled if isinstance(labelled, np.ndarray) else list(labelled), bool)
    lab = lab.reshape(-1)
    big_n = lab.size
    w = np.asarray(weights if isinstance(weights, np.ndarray) else list(weights), float)
    w = w.reshape(-1)
    if w.size != big_n:
        raise ValueError(f"weights has {w.size} entries for {big_n} claims")
    if not np.all(np.isfinite(w[lab]) & (w[lab] > 0)):
        raise ValueError("weights of labelled claims must be finite and positive (1/π)")
    s = np.zeros(big_n, np.int64) if strata is None else as_label_array(strata)
    if s.size != big_n:
        raise ValueError(f"strata has {s.size} entries for {big_n} claims")
    ids = np.arange(big_n) if cluster is None else as_label_array(cluster)
    y_arr = np.asarray(y, dtype=float).reshape(-1)
    f = None if prediction is None else np.asarray(prediction, dtype=float).reshape(-1)
    cen = np.zeros(big_n, bool) if census is None else np.asarray(census, bool).reshape(-1)
    return lab, w, s, ids, y_arr, f, cen


def _seen_strata(s, lab):
    """The strata with at least two labels as (value, mask), their claims, and the others."""
    parts = []
    seen_n = 0
    unseen = []
    for value in list(pd.unique(s.astype(object))):
        m = s.astype(object) == value
        if int(lab[m].sum()) < 2:
            unseen.append(value)
            continue
        parts.append((value, m))
        seen_n += int(m.sum())
    return parts, seen_n, unseen


def _stratum_part(m, lab, w, y_arr, f, ids, cen, confidence):
    """(mean, V, V₀, answers, λ) of one stratum: known exactly when a census, else the active
    estimate within it."""
    lab_h = lab[m]
    y_h = y_arr[m]
    if cen[m].any() or lab_h.all():
        # a census of the stratum: its mean is known
        return float(y_h[lab_h].mean()), 0.0, 0.0, int(pd.unique(ids[m].astype(object)).size), 0.0
    pi_h = np.where(lab_h, 1.0 / np.where(lab_h, w[m], 1.0), 1.0)
    pi_h[~lab_h] = float(np.mean(pi_h[lab_h]))
    est = active_ppi_mean(
        np.where(lab_h, y_h, 0.0),
        lab_h,
        None if f is None else f[m],
        pi_h,
        cluster=ids[m],
        confidence=confidence,
    )
    v_h = est.se**2
    deff_h = est.design_effect
    v0_h = v_h / deff_h if np.isfinite(deff_h) and deff_h > 0 else v_h
    return est.value, v_h, v0_h, est.n_clusters, float(est.extra.get("lambda", 0.0))


def _uniform_today(yl, lab, f, n, big_n, confidence) -> DesignEstimate:
    """Constant π, one claim per answer: a simple random sample, today's figure exactly."""
    if f is None:
        k = int(yl.sum())
        lo, hi = wilson_interval(k, n, confidence)
        v = k / n
        return DesignEstimate(
            value=v,
            lower=float(lo),
            upper=float(hi),
            method=(
                f"Wilson interval on the {n} labels (uniform inclusion, one claim per answer: a "
                "simple random sample)."
            ),
            design_effect=1.0,
            n_clusters=n,
            n=n,
            se=float(np.sqrt(v * (1 - v) / n)),
            df=float("inf"),
            extra={"lambda": 0.0, "labelled": n, "N": big_n, "independent": True},
        )
    out = ppi_mean_interval(yl, f[lab], f[~lab], confidence)
    lam = out["lambda"]
    fr = f[~lab]
    rect = yl - lam * f[lab]
    var = float(np.var(rect)) / n + (lam**2 * float(np.var(fr)) / fr.size if fr.size else 0.0)
    return DesignEstimate(
        value=out["value"],
        lower=out["ci"][0],
        upper=out["ci"][1],
        method=(
            f"PPI++ (uniform inclusion, one claim per answer: a simple random sample), "
            f"power-tuned λ={lam:.2f}, {n} labels of {big_n} claims, normal interval."
        ),
        design_effect=1.0,
        n_clusters=n,
        n=n,
        se=float(np.sqrt(var)),
        df=float("inf"),
        extra={"lambda": lam, "labelled": n, "N": big_n, "independent": True, "tuned": True},
    )
