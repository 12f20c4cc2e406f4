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


# --- metrics.stats.conformal_splits.crc_splits: a calibration half whose loss fits the budget


def test_crc_splits_keeps_every_claim_when_the_calibration_loss_is_within_budget():
    from metrics.stats.conformal_splits import crc_splits

    # 10 answers of 2 claims; one unsupported claim (answer 3, confidence 0.5): loss 1/2.
    answer = np.repeat(np.arange(10), 2)
    conf = 0.05 + 0.09 * answer + np.tile([0.0, 0.03], 10)
    conf[7] = 0.5
    supported = np.ones(20, dtype=bool)
    supported[7] = False
    out = crc_splits(conf, supported, answer, 0.2, n_splits=40, seed=1, return_masks=True)
    # All answers: Σ loss = 1/2 ≤ (10 + 1)·0.2 − 1 = 1.2, so every claim is kept: λ̂ = min(0, ·) = 0.
    assert out["lambda_hat_full"] == 0.0
    cal = out["calibration"]
    with_3 = cal[:, 3]
    assert 0 < with_3.sum() < 40
    # A half without answer 3 has loss 0 ≤ (5 + 1)·0.2 − 1 = 0.2: keep all; the test half holds
    # answer 3, realized loss (1/2)/5 = 0.1.
    np.testing.assert_array_equal(out["lambda_hat"][~with_3], 0.0)
    np.testing.assert_array_equal(out["retained_share"][~with_3], 1.0)
    np.testing.assert_allclose(out["realized"][~with_3], 0.1)
    # A half with answer 3 has loss 1/2 > 0.2: the cut is just above 0.5, and the test half keeps
    # its claims above 0.5 (no unsupported claim left to realize).
    np.testing.assert_array_equal(out["lambda_hat"][with_3], np.nextafter(0.5, 1.0))
    np.testing.assert_array_equal(out["realized"][with_3], 0.0)
    for row in np.flatnonzero(with_3):
        test_claims = ~cal[row][answer]
        assert out["retained_share"][row] == pytest.approx(np.mean(conf[test_claims] > 0.5))


# --- metrics.stats.conformal_splits: per-claim inputs given as columns ------------------------


def test_crc_splits_reads_column_vectors_as_one_value_per_claim():
    """conformal_splits `crc_splits` `_21` (`supported` not flattened: a column of 0/1, as a
    one-column table gives it, was used as a 2-D mask). Each input given as an (n, 1) column:
    the full-data cut and each split's held-out risk against the literal CRC definition
    (tests.metrics.independent)."""
    import numpy as np

    from metrics.stats.conformal_splits import crc_splits
    from tests.metrics import independent as ref

    rng = np.random.default_rng(11)
    k = rng.integers(1, 5, 30)
    answer = np.repeat(np.arange(30), k)
    supported = rng.random(answer.size) < 0.7
    conf = np.round(
        np.where(supported, rng.beta(5, 2, answer.size), rng.beta(2, 4, answer.size)), 2
    )
    out = crc_splits(
        conf[:, None],
        supported[:, None],
        answer[:, None],
        0.15,
        n_splits=5,
        seed=2,
        return_masks=True,
    )
    per = [(conf[answer == a], supported[answer == a]) for a in range(30)]
    assert out["lambda_hat_full"] == ref.crc_cut([c for c, _ in per], [s for _, s in per], 0.15)
    for split in range(5):
        cal = out["calibration"][split]
        lam = ref.crc_cut(
            [per[i][0] for i in np.flatnonzero(cal)], [per[i][1] for i in np.flatnonzero(cal)], 0.15
        )
        assert out["lambda_hat"][split] == lam
        test = [per[i] for i in np.flatnonzero(~cal)]
        assert out["realized"][split] == pytest.approx(
            np.mean([ref.crc_loss(c, s, lam) for c, s in test]), abs=1e-12
        )
