"""Conformal risk control (CRC): the confidence cut λ̂ that keeps the false-claim rate of the
retained claims at most α, fit on a seeded calibration half of the audited answers and checked
on the other half; and the compact inputs a snapshot stores so a lead's α is applied on a page
load."""

import math

import numpy as np

from metrics import stats
from metrics.services.common import _slices

DEFAULT_ALPHA = 0.10
# Above this many audited claims a snapshot stores the CRC cut for a grid of α instead of the
# per-claim arrays, so the page stays a small read; the α form then snaps to the grid.
CRC_INPUTS_MAX_CLAIMS = 50_000
CRC_ALPHA_GRID = (0.01, 0.02, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
CRC_SEED = 0

CRC_CAVEAT = (
    "The guarantee holds in expectation over the calibration draw: the false-claim rate "
    "averaged over many random calibration sets is at most α. One deployment can overshoot it, "
    "and it assumes future answers are exchangeable with the calibration answers."
)


def _crc_parts(inputs: dict) -> tuple[list, list, list, list]:
    """Per-answer confidence and supported arrays of the calibration and the test half."""
    confidence = np.asarray(inputs.get("confidence", []), dtype=float)
    supported = np.asarray(inputs.get("supported", []), dtype=bool)
    answer = np.asarray(inputs.get("answer", []), dtype=np.int64)
    half = np.asarray(inputs.get("calibration_half", []), dtype=bool)

    def per_answer(mask: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if not mask.any():
            return [], []
        order = np.argsort(answer[mask], kind="stable")
        a, c, s = answer[mask][order], confidence[mask][order], supported[mask][order]
        cuts = np.flatnonzero(np.diff(a)) + 1
        return _slices(c, cuts), _slices(s, cuts)

    return (*per_answer(half), *per_answer(~half))


def crc_from_inputs(inputs: dict, *, alpha: float, parts: tuple | None = None) -> dict:
    """λ̂ on the calibration half, the retained claims and realized false-claim rate on the test
    half, and the claims retained project-wide, from the compact arrays stored in a snapshot.

    Cheap enough to run on a page load for the α a lead types. For a large audit the snapshot
    holds only a grid of precomputed cuts: the nearest α of the grid is returned.
    """
    if "grid" in inputs:
        nearest = min(inputs["grid"], key=lambda key: abs(float(key) - alpha))
        result = dict(inputs["grid"][nearest])
        result["alpha_requested"] = float(alpha)
        result["alpha_snapped"] = True
        return result
    judged_values = np.asarray(inputs.get("judged_values", []), dtype=float)
    judged_counts = np.asarray(inputs.get("judged_counts", []), dtype=np.int64)
    cal_c, cal_s, test_c, test_s = parts or _crc_parts(inputs)
    lambda_hat = float(stats.crc_threshold(cal_c, cal_s, alpha)) if cal_c else math.nan
    held_out = stats.crc_evaluate(test_c, test_s, lambda_hat)
    if math.isnan(lambda_hat):
        retained_all = 0
    else:
        first_kept = np.searchsorted(judged_values, lambda_hat, side="left")
        retained_all = int(judged_counts[first_kept:].sum())
    return {
        "alpha": float(alpha),
        "lambda_hat": lambda_hat,
        "retained": held_out["claims_retained"],
        "retained_share": held_out["retained_share"],
        "test_claims": held_out["claims_total"],
        "faithfulness_retained": held_out["faithfulness_retained"],
        "answers_abstaining": held_out["answers_abstaining"],
        "realized_false_claim_rate": held_out["false_claim_rate"],
        "calibration_answers": len(cal_c),
        "test_answers": len(test_c),
        "retained_all_judged": retained_all,
        "judged_with_confidence": int(judged_counts.sum()),
        "retains_nothing": lambda_hat == math.inf,
        "seed": CRC_SEED,
        "caveat": CRC_CAVEAT,
    }


def _crc_default_and_stored(crc_inputs: dict, *, audited: int) -> tuple[dict, dict]:
    """CRC at DEFAULT_ALPHA, and what the snapshot keeps for the α form: the arrays, or for
    more than CRC_INPUTS_MAX_CLAIMS audited claims the cut at each α of CRC_ALPHA_GRID."""
    parts = _crc_parts(crc_inputs)
    crc = crc_from_inputs(crc_inputs, alpha=DEFAULT_ALPHA, parts=parts)
    if audited > CRC_INPUTS_MAX_CLAIMS:
        crc_inputs = {
            "grid": {
                f"{alpha:.2f}": crc
                if alpha == DEFAULT_ALPHA
                else crc_from_inputs(crc_inputs, alpha=alpha, parts=parts)
                for alpha in CRC_ALPHA_GRID
            }
        }
    return crc, crc_inputs
