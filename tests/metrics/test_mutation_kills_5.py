"""Tests for the survivors of the seventh session's second mutation sample (seed 22,
tests/MUTATION.md), written after that run had reached them: outside mutmut's selection while the
run went on (mutmut recopies tests/ at every chunk), in it afterwards. Expected figures by hand
or by scipy, never by the function under test."""

import pytest

# --- active and paired: a missing standard deviation, the difference's clip -----------------


def test_inclusion_probabilities_refuse_a_missing_sd_with_a_clear_error():
    """active `inclusion_probabilities` `_6` (`np.asarray(list(error_sd))` without
    `dtype=float`: a None among the standard deviations gave NumPy's TypeError from `isnan` on
    an object array instead of the function's own message)."""
    from metrics import stats

    with pytest.raises(ValueError, match=r"^error_sd contains NaN or infinite values"):
        stats.inclusion_probabilities([0.1, None, 0.3], 1)


def test_paired_difference_interval_is_clipped_to_minus_one_one():
    """paired `_finish` `_58` (the upper end clipped at 2 for 1). Two questions, one unit each:
    A 0, 0 and B 1, 0: D = 0.5, SE = |1 − 0|/2 = 0.5 by hand, t₀.₉₇₅,₁ = 12.7 (scipy): the
    interval 0.5 ± 6.35 clipped to [−1, 1], a difference of two shares."""
    import numpy as np

    from metrics.stats.paired import paired_gold_difference

    est = paired_gold_difference(
        np.array([0.0, 0.0, 1.0, 0.0]), np.array([0, 0, 1, 1]), np.array(["q1", "q2", "q1", "q2"])
    )
    assert est.value == pytest.approx(0.5)
    assert est.std_error == pytest.approx(0.5)
    assert est.ci == (-1.0, 1.0)


# --- active: the selective-judging sentence names its level -------------------------------------


@pytest.mark.parametrize(("delta", "level"), [(0.1, 90), (0.05, 95)])
def test_selective_threshold_sentence_names_the_lower_bounds_level(delta, level):
    """active `selective_threshold` `_241` (the bound's level written as (2 − δ)·100%). 300
    audited claims, all agreeing, confidences 0.5–1: every cut certifies, the lowest is chosen;
    the exact one-sided lower bound of 300 of 300 at level 1 − δ is δ^(1/300) by hand (99.2%,
    99.0%)."""
    import numpy as np

    from metrics import stats

    result = stats.selective_threshold(
        np.linspace(0.5, 1, 300), np.ones(300, bool), target=0.9, delta=delta
    )
    assert result.threshold == 0.5
    bound = 100 * delta ** (1 / 300)
    assert f"agreement 100.0%, lower {level}% bound {bound:.1f}%)" in result.method
