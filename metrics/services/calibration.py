"""Calibration of the judge's P(SUPPORTED) on the audited claims: reliability bins and ECE raw,
Platt and isotonic (out of fold, grouped by answer), the faithfulness/coverage frontier along
the confidence cut, and the arrays conformal risk control works on."""

import math

import numpy as np
import pandas as pd

from metrics import stats
from metrics.services.common import _slices
from metrics.services.conformal import CRC_SEED, DEFAULT_ALPHA, _crc_default_and_stored
from metrics.services.crc_splits import NOT_COMPUTED, crc_splits_summary

CALIBRATION_FOLDS = 5
FRONTIER_CUTS = np.round(np.linspace(0.0, 1.0, 21), 2)


def _split_list(items: list, cuts: np.ndarray) -> list[list]:
    bounds = [0, *cuts.tolist(), len(items)]
    return [items[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def confidence_counts(confidence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct confidences the judge gave (NaN — none given — left out) and how many
    judged claims got each: all CRC reads of the claims beyond the audited ones (the rollups
    get the same pair from `metrics.sql.rollup_confidences` without reading the claims)."""
    values = np.asarray(confidence, dtype=float)
    return np.unique(values[~np.isnan(values)], return_counts=True)


def _apply_calibrator(method: str, c: np.ndarray, y: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Calibrate every judged claim's confidence with a calibrator fit on all audited claims."""
    out = np.full(values.shape, math.nan)
    ok = ~np.isnan(values)
    if method == "raw" or c.size < 2:
        out[ok] = values[ok]
        return out
    fit = stats.platt_calibrator if method == "platt" else stats.isotonic_calibrator
    out[ok] = np.asarray(fit(c, y)(values[ok]), dtype=float)
    return out


def _recalibrated(c: np.ndarray, y: np.ndarray, groups: np.ndarray, enough: bool) -> dict:
    """The raw confidences and their out-of-fold Platt and isotonic recalibrations."""
    curves = {"raw": c}
    if enough:
        for method in ("platt", "isotonic"):
            curves[method] = stats.cross_fitted_calibration(
                c, y, method, folds=CALIBRATION_FOLDS, seed=0, groups=groups
            )
    else:
        curves["platt"] = curves["isotonic"] = np.full(c.shape, math.nan)
    return curves


def _ece_and_bins(curves: dict, y: np.ndarray) -> tuple[dict, dict]:
    """ECE and reliability bins of each curve, over the claims it has a value for."""
    ece = {}
    bins = {}
    for name, values in curves.items():
        ok = ~np.isnan(values)
        ece[name] = stats.expected_calibration_error(values[ok], y[ok]) if ok.any() else math.nan
        table = stats.reliability_bins(values[ok], y[ok]) if ok.any() else None
        bins[name] = (
            table[["lo", "hi", "count", "mean_confidence", "observed_rate"]].to_dict("records")
            if table is not None
            else []
        )
    return ece, bins


def _lower_ece(ece: dict) -> str:
    """The recalibration with the lower out-of-fold ECE ("raw" when neither has one)."""
    candidates = [m for m in ("platt", "isotonic") if ece[m] is not None and math.isfinite(ece[m])]
    return min(candidates, key=lambda m: ece[m]) if candidates else "raw"


def _frontier(
    *,
    calibrated: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    ids: np.ndarray,
    audited_answers: np.ndarray,
    grounded_links: pd.DataFrame,
    facts: pd.DataFrame,
) -> list[dict]:
    """The frontier per answer, with each claim's grounded facts for coverage along it."""
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    cuts = np.flatnonzero(np.diff(sorted_groups)) + 1
    links = grounded_links[grounded_links["claim_id"].isin(ids)]
    facts_of_claim = links.groupby("claim_id")["fact_id"].agg(list).to_dict()
    facts_of_answer = (
        facts[facts["answer_id"].isin(audited_answers)]
        .groupby("answer_id")["fact_id"]
        .agg(list)
        .to_dict()
    )
    claim_facts = [facts_of_claim.get(claim_id, ()) for claim_id in ids[order]]
    has_facts = bool(facts_of_answer)
    size = calibrated.size
    table = stats.frontier(
        _slices(calibrated[order], cuts) if size else [],
        _slices(y[order].astype(bool), cuts) if size else [],
        facts_grounded=_split_list(claim_facts, cuts) if has_facts and size else None,
        cuts=FRONTIER_CUTS,
        facts_total=[facts_of_answer.get(a, []) for a in audited_answers]
        if has_facts and size
        else None,
    )
    return table.to_dict("records")


def _crc_arrays(
    *,
    calibrated: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    audited_answers: np.ndarray,
    judged_calibrated: np.ndarray,
    judged_counts: np.ndarray,
) -> dict:
    """CRC's inputs: a seeded split of the audited answers into a calibration half and a test
    half, and the distinct calibrated confidences of every judged claim with counts (so a lead's
    α can be applied project-wide without rereading the claims). `judged_calibrated` is the
    calibration of each distinct raw confidence, `judged_counts` its claims: the calibrator is
    applied claim by claim, so calibrating the distinct values and summing their counts per
    rounded result is the same histogram."""
    rng = np.random.default_rng(CRC_SEED)
    shuffled = rng.permutation(audited_answers)
    calibration_answers = np.sort(shuffled[: shuffled.size // 2])
    half = np.isin(groups, calibration_answers).astype(np.int8)  # 1 = calibration
    _, answer_index = np.unique(groups, return_inverse=True)
    ok = ~np.isnan(judged_calibrated)
    hist_values, where = np.unique(np.round(judged_calibrated[ok], 4), return_inverse=True)
    hist_counts = np.bincount(
        where.reshape(-1), weights=np.asarray(judged_counts)[ok], minlength=hist_values.size
    ).astype(np.int64)
    return {
        "confidence": calibrated.tolist(),
        "supported": y.astype(int).tolist(),
        "answer": answer_index.astype(int).tolist(),
        "calibration_half": half.tolist(),
        "judged_values": hist_values.tolist(),
        "judged_counts": hist_counts.tolist(),
    }


def _calibration(
    *,
    confidence: np.ndarray,
    supported: np.ndarray,
    answer_ids: np.ndarray,
    claim_ids: np.ndarray,
    judged_confidence: tuple[np.ndarray, np.ndarray],
    grounded_links: pd.DataFrame,
    facts: pd.DataFrame,
) -> tuple[dict, dict]:
    """Reliability, ECE raw/Platt/isotonic (out of fold), the frontier and CRC at α = 0.10.

    Per-claim rows of the audited claims only; of every judged claim, `judged_confidence`: the
    distinct confidences and their counts (`confidence_counts`)."""
    has = ~np.isnan(confidence)
    c, y, groups, ids = confidence[has], supported[has], answer_ids[has], claim_ids[has]
    enough = c.size >= 2 and np.unique(groups).size >= 2 and 0 < y.sum() < y.size
    curves = _recalibrated(c, y, groups, enough)
    ece, bins = _ece_and_bins(curves, y)
    # The frontier and CRC use the recalibration with the lower out-of-fold ECE.
    used = _lower_ece(ece)
    calibrated = np.round(curves[used], 4)
    audited_answers = np.unique(groups)
    frontier = _frontier(
        calibrated=calibrated,
        y=y,
        groups=groups,
        ids=ids,
        audited_answers=audited_answers,
        grounded_links=grounded_links,
        facts=facts,
    )
    crc_inputs = _crc_arrays(
        calibrated=calibrated,
        y=y,
        groups=groups,
        audited_answers=audited_answers,
        judged_calibrated=_apply_calibrator(used, c, y, judged_confidence[0]),
        judged_counts=judged_confidence[1],
    )
    detail = {
        "n": int(c.size),
        "answers": int(audited_answers.size),
        "used_for_frontier": used,
        "bins": bins,
        "folds": CALIBRATION_FOLDS,
        "enough": bool(enough),
    }
    finite = np.isfinite(calibrated)
    detail["not_computed"] = None if c.size else NOT_COMPUTED
    crc, crc_inputs = _crc_default_and_stored(crc_inputs, audited=int(c.size))
    crc["not_computed"] = detail["not_computed"]
    crc["splits"] = crc_splits_summary(
        calibrated=calibrated[finite],
        supported=y[finite],
        answers=groups[finite],
        raw_confidence=c[finite],
        alpha=DEFAULT_ALPHA,
    )
    return {"ece": ece, "detail": detail, "frontier": frontier, "crc": crc}, crc_inputs
