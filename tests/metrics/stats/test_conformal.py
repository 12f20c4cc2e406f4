"""Conformal risk control of the false-claim rate, and the back-off frontier."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import stats

# Three answers (k = 2, 3, 1). Unsupported claims: 0.4 (weight 1/2), 0.7 and 0.2 (1/3 each),
# 0.6 (1). Σ_i L_i(λ): λ ≤ 0.2: 13/6; (0.2, 0.4]: 11/6; (0.4, 0.6]: 4/3; (0.6, 0.7]: 1/3; > 0.7: 0.
CONF = [np.array([0.9, 0.4]), np.array([0.8, 0.7, 0.2]), np.array([0.6])]
SUP = [np.array([True, False]), np.array([True, False, False]), np.array([False])]
FACTS = [[["f1", "f2"], ["f2"]], [["g1"], ["g2"], []], [["h1"]]]


def _brute_force_lambda(confidences, supported, alpha, B=1.0):
    """The CRC definition evaluated literally (Angelopoulos et al. 2024, eq. 4): the smallest λ
    among every confidence, the next float above it, and 0, with
    n/(n+1)·R̂(λ) + B/(n+1) ≤ α; R̂ the mean over answers of #(conf ≥ λ, unsupported)/k."""
    n = len(confidences)
    flat = np.concatenate(confidences)
    candidates = np.unique(np.r_[flat, np.nextafter(flat, np.inf), min(0.0, flat.min())])
    for lam in candidates:
        risk = np.mean(
            [np.sum((c >= lam) & ~s) / c.size for c, s in zip(confidences, supported, strict=False)]
        )
        if n / (n + 1) * risk + B / (n + 1) <= alpha + 1e-12:
            return float(lam)
    return math.inf


@pytest.mark.parametrize(
    ("alpha", "expected"),
    [
        (0.8, 0.0),  # 4α − 1 = 2.2 ≥ 13/6: keep everything
        (0.5, float(np.nextafter(0.6, 1))),  # budget 1.0: first met just above 0.6
        (0.35, float(np.nextafter(0.6, 1))),  # budget 0.4 ≥ 1/3
        (0.3, float(np.nextafter(0.7, 1))),  # budget 0.2: must drop 0.7 too
        (0.2, math.inf),  # (n+1)α < B: no cut can certify it
    ],
)
def test_crc_threshold_hand_worked(alpha, expected):
    assert stats.crc_threshold(CONF, SUP, alpha) == expected
    assert stats.crc_threshold(CONF, SUP, alpha) == _brute_force_lambda(CONF, SUP, alpha)


def test_crc_threshold_on_a_grid_takes_the_first_grid_point_meeting_the_bound():
    grid = np.round(np.arange(0, 1.01, 0.1), 10)
    # α = 0.35 (budget 0.4): at λ = 0.7 only the 0.7 error is kept (1/3): first grid point 0.7.
    assert stats.crc_threshold(CONF, SUP, 0.35, lambdas=grid) == pytest.approx(0.7)
    # α = 0.3 (budget 0.2): 0.7 still keeps 1/3, so the first grid point is 0.8.
    assert stats.crc_threshold(CONF, SUP, 0.3, lambdas=grid) == pytest.approx(0.8)
    assert stats.crc_threshold(CONF, SUP, 0.8, lambdas=grid) == 0.0
    assert stats.crc_threshold(CONF, SUP, 0.2, lambdas=grid) == math.inf


def test_crc_threshold_no_answers_is_inf_and_bad_alpha_raises():
    assert stats.crc_threshold([], [], 0.1) == math.inf
    with pytest.raises(ValueError, match="alpha must be"):
        stats.crc_threshold(CONF, SUP, 1.5)
    with pytest.raises(ValueError, match="differ in answers"):
        stats.crc_threshold(CONF, SUP[:2], 0.1)


def test_crc_threshold_ignores_answers_without_claims():
    with_empty = [*CONF, np.array([])]
    assert stats.crc_threshold(with_empty, [*SUP, np.array([], dtype=bool)], 0.35) == (
        stats.crc_threshold(CONF, SUP, 0.35)
    )


@settings(max_examples=60, deadline=None)
@given(
    answers=st.lists(
        st.lists(st.tuples(st.integers(0, 20), st.booleans()), min_size=1, max_size=6),
        min_size=1,
        max_size=25,
    ),
    alpha=st.floats(0.01, 0.99),
)
def test_crc_threshold_equals_the_definition(answers, alpha):
    confidences = [np.array([c / 20 for c, _ in a]) for a in answers]
    supported = [np.array([s for _, s in a]) for a in answers]
    assert stats.crc_threshold(confidences, supported, alpha) == _brute_force_lambda(
        confidences, supported, alpha
    )


def test_crc_threshold_controls_false_claim_rate_on_exchangeable_data():
    """Conformal Risk Control (Angelopoulos et al. 2024), Theorem 1: E[L_test(λ̂)] ≤ α over the
    calibration draw, and ≥ α − 2B/(n+1). Claims have conf ~ U(0, 1) and are supported with
    probability conf, so a test answer's expected loss at a cut λ ∈ [0, 1] is, by hand,
    ∫_λ^1 (1 − c) dc = (1 − λ)²/2 whatever its claim count: no test sample, no test noise.
    4000 seeded draws of 20 calibration answers put the mean within 0.0006 (one Monte-Carlo s.e.);
    dropping the finite-sample term (the cut R̂ ≤ α, budget nα instead of (n+1)α − B) gives a
    mean of 0.110, about 14 s.e. above α = 0.10, and fails."""
    rng = np.random.default_rng(42)
    alpha, n_cal, draws = 0.10, 20, 4000
    claims = 1 + rng.poisson(2.0, (draws, n_cal))
    expected_loss = np.empty(draws)
    for d in range(draws):
        k = claims[d]
        conf = rng.random(k.sum())
        sup = rng.random(k.sum()) < conf
        ends = np.cumsum(k)
        cal_c = [conf[a:b] for a, b in zip(ends - k, ends, strict=True)]
        cal_s = [sup[a:b] for a, b in zip(ends - k, ends, strict=True)]
        lam = stats.crc_threshold(cal_c, cal_s, alpha)
        lam = min(max(lam, 0.0), 1.0)  # keep everything below 0, nothing above 1 (or at inf)
        expected_loss[d] = (1 - lam) ** 2 / 2
    mean = expected_loss.mean()
    se = expected_loss.std(ddof=1) / np.sqrt(draws)
    assert mean <= alpha + 3 * se
    assert mean >= alpha - 2 / (n_cal + 1)
    # The cut is not trivially "keep nothing": most draws keep claims.
    assert np.mean(expected_loss > 0) > 0.9


def test_crc_evaluate_hand_worked():
    lam = stats.crc_threshold(CONF, SUP, 0.5)  # just above 0.6
    out = stats.crc_evaluate(CONF, SUP, lam)
    assert out["false_claim_rate"] == pytest.approx((1 / 3) / 3)  # A2 keeps the 0.7 error
    assert out["claims_retained"] == 3
    assert out["claims_total"] == 6
    assert out["retained_share"] == pytest.approx(0.5)
    assert out["supported_retained"] == 2
    assert out["faithfulness_retained"] == pytest.approx(2 / 3)
    assert out["answers_abstaining"] == 1  # A3 keeps nothing
    assert out["n_answers"] == 3


def test_crc_evaluate_keep_nothing_and_no_answers():
    out = stats.crc_evaluate(CONF, SUP, math.inf)
    assert out["claims_retained"] == 0
    assert out["false_claim_rate"] == 0.0
    assert math.isnan(out["faithfulness_retained"])
    assert out["answers_abstaining"] == 3
    empty = stats.crc_evaluate([], [], 0.5)
    assert empty["n_answers"] == 0
    assert math.isnan(empty["false_claim_rate"])


def test_frontier_hand_worked_with_coverage():
    table = stats.frontier(CONF, SUP, FACTS, cuts=[0.0, 0.5, 0.85, 0.95], facts_total=[2, 2, 1])
    assert list(table.columns) == [
        "tau",
        "claims_retained",
        "retained_share",
        "faithfulness",
        "false_claim_rate",
        "coverage",
        "answers_abstaining",
    ]
    rows = table.set_index("tau")
    assert rows.loc[0.0, "claims_retained"] == 6
    assert rows.loc[0.0, "faithfulness"] == pytest.approx(2 / 6)
    assert rows.loc[0.0, "false_claim_rate"] == pytest.approx((13 / 6) / 3)
    assert rows.loc[0.0, "coverage"] == pytest.approx(3 / 5)  # (A1,f1), (A1,f2), (A2,g1)
    assert rows.loc[0.5, "claims_retained"] == 4
    assert rows.loc[0.5, "faithfulness"] == pytest.approx(0.5)
    assert rows.loc[0.5, "false_claim_rate"] == pytest.approx((1 / 3 + 1) / 3)
    assert rows.loc[0.5, "answers_abstaining"] == 0
    assert rows.loc[0.85, "coverage"] == pytest.approx(2 / 5)
    assert rows.loc[0.85, "answers_abstaining"] == 2
    assert rows.loc[0.95, "claims_retained"] == 0
    assert math.isnan(rows.loc[0.95, "faithfulness"])
    assert rows.loc[0.95, "coverage"] == 0.0
    assert rows.loc[0.95, "answers_abstaining"] == 3


def test_frontier_fact_totals_as_id_lists_or_inferred():
    cuts = [0.0, 0.85]
    by_count = stats.frontier(CONF, SUP, FACTS, cuts=cuts, facts_total=[2, 2, 1])
    # equal-length id lists must not be mistaken for a 2-d array of counts
    by_ids = stats.frontier(
        CONF, SUP, FACTS, cuts=cuts, facts_total=[["f1", "f2"], ["g1", "g2"], ["h1", "h2"]]
    )
    inferred = stats.frontier(CONF, SUP, FACTS, cuts=cuts)
    np.testing.assert_allclose(by_count["coverage"], [3 / 5, 2 / 5])
    np.testing.assert_allclose(by_ids["coverage"], [3 / 6, 2 / 6])
    np.testing.assert_allclose(inferred["coverage"], [3 / 5, 2 / 5])
    # ids outside the marked facts are not counted as covered
    only_f1 = stats.frontier(CONF, SUP, FACTS, cuts=cuts, facts_total=[["f1"], ["g9"], ["h1"]])
    np.testing.assert_allclose(only_f1["coverage"], [1 / 3, 1 / 3])


def test_frontier_without_facts_has_nan_coverage_and_matches_crc_evaluate():
    rng = np.random.default_rng(9)
    k = 1 + rng.poisson(3, 500)
    conf = rng.random(k.sum())
    sup = rng.random(k.sum()) < conf
    cuts = np.cumsum(k)[:-1]
    c, s = np.split(conf, cuts), np.split(sup, cuts)
    table = stats.frontier(c, s)
    assert len(table) == 101
    assert table["coverage"].isna().all()
    for _, row in table.iloc[::10].iterrows():
        check = stats.crc_evaluate(c, s, row["tau"])
        assert row["false_claim_rate"] == pytest.approx(check["false_claim_rate"], abs=1e-12)
        assert row["claims_retained"] == check["claims_retained"]
        assert row["answers_abstaining"] == check["answers_abstaining"]
    assert table["claims_retained"].is_monotonic_decreasing
    assert table["false_claim_rate"].is_monotonic_decreasing


def test_frontier_fact_lists_must_match_the_answers():
    with pytest.raises(ValueError, match="^facts_grounded must have one entry per answer$"):
        stats.frontier(CONF, SUP, facts_grounded=FACTS[:2])


# --- metrics.stats.conformal.crc_evaluate: a claim whose confidence equals λ̂ is kept -------


def test_crc_evaluate_keeps_a_claim_at_exactly_the_cut():
    from metrics.stats.conformal import crc_evaluate

    confidences = [np.array([0.3, 0.5, 0.7]), np.array([0.5, 0.2])]
    supported = [np.array([1, 0, 1]), np.array([1, 1])]
    out = crc_evaluate(confidences, supported, 0.5)
    # Kept (conf ≥ 0.5): 0.5 (unsupported) and 0.7 of answer 0, 0.5 of answer 1.
    assert out["claims_retained"] == 3
    assert out["supported_retained"] == 2
    assert out["retained_share"] == pytest.approx(3 / 5)
    assert out["faithfulness_retained"] == pytest.approx(2 / 3)
    # Loss: answer 0 keeps 1 unsupported of its 3 claims, answer 1 none: (1/3 + 0) / 2.
    assert out["false_claim_rate"] == pytest.approx(1 / 6)
    assert out["answers_abstaining"] == 0


# --- metrics.stats.conformal: a bad outcome is refused naming the argument ---------------------


@pytest.mark.parametrize("function", ["crc_threshold", "crc_evaluate", "frontier"])
def test_conformal_refuses_a_non_binary_outcome_naming_supported(function):
    """conformal `_Flat.__init__` `_56` (`as_binary(...)` without its name: the error said
    "values must hold only 0/1" and a caller could not tell which argument was wrong)."""
    from metrics.stats import conformal

    confidences, supported = [[0.9, 0.4], [0.7]], [[1, 2], [0]]
    call = {
        "crc_threshold": lambda: conformal.crc_threshold(confidences, supported, 0.1),
        "crc_evaluate": lambda: conformal.crc_evaluate(confidences, supported, 0.5),
        "frontier": lambda: conformal.frontier(confidences, supported),
    }[function]
    with pytest.raises(ValueError, match=r"^supported must hold only 0/1"):
        call()


# --- metrics.stats.conformal: the held-out check with no answer or no cut keeps its keys -------


def test_crc_evaluate_without_answers_or_without_a_cut_has_every_key():
    """conformal `crc_evaluate` `_15` (the early return's "lambda" key renamed: with no held-out
    answer or a nan cut the result lacked the cut it was asked about). By hand: no answers, 0
    kept of 0; a nan cut on 2 answers (3 claims): the counts unknown (nan), the total 3."""
    import math

    from metrics.stats.conformal import crc_evaluate

    keys = {
        "lambda", "n_answers", "false_claim_rate", "claims_total", "claims_retained",
        "retained_share", "supported_retained", "faithfulness_retained", "answers_abstaining",
    }  # fmt: skip
    empty = crc_evaluate([], [], 0.5)
    assert set(empty) == keys
    assert (empty["lambda"], empty["n_answers"], empty["claims_total"]) == (0.5, 0, 0)
    assert (empty["claims_retained"], empty["answers_abstaining"]) == (0, 0)
    no_cut = crc_evaluate([[0.9, 0.2], [0.7]], [[1, 0], [1]], math.nan)
    assert set(no_cut) == keys
    assert math.isnan(no_cut["lambda"])
    assert math.isnan(no_cut["claims_retained"])
    assert (no_cut["n_answers"], no_cut["claims_total"]) == (2, 3)
    cut = crc_evaluate([[0.9, 0.2], [0.7]], [[1, 0], [1]], 0.5)  # keeps 0.9 and 0.7, both right
    assert set(cut) == keys
    assert (cut["lambda"], cut["claims_retained"], cut["false_claim_rate"]) == (0.5, 2, 0.0)


# --- conformal: fact coverage with several links per fact ----------------------------------------


def test_frontier_coverage_counts_each_fact_once_by_hand():
    """conformal `_facts_table` `_168` (`key[:-2]` for `key[:-1]`: with four or more supported
    fact links the arrays differ in length and the frontier fails; the old tests had three).
    Answer 1: claims at 0.9, 0.6, 0.3, all supported, grounding {a}, {a, b}, {c}, 3 facts;
    answer 2: 0.8 supported grounding {x}, 0.4 unsupported grounding {x}, 1 fact. Coverage
    (facts grounded by a kept supported claim / 4) by hand: τ = 0: 4/4; 0.5: a, b, x = 3/4;
    0.85: a = 1/4; 0.95: 0."""
    from metrics import stats

    table = stats.frontier(
        [[0.9, 0.6, 0.3], [0.8, 0.4]],
        [[1, 1, 1], [1, 0]],
        [[["a"], ["a", "b"], ["c"]], [["x"], ["x"]]],
        cuts=[0.0, 0.5, 0.85, 0.95],
        facts_total=[3, 1],
    )
    assert table["coverage"].tolist() == pytest.approx([1.0, 0.75, 0.25, 0.0])
