"""Conformal risk control over many random calibration/test splits of the audited answers.

One split is one draw: CRC bounds the false-claim rate *in expectation over the calibration
draw*, so the held-out rate of one split can overshoot α (on FaithBench's HHEM scores the one
split shown realized 0.168 at α = 0.10). Here every split draws half of the answers as the
calibration set, fits λ̂ on it (`conformal.crc_threshold`'s formula) and measures the realized
false-claim rate on the other half; the mean over splits estimates the expected risk the
guarantee is about, the spread shows how far one deployment can stray.

Vectorised over splits in chunks: a (splits × claims) mask, cumulative sums along the sorted
unsupported claims, no Python loop over claims or answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from ._common import NAN

_TOL = 1e-9
# Elements of one (splits × answers) chunk: bounds the memory to ~5·10^7 bytes per array.
_CHUNK_ELEMENTS = 6_000_000


def _by_value(values: np.ndarray, answer: np.ndarray, weight: np.ndarray, groups: int):
    """Distinct values ascending, and the sparse (answers × values) matrix of summed weights."""
    distinct, code = np.unique(values, return_inverse=True)
    matrix = sparse.csr_matrix(
        (weight, (answer, code.reshape(-1))), shape=(groups, max(distinct.size, 1))
    )
    return distinct, matrix


def _suffix(cal_t: np.ndarray, matrix) -> np.ndarray:
    """Per column of `cal_t` (answers × rows, C-ordered: the layout the sparse product reads
    without a copy), Σ over the calibration answers' claims with value at or after each distinct
    value: (rows × (values + 1)), the last column 0."""
    per_value = np.asarray((matrix.T @ cal_t).T)
    out = np.zeros((cal_t.shape[1], per_value.shape[1] + 1))
    out[:, :-1] = np.cumsum(per_value[:, ::-1], axis=1)[:, ::-1]
    return out


def crc_splits(
    confidence: np.ndarray,
    supported: np.ndarray,
    answer: np.ndarray,
    alpha: float,
    *,
    n_splits: int = 200,
    seed: int = 0,
    bound: float = 1.0,
    return_masks: bool = False,
) -> dict[str, Any]:
    """λ̂ fit on all the answers, and over `n_splits` seeded random halves: each half's λ̂ and
    the false-claim rate it realizes on the other half.

    Per claim: ``confidence`` (calibrated P(SUPPORTED)), ``supported`` (0/1) and ``answer`` (its
    answer's id). Each split draws ⌊G/2⌋ of the G answers as calibration answers (the rest are
    the test answers), as the report's single split does. Loss of answer i at cut λ:
    #{conf ≥ λ, unsupported}_i / k_i; λ̂ = inf{λ : Σ_cal L_i(λ) ≤ (n+1)α − B} (Angelopoulos et
    al. 2024, Theorem 1; the same cut as `conformal.crc_threshold`), keep claims with
    conf ≥ λ̂; λ̂ = +inf (keep nothing) when no cut meets the bound.

    Every sum over a split's answers is a product of the split's 0/1 answer mask with a sparse
    (answers × distinct confidences) matrix, then a cumulative sum over the distinct values.

    Returns ``lambda_hat_full`` (fit on all G answers), the per-split arrays ``lambda_hat``,
    ``realized`` (mean loss over the test answers), ``retained_share`` (retained test claims /
    test claims), ``abstaining_share`` (test answers with nothing kept / test answers), and
    ``test_claims``; with ``return_masks`` also ``calibration`` (splits × answers, answers in
    sorted id order, True = calibration answer), for checking small cases.
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    conf, sup, ans = _split_inputs(confidence, supported, answer)
    groups = int(ans.max()) + 1 if ans.size else 0
    if groups == 0:
        empty = np.empty(0)
        return {
            "lambda_hat_full": NAN,
            "lambda_hat": empty,
            "realized": empty,
            "retained_share": empty,
            "abstaining_share": empty,
            "test_claims": np.empty(0, dtype=np.int64),
            "answers": 0,
        }
    sums = _Sums.of(conf, sup, ans, groups)
    lam_full, _ = sums.thresholds(np.ones((groups, 1)), groups, alpha, bound)
    rng = np.random.default_rng(seed)
    n_cal = groups // 2
    chunk = max(1, _CHUNK_ELEMENTS // groups)
    lam_all, realized, retained_share, abstaining, test_claims, masks = [], [], [], [], [], []
    for start in range(0, n_splits, chunk):
        rows = min(chunk, n_splits - start)
        cal = _calibration_draws(rng, rows, groups, n_cal)
        lam, loss, ret, abst, claims = sums.evaluate(cal, n_cal, alpha, bound)
        lam_all.append(lam)
        realized.append(loss)
        retained_share.append(ret)
        abstaining.append(abst)
        if return_masks:
            masks.append(cal > 0)
        test_claims.append(claims)
    out = {
        "lambda_hat_full": float(lam_full[0]),
        "lambda_hat": np.concatenate(lam_all),
        "realized": np.concatenate(realized),
        "retained_share": np.concatenate(retained_share),
        "abstaining_share": np.concatenate(abstaining),
        "test_claims": np.concatenate(test_claims),
        "answers": groups,
    }
    if return_masks:
        out["calibration"] = np.concatenate(masks) if masks else np.empty((0, groups), bool)
    return out


def _split_inputs(confidence, supported, answer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(confidence, supported as bool, answer codes 0..G−1) per claim, checked."""
    conf = np.asarray(confidence, dtype=float).reshape(-1)
    sup = np.asarray(supported).astype(bool).reshape(-1)
    raw_answer = np.asarray(answer).reshape(-1)
    if not (conf.size == sup.size == raw_answer.size):
        raise ValueError("confidence, supported and answer differ in length")
    if np.isnan(conf).any():
        raise ValueError("confidence contains NaN")
    _, ans = np.unique(raw_answer, return_inverse=True)
    return conf, sup, ans.reshape(-1)


def _calibration_draws(rng, rows: int, groups: int, n_cal: int) -> np.ndarray:
    """(rows × answers) 0/1 calibration masks: a random permutation per row, its first ⌊G/2⌋
    answers calibrate — the answers with the ⌊G/2⌋ smallest of G uniform draws (found by a
    partition, not a sort)."""
    draws = rng.random((rows, groups))
    if not n_cal:
        return np.zeros((rows, groups))
    kth = np.partition(draws, n_cal - 1, axis=1)[:, n_cal - 1 : n_cal]
    return (draws <= kth).astype(float)


@dataclass(frozen=True)
class _Sums:
    """The per-answer sparse sums every split reads: distinct unsupported confidences u with the
    (answers × u) loss matrix, distinct confidences v with the count matrix, each answer's
    lowest and highest confidence, and the totals over all answers."""

    u: np.ndarray
    loss_matrix: Any
    v: np.ndarray
    count_matrix: Any
    answer_min: np.ndarray
    answer_max: np.ndarray
    loss_total: np.ndarray
    count_total: np.ndarray

    @classmethod
    def of(cls, conf, sup, ans, groups: int) -> _Sums:
        k = np.bincount(ans, minlength=groups)
        w = 1.0 / k[ans]
        u, loss_matrix = _by_value(conf[~sup], ans[~sup], w[~sup], groups)
        v, count_matrix = _by_value(conf, ans, np.ones(conf.size), groups)
        answer_min = np.full(groups, np.inf)
        np.minimum.at(answer_min, ans, conf)
        answer_max = np.full(groups, -np.inf)
        np.maximum.at(answer_max, ans, conf)
        all_answers = np.ones((groups, 1))
        loss_total = _suffix(all_answers, loss_matrix)[0]
        count_total = _suffix(all_answers, count_matrix)[0]
        return cls(u, loss_matrix, v, count_matrix, answer_min, answer_max, loss_total,
                   count_total)  # fmt: skip

    def thresholds(self, cal_t, n_cal: int, alpha: float, bound: float):
        """λ̂ per column of `cal_t`, and the calibration loss suffix sums per column."""
        u = self.u
        suffix = _suffix(cal_t, self.loss_matrix)
        rows = cal_t.shape[1]
        budget = (n_cal + 1) * float(alpha) - float(bound)
        if budget < -_TOL or n_cal == 0:
            return np.full(rows, np.inf), suffix
        keep_all = suffix[:, 0] <= budget + _TOL
        if u.size:
            # For λ just above u_j the risk is the suffix from u_{j+1} on.
            ok = suffix[:, 1 : u.size + 1] <= budget + _TOL
            lam = np.nextafter(u[np.argmax(ok, axis=1)], np.inf)
        else:
            lam = np.zeros(rows)
        if keep_all.any():  # keep every claim: λ̂ = min(0, the lowest calibration confidence)
            lowest = np.minimum(0.0, np.where(cal_t[:, keep_all] > 0, self.answer_min[:, None],
                                              np.inf).min(axis=0))  # fmt: skip
            lam[keep_all] = lowest
        return lam, suffix

    def evaluate(self, cal, n_cal: int, alpha: float, bound: float):
        """Per split row: λ̂, the realized loss, retained share and abstaining share on the
        test answers, and the test claims."""
        rows, groups = cal.shape
        n_test = groups - n_cal
        cal_t = np.ascontiguousarray(cal.T)
        lam, loss_suffix = self.thresholds(cal_t, n_cal, alpha, bound)
        row = np.arange(rows)
        at_u = np.searchsorted(self.u, lam, side="left")
        loss = self.loss_total[at_u] - loss_suffix[row, at_u]
        at_v = np.searchsorted(self.v, lam, side="left")
        count_suffix = _suffix(cal_t, self.count_matrix)
        retained = self.count_total[at_v] - count_suffix[row, at_v]
        claims = self.count_total[0] - count_suffix[:, 0]
        abst = ((cal == 0) & (self.answer_max[None, :] < lam[:, None])).sum(axis=1)
        realized = loss / n_test if n_test else np.full(rows, NAN)
        with np.errstate(divide="ignore", invalid="ignore"):
            ret = np.where(claims > 0, retained / np.maximum(claims, 1), NAN)
        abstaining = abst / n_test if n_test else np.full(rows, NAN)
        return lam, realized, ret, abstaining, np.rint(claims).astype(np.int64)
