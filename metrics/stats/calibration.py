"""Calibration of the judge's confidence P(SUPPORTED): reliability bins, ECE, Platt, isotonic."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.isotonic import isotonic_regression

from ._common import NAN, as_binary, as_float_array

_METHODS = ("platt", "isotonic")


def _conf_outcome(confidence: Iterable[Any], outcome: Iterable[Any]) -> tuple[np.ndarray, ...]:
    c = as_float_array(confidence, "confidence")
    y = as_binary(outcome, "outcome")
    if c.shape != y.shape:
        raise ValueError(f"confidence and outcome differ in length: {c.size} vs {y.size}")
    if c.size and (c.min() < 0.0 or c.max() > 1.0):
        raise ValueError("confidence must lie in [0, 1]")
    return c, y


def _bin_index(c: np.ndarray, n_bins: int) -> np.ndarray:
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive whole number, got {n_bins!r}")
    inner = np.arange(1, n_bins) / n_bins
    # side="left": a value equal to an edge falls in the bin below it, i.e. bins are (lo, hi],
    # and the first bin [0, 1/n] also takes 0 — the convention of sklearn's calibration_curve.
    return np.searchsorted(inner, c, side="left")


def reliability_bins(
    confidence: Iterable[Any], outcome: Iterable[Any], n_bins: int = 10
) -> pd.DataFrame:
    """Reliability-diagram table: one row per equal-width bin of confidence.

    Bins are (lo, hi] with the first bin [0, 1/n_bins] also taking 0; every bin is listed, empty
    ones with count 0 and nan means. Columns: ``bin, lo, hi, count, mean_confidence,
    observed_rate, gap`` (gap = mean_confidence − observed_rate).
    Source: DeGroot & Fienberg (1983); Guo et al. (2017) §2; same binning and per-bin values as
    ``sklearn.calibration.calibration_curve(strategy="uniform")`` on the non-empty bins.
    """
    c, y = _conf_outcome(confidence, outcome)
    idx = _bin_index(c, n_bins)
    count = np.bincount(idx, minlength=n_bins)
    sum_c = np.bincount(idx, weights=c, minlength=n_bins)
    sum_y = np.bincount(idx, weights=y, minlength=n_bins)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_c = np.where(count > 0, sum_c / np.maximum(count, 1), NAN)
        rate = np.where(count > 0, sum_y / np.maximum(count, 1), NAN)
    edges = np.arange(n_bins + 1) / n_bins
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "lo": edges[:-1],
            "hi": edges[1:],
            "count": count.astype(int),
            "mean_confidence": mean_c,
            "observed_rate": rate,
            "gap": mean_c - rate,
        }
    )


def expected_calibration_error(
    confidence: Iterable[Any], outcome: Iterable[Any], n_bins: int = 10
) -> float:
    """Expected calibration error with equal-width bins weighted by bin size.

    Formula: ECE = Σ_b (n_b/n)·|mean confidence_b − observed rate_b| over the bins of
    `reliability_bins` ((lo, hi], first bin includes 0). Source: Naeini, Cooper & Hauskrecht
    (2015), AAAI; Guo, Pleiss, Sun & Weinberger (2017), ICML, eq. (3). nan for empty input.
    """
    c, y = _conf_outcome(confidence, outcome)
    if c.size == 0:
        return NAN
    idx = _bin_index(c, n_bins)
    gap = np.abs(
        np.bincount(idx, weights=c, minlength=n_bins)
        - np.bincount(idx, weights=y, minlength=n_bins)
    )
    # Σ_b (n_b/n)·|Σc/n_b − Σy/n_b| = Σ_b |Σc − Σy| / n
    return float(gap.sum() / c.size)


class PlattCalibrator:
    """p = 1/(1 + exp(−(slope·confidence + intercept))); a callable on arrays of confidences."""

    def __init__(self, slope: float, intercept: float, n: int) -> None:
        self.slope = float(slope)
        self.intercept = float(intercept)
        self.n = int(n)

    def __call__(self, confidence: Iterable[Any]) -> np.ndarray:
        c = as_float_array(confidence, "confidence")
        if self.n == 0:
            return np.full(c.shape, NAN)
        return expit(self.slope * c + self.intercept)

    def __repr__(self) -> str:
        return f"PlattCalibrator(slope={self.slope:.6g}, intercept={self.intercept:.6g})"


class IsotonicCalibrator:
    """Monotone piecewise-linear map fitted by isotonic regression; a callable.

    Prediction interpolates linearly between the fitted points and is constant beyond the ends,
    exactly as ``sklearn.isotonic.IsotonicRegression(out_of_bounds="clip").predict``.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x = x
        self.y = y

    def __call__(self, confidence: Iterable[Any]) -> np.ndarray:
        c = as_float_array(confidence, "confidence")
        if self.x.size == 0:
            return np.full(c.shape, NAN)
        return np.interp(c, self.x, self.y)

    def __repr__(self) -> str:
        return f"IsotonicCalibrator(points={self.x.size})"


def _isotonic_fit(ux: np.ndarray, count: np.ndarray, sum_y: np.ndarray) -> IsotonicCalibrator:
    """PAVA on per-distinct-confidence means, weighted by counts (sklearn's ``_make_unique`` step)."""
    keep = count > 0
    ux, count, sum_y = ux[keep], count[keep], sum_y[keep]
    if ux.size == 0:
        return IsotonicCalibrator(np.empty(0), np.empty(0))
    fitted = np.asarray(
        isotonic_regression(
            sum_y / count, sample_weight=count.astype(float), y_min=0.0, y_max=1.0, increasing=True
        ),
        dtype=float,
    )
    # Drop interior points whose value equals both neighbours (sklearn's trim_duplicates): the
    # interpolation is unchanged and the table shrinks from every distinct confidence to the
    # block ends, which keeps prediction fast.
    keep = np.ones(fitted.size, dtype=bool)
    keep[1:-1] = (fitted[1:-1] != fitted[:-2]) | (fitted[1:-1] != fitted[2:])
    return IsotonicCalibrator(ux[keep], fitted[keep])


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """Inner product without BLAS: ``x @ y`` hands 1-d vectors to a multi-threaded BLAS whose
    thread start-up and spinning cost 3-5x the arithmetic here (and far more on a busy machine)."""
    return float(np.einsum("i,i->", x, y))


def _platt_fit(
    c: np.ndarray, y: np.ndarray, start: tuple[float, float] | None = None
) -> tuple[float, float]:
    """Platt's sigmoid by Newton's method with backtracking (Lin, Lin & Weng 2007, Algorithm 1).

    The objective is strictly convex, so the optimum does not depend on the starting point; on
    large inputs Newton is started from the fit on an evenly strided 1-in-k subsample (≤ 50k
    claims), which saves most of the full-size iterations.
    """
    n = c.size
    n1 = float(y.sum())
    n0 = n - n1
    if start is None and n > 100_000:
        stride = -(-n // 50_000)
        start = _platt_fit(c[::stride], y[::stride])
    # Platt's regularised targets (Platt 1999, §2.2): avoid fitting to hard 0/1 labels.
    t = np.where(y > 0.5, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    a, b = start if start is not None else (0.0, float(np.log((n1 + 1.0) / (n0 + 1.0))))
    c2 = c * c
    sigma = 1e-12

    def objective(z_: np.ndarray) -> float:
        return float(np.sum(np.logaddexp(0.0, z_)) - _dot(t, z_))

    z = a * c + b
    f = objective(z)
    for _ in range(100):
        p = expit(z)
        r = p - t
        w = p * (1.0 - p)
        ga, gb = _dot(r, c), float(r.sum())
        h11, h12, h22 = _dot(w, c2) + sigma, _dot(w, c), float(w.sum()) + sigma
        det = h11 * h22 - h12 * h12
        if det <= 0.0:
            break
        da = -(h22 * ga - h12 * gb) / det
        db = -(-h12 * ga + h11 * gb) / det
        descent = ga * da + gb * db  # = −(Newton decrement)² ≤ 0
        # Converged when the predicted decrease of the objective is below float resolution.
        if -descent <= 1e-12 * max(abs(f), 1.0):
            break
        step = 1.0
        while step >= 1e-10:
            na, nb = a + step * da, b + step * db
            nz = na * c + nb
            nf = objective(nz)
            if nf <= f + 1e-4 * step * descent:
                break
            step /= 2.0
        else:
            break
        a, b, f, z = na, nb, nf, nz
    return a, b


def platt_calibrator(confidence: Iterable[Any], outcome: Iterable[Any]) -> PlattCalibrator:
    """Fit Platt scaling: a logistic curve from raw confidence to P(SUPPORTED).

    Formula: p = σ(a·c + b), (a, b) maximising Σ tᵢ log pᵢ + (1 − tᵢ) log(1 − pᵢ) with Platt's
    targets t = (N₊+1)/(N₊+2) for supported and 1/(N₋+2) for unsupported claims. The raw
    confidence itself is the score, as ``sklearn.calibration.CalibratedClassifierCV`` does for a
    classifier that only has ``predict_proba``; with a positive slope a the ranking is preserved.
    Source: Platt (1999), "Probabilistic outputs for SVMs"; Lin, Lin & Weng (2007), Machine
    Learning 68:267–276 (the Newton solver used here); Niculescu-Mizil & Caruana (2005).

    Solved by a two-parameter Newton iteration in numpy rather than sklearn's
    ``LogisticRegression``: that needs every row duplicated to express Platt's soft targets and
    took ~0.8 s per 800k-claim fit here (this: ~0.25 s), too much of the 10 s budget for cross-fitted
    calibration of a million claims. The tests check the coefficients against sklearn's
    ``LogisticRegression`` on the duplicated rows. An empty fit returns a calibrator that maps
    everything to nan.
    """
    c, y = _conf_outcome(confidence, outcome)
    if c.size == 0:
        return PlattCalibrator(NAN, NAN, 0)
    a, b = _platt_fit(c, y)
    return PlattCalibrator(a, b, c.size)


def isotonic_calibrator(confidence: Iterable[Any], outcome: Iterable[Any]) -> IsotonicCalibrator:
    """Fit isotonic regression: the best non-decreasing map from confidence to outcome.

    Formula: minimise Σ (yᵢ − g(cᵢ))² over non-decreasing g with values in [0, 1]
    (pool-adjacent-violators on the distinct confidences, weighted by their counts), linear between
    fitted points and constant beyond the ends. Source: Zadrozny & Elkan (2002), KDD;
    Niculescu-Mizil & Caruana (2005). The PAVA step is ``sklearn.isotonic.isotonic_regression``;
    the grouping of tied confidences is done once with numpy so cross-fitting does not re-sort a
    million claims per fold. The tests check predictions equal
    ``IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")``. An empty fit maps everything
    to nan.
    """
    c, y = _conf_outcome(confidence, outcome)
    ux, inverse = np.unique(c, return_inverse=True)
    count = np.bincount(inverse, minlength=ux.size)
    sum_y = np.bincount(inverse, weights=y, minlength=ux.size)
    return _isotonic_fit(ux, count, sum_y)


def _fold_ids(
    y: np.ndarray, folds: int, seed: int, groups: Iterable[Any] | None
) -> np.ndarray | None:
    """Seeded fold number per claim; None when fewer than two folds are possible.

    Without groups: stratified by outcome — each class is permuted and dealt round-robin into the
    folds, so every fold sees both outcomes whenever that is possible (what
    ``sklearn.model_selection.StratifiedKFold(shuffle=True)`` does, at a fraction of its ~0.3 s per
    million claims). With groups: the distinct groups are permuted and dealt round-robin, so all
    claims of one group (answer) land in one fold, as ``GroupKFold`` guarantees.
    """
    rng = np.random.default_rng(seed)
    n = y.size
    fold = np.empty(n, dtype=np.int64)
    if groups is not None:
        g = np.asarray(groups if isinstance(groups, np.ndarray) else list(groups))
        if g.shape != y.shape:
            raise ValueError("groups must have one entry per claim")
        codes, uniques = pd.factorize(g)
        k = min(folds, len(uniques))
        if k < 2:
            return None
        group_fold = np.empty(len(uniques), dtype=np.int64)
        group_fold[rng.permutation(len(uniques))] = np.arange(len(uniques)) % k
        return group_fold[codes]
    k = min(folds, n)
    if k < 2:
        return None
    offset = 0
    for cls in (1.0, 0.0):
        idx = np.flatnonzero(y == cls)
        fold[rng.permutation(idx)] = (np.arange(idx.size) + offset) % k
        offset += idx.size  # continue the deal where the other class stopped: balanced sizes
    return fold


def cross_fitted_calibration(
    confidence: Iterable[Any],
    outcome: Iterable[Any],
    method: str,
    folds: int = 5,
    seed: int = 0,
    *,
    groups: Iterable[Any] | None = None,
) -> np.ndarray:
    """Out-of-fold calibrated confidences: no claim is scored by a calibrator that saw it.

    Deals the claims into ``folds`` folds (seeded by ``seed``, stratified by outcome; with
    ``groups`` — e.g. answer ids — whole groups are dealt, so one answer's claims share a fold, as
    with ``GroupKFold``), fits ``method`` ("platt" | "isotonic") on the other folds and predicts
    the held-out one. Source: cross-fitting as in Chernozhukov et al. (2018); DESIGN.md "evaluated out of
    fold". ``folds`` is lowered to the number of claims (or groups) when larger; fewer than two
    claims (or groups) gives all-nan output.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    c, y = _conf_outcome(confidence, outcome)
    out = np.full(c.shape, NAN)
    fold = _fold_ids(y, int(folds), int(seed), groups)
    if fold is None:
        return out
    splits = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(fold.max() + 1)]
    if method == "platt":
        for train, test in splits:
            out[test] = platt_calibrator(c[train], y[train])(c[test])
        return out
    # isotonic: group tied confidences once; each fold only re-counts (bincount, no sort)
    ux, inverse = np.unique(c, return_inverse=True)
    for train, test in splits:
        inv = inverse[train]
        count = np.bincount(inv, minlength=ux.size)
        sum_y = np.bincount(inv, weights=y[train], minlength=ux.size)
        out[test] = _isotonic_fit(ux, count, sum_y)(c[test])
    return out
