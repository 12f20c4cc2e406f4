"""Seeded stream simulations for the monitoring tests and bench: pure numpy, no Django.

A stream day draws its claims' (sampled S, gold Y, judge F) cells from one multinomial, so a
500-stream, 90-day run costs a few arrays, not 90 million claims.
"""

from __future__ import annotations

import numpy as np

from .stats import Days

# cells in order (s, y, f) for s, y, f in {0,1}^3
_CELLS = [(s, y, f) for s in (0, 1) for y in (0, 1) for f in (0, 1)]


def cell_probabilities(m: float, sens: float, spec: float, pi: float) -> np.ndarray:
    out = []
    for s, y, f in _CELLS:
        p_y = m if y else 1 - m
        p_f = (sens if f else 1 - sens) if y else ((1 - spec) if f else spec)
        out.append((pi if s else 1 - pi) * p_y * p_f)
    return np.array(out)


def stream_cells(
    rng: np.random.Generator,
    *,
    streams: int,
    days: int,
    claims: int,
    pi: float,
    m: np.ndarray,
    sens: np.ndarray,
    spec: np.ndarray,
) -> np.ndarray:
    """Counts (streams, days, 8) of the (s, y, f) cells; m/sens/spec are per-day arrays."""
    out = np.empty((streams, days, len(_CELLS)), np.int64)
    for t in range(days):
        out[:, t] = rng.multinomial(claims, cell_probabilities(m[t], sens[t], spec[t], pi), streams)
    return out


def as_days(cells: np.ndarray, pi: float, *, judge: bool) -> Days:
    """One stream's cells (days, 8) as debiased (judge=True) or gold-only IPW `Days`."""
    values = np.array(
        [(f + s * (y - f) / pi) if judge else (s * y / pi) for s, y, f in _CELLS], float
    )
    n_days = cells.shape[0]
    lo = np.full(n_days, (1 - 1 / pi) if judge else 0.0)
    hi = np.full(n_days, 1 / pi)
    return Days(values, cells.astype(float), lo, hi)


def judge_only_days(cells: np.ndarray) -> Days:
    """The judge's own verdicts, F, as `Days` (what an undebiased monitor would watch)."""
    values = np.array([f for _s, _y, f in _CELLS], float)
    n_days = cells.shape[0]
    return Days(values, cells.astype(float), np.zeros(n_days), np.ones(n_days))


def anchor_days(
    rng: np.random.Generator, *, days: int, anchors: int, rate: np.ndarray
) -> np.ndarray:
    """Daily disagreement counts of `anchors` re-judged gold claims; rate per day (days,)."""
    return rng.binomial(anchors, rate)
