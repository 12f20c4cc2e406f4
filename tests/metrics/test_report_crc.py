"""Calibration, the back-off frontier and the CRC cut on a project where every branch runs.

44 audited answers (22 calibrate the cut, 22 are held out), 8 more judged but not audited: at
α = 0.10 the cut is finite and keeps some claims but not all. Every expected figure comes from
`tests.metrics.independent` (scikit-learn calibrators, the CRC definition evaluated literally),
never from `metrics`.
"""

import numpy as np
import pytest

from tests.metrics import independent as ref
from tests.metrics.factories_report import (
    CRC_AUDITED_ANSWERS,
    CRC_CONF,
    CRC_GOLD,
    CRC_K,
    S,
    build_crc_project,
    read_only_scope,
    report_rolled_back,
)

pytestmark = pytest.mark.django_db
AUDITED = CRC_AUDITED_ANSWERS * CRC_K
CONF = np.array(CRC_CONF[:AUDITED])
ALL_CONF = np.array(CRC_CONF)
SUPPORTED = np.array(CRC_GOLD) == S
ANSWER = np.repeat(np.arange(CRC_AUDITED_ANSWERS), CRC_K)
# Answers shuffled by default_rng(CRC_SEED = 0), the first half calibrates the cut.
CALIBRATION = sorted(
    np.random.default_rng(0).permutation(CRC_AUDITED_ANSWERS)[: CRC_AUDITED_ANSWERS // 2].tolist()
)
HELD_OUT = [a for a in range(CRC_AUDITED_ANSWERS) if a not in CALIBRATION]


def per_answer(values: np.ndarray, answers: list) -> list:
    return [values[a == ANSWER] for a in answers]


@pytest.fixture(scope="module")
def expected():
    """Out-of-fold calibrations, the chosen one, and the calibrator fitted on every audited claim."""
    oof = {m: ref.out_of_fold(CONF, SUPPORTED.astype(float), ANSWER, m) for m in ref.FITS}
    eces = {"raw": ref.ece(CONF, SUPPORTED), **{m: ref.ece(v, SUPPORTED) for m, v in oof.items()}}
    used = min(("platt", "isotonic"), key=eces.get)
    calibrated = np.round(oof[used], 4)
    whole = np.round(ref.FITS[used](CONF, SUPPORTED.astype(float))(ALL_CONF), 4)
    return {"eces": eces, "used": used, "calibrated": calibrated, "whole": whole}


@pytest.fixture(scope=read_only_scope)
def block(django_db_setup, django_db_blocker):
    report = report_rolled_back(build_crc_project, django_db_blocker, built=True)
    assert not any(key.startswith("_") for key in report.data)  # nothing private in the report
    return report.data["judge"], report.crc_inputs[0]


def test_crc_project_is_planted_large_enough_for_every_branch(expected):
    # Not a check of the product: of the planted data, so the tests below cannot pass on 0 = 0.
    cut = ref.crc_cut(
        per_answer(expected["calibrated"], CALIBRATION), per_answer(SUPPORTED, CALIBRATION), 0.10
    )
    assert np.isfinite(cut)
    kept = sum(int(np.sum(c >= cut)) for c in per_answer(expected["calibrated"], HELD_OUT))
    assert 0 < kept < len(HELD_OUT) * CRC_K
    # The cut on the held-out half, on the unshuffled first half, and with the other
    # calibrator would all be different numbers.
    assert (
        ref.crc_cut(
            per_answer(expected["calibrated"], HELD_OUT), per_answer(SUPPORTED, HELD_OUT), 0.10
        )
        != cut
    )
    assert list(range(CRC_AUDITED_ANSWERS // 2)) != CALIBRATION
    assert abs(expected["eces"]["platt"] - expected["eces"]["isotonic"]) > 0.005


def test_crc_project_ece_and_the_calibrator_chosen(block, expected):
    block, _ = block
    assert block["calibration"]["n"] == AUDITED
    assert block["calibration"]["answers"] == CRC_AUDITED_ANSWERS
    for name in ("raw", "platt", "isotonic"):
        assert block["ece"][name] == pytest.approx(expected["eces"][name], abs=1e-6)
    assert block["calibration"]["used_for_frontier"] == expected["used"] == "isotonic"


def test_crc_project_frontier_at_every_cut(block, expected):
    block, _ = block
    calibrated = expected["calibrated"]
    assert [row["tau"] for row in block["frontier"]] == pytest.approx(np.linspace(0, 1, 21))
    for row in block["frontier"]:
        keep = calibrated >= row["tau"]
        assert row["claims_retained"] == int(keep.sum())
        if keep.any():
            assert row["faithfulness"] == pytest.approx(SUPPORTED[keep].mean())
        else:
            assert row["faithfulness"] is None
        losses = [
            ref.crc_loss(c, s, row["tau"])
            for c, s in zip(
                per_answer(calibrated, range(CRC_AUDITED_ANSWERS)),
                per_answer(SUPPORTED, range(CRC_AUDITED_ANSWERS)),
                strict=True,
            )
        ]
        assert row["false_claim_rate"] == pytest.approx(np.mean(losses))
        kept_per_answer = [
            int(np.sum(calibrated[a == ANSWER] >= row["tau"])) for a in range(CRC_AUDITED_ANSWERS)
        ]
        assert row["answers_abstaining"] == kept_per_answer.count(0)
    # Some cut in the middle keeps part of the claims: the rows are not all 0 or all 220.
    assert any(0 < row["claims_retained"] < AUDITED for row in block["frontier"])


def test_crc_project_cut_is_calibrated_on_the_seeded_calibration_half(block, expected):
    block, inputs = block
    crc = block["crc"]
    calibrated = expected["calibrated"]
    # Which answers calibrate: the seeded shuffle's first 22, claim by claim.
    half = np.array(inputs["calibration_half"], dtype=bool)
    answer_of_claim = np.array(inputs["answer"])
    assert sorted(set(answer_of_claim[half].tolist())) == CALIBRATION
    assert half.sum() == len(CALIBRATION) * CRC_K
    assert (crc["calibration_answers"], crc["test_answers"]) == (22, 22)

    cut = ref.crc_cut(per_answer(calibrated, CALIBRATION), per_answer(SUPPORTED, CALIBRATION), 0.10)
    assert crc["alpha"] == 0.10
    assert not crc["retains_nothing"]
    assert crc["lambda_hat"] == pytest.approx(cut, abs=1e-12)

    held_c, held_s = per_answer(calibrated, HELD_OUT), per_answer(SUPPORTED, HELD_OUT)
    retained = sum(int(np.sum(c >= cut)) for c in held_c)
    supported_retained = sum(
        int(np.sum((c >= cut) & s)) for c, s in zip(held_c, held_s, strict=True)
    )
    assert crc["test_claims"] == len(HELD_OUT) * CRC_K
    assert crc["retained"] == retained
    assert crc["retained_share"] == pytest.approx(retained / (len(HELD_OUT) * CRC_K))
    assert crc["faithfulness_retained"] == pytest.approx(supported_retained / retained)
    assert crc["realized_false_claim_rate"] == pytest.approx(
        np.mean([ref.crc_loss(c, s, cut) for c, s in zip(held_c, held_s, strict=True)])
    )
    assert crc["answers_abstaining"] == sum(1 for c in held_c if not np.any(c >= cut))


def test_crc_project_cut_applied_to_every_judged_claim(block, expected):
    """The project-wide count: every judged claim, calibrated by the calibrator fitted on all
    audited claims, kept when its calibrated confidence is at least λ̂."""
    block, _ = block
    crc = block["crc"]
    cut = crc["lambda_hat"]
    assert crc["judged_with_confidence"] == ALL_CONF.size
    kept = int(np.sum(expected["whole"] >= cut))
    assert 0 < kept < ALL_CONF.size
    assert crc["retained_all_judged"] == kept


def test_crc_splits_spread_keeps_its_keys_when_no_split_gives_a_rate():
    """Kills `crc_splits._spread`'s renamed key (MUTATION.md): with no finite rate over the
    splits the summary still has mean, sd, q05 and q95, each nan; with 1, 2, 3 it has mean 2,
    sd 1 (ddof 1) and numpy's linear quantiles 1.1 and 2.9 (by hand)."""
    import math

    from metrics.services.crc_splits import _spread

    empty = _spread(np.array([np.nan, np.inf]))
    assert sorted(empty) == ["mean", "q05", "q95", "sd"]
    assert all(math.isnan(v) for v in empty.values())
    full = _spread(np.array([3.0, np.nan, 1.0, 2.0]))
    assert full == pytest.approx({"mean": 2.0, "sd": 1.0, "q05": 1.1, "q95": 2.9})
