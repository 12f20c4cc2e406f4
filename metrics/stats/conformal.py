"""Conformal risk control of the false-claim rate, and the back-off frontier.

Inputs are per answer: ``confidences[i]`` is an array of answer i's claim confidences (calibrated
P(SUPPORTED)), ``supported[i]`` the matching 0/1 (or verdict-string) support labels. Everything is
flattened once and computed with sorts and cumulative sums, never a Python loop per answer per cut.
Answers with no claims are left out (an abstention has no claims to keep or drop and is reported on
its own, DESIGN.md "Metrics: definitions").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from ._common import NAN, as_binary

_TOL = 1e-9


class _Flat:
    """Claims of all answers in one array, with per-claim answer index and weight 1/k."""

    def __init__(self, confidences: Sequence[Any], supported: Sequence[Any]) -> None:
        if len(confidences) != len(supported):
            raise ValueError(
                f"confidences and supported differ in answers: {len(confidences)} vs {len(supported)}"
            )
        lengths = np.fromiter(map(len, confidences), dtype=np.int64, count=len(confidences))
        s_lengths = np.fromiter(map(len, supported), dtype=np.int64, count=len(supported))
        if not np.array_equal(lengths, s_lengths):
            bad = int(np.flatnonzero(lengths != s_lengths)[0])
            raise ValueError(f"answer {bad}: confidences and supported differ in claim count")
        self.all_lengths = lengths
        self.kept = lengths > 0
        self.n = int(self.kept.sum())
        if self.n:
            if self.kept.all():
                conf_parts, sup_parts = confidences, supported
            else:  # skip empty answers: an empty float array would upcast string labels
                conf_parts = [c for c in confidences if len(c)]
                sup_parts = [s for s in supported if len(s)]
            conf = np.concatenate(conf_parts).astype(float, copy=False)
            sup = as_binary(np.concatenate(sup_parts), "supported")
        else:
            conf, sup = np.empty(0), np.empty(0)
        if np.isnan(conf).any():
            raise ValueError("confidences contain NaN")
        self.conf = conf
        self.sup = sup.astype(bool)
        k = lengths[self.kept]
        self.k = k
        self.answer = np.repeat(np.arange(self.n), k)
        self.weight = np.repeat(1.0 / k, k) if self.n else np.empty(0)
        self.starts = np.concatenate([[0], np.cumsum(k)[:-1]]) if self.n else np.empty(0, int)

    def unsupported_sorted(self) -> tuple[np.ndarray, np.ndarray]:
        """Confidences of unsupported claims ascending, and their weights' suffix sums.

        ``suffix[j]`` = Σ weights of unsupported claims from position j on (``suffix[m]`` = 0), so
        Σ_{unsupported, conf ≥ λ} 1/k = suffix[searchsorted(conf, λ, "left")].
        """
        mask = ~self.sup
        c = self.conf[mask]
        w = self.weight[mask]
        order = np.argsort(c, kind="stable")
        c, w = c[order], w[order]
        suffix = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
        return c, suffix


def crc_threshold(
    confidences: Sequence[np.ndarray],
    supported: Sequence[np.ndarray],
    alpha: float,
    B: float = 1.0,  # noqa: N803 — the paper's name for the loss bound
    lambdas: np.ndarray | None = None,
) -> float:
    """Conformal-risk-control cut λ̂ that bounds the expected false-claim rate by α.

    Per-answer loss at cut λ (fixed denominator, non-increasing in λ, bounded by B = 1):
    L_i(λ) = #{claims of answer i with conf ≥ λ that are not supported} / k_i.
    Formula: λ̂ = inf{λ : n/(n+1)·R̂_n(λ) + B/(n+1) ≤ α}, R̂_n the mean of L_i over the n
    calibration answers; equivalently Σ_i L_i(λ) ≤ (n+1)α − B. Then E[L_test(λ̂)] ≤ α for an
    exchangeable test answer. Source: Angelopoulos, Bates, Fisch, Lei & Schuster (2024), "Conformal
    Risk Control", ICLR, Theorem 1 (eq. 4); seed 000, Theorem 6.

    With ``lambdas`` (a grid), λ̂ is the smallest grid value meeting the bound. Without it λ is
    continuous: the loss only drops just *above* an unsupported claim's confidence c, so the
    infimum is not attained and λ̂ is returned as ``np.nextafter(c, inf)`` — keep claims with
    conf ≥ λ̂, i.e. strictly above c. If the bound holds with every claim kept, λ̂ = min(0, lowest
    confidence). If no cut meets it (e.g. (n+1)α < B, or n = 0), returns ``np.inf`` (keep nothing).
    Cost: one sort of the unsupported claims; 250k answers take well under a second.
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if float(B) <= 0.0:
        raise ValueError("B must be positive")
    flat = _Flat(confidences, supported)
    n = flat.n
    if n == 0:
        return float(np.inf)
    budget = (n + 1) * float(alpha) - float(B)
    if budget < -_TOL:
        return float(np.inf)
    c, suffix = flat.unsupported_sorted()
    if lambdas is not None:
        grid = np.sort(np.asarray(lambdas, dtype=float).reshape(-1))
        risk = suffix[np.searchsorted(c, grid, side="left")]
        ok = np.flatnonzero(risk <= budget + _TOL)
        return float(grid[ok[0]]) if ok.size else float(np.inf)
    lowest = float(min(0.0, flat.conf.min()))
    if suffix[0] <= budget + _TOL:
        return lowest
    # Distinct unsupported confidences u_1 < ... < u_m; for λ in (u_{j-1}, u_j] the risk sum is
    # suffix at the first occurrence of u_j; for λ > u_m it is 0.
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    u = c[first]
    risk_after = np.r_[suffix[first[1:]], 0.0]  # risk for λ just above u_j
    j = int(np.flatnonzero(risk_after <= budget + _TOL)[0])
    return float(np.nextafter(u[j], np.inf))


def crc_evaluate(
    confidences: Sequence[np.ndarray], supported: Sequence[np.ndarray], lambda_hat: float
) -> dict[str, Any]:
    """Held-out check of a cut: the realised false-claim rate and what the cut keeps.

    Formula: realised false-claim rate = (1/n)·Σ_i #{conf ≥ λ̂, unsupported}_i / k_i (the CRC loss
    averaged over the n held-out answers); claims retained = #{conf ≥ λ̂}; retained share =
    retained / all claims; faithfulness of the retained = supported retained / retained (nan when
    nothing is kept); answers abstaining = answers with nothing retained.
    Source: Angelopoulos et al. (2024); DESIGN.md "Report λ̂, the held-out realized false-claim
    rate and the claims retained". Counts are nan-free; rates are nan when n = 0.
    """
    flat = _Flat(confidences, supported)
    lam = float(lambda_hat)
    total = int(flat.conf.size)
    if flat.n == 0 or np.isnan(lam):
        return {
            "lambda": lam,
            "n_answers": flat.n,
            "false_claim_rate": NAN,
            "claims_total": total,
            "claims_retained": 0 if flat.n == 0 else NAN,
            "retained_share": NAN,
            "supported_retained": 0 if flat.n == 0 else NAN,
            "faithfulness_retained": NAN,
            "answers_abstaining": 0 if flat.n == 0 else NAN,
        }
    keep = flat.conf >= lam
    false_rate = float(np.sum(flat.weight[keep & ~flat.sup]) / flat.n)
    retained = int(keep.sum())
    sup_ret = int((keep & flat.sup).sum())
    kept_per_answer = np.add.reduceat(keep.astype(np.int64), flat.starts)
    return {
        "lambda": lam,
        "n_answers": flat.n,
        "false_claim_rate": false_rate,
        "claims_total": total,
        "claims_retained": retained,
        "retained_share": retained / total,
        "supported_retained": sup_ret,
        "faithfulness_retained": sup_ret / retained if retained else NAN,
        "answers_abstaining": int(np.sum(kept_per_answer == 0)),
    }


def _facts_table(
    flat: _Flat,
    facts_grounded: Sequence[Sequence[Collection[Any]]],
    facts_total: Sequence[Any] | None,
) -> tuple[np.ndarray, int]:
    """Max confidence of a supported claim grounding each (answer, fact), and the fact total.

    Flattened with ``itertools.chain`` (C-speed iteration) and reduced with a pandas group-by, so a
    million claims' fact links take a fraction of a second.
    """
    if len(facts_grounded) != flat.all_lengths.size:
        raise ValueError("facts_grounded must have one entry per answer")
    if facts_total is not None and len(facts_total) != flat.all_lengths.size:
        raise ValueError("facts_total must have one entry per answer")
    kept_idx = np.flatnonzero(flat.kept)
    per_answer = [facts_grounded[i] for i in kept_idx]
    claim_counts = np.fromiter(map(len, per_answer), dtype=np.int64, count=len(per_answer))
    if not np.array_equal(claim_counts, flat.k):
        bad = int(kept_idx[np.flatnonzero(claim_counts != flat.k)[0]])
        raise ValueError(f"answer {bad}: facts_grounded and confidences differ in claim count")
    claims = list(chain.from_iterable(per_answer))
    fact_lens = np.fromiter(map(len, claims), dtype=np.int64, count=len(claims))
    claim_of = np.repeat(np.arange(len(claims)), fact_lens)
    link_answer = flat.answer[claim_of].astype(np.int64)
    link_fact = list(chain.from_iterable(claims))
    totals_given = facts_total is not None
    counts: np.ndarray | None = None
    sets: list[set[Any]] = []
    if totals_given:
        given = [facts_total[i] for i in kept_idx]
        try:
            counts = np.asarray(given)
        except ValueError:  # ragged: collections of ids
            counts = None
        if counts is None or counts.ndim != 1 or counts.dtype.kind not in "iu":
            counts = None
            sets = [set(v) for v in given]
    # One integer key per (answer, fact): answer · n_ids + fact code.
    ids = link_fact + list(chain.from_iterable(sets))
    ids_arr = np.asarray(ids) if ids else np.empty(0, dtype=np.int64)
    if ids_arr.dtype.kind not in "iu":
        ids_arr = np.asarray(ids, dtype=object)
    fact_codes, fact_uniques = pd.factorize(ids_arr)
    n_ids = max(len(fact_uniques), 1)
    link_key = link_answer * n_ids + fact_codes[: len(link_fact)]
    if not totals_given:
        total = int(np.unique(link_key).size)
        allowed = np.ones(link_key.size, dtype=bool)
    elif counts is not None:
        total = int(counts.sum())
        allowed = np.ones(link_key.size, dtype=bool)
    else:
        sizes = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
        marked_key = np.repeat(np.arange(len(sets)), sizes) * n_ids + fact_codes[len(link_fact) :]
        total = int(sizes.sum())
        allowed = np.isin(link_key, marked_key)
    use = allowed & flat.sup[claim_of]
    if not use.any():
        return np.empty(0), total
    key, conf = link_key[use], flat.conf[claim_of][use]
    order = np.lexsort((conf, key))  # by key, then confidence: the last of each key is its max
    key, conf = key[order], conf[order]
    last = np.r_[key[1:] != key[:-1], True]
    return np.sort(conf[last]), total


def frontier(
    confidences: Sequence[np.ndarray],
    supported: Sequence[np.ndarray],
    facts_grounded: Sequence[Sequence[Collection[Any]]] | None = None,
    cuts: Iterable[float] | None = None,
    *,
    facts_total: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """The back-off frontier: what a confidence cut τ keeps, and how faithful and complete it is.

    For each cut τ (default ``numpy.linspace(0, 1, 101)``) claims with conf ≥ τ are retained.
    Columns: ``tau``; ``claims_retained``; ``retained_share`` (of all claims); ``faithfulness`` =
    supported retained / retained (nan when nothing is kept); ``false_claim_rate`` = the CRC loss
    (1/n)Σ_i #{retained, unsupported}_i/k_i; ``coverage`` = facts grounded by at least one
    retained supported claim / facts available, pooled over answers (nan without fact links);
    ``answers_abstaining`` = answers with nothing retained.

    ``facts_grounded`` (optional) has the shape of ``confidences``: per answer, per claim, a sized
    collection (list, tuple, set) of the fact ids that claim grounds (empty when none). ``facts_total`` (optional) is
    per answer either the number of facts marked in its pile or an iterable of all their ids; when
    omitted, an answer's facts are the distinct ids its claims reference, which can only
    undercount the denominator (facts no claim touches are invisible), so pass it when known.
    Source: seed 000, Definition 1 and Algorithm 5 (faithfulness = precision over claims,
    coverage = recall over facts); Angelopoulos et al. (2024) for the loss column.
    """
    flat = _Flat(confidences, supported)
    tau = (
        np.linspace(0.0, 1.0, 101)
        if cuts is None
        else np.asarray(list(cuts) if not isinstance(cuts, np.ndarray) else cuts, dtype=float)
    )
    total = int(flat.conf.size)
    all_sorted = np.sort(flat.conf)
    sup_sorted = np.sort(flat.conf[flat.sup])
    retained = total - np.searchsorted(all_sorted, tau, side="left")
    sup_retained = sup_sorted.size - np.searchsorted(sup_sorted, tau, side="left")
    c_uns, suffix = flat.unsupported_sorted()
    risk = suffix[np.searchsorted(c_uns, tau, side="left")]
    if flat.n:
        answer_max = np.sort(np.maximum.reduceat(flat.conf, flat.starts))
        abstaining = np.searchsorted(answer_max, tau, side="left")
        false_rate = risk / flat.n
    else:
        abstaining = np.zeros(tau.shape, dtype=int)
        false_rate = np.full(tau.shape, NAN)
    with np.errstate(divide="ignore", invalid="ignore"):
        faith = np.where(retained > 0, sup_retained / np.maximum(retained, 1), NAN)
        share = retained / total if total else np.full(tau.shape, NAN)
    if facts_grounded is None:
        cov = np.full(tau.shape, NAN)
    else:
        best, n_facts = _facts_table(flat, facts_grounded, facts_total)
        covered = best.size - np.searchsorted(best, tau, side="left")
        cov = covered / n_facts if n_facts else np.full(tau.shape, NAN)
    return pd.DataFrame(
        {
            "tau": tau,
            "claims_retained": retained.astype(int),
            "retained_share": share,
            "faithfulness": faith,
            "false_claim_rate": false_rate,
            "coverage": cov,
            "answers_abstaining": abstaining.astype(int),
        }
    )
