"""Active audit: where to spend the next human label, what it buys, and when the judge may decide.

Four pieces, pure numpy/scipy (no Django), each checked in ``tests/metrics/stats/test_active*.py``
against a hand derivation or an independent library:

* **Inclusion probabilities and the active estimate.** Each claim i gets a probability π_i
  proportional to the judge's uncertainty on it (the square root of its error variance,
  e.g. √(p(1 − p)) of its calibrated P(SUPPORTED)), floored so every claim can be drawn and
  scaled to the label budget (`inclusion_probabilities`). The queue serves claims in ascending
  u_i/π_i (u_i uniform; Ohlsson 1998, sequential Poisson sampling: stopping after any number of
  labels leaves the inclusion of each claim proportional to π_i), so the estimator weights each
  label by 1/π_i in the Hájek (ratio) form, which does not depend on the scale of π and hence on
  when labelling stopped (`active_ppi_mean`; Zrnic & Candès 2024, "Active Statistical
  Inference", arXiv:2403.03208).
* **Neyman allocation across strata** (`neyman_next_stratum`, `neyman_allocation`; Neyman 1934,
  Cochran 1977 §5.5; Fisch et al. 2024, stratified PPI, arXiv:2406.04291).
* **The forecast and the gain** (`labels_needed`, `labels_saved`, `confidence_informative`): from
  each design's per-label variance unit V₁, n* = V₁ z²/x².
* **Selective judging with a guarantee** (`selective_threshold`; Jung, Brahman & Choi 2025,
  "Trust or Escalate", arXiv:2407.18370): fixed-sequence testing of thresholds with exact
  binomial p-values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta as beta_dist
from scipy.stats import binom
from scipy.stats import t as student_t

from metrics.format import percent

from ._common import NAN, as_binary, as_label_array, check_confidence
from .design import DesignEstimate, _deff_text, _wilson_eff
from .intervals import wilson_interval
from .prevalence import _as_judge, ppi_mean_interval
from .ranking import auc_delong

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
    n = int(lab.sum())
    if n < 2:
        # one label has no spread to measure: no interval (never a zero-width one)
        return DesignEstimate(
            value=float(yl[0]) if n == 1 and f is None else NAN,
            low=NAN,
            high=NAN,
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
    if ids is None:
        cl, g_all = np.arange(big_n), big_n
    else:
        cl, uniq = pd.factorize(ids, use_na_sentinel=True)
        if (cl < 0).any():
            raise ValueError("cluster ids must not be missing (None/NaN)")
        g_all = uniq.size
    uniform = bool(np.ptp(p) == 0.0)
    own_answers = g_all == big_n
    if uniform and own_answers and (f is None or tune):
        return _uniform_today(yl, lab, f, n, big_n, confidence)

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
    df = float(max(g_lab - 1, 1))
    deff = var / var0 if var0 > 0 else NAN
    kish = big_w**2 / float(w @ w)
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
        low=float(lo),
        high=float(hi),
        method=method,
        design_effect=deff,
        n_clusters=g_lab,
        n=n,
        std_error=float(np.sqrt(var)),
        df=df,
        extra=extra,
    )


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
    labels = list(pd.unique(s.astype(object)))
    parts = []
    seen_n = 0
    unseen = []
    for value in labels:
        m = s.astype(object) == value
        if int(lab[m].sum()) < 2:
            unseen.append(value)
            continue
        parts.append((value, m))
        seen_n += int(m.sum())
    if not parts:
        return DesignEstimate(
            value=NAN,
            low=NAN,
            high=NAN,
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
        lab_h = lab[m]
        y_h = y_arr[m]
        if cen[m].any() or lab_h.all():
            # a census of the stratum: its mean is known
            est_value = float(y_h[lab_h].mean())
            v_h = v0_h = 0.0
            g_h = int(pd.unique(ids[m].astype(object)).size)
            lambdas[str(value)] = 0.0
        else:
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
            est_value = est.value
            v_h = est.std_error**2
            deff_h = est.design_effect
            v0_h = v_h / deff_h if np.isfinite(deff_h) and deff_h > 0 else v_h
            g_h = est.n_clusters
            lambdas[str(value)] = float(est.extra.get("lambda", 0.0))
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
        low=clip(theta - half),
        high=clip(theta + half),
        method=method + ".",
        design_effect=deff,
        n_clusters=g_total,
        n=int(lab.sum()),
        std_error=float(np.sqrt(max(var, 0.0))),
        df=df,
        n_strata=h,
        unseen_share=float(unseen_share),
        extra={"lambda": lambdas, "labelled": int(lab.sum()), "N": big_n, "weighted": True},
    )


def _uniform_today(yl, lab, f, n, big_n, confidence) -> DesignEstimate:
    """Constant π, one claim per answer: a simple random sample, today's figure exactly."""
    if f is None:
        k = int(yl.sum())
        lo, hi = wilson_interval(k, n, confidence)
        v = k / n
        return DesignEstimate(
            value=v,
            low=float(lo),
            high=float(hi),
            method=(
                f"Wilson interval on the {n} labels (uniform inclusion, one claim per answer: a "
                "simple random sample)."
            ),
            design_effect=1.0,
            n_clusters=n,
            n=n,
            std_error=float(np.sqrt(v * (1 - v) / n)),
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
        low=out["ci"][0],
        high=out["ci"][1],
        method=(
            f"PPI++ (uniform inclusion, one claim per answer: a simple random sample), "
            f"power-tuned λ={lam:.2f}, {n} labels of {big_n} claims, normal interval."
        ),
        design_effect=1.0,
        n_clusters=n,
        n=n,
        std_error=float(np.sqrt(var)),
        df=float("inf"),
        extra={"lambda": lam, "labelled": n, "N": big_n, "independent": True, "tuned": True},
    )


# --------------------------------------------------------------------------------------------
# 3. Neyman allocation across strata


def _strata_arrays(n_h, big_n_h, sd_h) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.asarray(n_h, dtype=float).reshape(-1)
    big = np.asarray(big_n_h, dtype=float).reshape(-1)
    sd = np.asarray(sd_h, dtype=float).reshape(-1)
    if not (n.size == big.size == sd.size):
        raise ValueError(
            f"n_h, N_h and sd_h differ in length: {n.size}, {big.size}, {sd.size} strata"
        )
    if big.size == 0:
        raise ValueError("N_h is empty: no strata")
    for name, arr in (("n_h", n), ("N_h", big), ("sd_h", sd)):
        if not np.isfinite(arr).all() or (arr < 0).any():
            raise ValueError(f"{name} must hold non-negative numbers (no NaN)")
    if big.sum() <= 0:
        raise ValueError("N_h sums to zero: no claims in any stratum")
    return n, big, sd


def neyman_next_stratum(n_h: Iterable[float], N_h: Iterable[float], sd_h: Iterable[float]) -> int:  # noqa: N803
    """The stratum where one more label reduces the stratified mean's variance the most.

    Formula: V = Σ_h W_h² S_h² (1/n_h − 1/N_h), W_h = N_h/N; one more label in h lowers V by
    Δ_h = W_h² S_h² (1/n_h − 1/(n_h + 1)) (the finite-population term cancels). Returns
    argmax_h Δ_h over the strata with a claim left to label (n_h < N_h); a stratum with no label
    yet (n_h = 0, Δ infinite) is served first, the largest N_h first. Greedy serving by Δ_h reaches
    the Neyman allocation n_h ∝ N_h S_h (the marginal gains are equalised). ``sd_h`` should never
    be 0 for a stratum that can still be wrong (a stratum whose two labels agree has S_h = 0 and
    would never be served again): pass a floored or prior-shrunk sd. Ties go to the lower index.
    Raises ``ValueError`` when every stratum is fully labelled.
    Source: Neyman (1934); Cochran (1977) §5.5; Fisch et al. (2024), arXiv:2406.04291 §4
    (allocation for stratified PPI).
    """
    n, big, sd = _strata_arrays(n_h, N_h, sd_h)
    open_ = n < big
    if not open_.any():
        raise ValueError("every stratum is fully labelled (n_h ≥ N_h): no claim left to serve")
    empty = open_ & (n == 0)
    if empty.any():
        return int(np.flatnonzero(empty)[np.argmax(big[empty])])
    w = big / big.sum()
    gain = np.where(open_, w**2 * sd**2 * (1.0 / np.maximum(n, 1) - 1.0 / (n + 1)), -np.inf)
    return int(np.argmax(gain))


def neyman_allocation(
    N_h: Iterable[float],  # noqa: N803
    sd_h: Iterable[float],
    n: int,
    *,
    minimum: int = 0,
) -> np.ndarray:
    """Neyman allocation of n labels: n_h ∝ N_h S_h, whole numbers, capped at N_h, Σ n_h = n.

    Formula: a_h = n·N_h S_h / Σ N_k S_k, with the strata whose a_h would pass N_h set to N_h,
    and those below ``minimum`` set to min(minimum, N_h), the rest re-allocated (water-filling);
    then floors, the remaining labels going to the largest fractional parts (Hamilton's rule;
    ties to the larger stratum). All S_h = 0 gives the proportional allocation n_h ∝ N_h. With
    ``minimum`` 0 a stratum with S_h = 0 gets no label (Neyman's optimum; the estimate then
    leaves it unseen); ``minimum=2`` keeps every stratum's variance estimable.
    Source: Neyman (1934); Cochran (1977) §5.5 and §5.8 (n_h > N_h).
    """
    _, big, sd = _strata_arrays(np.zeros(np.size(N_h)), N_h, sd_h)
    total = int(n)
    if total != n or total < 0:
        raise ValueError(f"n must be a whole number of labels ≥ 0, got {n!r}")
    if total > big.sum():
        raise ValueError(f"n = {total} labels is more than the {big.sum():g} claims of the strata")
    if int(minimum) != minimum or minimum < 0:
        raise ValueError(f"minimum must be a whole number ≥ 0, got {minimum!r}")
    lower = np.minimum(float(minimum), np.floor(big))
    if lower.sum() > total:
        raise ValueError(
            f"minimum = {minimum} labels per stratum needs {lower.sum():g}, more than n = {total}"
        )
    size = big * sd if (big * sd).sum() > 0 else big.copy()
    alloc = np.zeros(big.size)
    capped = np.zeros(big.size, bool)
    floored = size <= 0  # no size: only its minimum
    while True:
        free = ~capped & ~floored
        left = total - big[capped].sum() - lower[floored].sum()
        alloc[capped] = big[capped]
        alloc[floored] = lower[floored]
        if not free.any():
            break
        alloc[free] = max(left, 0.0) * size[free] / size[free].sum()
        over = free & (alloc > big)
        under = free & (alloc < lower)
        if not (over.any() or under.any()):
            break
        capped |= over
        floored |= under & ~over
    whole = np.minimum(np.floor(alloc + 1e-9), big)
    short = total - int(whole.sum())
    while short > 0:
        room = whole < big
        frac = np.where(room, alloc - whole, -np.inf)
        order = np.lexsort((-big, -frac))  # largest remainder first, then the larger stratum
        for h in order[: min(short, int(room.sum()))]:
            whole[h] += 1
            short -= 1
        alloc = whole.copy()  # any further round: by size only
    return whole.astype(np.int64)


# --------------------------------------------------------------------------------------------
# 4. the forecast


DESIGNS = ("uniform_gold", "uniform_ppi", "active", "stratified")
_DESIGN_NAMES = {
    "uniform_gold": "uniform sampling, gold only",
    "uniform_ppi": "uniform sampling, PPI++",
    "active": "active sampling (π ∝ the judge's error sd), PPI++",
    "stratified": "stratified sampling, Neyman allocation",
}
MIN_LABELS = 10


@dataclass(frozen=True)
class Forecast:
    """How many labels one design needs to reach ±half_width, from the current labels.

    ``labels_total`` is n* = V₁·t²/(x² − t²·V_∞) (None when fewer than `MIN_LABELS` labels, or
    when ±x cannot be reached by labels alone because V_∞, the judge's own sampling error over
    the project's claims, is already above it); ``labels_more`` = max(0, n* − labels so far);
    ``half_width_now`` the design's half-width at the current number of labels,
    t·√(V₁/n + V_∞). ``variance_unit`` is V₁ (the variance of one label's worth of the
    estimate), ``variance_floor`` V_∞.
    """

    design: str
    half_width: float
    labels_total: int | None
    labels_more: int | None
    half_width_now: float | None
    labelled: int
    variance_unit: float
    variance_floor: float
    design_effect: float
    confidence: float
    method: str
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _weighted_parts(y_l, w, ids_l):
    """Hájek mean of y over the labels, its CR1 variance by answer and the independent one."""
    big_w = float(w.sum())
    mean = float(w @ y_l) / big_w
    e = w * (y_l - mean) / big_w
    v0 = float(e @ e) * y_l.size / max(y_l.size - 1, 1)
    cl, uniq = pd.factorize(ids_l)
    z = np.bincount(cl, weights=e, minlength=uniq.size)
    g = uniq.size
    v = g / max(g - 1, 1) * float(z @ z)
    return mean, v, v0


def _deff(v: float, v0: float) -> float:
    return max(v / v0, 1.0) if v0 > 0 and np.isfinite(v / v0) else 1.0


def _whole_labels(x: float) -> int:
    """Labels as a whole number, rounded up: ceil, but a quotient one rounding error above a
    whole number (35.00000000000001 for 35 on some CPUs' summation order) is that number."""
    return int(np.ceil(x - 1e-9 * max(1.0, abs(x))))


def labels_needed(
    half_width: float,
    design: str,
    y: Iterable[Any],
    labelled: Iterable[bool],
    prediction: Iterable[Any] | None = None,
    pi: Iterable[float] | None = None,
    cluster: Iterable[Any] | None = None,
    strata: Iterable[Any] | None = None,
    *,
    design_pi: Iterable[float] | None = None,
    confidence: float = 0.95,
    fpc: bool = False,
) -> Forecast:
    """The forecast "about N more labels to reach ±x (95%)" for one design, from the labels so far.

    Arrays are per claim over the project (as `active_ppi_mean`); ``pi`` the probabilities the
    current labels were drawn with (None: uniform), so every population quantity below is a
    Hájek-weighted estimate (ŵ_i = N·(1/π_i)/Σ_L 1/π) whatever design drew the labels;
    ``design_pi`` the probabilities the active design would use (default ``pi``).

    Per-label variance unit V₁ and floor V_∞ of each design (the estimator's variance with n
    labels is V₁/n + V_∞):
      uniform_gold   V₁ = p(1 − p)·deff_y                       V_∞ = 0
      uniform_ppi    V₁ = S²(y − λf)·deff_e                     V_∞ = λ²·V_cl(mean_N f)
      active         V₁ = deff_e·(1/N²)Σ_i (e_i − ē)²/q_i,     V_∞ = λ²·V_cl(mean_N f)
                     q_i = π*_i/Σπ* (π* = design_pi), e = y − λf
      stratified     V₁ = (Σ_h W_h S_h)²·deff_y                 V_∞ = 0
    deff_· is the clustering design effect of the weighted mean (CR1 by answer over independent,
    never below 1); λ for the PPI designs is the value in [0, 1] (grid of 0.05) that needs the
    fewest labels. Then n* = V₁ t²/(x² − t² V_∞) with t the Student quantile at the labelled
    answers' df (≥ z), and, when n* is below the labels so far, at the df of the answers
    expected among n* labels: no design is promised fewer labels than its own variance formula
    gives.
    ``fpc``: the project's N claims are the population, so n labels leave variance
    (1 − n/N)·V₁/n + V_∞ and n* becomes V₁t²/(x² − t²V_∞ + t²V₁/N) — Cochran's n₀/(1 + n₀/N)
    (§4.4) — never more than N. Without it (the population taken as infinite), a forecast past
    the project's claims says so: "more labels than the project has claims".
    With fewer than `MIN_LABELS` labels the forecast is "n/a" (None).
    Source: Cochran (1977) §4.4 (sample size for a given precision), §5.5 (Neyman);
    Kish (1965) design effect; Zrnic & Candès (2024) for the active variance.
    """
    check_confidence(confidence)
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    x = float(half_width)
    if not (np.isfinite(x) and 0.0 < x < 1.0):
        raise ValueError(f"half_width must be in (0, 1), got {half_width!r}")
    lab = np.asarray(
        labelled if isinstance(labelled, np.ndarray) else list(labelled), dtype=bool
    ).reshape(-1)
    big_n = lab.size
    n = int(lab.sum())
    p = np.ones(big_n) if pi is None else _check_pi(pi)
    if p.size != big_n:
        raise ValueError(f"pi has {p.size} entries for {big_n} claims")
    ids = np.arange(big_n) if cluster is None else as_label_array(cluster)
    if ids.size != big_n:
        raise ValueError(f"cluster has {ids.size} entries for {big_n} claims")
    name = _DESIGN_NAMES[design]
    if n < MIN_LABELS:
        return Forecast(
            design, x, None, None, None, n, NAN, NAN, NAN, confidence,
            f"{name}: n/a, fewer than {MIN_LABELS} labels to estimate the variance from.",
        )  # fmt: skip
    y_arr = np.asarray(y, dtype=object).reshape(-1)
    if y_arr.size != big_n:
        raise ValueError(f"y has {y_arr.size} entries for {big_n} claims")
    y_l = as_binary(
        np.asarray(y, dtype=float)[lab]
        if isinstance(y, np.ndarray) and y.dtype.kind in "biuf"
        else y_arr[lab],
        "y",
    )
    w = 1.0 / p[lab]
    w_hat = big_n * w / w.sum()
    ids_l = ids[lab]
    g_lab = int(pd.unique(ids_l).size)
    df = float(max(g_lab - 1, 1))
    t = float(student_t.ppf(0.5 + confidence / 2.0, df))
    floor_v = 0.0
    extra: dict[str, Any] = {}
    if design in ("uniform_gold", "stratified"):
        mean, v, v0 = _weighted_parts(y_l, w, ids_l)
        deff = _deff(v, v0)
        if design == "uniform_gold":
            unit = mean * (1.0 - mean) * deff
        else:
            if strata is None:
                raise ValueError("strata are required for the stratified design")
            s = as_label_array(strata)
            if s.size != big_n:
                raise ValueError(f"strata has {s.size} entries for {big_n} claims")
            codes, uniq = pd.factorize(s)
            h = uniq.size
            big_h = np.bincount(codes, minlength=h).astype(float)
            c_l = codes[lab]
            wsum = np.bincount(c_l, weights=w, minlength=h)
            m1 = np.bincount(c_l, weights=w * y_l, minlength=h)
            with np.errstate(invalid="ignore", divide="ignore"):
                p_h = m1 / wsum
            cnt = np.bincount(c_l, minlength=h)
            # a stratum with fewer than 2 labels borrows the pooled p(1 − p)
            s_h = np.where(cnt >= 2, np.sqrt(np.clip(p_h * (1 - p_h), 0, None)), 0.0)
            s_h = np.where(cnt >= 2, s_h, np.sqrt(mean * (1 - mean)))
            w_h = big_h / big_h.sum()
            unit = float(w_h @ s_h) ** 2 * deff
            extra = {"sd_h": dict(zip(uniq.tolist(), s_h.tolist(), strict=True))}
        lam = None
    else:
        if prediction is None:
            raise ValueError(f"prediction (the judge's P(SUPPORTED)) is required for {design}")
        f = _as_judge(prediction, "prediction")
        if f.size != big_n:
            raise ValueError(f"prediction has {f.size} entries for {big_n} claims")
        cl_all, uniq_all = pd.factorize(ids)
        g_all = uniq_all.size
        dev_f = f - f.mean()
        zf = np.bincount(cl_all, weights=dev_f / big_n, minlength=g_all)
        v_fbar = g_all / max(g_all - 1, 1) * float(zf @ zf)
        f_l = f[lab]
        if design == "active":
            dp = p if design_pi is None else _check_pi(design_pi)
            if dp.size != big_n:
                raise ValueError(f"design_pi has {dp.size} entries for {big_n} claims")
            q_l = dp[lab] / dp.sum()
        best = None
        for lam_try in np.linspace(0.0, 1.0, 21):
            e = y_l - lam_try * f_l
            _, v, v0 = _weighted_parts(e, w, ids_l)
            deff = _deff(v, v0)
            e_bar = float(w_hat @ e) / big_n
            if design == "uniform_ppi":
                u = float(w_hat @ (e - e_bar) ** 2) / big_n * deff
            else:
                u = deff * float(w_hat @ ((e - e_bar) ** 2 / q_l)) / big_n**2
            fl_v = lam_try**2 * v_fbar
            room = x**2 - t**2 * fl_v
            need = u * t**2 / room if room > 0 else np.inf
            if best is None or need < best[0] - 1e-12:
                best = (need, u, fl_v, deff, float(lam_try))
        _, unit, floor_v, deff, lam = best
        extra = {"lambda": lam}
    fin = 1.0 / big_n if fpc else 0.0  # the finite-population term V₁/N
    now = float(t * np.sqrt(max(unit * (1.0 / n - fin), 0.0) + floor_v))
    room = x**2 - t**2 * floor_v
    total = (
        _whole_labels(unit * t**2 / (room + t**2 * unit * fin)) if room > 0 and unit > 0 else None
    )
    # Fewer labels than now means fewer answers, so a larger t: the quantile at the answers
    # expected among n* labels (g/n of them), never below today's (a fixed point in a few steps)
    for _ in range(5):
        if total is None or total >= n:
            break
        df_star = float(max(round(total * g_lab / n) - 1, 1))
        t_star = float(student_t.ppf(0.5 + confidence / 2.0, df_star))
        room = x**2 - t_star**2 * floor_v
        new = (
            _whole_labels(unit * t_star**2 / (room + t_star**2 * unit * fin)) if room > 0 else None
        )
        if new == total:
            break
        total = new if new is None else max(new, total)
    if unit == 0.0 and x**2 - t**2 * floor_v > 0:
        total = n  # no variation seen in the labels: nothing to forecast beyond what is done
    more = None if total is None else max(total - n, 0)
    lam_text = "" if lam is None else f", λ={lam:.2f}"
    if total is None:
        verdict = (
            f"±{x:.3f} cannot be reached by labels alone: the judge's own sampling error over "
            f"the project is already ±{t * np.sqrt(floor_v):.3f}"
        )
    else:
        verdict = f"about {more} more labels ({total} in all) to reach ±{x:.3f}"
    tail = ""
    if fpc:
        tail = f", finite-population corrected over the project's {big_n} claims"
    elif total is not None and total > big_n:
        answers = int(pd.unique(ids).size)
        more_answers = _whole_labels((total - big_n) * answers / big_n)
        tail = (
            f"; more labels than the project has claims ({big_n}): import about "
            f"{more_answers} more answers or accept a wider interval"
        )
    method = (
        f"{name}: {verdict} ({100 * confidence:.0f}%), from the {n} labels so far "
        f"(±{now:.3f} now; per-label variance {unit:.4f}{lam_text}, design effect {deff:.2f}"
        f"{tail}); a forecast from the current variance estimates, not a promise."
    )
    return Forecast(
        design=design,
        half_width=x,
        labels_total=total,
        labels_more=more,
        half_width_now=now,
        labelled=n,
        variance_unit=float(unit),
        variance_floor=float(floor_v),
        design_effect=float(deff),
        confidence=confidence,
        method=method,
        extra=extra,
    )


def forecasts(
    half_width: float,
    y: Iterable[Any],
    labelled: Iterable[bool],
    prediction: Iterable[Any] | None = None,
    pi: Iterable[float] | None = None,
    cluster: Iterable[Any] | None = None,
    strata: Iterable[Any] | None = None,
    *,
    design_pi: Iterable[float] | None = None,
    confidence: float = 0.95,
) -> dict[str, Forecast]:
    """`labels_needed` for every design the inputs allow (PPI designs need a prediction,
    stratified needs strata, active needs π), keyed by design name.
    Source: as `labels_needed`."""
    out = {}
    for design in DESIGNS:
        if design in ("uniform_ppi", "active") and prediction is None:
            continue
        if design == "active" and pi is None and design_pi is None:
            continue
        if design == "stratified" and strata is None:
            continue
        out[design] = labels_needed(
            half_width, design, y, labelled, prediction, pi, cluster, strata,
            design_pi=design_pi, confidence=confidence,
        )  # fmt: skip
    return out


# --------------------------------------------------------------------------------------------
# 5. selective judging (Trust or Escalate)


@dataclass(frozen=True)
class SelectiveResult:
    """The judge may decide alone at confidence ≥ ``threshold`` (None: nowhere certified)."""

    threshold: float | None
    accepted_share: float
    agreement: float
    lower_bound: float
    n_accepted: int
    n: int
    target: float
    delta: float
    tests: list[dict[str, float]]
    method: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def selective_threshold(
    confidence: Iterable[float],
    agree: Iterable[Any],
    target: float = 0.9,
    delta: float = 0.1,
    *,
    thresholds: Iterable[float] | str = "deciles",
) -> SelectiveResult:
    """A confidence threshold above which the judge agrees with gold at ≥ target, w.p. ≥ 1 − δ.

    On the audited claims (``confidence`` the judge's confidence in its verdict, ``agree`` 1 when
    its verdict matched gold): candidate thresholds t_1 > t_2 > … (``"deciles"``, the default:
    the confidence deciles 0.9, 0.8, …, 0.0; ``"distinct"``: every distinct confidence; or an
    explicit list), tested in that fixed order. At t_j, H0: P(agree | conf ≥ t_j) < target,
    with the exact binomial p-value p_j = P(Bin(m_j, target) ≥ k_j) (m_j audited claims at or
    above t_j, k_j agreeing; Clopper–Pearson one-sided). Testing continues while p_j ≤ δ; the
    threshold is the last rejected t_j (None when the first test fails). Fixed-sequence testing
    controls the family-wise error at δ without a multiplicity correction, so with probability
    ≥ 1 − δ over the audit, the agreement among claims at or above the threshold is ≥ target.
    The lower bound reported is the one-sided (1 − δ) Clopper–Pearson bound there.

    Assumption: the audited claims are exchangeable draws from the claims the threshold will be
    applied to (a uniform random audit of the project). Claims of one answer are correlated; the
    test counts claims, not answers, so the guarantee is over claims drawn like these and is
    optimistic when one answer contributes many claims (then audit more answers, fewer claims
    each). Source: Jung, Brahman & Choi (2025), "Trust or Escalate", ICLR, arXiv:2407.18370,
    §3 (fixed-sequence testing); Bauer (1991); Bates et al. (2021), "Learn then Test"; Clopper &
    Pearson (1934).
    """
    conf = np.asarray(
        confidence if isinstance(confidence, np.ndarray) else list(confidence), dtype=float
    ).reshape(-1)
    ok = as_binary(agree, "agree")
    if conf.size != ok.size:
        raise ValueError(f"confidence and agree differ in length: {conf.size} vs {ok.size}")
    if np.isnan(conf).any():
        raise ValueError("confidence contains NaN")
    tgt, dl = float(target), float(delta)
    if not 0.0 < tgt < 1.0:
        raise ValueError(f"target must be strictly between 0 and 1, got {target!r}")
    if not 0.0 < dl < 1.0:
        raise ValueError(f"delta must be strictly between 0 and 1, got {delta!r}")
    n = conf.size
    if isinstance(thresholds, str):
        if thresholds == "deciles":
            cands = np.quantile(conf, np.linspace(0.9, 0.0, 10)) if n else np.empty(0)
        elif thresholds == "distinct":
            cands = np.unique(conf)[::-1]
        else:
            raise ValueError(
                f"thresholds must be 'deciles', 'distinct' or numbers, not {thresholds!r}"
            )
    else:
        cands = np.sort(np.asarray(list(thresholds), dtype=float))[::-1]
    cands = np.unique(cands)[::-1]
    order = np.argsort(-conf, kind="stable")
    conf_desc, ok_desc = conf[order], ok[order]
    cum = np.cumsum(ok_desc)
    tests: list[dict[str, float]] = []
    chosen = None
    for t in cands:
        m = int(np.searchsorted(-conf_desc, -t, side="right"))  # claims with conf ≥ t
        k = int(cum[m - 1]) if m else 0
        pval = float(binom.sf(k - 1, m, tgt)) if m else 1.0
        lower = float(beta_dist.ppf(dl, k, m - k + 1)) if k > 0 else 0.0
        tests.append({"threshold": float(t), "n": m, "agree": k, "p_value": pval, "lower": lower})
        if pval > dl:
            break
        chosen = tests[-1]
    what = (
        f"fixed-sequence testing over {len(cands)} thresholds, exact binomial, "
        f"P(agreement ≥ {percent(tgt)}) ≥ {percent(1 - dl)} over audited claims drawn like "
        f"these ({n} audited claims, assumed exchangeable: claims of one answer are counted as "
        "independent)"
    )
    if chosen is None:
        return SelectiveResult(
            None, 0.0, NAN, NAN, 0, n, tgt, dl, tests,
            f"No threshold certified: the judge may decide no claim alone; {what}.",
        )  # fmt: skip
    m, k = int(chosen["n"]), int(chosen["agree"])
    return SelectiveResult(
        threshold=chosen["threshold"],
        accepted_share=m / n,
        agreement=k / m,
        lower_bound=chosen["lower"],
        n_accepted=m,
        n=n,
        target=tgt,
        delta=dl,
        tests=tests,
        method=(
            f"The judge may decide alone at confidence ≥ {chosen['threshold']:.3f} "
            f"({percent(m / n)} of audited claims; agreement {percent(k / m, 1)}, lower "
            f"{percent(1 - dl)} bound {percent(chosen['lower'], 1)}); {what}."
        ),
    )


# --------------------------------------------------------------------------------------------
# 6. honesty about gains


@dataclass(frozen=True)
class LabelsSaved:
    """Labels the chosen design used against uniform gold-only at the same width (not a promise)."""

    design: str
    labels_used: int
    labels_gold_only: int | None
    saved: int | None
    ratio: float
    half_width: float | None
    method: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def labels_saved(chosen: Forecast, gold_only: Forecast) -> LabelsSaved:
    """How many labels the chosen design saved against uniform gold-only, on this project.

    Formula: at the half-width h the chosen design reaches now with n labels
    (``chosen.half_width_now``), uniform gold-only would need n_gold = V₁_gold·t²/h² labels
    (V₁_gold = ``gold_only.variance_unit``, the same t); saved = n_gold − n, ratio = n/n_gold.
    Both variance units are estimated from this project's labels (`labels_needed`): a
    measurement on this project, not a promise for another. Negative savings are reported as
    they are (the chosen design did worse). Source: Kish (1965) (relative efficiency of designs);
    Zrnic & Candès (2024) §5 (label savings of active inference).
    """
    if gold_only.design != "uniform_gold":
        raise ValueError(f"gold_only must be the uniform_gold forecast, got {gold_only.design!r}")
    h = chosen.half_width_now
    n = chosen.labelled
    if h is None or not np.isfinite(gold_only.variance_unit) or h <= 0:
        return LabelsSaved(
            chosen.design, n, None, None, NAN, h,
            "Labels saved: n/a (too few labels to compare the designs).",
        )  # fmt: skip
    # h = t·√(V₁/n + V_∞) and gold-only reaches h at n_gold = V₁_gold·t²/h²: the t cancels
    n_gold = _whole_labels(
        gold_only.variance_unit / (chosen.variance_unit / n + chosen.variance_floor)
    )
    saved = n_gold - n
    ratio = n / n_gold if n_gold > 0 else NAN
    return LabelsSaved(
        design=chosen.design,
        labels_used=n,
        labels_gold_only=n_gold,
        saved=saved,
        ratio=ratio,
        half_width=h,
        method=(
            f"At ±{h:.3f} the {_DESIGN_NAMES[chosen.design]} used {n} labels; uniform gold-only "
            f"would have needed about {n_gold} ({'saved' if saved >= 0 else 'cost'} "
            f"{abs(saved)} labels, {percent(ratio)} of gold-only's), measured on this "
            "project's labels from the two designs' variance estimates, not a promise."
        ),
    )


def confidence_informative(
    confidence: Iterable[float], error: Iterable[Any], level: float = 0.95
) -> tuple[float, bool]:
    """Does the judge's confidence tell its errors apart? (AUC, informative).

    AUC = P(confidence of an error < confidence of a correct verdict) (ties ½), i.e. the AUC of
    −confidence as a score for ``error`` (1 where the judge's verdict differed from gold), with
    DeLong's Wald interval (`ranking.auc_delong`). Informative only when the interval's lower
    end is above 0.5: an interval covering 0.5 means active sampling can do no better than
    uniform, and a confidence higher on errors (interval below 0.5) is worse than none.
    nan, False without both errors and correct verdicts. Source: DeLong, DeLong &
    Clarke-Pearson (1988); Zrnic & Candès (2024) §5 (gains need informative uncertainty).
    """
    conf = np.asarray(
        confidence if isinstance(confidence, np.ndarray) else list(confidence), dtype=float
    ).reshape(-1)
    err = as_binary(error, "error")
    if conf.size != err.size:
        raise ValueError(f"confidence and error differ in length: {conf.size} vs {err.size}")
    if np.isnan(conf).any():
        raise ValueError("confidence contains NaN")
    is_error = err > 0.5
    out = auc_delong(-conf[is_error], -conf[~is_error], level, interval="wald")
    return out.value, bool(np.isfinite(out.lower) and out.lower > 0.5)
