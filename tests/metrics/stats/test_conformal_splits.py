"""CRC over many seeded calibration/test splits: every split's λ̂ and held-out figures against
the CRC definition evaluated literally (tests.metrics.independent), and the guarantee in
expectation over splits."""

import math

import numpy as np
import pytest

from metrics.stats.conformal_splits import crc_splits
from tests.metrics import independent as ref


def _data(seed: int, answers: int = 40):
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 6, answers)
    answer = np.repeat(np.arange(answers) * 7 + 3, k)  # ids need not be 0..G−1
    supported = rng.random(answer.size) < 0.7
    conf = np.round(
        np.where(supported, rng.beta(5, 2, answer.size), rng.beta(2, 4, answer.size)), 2
    )
    return conf, supported, answer


@pytest.mark.parametrize("seed", [0, 1])
def test_each_split_matches_the_literal_definition(seed):
    conf, supported, answer = _data(seed)
    ids = np.unique(answer)
    out = crc_splits(conf, supported, answer, 0.15, n_splits=25, seed=seed, return_masks=True)
    per = [(conf[answer == a], supported[answer == a]) for a in ids]
    assert out["lambda_hat_full"] == ref.crc_cut([c for c, _ in per], [s for _, s in per], 0.15)
    for split in range(25):
        cal = out["calibration"][split]
        assert cal.sum() == ids.size // 2
        cal_c = [per[i][0] for i in np.flatnonzero(cal)]
        cal_s = [per[i][1] for i in np.flatnonzero(cal)]
        lam = ref.crc_cut(cal_c, cal_s, 0.15)
        assert out["lambda_hat"][split] == lam
        test = [per[i] for i in np.flatnonzero(~cal)]
        realized = np.mean([ref.crc_loss(c, s, lam) for c, s in test])
        kept = sum(int((c >= lam).sum()) for c, _ in test)
        claims = sum(c.size for c, _ in test)
        abstaining = sum(int(not (c >= lam).any()) for c, _ in test)
        assert out["realized"][split] == pytest.approx(realized, abs=1e-12)
        assert out["retained_share"][split] == pytest.approx(kept / claims)
        assert out["test_claims"][split] == claims
        assert out["abstaining_share"][split] == pytest.approx(abstaining / len(test))


def test_splits_are_distinct_and_seeded():
    conf, supported, answer = _data(3)
    a = crc_splits(conf, supported, answer, 0.1, n_splits=50, seed=4, return_masks=True)
    b = crc_splits(conf, supported, answer, 0.1, n_splits=50, seed=4, return_masks=True)
    assert np.array_equal(a["calibration"], b["calibration"])
    assert np.array_equal(a["realized"], b["realized"])
    assert len({row.tobytes() for row in a["calibration"]}) == 50


def test_expected_risk_over_splits_is_at_most_alpha_while_single_splits_overshoot():
    """The guarantee is in expectation over the calibration draw: the mean realized rate over
    many splits is ≤ α (up to simulation error), while a fair share of single splits exceed α —
    the reason to report the spread rather than one split."""
    conf, supported, answer = _data(5, answers=300)
    out = crc_splits(conf, supported, answer, 0.10, n_splits=1000, seed=0)
    assert out["realized"].mean() <= 0.10 + 0.003
    assert 0.05 < np.mean(out["realized"] > 0.10) < 0.6


def test_no_cut_meets_alpha_keeps_nothing():
    conf, supported, answer = _data(6, answers=6)
    out = crc_splits(conf, supported, answer, 0.2, n_splits=5)  # (3 + 1)·0.2 < 1
    assert np.isinf(out["lambda_hat"]).all()
    assert (out["retained_share"] == 0).all()
    assert (out["realized"] == 0).all()


def test_empty_and_bad_input():
    out = crc_splits(np.empty(0), np.empty(0), np.empty(0), 0.1)
    assert math.isnan(out["lambda_hat_full"])
    assert out["realized"].size == 0
    with pytest.raises(ValueError, match="alpha"):
        crc_splits(np.ones(2), np.ones(2), np.arange(2), 1.5)
    with pytest.raises(ValueError, match="NaN"):
        crc_splits(np.array([np.nan]), np.ones(1), np.arange(1), 0.1)
