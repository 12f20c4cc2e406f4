"""Conformal risk control over many seeded calibration/test splits, and how informative the
judge's confidence is (AUC against gold) — so one split is not over-read."""

import math

import numpy as np

from metrics import format as fmt
from metrics.stats.conformal_splits import crc_splits
from metrics.stats.ranking import auc_delong

CRC_SPLITS = 200
CRC_SPLITS_SEED = 0
# Below this mean retained share of the held-out claims, the cut meets α mostly by abstaining.
ABSTAINING_BELOW = 0.5
NOT_COMPUTED = "not computed: this judge gives no confidences"


def _finite(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values)]


def _spread(values: np.ndarray) -> dict:
    ok = _finite(values)
    if not ok.size:
        return {"mean": math.nan, "sd": math.nan, "q05": math.nan, "q95": math.nan}
    return {
        "mean": float(ok.mean()),
        "sd": float(ok.std(ddof=1)) if ok.size > 1 else math.nan,
        "q05": float(np.quantile(ok, 0.05)),
        "q95": float(np.quantile(ok, 0.95)),
    }


def _verdict(summary: dict, alpha: float) -> list[str]:
    """Plain sentences: what the splits and the AUC say about the cut."""
    said = []
    realized, retained, auc = summary["realized"], summary["retained_share"], summary["auc"]
    if math.isfinite(realized["mean"]):
        said.append(
            f"Over {summary['splits']} random halves of the audited answers the cut realized a "
            f"mean false-claim rate of {realized['mean']:.3f} (sd {realized['sd']:.3f}; 90% of "
            f"splits between {realized['q05']:.3f} and {realized['q95']:.3f}) against α = "
            f"{alpha:.2f}; {fmt.percent(summary['share_over_alpha'])} of splits exceeded α."
        )
    if math.isfinite(retained["mean"]) and retained["mean"] < ABSTAINING_BELOW:
        said.append(
            f"The cut meets α mostly by abstaining: it keeps on average "
            f"{fmt.percent(retained['mean'])} of the held-out claims."
        )
    lo = auc["ci"][0]
    if math.isfinite(auc["value"]) and math.isfinite(lo) and lo <= 0.5:
        said.append(
            f"The confidence barely separates supported from unsupported claims (AUC "
            f"{auc['value']:.2f}, 95% interval reaching {lo:.2f}): a cut on it is close to "
            "dropping claims at random."
        )
    return said


def _auc_block(confidence: np.ndarray, supported: np.ndarray) -> dict:
    """The raw confidence's AUC against gold SUPPORTED, as the summary has always written it."""
    positive = np.asarray(supported).astype(bool)
    auc = auc_delong(confidence[positive], confidence[~positive], interval="wald")
    return {
        "value": auc.value,
        "ci": auc.ci,
        "positives": auc.positives,
        "negatives": auc.negatives,
    }


def crc_splits_summary(
    *,
    calibrated: np.ndarray,
    supported: np.ndarray,
    answers: np.ndarray,
    raw_confidence: np.ndarray,
    alpha: float,
) -> dict | None:
    """λ̂ fit on every audited answer (the cut to deploy), the median λ̂ and the realized
    false-claim rate over CRC_SPLITS seeded random halves, and the AUC of the raw confidence
    against gold with DeLong's interval. None when no audited claim has a confidence."""
    if calibrated.size == 0:
        return None
    result = crc_splits(
        calibrated, supported, answers, alpha, n_splits=CRC_SPLITS, seed=CRC_SPLITS_SEED
    )
    realized = result["realized"]
    ok = np.isfinite(realized)
    lam = result["lambda_hat"]
    summary = {
        "splits": CRC_SPLITS,
        "seed": CRC_SPLITS_SEED,
        "alpha": float(alpha),
        "answers": result["answers"],
        "lambda_hat_full": result["lambda_hat_full"],
        "lambda_hat_median": float(np.median(lam)) if lam.size else math.nan,
        "splits_keeping_nothing": int(np.isinf(lam).sum()),
        "realized": _spread(realized),
        "share_over_alpha": float(np.mean(realized[ok] > alpha)) if ok.any() else math.nan,
        "retained_share": _spread(result["retained_share"]),
        "abstaining_share": _spread(result["abstaining_share"]),
        "auc": _auc_block(raw_confidence, supported),
        "abstaining_below": ABSTAINING_BELOW,
    }
    summary["mostly_abstaining"] = bool(
        math.isfinite(summary["retained_share"]["mean"])
        and summary["retained_share"]["mean"] < ABSTAINING_BELOW
    )
    summary["verdict"] = _verdict(summary, alpha)
    summary["method"] = (
        f"λ̂ to deploy is fit on all {result['answers']} audited answers; the realized "
        f"false-claim rate is the mean over {CRC_SPLITS} random calibration/test halves of the "
        f"audited answers (seed {CRC_SPLITS_SEED}), each half's own λ̂ checked on the other "
        "half, with its sd, 5–95% range and the share of splits above α; AUC of the raw "
        "confidence against gold SUPPORTED, DeLong interval (95%)."
    )
    return summary
