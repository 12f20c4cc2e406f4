"""Neyman allocation across strata: the next stratum to label and the whole allocation."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

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
