"""Agreement between two labellers (human–human, human–judge) and among many analysts."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from annotate.vocabulary import VERDICT_VALUES

from ._common import NAN, as_label_array, is_missing, verdict_codes
from .intervals import wilson_interval

_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _paired(a: Iterable[Any], b: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Two equal-length label arrays with the pairs where either side is missing removed."""
    x, y = as_label_array(a), as_label_array(b)
    if x.shape != y.shape:
        raise ValueError(f"label sequences differ in length: {x.size} vs {y.size}")
    keep = ~(is_missing(x) | is_missing(y))
    if not keep.all():
        x, y = x[keep], y[keep]
    return x, y


def agreement(a: Iterable[Any], b: Iterable[Any]) -> float:
    """Overall (raw) agreement: the share of items on which the two labellers agree.

    Formula: A_o = (1/n)·Σ 1[a_i = b_i] over the n pairs where neither label is missing
    (None / NaN). Source: Artstein & Poesio (2008), Computational Linguistics 34(4), §2.2.
    Returns nan when no pair remains.
    """
    x, y = _paired(a, b)
    if x.size == 0:
        return NAN
    return float(np.mean(x == y))


def _codes(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes of two label arrays over their joint set of labels."""
    uniques = pd.unique(np.concatenate([x, y]))
    index = pd.Index(uniques)
    return index.get_indexer(x), index.get_indexer(y), len(uniques)


def cohen_kappa(a: Iterable[Any], b: Iterable[Any]) -> float:
    """Cohen's kappa between two labellers over the same items.

    Formula: κ = (A_o − A_e)/(1 − A_e), A_o = Σ_k n_kk/n, A_e = Σ_k (n_k·/n)(n_·k/n) (each
    labeller's own marginals). Source: Cohen (1960), Educ. Psychol. Meas. 20:37–46; Artstein &
    Poesio (2008) §2.4 (their worked tables are in the tests).
    Computed from a ``numpy.bincount`` contingency table; the tests check it equals
    ``sklearn.metrics.cohen_kappa_score``, which is not called here because its label validation
    costs ~0.3 s per million labels. Pairs with a missing label (None / NaN) are dropped.
    Returns nan when no pair remains or when A_e = 1 (both labellers used one and the same
    category throughout: kappa is undefined, not 1). Symmetric in its arguments.
    """
    x, y = _paired(a, b)
    n = x.size
    if n == 0:
        return NAN
    cx, cy, v = _codes(x, y)
    if v < 2:
        return NAN
    table = np.bincount(cx.astype(np.int64) * v + cy, minlength=v * v).reshape(v, v)
    p_o = np.trace(table) / n
    p_e = float(table.sum(axis=1) @ table.sum(axis=0)) / (n * n)
    if p_e >= 1.0:
        return NAN
    return float((p_o - p_e) / (1.0 - p_e))


def pairwise_kappas(labels: pd.DataFrame | Mapping[str, Iterable[Any]]) -> pd.DataFrame:
    """Cohen's kappa (and raw agreement) for every pair of coders.

    ``labels`` is a DataFrame with one row per unit and one column per coder (missing = None/NaN),
    or a mapping coder → equal-length label sequence. Each pair is scored on the units both coded.
    Returns columns ``coder_a, coder_b, n, agreement, kappa`` (nan where a pair shares no unit).
    Source: Cohen (1960); DESIGN.md "pairwise Cohen's kappa per analyst".
    """
    frame = labels if isinstance(labels, pd.DataFrame) else pd.DataFrame(dict(labels))
    rows = []
    for ca, cb in itertools.combinations(list(frame.columns), 2):
        x, y = _paired(frame[ca].to_numpy(), frame[cb].to_numpy())
        rows.append(
            {
                "coder_a": ca,
                "coder_b": cb,
                "n": int(x.size),
                "agreement": agreement(x, y),
                "kappa": cohen_kappa(x, y),
            }
        )
    return pd.DataFrame(rows, columns=["coder_a", "coder_b", "n", "agreement", "kappa"])


def krippendorff_alpha(reliability: Any, level: str = "nominal") -> float:
    """Krippendorff's alpha for any number of coders, with missing values allowed.

    ``reliability`` is shaped (coders, units), ``np.nan`` for a missing value, categories coded as
    numbers (e.g. 0, 1, 2 for the three verdicts).
    Formula: α = 1 − D_o/D_e, observed vs expected disagreement from the coincidence matrix of
    pairable values (units with at least two values).
    Source: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability"; computed by the
    ``krippendorff`` package (``krippendorff.alpha(value_counts=...)``), fed a units × values count
    table built here with one ``numpy.bincount`` (the package's own conversion from reliability
    data broadcasts a coders × units × values array, slow at a million units). Returns nan when
    alpha is undefined: no unit has two values, or fewer than two distinct values occur among
    pairable units (D_e = 0).
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}, got {level!r}")
    data = np.asarray(reliability, dtype=float)
    if data.ndim != 2:
        raise ValueError("reliability must be 2-d, shaped (coders, units)")
    if data.size == 0:
        return NAN
    present = ~np.isnan(data)
    pairable = present.sum(axis=0) >= 2
    if not pairable.any():
        return NAN
    data, present = data[:, pairable], present[:, pairable]
    values = data[present]
    domain = np.sort(pd.unique(values))  # hash-based: no sort of millions of values
    if domain.size < 2:
        return NAN
    codes = np.searchsorted(domain, values)
    # Units × values count table, built with one bincount (the package's own conversion
    # broadcasts a coders × units × values boolean array); then the package does the rest.
    units = np.broadcast_to(np.arange(data.shape[1]), data.shape)[present]
    v = domain.size
    counts = np.bincount(units * v + codes, minlength=data.shape[1] * v)
    counts = counts.reshape(data.shape[1], v)
    return float(
        krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    )


def confusion(gold: Iterable[Any], judge: Iterable[Any]) -> pd.DataFrame:
    """3×3 confusion matrix of verdicts: rows gold, columns judge, order SUPPORTED, CONTRADICTED,
    NOT_IN_PILE.

    Formula: cell (g, j) = #{claims with gold verdict g and judge verdict j}.
    Any value outside the three verdicts on either side (``"UNPARSEABLE"``, None, a typo) drops
    that claim from the table: an unparseable judge answer is never counted as any verdict
    (DESIGN.md, Judge protocol). Computed with ``numpy.bincount``.
    Source: DESIGN.md "Human–judge agreement" (the 3×3 confusion matrix).
    """
    g, j = verdict_codes(gold), verdict_codes(judge)
    if g.shape != j.shape:
        raise ValueError(f"gold and judge differ in length: {g.size} vs {j.size}")
    keep = (g >= 0) & (j >= 0)
    flat = g[keep].astype(np.int64) * 3 + j[keep]
    counts = np.bincount(flat, minlength=9).reshape(3, 3)
    frame = pd.DataFrame(counts, index=list(VERDICT_VALUES), columns=list(VERDICT_VALUES))
    frame.index.name = "gold"
    frame.columns.name = "judge"
    return frame


def _rate_block(successes: int, n: int, confidence: float) -> dict[str, Any]:
    return {
        "value": successes / n if n else NAN,
        "ci": wilson_interval(successes, n, confidence),
        "successes": int(successes),
        "n": int(n),
    }


def sensitivity_specificity(
    gold: Iterable[Any], judge: Iterable[Any], confidence: float = 0.95
) -> dict[str, Any]:
    """The judge's sensitivity and specificity against gold, positive = SUPPORTED.

    Formula: se = #(judge S ∧ gold S)/#(gold S); sp = #(judge ¬S ∧ gold ¬S)/#(gold ¬S);
    each with a Wilson interval; Youden's J = se + sp − 1.
    Source: Yerushalmy (1947) / Youden (1950); DESIGN.md "Binary audit".
    Claims whose gold or judge value is not one of the three verdicts are excluded (as in
    `confusion`). Returns ``{"sensitivity": {value, ci, successes, n}, "specificity": {...},
    "youden_j": float}``; a side with n = 0 has value nan and ci (nan, nan), and then J is nan.
    """
    table = confusion(gold, judge).to_numpy()
    tp = int(table[0, 0])
    pos = int(table[0].sum())
    tn = int(table[1:, 1:].sum())
    neg = int(table[1:].sum())
    sens = _rate_block(tp, pos, confidence)
    spec = _rate_block(tn, neg, confidence)
    return {
        "sensitivity": sens,
        "specificity": spec,
        "youden_j": sens["value"] + spec["value"] - 1.0,
    }


def asymmetry(gold: Iterable[Any], judge: Iterable[Any]) -> dict[str, Any]:
    """Does the judge over- or under-mark SUPPORTED relative to gold?

    Formula: over = #(judge S ∧ gold ¬S), under = #(judge ¬S ∧ gold S), each also as a share of the
    n claims in the confusion table; ``direction`` is "over", "under" or "balanced".
    Source: DESIGN.md "asymmetry" (the off-diagonal cells of the SUPPORTED-vs-rest table).
    Returns nan rates and direction "none" when n = 0.
    """
    table = confusion(gold, judge).to_numpy()
    n = int(table.sum())
    over = int(table[1:, 0].sum())
    under = int(table[0, 1:].sum())
    if n == 0:
        direction = "none"
    elif over > under:
        direction = "over"
    elif under > over:
        direction = "under"
    else:
        direction = "balanced"
    return {
        "n": n,
        "over_supported": {"count": over, "rate": over / n if n else NAN},
        "under_supported": {"count": under, "rate": under / n if n else NAN},
        "direction": direction,
    }
