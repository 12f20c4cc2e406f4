"""The report's calibration block (metrics/services/calibration.py): which recalibration it picks,
from how many claims, and that the chosen one is applied."""

import math

import numpy as np
import pytest

from tests.metrics import independent as ref

# --- metrics.services.calibration: which recalibration, and from how many claims -----------


def test_lower_ece_picks_the_recalibration_with_the_smaller_ece():
    from metrics.services.calibration import _lower_ece

    assert _lower_ece({"raw": 0.2, "platt": 0.05, "isotonic": 0.1}) == "platt"
    assert _lower_ece({"raw": 0.2, "platt": 0.1, "isotonic": 0.05}) == "isotonic"
    assert _lower_ece({"raw": 0.2, "platt": math.nan, "isotonic": 0.3}) == "isotonic"
    assert _lower_ece({"raw": 0.2, "platt": math.nan, "isotonic": None}) == "raw"


def test_calibration_recalibrates_from_two_claims_in_two_answers_of_both_outcomes():
    import pandas as pd

    from metrics.services.calibration import _calibration, confidence_counts

    conf = np.array([0.8, 0.3])
    block, _ = _calibration(
        confidence=conf,
        supported=np.array([1.0, 0.0]),
        answer_ids=np.array([1, 2]),
        claim_ids=np.array([10, 11]),
        judged_confidence=confidence_counts(conf),
        grounded_links=pd.DataFrame({"claim_id": [], "fact_id": []}),
        facts=pd.DataFrame({"answer_id": [], "fact_id": []}),
    )
    detail = block["detail"]
    # Two claims, two answers, one supported and one not: the rule's minimum, so enough, and
    # the recalibrations are fitted (out of fold: each claim by a fit on the other alone).
    assert (detail["n"], detail["answers"], detail["enough"]) == (2, 2, True)
    assert math.isfinite(block["ece"]["isotonic"])
    # Isotonic on one claim predicts its outcome: claim 0 gets 0, claim 1 gets 1, so the ECE
    # is (|0 − 1| + |1 − 0|)/2 = 1.
    assert block["ece"]["isotonic"] == pytest.approx(1.0)


# --- calibration: the report applies Platt when Platt is chosen ----------------------------------


def test_apply_calibrator_platt_is_platts_sigmoid_by_scikit_learn():
    """calibration `_apply_calibrator` `_17` (`method == "platt" and False`: isotonic applied
    where the report chose Platt). 40 audited claims; the calibrated confidences of 6 judged
    claims (one missing) against Platt's fit by scikit-learn (tests.metrics.independent)."""
    import math

    import numpy as np

    from metrics.services.calibration import _apply_calibrator

    rng = np.random.default_rng(2)
    y = (rng.random(40) < 0.6).astype(float)
    c = np.clip(np.where(y > 0, 0.7, 0.4) + rng.normal(0, 0.15, 40), 0, 1)
    values = np.array([0.1, 0.35, math.nan, 0.5, 0.8, 0.95])
    out = _apply_calibrator("platt", c, y, values)
    expected = ref.platt_fit(c, y)(values[[0, 1, 3, 4, 5]])
    assert math.isnan(out[2])
    assert out[[0, 1, 3, 4, 5]] == pytest.approx(expected, abs=1e-6)
