"""The forecast of labels needed per design, the labels a design saves, and whether the judge's
confidence is informative."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from metrics.format import percent

from ._common import NAN, as_binary, as_label_array, check_confidence
from .active_ppi import _check_pi
from .prevalence import _as_judge
from .ranking import auc_delong

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
    lab, p, ids = _forecast_design(labelled, pi, cluster)
    big_n = lab.size
    n = int(lab.sum())
    name = _DESIGN_NAMES[design]
    if n < MIN_LABELS:
        return Forecast(
            design, x, None, None, None, n, NAN, NAN, NAN, confidence,
            f"{name}: n/a, fewer than {MIN_LABELS} labels to estimate the variance from.",
        )  # fmt: skip
    y_l = _forecast_labels(y, lab)
    w = 1.0 / p[lab]
    ids_l = ids[lab]
    g_lab = int(pd.unique(ids_l).size)
    t = float(student_t.ppf(0.5 + confidence / 2.0, float(max(g_lab - 1, 1))))
    floor_v = 0.0
    lam = None
    if design in ("uniform_gold", "stratified"):
        mean, v, v0 = _weighted_parts(y_l, w, ids_l)
        deff = _deff(v, v0)
        if design == "uniform_gold":
            unit, extra = mean * (1.0 - mean) * deff, {}
        else:
            unit, extra = _stratified_unit(strata, lab, w, y_l, mean, deff)
    else:
        unit, floor_v, deff, lam = _ppi_unit(
            design, prediction, design_pi, p, lab, ids, y_l, w, x, t
        )
        extra = {"lambda": lam}
    fin = 1.0 / big_n if fpc else 0.0  # the finite-population term V₁/N
    now = float(t * np.sqrt(max(unit * (1.0 / n - fin), 0.0) + floor_v))
    total = _forecast_total(unit, floor_v, fin, x, t, n, g_lab, confidence)
    method = _forecast_method(
        name, x, t, n, total, now, unit, floor_v, deff, lam, fpc, ids, confidence
    )
    return Forecast(
        design=design,
        half_width=x,
        labels_total=total,
        labels_more=None if total is None else max(total - n, 0),
        half_width_now=now,
        labelled=n,
        variance_unit=float(unit),
        variance_floor=float(floor_v),
        design_effect=float(deff),
        confidence=confidence,
        method=method,
        extra=extra,
    )


def _forecast_design(labelled, pi, cluster) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The forecast's labelled mask, drawing probabilities and clusters, checked per claim."""
    lab = np.asarray(
        labelled if isinstance(labelled, np.ndarray) else list(labelled), dtype=bool
    ).reshape(-1)
    big_n = lab.size
    p = np.ones(big_n) if pi is None else _check_pi(pi)
    if p.size != big_n:
        raise ValueError(f"pi has {p.size} entries for {big_n} claims")
    ids = np.arange(big_n) if cluster is None else as_label_array(cluster)
    if ids.size != big_n:
        raise ValueError(f"cluster has {ids.size} entries for {big_n} claims")
    return lab, p, ids


def _forecast_labels(y, lab: np.ndarray) -> np.ndarray:
    """The labelled claims' outcomes y as 0/1, with y checked to have one entry per claim."""
    big_n = lab.size
    y_arr = np.asarray(y, dtype=object).reshape(-1)
    if y_arr.size != big_n:
        raise ValueError(f"y has {y_arr.size} entries for {big_n} claims")
    return as_binary(
        np.asarray(y, dtype=float)[lab]
        if isinstance(y, np.ndarray) and y.dtype.kind in "biuf"
        else y_arr[lab],
        "y",
    )


def _stratified_unit(strata, lab, w, y_l, mean, deff) -> tuple[float, dict[str, Any]]:
    """V₁ of the stratified design, (Σ_h W_h S_h)²·deff_y, and the per-stratum S_h."""
    big_n = lab.size
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
    return unit, {"sd_h": dict(zip(uniq.tolist(), s_h.tolist(), strict=True))}


def _ppi_unit(design, prediction, design_pi, p, lab, ids, y_l, w, x, t):
    """(V₁, V_∞, deff, λ) of a PPI design at the λ on the 0.05 grid needing the fewest labels."""
    big_n = lab.size
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
    w_hat = big_n * w / w.sum()
    ids_l = ids[lab]
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
    return best[1:]


def _forecast_total(unit, floor_v, fin, x, t, n, g_lab, confidence) -> int | None:
    """n* = V₁t²/(x² − t²V_∞ + t²V₁·fin), at the df of the answers expected among n* labels
    when n* is below the labels so far; None when labels alone cannot reach ±x."""
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
    return total


def _forecast_method(name, x, t, n, total, now, unit, floor_v, deff, lam, fpc, ids, confidence):
    """The forecast's sentence: how many more labels, or why labels alone cannot reach ±x."""
    big_n = ids.size
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
    return (
        f"{name}: {verdict} ({100 * confidence:.0f}%), from the {n} labels so far "
        f"(±{now:.3f} now; per-label variance {unit:.4f}{lam_text}, design effect {deff:.2f}"
        f"{tail}); a forecast from the current variance estimates, not a promise."
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


@dataclass(frozen=True)
class ClaimsBound:
    """A forecast held against the claims that exist (`forecast_within_claims`)."""

    claims: int
    answers: int
    unlabelled: int
    reachable: bool
    labels_more: int | None
    answers_more: int | None
    method: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def forecast_within_claims(forecast: Forecast, *, claims: int, answers: int) -> ClaimsBound:
    """Whether the labels a forecast asks for exist: a claim is labelled once, so at most the
    N claims present (those of the system, or systems, the forecast is over) can be labelled.

    n* is the forecast's `labels_total`. With the finite-population correction (``fpc``) n* =
    n₀/(1 + n₀/N) ≤ N, so the target is always within the claims present: label n* − n more.
    Without it the estimate speaks for the system's answers beyond the ones imported, n* = n₀
    may exceed N, and then the claims must number at least n*: import about
    A_more = ⌈(n* − N)·A/N⌉ more answers (A answers hold the N claims, N/A claims each), and
    label every new claim as well as the N − n left. n* None (labels alone cannot reach ±x, or
    too few labels to forecast): not reachable, nothing to count.
    Source: Cochran (1977) §4.4 (n₀/(1 + n₀/N) with the finite population of N units).
    """
    big_n, big_a = int(claims), int(answers)
    if big_n < 1 or big_a < 1 or big_a > big_n:
        raise ValueError(
            f"claims and answers must be 1 ≤ answers ≤ claims, got {claims}, {answers}"
        )
    unlabelled = max(big_n - forecast.labelled, 0)
    total = forecast.labels_total
    if total is None:
        return ClaimsBound(big_n, big_a, unlabelled, False, None, None, forecast.method)
    more = max(total - forecast.labelled, 0)
    if total <= big_n:
        method = (
            f"about {more} more labels ({total} in all) among the {big_n} claims present "
            f"({unlabelled} not labelled yet)"
        )
        return ClaimsBound(big_n, big_a, unlabelled, True, more, 0, method)
    answers_more = _whole_labels((total - big_n) * big_a / big_n)
    method = (
        f"{total} labels needed but only {big_n} claims exist ({unlabelled} not labelled yet): "
        f"import about {answers_more} more answers (at {big_n / big_a:.1f} claims each) and "
        f"label their claims, or accept a wider interval"
    )
    return ClaimsBound(big_n, big_a, unlabelled, False, more, answers_more, method)


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
