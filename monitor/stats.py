"""Anytime-valid monitoring arithmetic: pure numpy, no Django.

A stream's claims arrive day by day. Each claim i carries a value Z_i whose mean is the
faithfulness m being monitored:

- gold-only, inverse-probability weighted: Z = S·Y/π (S = 1 when the claim was Poisson-sampled
  to the analysts with probability π, Y its gold label), support [0, 1/π];
- judge-assisted, debiased (prediction-powered, Angelopoulos et al. 2023; anytime-valid PPI,
  arXiv 2505.18000): Z = F + S·(Y − F)/π with F the judge's verdict, support [1 − 1/π, 1/π].

Both are unbiased for m whatever the judge does, because π is known and stored per claim.

A day is summarised by counts over a fixed vector of distinct values (`values`, shape (V,);
`counts`, shape (D, V)), so a million claims cost one bincount. Within a day the bet is fixed
(chosen from earlier days and the day's count only), which keeps every capital process a
nonnegative supermartingale under its null.

Confidence sequence (Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
betting", arXiv 2010.09686, hedged capital process, Thm 3): for each candidate m on a grid,
K_t(m) = ½∏(1 + λ⁺(Z_i − m)) + ½∏(1 − λ⁻(Z_i − m)), λ from the predictable plug-in rule
λ = √(2 log(2/α) / (σ̂² n log(1 + n))), truncated at c/(m − lo) and c/(hi − m). By Ville's
inequality P(∃t: K_t(m*) ≥ 1/α) ≤ α, so C_t = {m : K_s(m) < 1/α for all s ≤ t} covers m*
at every day simultaneously with probability ≥ 1 − α.

Change detection (e-detector, Shin, Ramdas & Rinaldo 2023): the CUSUM of one-sided betting
e-processes, log M_t = max(log M_{t−1}, 0) + Σ_i log(1 + λ_t(τ − Z_i)) tests "mean ≥ τ" from
every start day at once. Each start's product is a test supermartingale, so over a horizon of T
daily starts P(M_t ≥ T/α for some t ≤ T) ≤ T · α/T = α. An alarm says: for some start day j,
the one-sided confidence sequence of the faithfulness since day j lies wholly below τ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BET_CAP = 0.5  # c: never stake more than half the capital that could be lost


@dataclass(frozen=True)
class Days:
    """Per-day grouped values: values (V,), counts (D, V), support lo/hi per day (D,)."""

    values: np.ndarray
    counts: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def n_days(self) -> int:
        return int(self.counts.shape[0])

    def window(self, start: int, stop: int) -> Days:
        return Days(self.values, self.counts[start:stop], self.lo[start:stop], self.hi[start:stop])


def ipw_values(y: np.ndarray, sampled: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, ...]:
    """Z = S·Y/π with support [0, 1/π] (gold-only Horvitz–Thompson term per claim)."""
    pi = np.asarray(pi, float)
    z = np.where(np.asarray(sampled, bool), np.asarray(y, float) / pi, 0.0)
    return z, np.zeros_like(pi), 1.0 / pi


def ppi_values(
    f: np.ndarray, y: np.ndarray, sampled: np.ndarray, pi: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Z = F + S·(Y − F)/π with support [1 − 1/π, 1/π] (debiased judge term per claim)."""
    pi = np.asarray(pi, float)
    f = np.asarray(f, float)
    z = f + np.where(np.asarray(sampled, bool), (np.asarray(y, float) - f) / pi, 0.0)
    return z, 1.0 - 1.0 / pi, 1.0 / pi


def days_group(day: np.ndarray, z: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_days: int) -> Days:
    """Group per-claim values by day (0-based index) into a `Days` summary."""
    day = np.asarray(day, np.int64)
    values, inverse = np.unique(np.round(np.asarray(z, float), 12), return_inverse=True)
    flat = np.bincount(day * len(values) + inverse, minlength=n_days * len(values))
    day_lo = np.full(n_days, np.inf)
    day_hi = np.full(n_days, -np.inf)
    np.minimum.at(day_lo, day, np.asarray(lo, float))
    np.maximum.at(day_hi, day, np.asarray(hi, float))
    empty = ~np.isfinite(day_lo)
    day_lo[empty], day_hi[empty] = 0.0, 1.0
    return Days(values, flat.reshape(n_days, len(values)).astype(float), day_lo, day_hi)


def bernoulli_days(successes: np.ndarray, trials: np.ndarray | int) -> Days:
    """Daily 0/1 outcomes as `Days`: `successes` of `trials` per day (a day of 0 trials adds
    nothing to any capital process)."""
    successes = np.asarray(successes, float)
    trials = np.broadcast_to(np.asarray(trials, float), successes.shape)
    counts = np.stack([trials - successes, successes], axis=1)
    n_days = len(successes)
    return Days(np.array([0.0, 1.0]), counts, np.zeros(n_days), np.ones(n_days))


def _moments(values: np.ndarray, counts: np.ndarray) -> tuple[float, float, float]:
    """(n, regularised mean, regularised variance) of grouped values; prior ½ and ¼."""
    n = float(counts.sum())
    mean = (0.5 + float(counts @ values)) / (1.0 + n)
    var = (0.25 + float(counts @ (values - mean) ** 2)) / (1.0 + n)
    return n, mean, var


def _log_growth(values, counts, lam, m):
    """Σ_g counts_g · log(1 + lam·(values_g − m)), lam and m broadcast over a grid (G,)."""
    factor = 1.0 + lam[:, None] * (values[None, :] - m[:, None])
    used = counts > 0
    return np.log(np.maximum(factor[:, used], 1e-300)) @ counts[used]


@dataclass(frozen=True)
class Sequence:
    """A confidence sequence read after each day: lower/upper (D,), NaN before any data."""

    lower: np.ndarray
    upper: np.ndarray
    alpha: float


def betting_cs(days: Days, alpha: float = 0.05, grid_size: int = 1001) -> Sequence:
    """Hedged betting confidence sequence for the mean, running intersection, daily looks."""
    grid = np.linspace(0.0, 1.0, grid_size)
    log_plus = np.zeros(grid_size)
    log_minus = np.zeros(grid_size)
    alive = np.ones(grid_size, bool)
    threshold = np.log(1.0 / alpha)
    lower = np.full(days.n_days, np.nan)
    upper = np.full(days.n_days, np.nan)
    seen = np.zeros_like(days.values)
    for t in range(days.n_days):
        counts = days.counts[t]
        n_prev, _, var = _moments(days.values, seen)
        n_now = n_prev + counts.sum()
        if counts.sum() > 0:
            base = np.sqrt(2.0 * np.log(2.0 / alpha) / (var * n_now * np.log1p(n_now)))
            lam_p = np.minimum(base, BET_CAP / np.maximum(grid - days.lo[t], 1e-12))
            lam_m = np.minimum(base, BET_CAP / np.maximum(days.hi[t] - grid, 1e-12))
            log_plus += _log_growth(days.values, counts, lam_p, grid)
            log_minus += _log_growth(days.values, counts, -lam_m, grid)
            wealth = np.logaddexp(log_plus, log_minus) + np.log(0.5)
            alive &= wealth < threshold
            seen = seen + counts
        if n_now > 0 and alive.any():
            idx = np.flatnonzero(alive)
            lower[t] = grid[max(idx[0] - 1, 0)]
            upper[t] = grid[min(idx[-1] + 1, grid_size - 1)]
    return Sequence(lower, upper, alpha)


@dataclass(frozen=True)
class Detection:
    """An e-detector's path: log M_t per day, its alarm day (or None) and the start day j."""

    log_m: np.ndarray
    alarm_day: int | None
    since_day: int | None
    threshold: float


def edetector(
    days: Days,
    bound: float,
    *,
    below: bool = True,
    alpha: float = 0.05,
    horizon: int = 90,
    recent: int = 7,
) -> Detection:
    """CUSUM e-detector of "the mean has gone below `bound`" (or above, `below=False`).

    λ_t is the Kelly plug-in δ̂/(σ̂² + δ̂²) from the last `recent` days, δ̂ the estimated
    distance past the bound, capped at c/(hi − bound) (c/(bound − lo) when testing above).
    False alarm within `horizon` days ≤ alpha (union over start days of Ville's inequality).
    """
    sign = 1.0 if below else -1.0
    threshold = float(np.log(horizon / alpha))
    log_m = np.zeros(days.n_days)
    current, start, alarm, since = 0.0, 0, None, None
    for t in range(days.n_days):
        past = days.counts[max(0, t - recent) : t].sum(axis=0)
        n, mean, var = _moments(days.values, past)
        delta = sign * (bound - mean) if n > 0 else 0.0
        room = (days.hi[t] - bound) if below else (bound - days.lo[t])
        lam = min(max(delta, 0.0) / (var + delta * delta), BET_CAP / max(room, 1e-12))
        if current <= 0.0:
            current, start = 0.0, t
        step = _log_growth(days.values, days.counts[t], np.array([-sign * lam]), np.array([bound]))
        current += float(step[0])
        log_m[t] = current
        if alarm is None and current >= threshold:
            alarm, since = t, start
    return Detection(log_m, alarm, since, threshold)


def daily_wald_alarm(days: Days, bound: float, z: float = 1.96) -> int | None:
    """The textbook rule: alarm on the first day whose own 95% interval lies below `bound`."""
    for t in range(days.n_days):
        counts = days.counts[t]
        n = counts.sum()
        if n < 2:
            continue
        mean = counts @ days.values / n
        sd = np.sqrt(max(counts @ (days.values - mean) ** 2 / (n - 1), 0.0))
        if mean + z * sd / np.sqrt(n) < bound:
            return t
    return None


def labels_for_halfwidth(
    *, claims: float, halfwidth: float, var_y: float, disagreement: float, alpha: float = 0.05
) -> float:
    """Gold labels a window of `claims` needs so its debiased interval's half-width ≤ target.

    Var(F + S(Y − F)/π) = Var(Y) + r(1/π − 1) with r = E[(Y − F)²] the judge–gold disagreement;
    a betting CS of N draws has half-width ≈ √(2·V·log(2/α)/N). Solving for π gives
    π = r / (N h²/(2 log(2/α)) − Var(Y) + r); labels = π·N, capped at N (then unreachable).
    """
    budget = claims * halfwidth**2 / (2.0 * np.log(2.0 / alpha)) - var_y
    if budget <= 0:
        return float(claims)
    pi = disagreement / (budget + disagreement) if disagreement > 0 else 0.0
    return float(min(1.0, pi) * claims)


@dataclass(frozen=True)
class Drift:
    """The judge-drift verdict on one rate (false-positive or false-negative on anchors)."""

    alarm_day: int | None
    baseline: tuple[float, float]
    direction: str  # "up", "down" or ""


def drift_detect(days: Days, *, calibration: int, alpha: float = 0.05, horizon: int = 90) -> Drift:
    """Has the judge's disagreement rate on the anchors moved from its calibration days?

    The first `calibration` days give a betting CS of the rate at level α/3 (its final
    interval is the baseline [q_lo, q_hi]); afterwards two e-detectors, "rate > q_hi" and
    "rate < q_lo", each at α/3, watch the horizon. A union bound keeps the false alarm ≤ α.
    """
    base = betting_cs(days.window(0, calibration), alpha / 3.0)
    q_lo, q_hi = float(base.lower[-1]), float(base.upper[-1])
    rest = days.window(calibration, days.n_days)
    up = edetector(rest, q_hi, below=False, alpha=alpha / 3.0, horizon=horizon)
    down = edetector(rest, q_lo, below=True, alpha=alpha / 3.0, horizon=horizon)
    hits = [
        (d.alarm_day, name) for d, name in ((up, "up"), (down, "down")) if d.alarm_day is not None
    ]
    if not hits:
        return Drift(None, (q_lo, q_hi), "")
    day, name = min(hits)
    return Drift(day + calibration, (q_lo, q_hi), name)
