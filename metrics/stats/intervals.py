"""Confidence intervals for a single binomial proportion (Wilson score, Clopper–Pearson exact)."""

from __future__ import annotations

from statsmodels.stats.proportion import proportion_confint

from ._common import NAN, check_confidence, check_count


def _finish(lo: float, hi: float, k: int, n: int) -> tuple[float, float]:
    # Exact ends: 0 successes must give a lower bound of exactly 0, n successes an upper bound of
    # exactly 1 (floating point in the library can land a hair inside, which would exclude p-hat).
    lo = 0.0 if k == 0 else min(max(float(lo), 0.0), k / n)
    hi = 1.0 if k == n else max(min(float(hi), 1.0), k / n)
    return lo, hi


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Formula: with p̂ = k/n and z = z_{1-(1-c)/2},
    ``(p̂ + z²/2n ± z·sqrt(p̂(1-p̂)/n + z²/4n²)) / (1 + z²/n)``.

    Source: Wilson (1927), JASA 22:209–212; Newcombe (1998), Stat Med 17:857–872, method 3.
    Computed by ``statsmodels.stats.proportion.proportion_confint(method="wilson")``; the ends are
    pinned to exactly 0 (k = 0) and 1 (k = n). Returns ``(nan, nan)`` when n = 0.
    """
    k, m = check_count(successes, n)
    check_confidence(confidence)
    if m == 0:
        return NAN, NAN
    lo, hi = proportion_confint(k, m, alpha=1.0 - confidence, method="wilson")
    return _finish(lo, hi, k, m)


def clopper_pearson_interval(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Clopper–Pearson "exact" interval for a binomial proportion.

    Formula: ``[B(α/2; k, n-k+1), B(1-α/2; k+1, n-k)]`` with B the beta quantile, α = 1 - c,
    the lower end 0 when k = 0 and the upper end 1 when k = n.

    Source: Clopper & Pearson (1934), Biometrika 26:404–413; Newcombe (1998) method 5.
    Computed by ``statsmodels.stats.proportion.proportion_confint(method="beta")``.
    Returns ``(nan, nan)`` when n = 0.
    """
    k, m = check_count(successes, n)
    check_confidence(confidence)
    if m == 0:
        return NAN, NAN
    lo, hi = proportion_confint(k, m, alpha=1.0 - confidence, method="beta")
    return _finish(lo, hi, k, m)
