"""The true supported rate from a noisy judge: Rogan–Gladen, its intervals, PPI++, and the chooser."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ._common import NAN, as_binary, as_label_array, check_confidence, check_count, z_value
from .design_ppi_sums import ppi_independent, stratum_totals

_RG_METHODS = ("lang-reiczigel", "delta", "bootstrap")


def _rg_raw(p: Any, se: Any, sp: Any) -> Any:
    """Unclipped Rogan–Gladen estimate (p + sp − 1)/(se + sp − 1); vectorised, no validity check.

    Written as (p − (1 − sp))/(se − (1 − sp)) so that se = sp = 1 gives exactly p/1 = p (the form
    p + sp − 1 rounds: 0.3 + 1 − 1 = 0.30000000000000004).
    """
    fp = 1.0 - sp
    return (p - fp) / (se - fp)


def rogan_gladen(p_obs: float, se: float, sp: float) -> float:
    """Rogan–Gladen prevalence correction of a naive rate measured by an imperfect judge.

    Formula: π̂ = (p_obs + sp − 1)/(se + sp − 1), clipped to [0, 1]; nan when J = se + sp − 1 ≤ 0
    (a judge no better than chance carries no information about π) or any input is nan.
    Collapse anchor: with se = sp = 1 the result is p_obs exactly (the division is by 1.0).
    Source: Rogan & Gladen (1978), Am J Epidemiol 107:71–76; seed 000, Theorem 4.
    """
    p, se_, sp_ = float(p_obs), float(se), float(sp)
    if not (np.isfinite(p) and np.isfinite(se_) and np.isfinite(sp_)):
        return NAN
    if se_ + sp_ - 1.0 <= 0.0:
        return NAN
    return float(min(max(_rg_raw(p, se_, sp_), 0.0), 1.0))


def _check_rg_counts(
    pos: int, n: int, se_successes: int, se_n: int, sp_successes: int, sp_n: int
) -> tuple[int, int, int, int, int, int]:
    k, m = check_count(pos, n, "pos")
    ks, ms = check_count(se_successes, se_n, "se_successes")
    kp, mp = check_count(sp_successes, sp_n, "sp_successes")
    return k, m, ks, ms, kp, mp


def rogan_gladen_variance(
    pos: int, n: int, se_successes: int, se_n: int, sp_successes: int, sp_n: int
) -> float:
    """Delta-method variance of the Rogan–Gladen estimate when se and sp were estimated too.

    Formula: with p = pos/n, se = se_successes/se_n, sp = sp_successes/sp_n, π = π̂ (clipped),
    J = se + sp − 1:
    Var(π̂) = [p(1−p)/n + π²·se(1−se)/se_n + (1−π)²·sp(1−sp)/sp_n] / J².
    Source: Rogan & Gladen (1978); Greiner & Gardner (2000), Prev Vet Med 45:43–59 (eq. for the
    variance of true prevalence with estimated Se/Sp). nan when any n is 0 or J ≤ 0.
    With se = sp = 1 it reduces to the naive binomial variance p(1−p)/n.
    """
    k, m, ks, ms, kp, mp = _check_rg_counts(pos, n, se_successes, se_n, sp_successes, sp_n)
    if m == 0 or ms == 0 or mp == 0:
        return NAN
    p, se, sp = k / m, ks / ms, kp / mp
    j = se + sp - 1.0
    if j <= 0.0:
        return NAN
    pi = min(max(_rg_raw(p, se, sp), 0.0), 1.0)
    var = p * (1 - p) / m + pi**2 * se * (1 - se) / ms + (1 - pi) ** 2 * sp * (1 - sp) / mp
    return float(var / j**2)


def _lang_reiczigel(
    k: Any, m: Any, ks: Any, ms: Any, kp: Any, mp: Any, z: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised Lang–Reiczigel adjusted-Wald limits (unclipped) and the adjusted Youden index.

    Adjustments (Lang & Reiczigel 2014, eq. 16; Reiczigel's published R script
    CI4TruePrevalence): the apparent-prevalence sample gets z²/2 successes and z²/2 failures
    (Agresti–Coull), each of the se and sp samples gets 1 success and 1 failure; then a Wald
    interval around the adjusted estimate, shifted by
    d = 2z²·(π'·se'(1−se')/se_n' − (1−π')·sp'(1−sp')/sp_n').
    """
    k, m, ks, ms, kp, mp = (np.asarray(v, dtype=float) for v in (k, m, ks, ms, kp, mp))
    m2, p2 = m + z**2, (k + z**2 / 2.0) / (m + z**2)
    ms2, se2 = ms + 2.0, (ks + 1.0) / (ms + 2.0)
    mp2, sp2 = mp + 2.0, (kp + 1.0) / (mp + 2.0)
    j2 = se2 + sp2 - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi2 = (p2 + sp2 - 1.0) / j2
        sd = np.sqrt(
            p2 * (1 - p2) / m2
            + se2 * (1 - se2) / ms2 * pi2**2
            + sp2 * (1 - sp2) / mp2 * (1 - pi2) ** 2
        ) / np.abs(j2)
    shift = 2.0 * z**2 * (pi2 * se2 * (1 - se2) / ms2 - (1 - pi2) * sp2 * (1 - sp2) / mp2)
    centre = pi2 + shift
    return centre - z * sd, centre + z * sd, j2


def _bootstrap_rg(
    k: int, m: int, ks: int, ms: int, kp: int, mp: int, confidence: float, n_boot: int, seed: int
) -> tuple[float, float]:
    """Parametric bootstrap percentile interval of the clipped Rogan–Gladen estimate."""
    rng = np.random.default_rng(seed)
    p = rng.binomial(m, k / m, size=n_boot) / m
    se = rng.binomial(ms, ks / ms, size=n_boot) / ms
    sp = rng.binomial(mp, kp / mp, size=n_boot) / mp
    j = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = np.clip(_rg_raw(p, se, sp), 0.0, 1.0)
    undefined = ~(j > 0.0)
    if undefined.any():
        # A draw where the resampled judge is no better than chance says nothing about π: count it
        # as spanning the whole range (half at 0, half at 1), which widens the interval honestly
        # instead of silently dropping the draws that make the estimate look shaky.
        idx = np.flatnonzero(undefined)
        draws[idx[0::2]] = 0.0
        draws[idx[1::2]] = 1.0
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(draws, [tail, 1.0 - tail])
    return float(lo), float(hi)


def rogan_gladen_interval(
    pos: int,
    n: int,
    se_successes: int,
    se_n: int,
    sp_successes: int,
    sp_n: int,
    confidence: float = 0.95,
    method: str = "lang-reiczigel",
    *,
    n_boot: int = 4000,
    seed: int = 0,
) -> tuple[float, float]:
    """Interval for the true supported rate that carries the audit's uncertainty in se and sp.

    ``pos`` of ``n`` judged claims were marked SUPPORTED by the judge; its sensitivity was measured
    as ``se_successes/se_n`` (on gold-SUPPORTED claims) and specificity as ``sp_successes/sp_n``
    (on gold-unsupported claims). Source: Rogan & Gladen (1978) for the estimate; per method:

    * ``"lang-reiczigel"`` — Lang & Reiczigel (2014), Prev Vet Med 113:13–22, the adjusted Wald
      interval: add z²/2 successes and failures to the judged sample, 1 success and 1 failure to
      each audit sample (Agresti–Coull / Agresti–Caffo style), Wald interval around the adjusted
      estimate shifted by d = 2z²(π'se'(1−se')/se_n' − (1−π')sp'(1−sp')/sp_n'). Transcribed from
      Reiczigel's published R script (eq. 16 of the paper).
    * ``"delta"`` — π̂ ± z·sqrt(`rogan_gladen_variance`) (Rogan & Gladen 1978; Greiner & Gardner
      2000), centred on the unclipped estimate.
    * ``"bootstrap"`` — parametric bootstrap: redraw pos ~ Bin(n, p), se ~ Bin(se_n, se)/se_n,
      sp ~ Bin(sp_n, sp)/sp_n ``n_boot`` times from ``numpy.random.default_rng(seed)``; percentile
      interval of the clipped estimate (a draw with J ≤ 0 counts half at 0, half at 1).

    All ends are clipped to [0, 1] and the interval always contains the clipped point estimate
    `rogan_gladen` (the Lang–Reiczigel shift can, in tiny samples, move it off the estimate; the
    interval is then extended to reach it). Returns ``(nan, nan)`` when undefined: any n = 0 or the
    audited J = se + sp − 1 ≤ 0.
    """
    if method not in _RG_METHODS:
        raise ValueError(f"method must be one of {_RG_METHODS}, got {method!r}")
    k, m, ks, ms, kp, mp = _check_rg_counts(pos, n, se_successes, se_n, sp_successes, sp_n)
    check_confidence(confidence)
    if m == 0 or ms == 0 or mp == 0:
        return NAN, NAN
    point = rogan_gladen(k / m, ks / ms, kp / mp)
    if np.isnan(point):
        return NAN, NAN
    z = z_value(confidence)
    if method == "lang-reiczigel":
        lo_a, hi_a, j2 = _lang_reiczigel(k, m, ks, ms, kp, mp, z)
        if not (float(j2) > 0.0):
            return NAN, NAN
        lo, hi = float(lo_a), float(hi_a)
    elif method == "delta":
        var = rogan_gladen_variance(k, m, ks, ms, kp, mp)
        centre = _rg_raw(k / m, ks / ms, kp / mp)
        half = z * np.sqrt(var)
        lo, hi = centre - half, centre + half
    else:
        lo, hi = _bootstrap_rg(k, m, ks, ms, kp, mp, confidence, int(n_boot), int(seed))
    lo = min(max(lo, 0.0), 1.0)
    hi = min(max(hi, 0.0), 1.0)
    return float(min(lo, point)), float(max(hi, point))


def ppi_mean_interval(
    gold: Iterable[Any],
    judge_on_gold: Iterable[Any],
    judge_on_rest: Iterable[Any],
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Prediction-powered (PPI++) estimate and interval for the true supported rate.

    ``gold`` are the audited claims' true labels (0/1 or verdict strings, SUPPORTED = 1),
    ``judge_on_gold`` the judge's output on those same claims (0/1 verdicts or P(SUPPORTED)), and
    ``judge_on_rest`` its output on the N claims that were not audited.

    Formula (mean estimation, power-tuned; n audited, N unaudited, f the judge's output):
      λ̂ = Cov_n(Y, f) / ((1 + n/N)·Var_{n+N}(f)), clipped to [0, 1] (0 when Var(f) = 0 or N = 0);
      θ̂ = λ̂·mean(f_rest) + mean(Y − λ̂·f_gold);
      SE² = λ̂²·Var(f_rest)/N + Var(Y − λ̂·f_gold)/n (population variances);
      CI = θ̂ ± z·SE, value and ends clipped to [0, 1].
    λ̂ = 0 is the classical (gold-only) CLT interval; λ̂ = 1 is the original PPI.
    Source: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), Science 382:669
    ("Prediction-powered inference"); Angelopoulos, Duchi & Zrnic (2023), arXiv:2311.01453
    ("PPI++"), mean-estimation case; the numbers follow ``ppi_py.ppi_mean_ci`` with
    ``lam=None`` (its ``_calc_lam_glm`` with ``clip=True``).

    Written by hand rather than importing ``ppi_py``: that package pulls in numba/llvmlite (a JIT
    compiler, ~150 MB, slow first import) and gdown (a downloader for its example datasets) for
    what is, in the mean case, the five closed-form lines above; the test suite checks this
    implementation against a line-by-line transcription of ``ppi_py``'s formulas.

    Returns ``{"value", "ci", "lambda", "n", "N"}``; nan value/ci when n = 0.
    """
    check_confidence(confidence)
    y = as_binary(gold, "gold")
    fg = _as_judge(judge_on_gold, "judge_on_gold")
    fr = _as_judge(judge_on_rest, "judge_on_rest")
    if y.shape != fg.shape:
        raise ValueError(f"gold and judge_on_gold differ in length: {y.size} vs {fg.size}")
    n, big_n = y.size, fr.size
    if n == 0:
        return {"value": NAN, "ci": (NAN, NAN), "lambda": NAN, "n": 0, "N": int(big_n)}
    # The same sums and the same code as the design PPI++ mean's (`design_ppi_sums`).
    _, sf, m2 = stratum_totals(fr, np.zeros(big_n, np.int64), 1)
    out = ppi_independent(y, fg, big_n, float(sf[0]), float(m2[0]), confidence)
    return {
        "value": out["value"],
        "ci": out["ci"],
        "lambda": float(out["lambda"]),
        "n": int(n),
        "N": int(big_n),
    }


def _as_judge(values: Any, name: str) -> np.ndarray:
    """Judge output as floats: verdict strings / booleans via `as_binary`, else probabilities."""
    arr = as_label_array(values)
    if arr.dtype.kind in "bUS" or (
        arr.dtype.kind == "O" and any(isinstance(v, str) for v in arr[:1000])
    ):
        return as_binary(arr, name)
    try:
        out = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 0/1 verdicts or probabilities in [0, 1]") from None
    if out.size and (np.isnan(out).any() or out.min() < 0.0 or out.max() > 1.0):
        raise ValueError(f"{name} must be 0/1 verdicts or probabilities in [0, 1]")
    return out


def _ppi_lambda(y: np.ndarray, fg: np.ndarray, fr: np.ndarray) -> float:
    """PPI++ power-tuning weight λ̂ = Cov(Y, f)/((1 + n/N)·Var(f)), clipped to [0, 1]."""
    n, big_n = y.size, fr.size
    if big_n == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (fg - fg.mean())))
    # variance of f over labelled and unlabelled together (ddof=1, as numpy.cov in ppi_py)
    total = n + big_n
    mean_f = (fg.sum() + fr.sum()) / total
    ss = float(np.sum((fg - mean_f) ** 2) + np.sum((fr - mean_f) ** 2))
    var_f = ss / (total - 1) if total > 1 else 0.0
    if var_f <= 0.0:
        return 0.0
    lam = cov / ((1.0 + n / big_n) * var_f)
    return float(min(max(lam, 0.0), 1.0))


_ORDER = ("gold_only", "ppi", "rogan_gladen")


def _estimate(obj: Any) -> tuple[float, tuple[float, float]]:
    if obj is None:
        return NAN, (NAN, NAN)
    if isinstance(obj, Mapping):
        value, ci = obj.get("value", NAN), obj.get("ci", (NAN, NAN))
    else:
        value, ci = obj
    lo, hi = ci
    return float(value), (float(lo), float(hi))


def headline_estimate(
    gold_only: Mapping[str, Any] | tuple[float, tuple[float, float]],
    rogan_gladen: Mapping[str, Any] | tuple[float, tuple[float, float]] | None,
    ppi: Mapping[str, Any] | tuple[float, tuple[float, float]] | None,
    youden_j: float = NAN,
) -> dict[str, Any]:
    """Pick the headline among the three estimates of the true faithfulness, with the reason.

    Each estimate is ``{"value": v, "ci": (lo, hi)}`` (or a ``(v, (lo, hi))`` tuple; None when not
    computed). Source: DESIGN.md "Three estimates" — the narrowest *valid* interval wins. Invalid:
    a nan value or end, an interval that does not contain its value, a zero-width interval (no
    honest 95% interval has width 0 on a finite sample), and Rogan–Gladen whenever Youden's
    J ≤ 0 or is unknown (nan). Ties (within 1e-9) go to the simpler estimate: gold-only, then
    PPI++, then Rogan–Gladen.

    Returns ``{"choice": "gold_only" | "ppi" | "rogan_gladen" | None, "reason": sentence,
    "value", "ci", "widths": {name: width or nan}}``; choice None (value nan) when none is valid.
    """
    ests = {
        "gold_only": _estimate(gold_only),
        "rogan_gladen": _estimate(rogan_gladen),
        "ppi": _estimate(ppi),
    }
    j = float(youden_j) if youden_j is not None else NAN
    invalid: dict[str, str] = {}
    widths: dict[str, float] = {}
    for name, (v, (lo, hi)) in ests.items():
        widths[name] = hi - lo if np.isfinite(lo) and np.isfinite(hi) else NAN
        if not (np.isfinite(v) and np.isfinite(lo) and np.isfinite(hi)):
            invalid[name] = "not computable"
        elif not (lo - 1e-12 <= v <= hi + 1e-12):
            invalid[name] = "its interval does not contain its estimate"
        elif hi - lo <= 0.0:
            invalid[name] = "its interval has zero width"
    if not (np.isfinite(j) and j > 0.0):
        invalid["rogan_gladen"] = (
            "the judge's Youden's J is unknown"
            if not np.isfinite(j)
            else f"the judge is no better than chance (J = {j:.2f}), so its correction is undefined"
        )
    valid = [name for name in _ORDER if name not in invalid]
    if not valid:
        return {
            "choice": None,
            "reason": "No estimate has a valid interval yet: audit more claims.",
            "value": NAN,
            "ci": (NAN, NAN),
            "widths": widths,
        }
    best = min(valid, key=lambda name: (round(widths[name], 9), _ORDER.index(name)))
    value, ci = ests[best]
    reason = _reason(best, widths, invalid, j)
    return {"choice": best, "reason": reason, "value": value, "ci": ci, "widths": widths}


# Two half-widths within this relative difference are "about equal" (printed as such, not to
# more digits than a reader can use).
_ABOUT_EQUAL = 0.005


def _digits(halves: list[float]) -> int:
    """Decimals (2 to 4) enough that half-widths which are not about equal print differently."""
    for digits in (2, 3, 4):
        clash = any(
            round(a, digits) == round(b, digits) and abs(a - b) > _ABOUT_EQUAL * max(a, b)
            for i, a in enumerate(halves)
            for b in halves[i + 1 :]
        )
        if not clash:
            return digits
    return 4


def _reason(best: str, widths: dict[str, float], invalid: dict[str, str], j: float) -> str:
    shown = [n for n in _ORDER if n not in invalid and np.isfinite(widths[n])]
    digits = _digits([widths[n] / 2 for n in shown])

    def pm(name: str) -> str:
        half = widths[name] / 2
        text = f"±{half:.{digits}f}"
        if name != best and name in shown and best in shown:
            other = widths[best] / 2
            if abs(half - other) <= _ABOUT_EQUAL * max(half, other):
                text += ", about equal"
        return text

    others = [n for n in _ORDER if n != best and n not in invalid]
    parts = []
    rg_weak = "rogan_gladen" not in invalid and best != "rogan_gladen" and j < 0.5
    if "rogan_gladen" in invalid and invalid["rogan_gladen"].startswith("the judge is no better"):
        parts.append(invalid["rogan_gladen"])
    elif rg_weak:
        parts.append(
            f"the judge is barely better than chance (J = {j:.2f}): its correction is too "
            f"uncertain ({pm('rogan_gladen')})"
        )
    if best == "gold_only":
        lead = f"the audit sample alone is the better estimate ({pm('gold_only')})"
        if "ppi" not in invalid and "ppi" in others:
            lead += f"; the judge's verdicts on the other claims do not narrow it ({pm('ppi')})"
    elif best == "ppi":
        lead = (
            f"PPI++ is the narrowest valid interval ({pm('ppi')}): the judge's verdicts on the "
            "unaudited claims, corrected by its errors on the audit sample, add information"
        )
        if "gold_only" in others:
            lead += f" beyond the audit sample alone ({pm('gold_only')})"
    else:
        lead = (
            f"the Rogan–Gladen correction is the narrowest valid interval ({pm('rogan_gladen')}): "
            f"the judge is accurate enough (J = {j:.2f}) for its audited error rates to be trusted"
        )
    parts.append(lead)
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:] + "."
