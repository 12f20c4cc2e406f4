"""Agreement: raw agreement, Cohen's kappa, Krippendorff's alpha, confusion, se/sp, asymmetry."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from metrics import stats

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def _pairs(table, labels):
    """Expand a contingency table (rows coder A, columns coder B) into two label lists."""
    a, b = [], []
    for i, la in enumerate(labels):
        for j, lb in enumerate(labels):
            a += [la] * table[i][j]
            b += [lb] * table[i][j]
    return a, b


def test_cohen_kappa_artstein_poesio_2008_example_1():
    # Artstein & Poesio (2008), Computational Linguistics 34(4), p. 558 (Table 1, two dialogue-act
    # categories, 100 utterances): A_o = 0.7, A_e = 0.54, kappa = 0.348. Cross-checked against
    # DKPro Statistics' ArtsteinPoesio2008Test.
    a, b = _pairs([[20, 20], [10, 50]], ["STAT", "IReq"])
    assert stats.agreement(a, b) == pytest.approx(0.7)
    assert stats.cohen_kappa(a, b) == pytest.approx((0.7 - 0.54) / (1 - 0.54))
    assert round(stats.cohen_kappa(a, b), 3) == 0.348


def test_cohen_kappa_artstein_poesio_2008_example_2():
    # Artstein & Poesio (2008) p. 568 (three categories): A_o = 0.88, A_e = 0.396, kappa = 0.8013;
    # Krippendorff's alpha on the same table = 0.800.
    a, b = _pairs([[46, 6, 0], [0, 32, 0], [0, 6, 10]], ["STAT", "IReq", "Chck"])
    assert stats.agreement(a, b) == pytest.approx(0.88)
    assert stats.cohen_kappa(a, b) == pytest.approx(0.8013, abs=5e-5)
    codes = {"STAT": 0.0, "IReq": 1.0, "Chck": 2.0}
    reliability = np.array([[codes[x] for x in a], [codes[x] for x in b]])
    alpha = stats.krippendorff_alpha(reliability)
    assert alpha == pytest.approx(0.800, abs=1e-3)  # as printed (DKPro's test: ±0.001)
    # by hand: D_o = 12/100; D_e = 1 − Σ n_c(n_c − 1)/(n(n − 1)), n_c = 98, 76, 26 of n = 200
    d_e = 1 - (98 * 97 + 76 * 75 + 26 * 25) / (200 * 199)
    assert alpha == pytest.approx(1 - 0.12 / d_e, abs=1e-12)


def test_cohen_kappa_equals_sklearn_on_random_labels():
    rng = np.random.default_rng(3)
    a = rng.choice([S, C, N], size=5000, p=[0.6, 0.1, 0.3])
    b = np.where(rng.random(5000) < 0.7, a, rng.choice([S, C, N], size=5000))
    assert stats.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_hand_worked_two_by_two():
    # 10 items: both yes 4, both no 3, A yes/B no 2, A no/B yes 1.
    # A_o = 0.7; A_e = 0.6·0.5 + 0.4·0.5 = 0.5; kappa = 0.4.
    a, b = _pairs([[4, 2], [1, 3]], ["y", "n"])
    assert stats.cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_undefined_cases_are_nan():
    assert math.isnan(stats.cohen_kappa([], []))
    assert math.isnan(stats.cohen_kappa([S, S, S], [S, S, S]))  # A_e = 1
    assert math.isnan(stats.cohen_kappa([None, S], [S, None]))  # no complete pair
    assert math.isnan(stats.agreement([], []))


def test_cohen_kappa_one_sided_constant_is_zero_not_nan():
    # A always says S, B varies: A_o = p_B(S) = A_e, so kappa = 0 (defined).
    assert stats.cohen_kappa([S, S, S, S], [S, C, S, N]) == pytest.approx(0.0)


def test_cohen_kappa_drops_missing_pairs():
    a = [S, C, None, S, float("nan")]
    b = [S, C, S, N, S]
    assert stats.cohen_kappa(a, b) == pytest.approx(stats.cohen_kappa([S, C, S], [S, C, N]))
    assert stats.agreement(a, b) == pytest.approx(2 / 3)


def test_cohen_kappa_length_mismatch_raises():
    with pytest.raises(ValueError, match="differ in length"):
        stats.cohen_kappa([S], [S, C])


@settings(max_examples=100, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from([S, C, N]), st.sampled_from([S, C, N])), min_size=1, max_size=60
    )
)
def test_cohen_kappa_is_symmetric(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    k1, k2 = stats.cohen_kappa(a, b), stats.cohen_kappa(b, a)
    assert (math.isnan(k1) and math.isnan(k2)) or k1 == pytest.approx(k2, abs=1e-12)
    if not math.isnan(k1):
        assert -1.0 <= k1 <= 1.0


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", §C: 4 observers, 12 units,
# missing data; alpha nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_alpha_krippendorff_2011_example(level, expected):
    assert round(stats.krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == expected


def test_krippendorff_alpha_perfect_agreement_is_one_and_chance_is_near_zero():
    assert stats.krippendorff_alpha([[0, 1, 2, 1], [0, 1, 2, 1]]) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 3, size=(2, 20_000)).astype(float)
    assert abs(stats.krippendorff_alpha(noise)) < 0.03


def test_krippendorff_alpha_undefined_cases_are_nan():
    assert math.isnan(stats.krippendorff_alpha(np.empty((2, 0))))
    assert math.isnan(stats.krippendorff_alpha([[1, 1, 1], [1, 1, 1]]))  # one value: D_e = 0
    assert math.isnan(stats.krippendorff_alpha([[1, np.nan], [np.nan, 2]]))  # nothing pairable


def test_krippendorff_alpha_ignores_units_with_one_value():
    with_singletons = [[0, 1, 1, 2, 0], [0, 1, 2, np.nan, np.nan]]
    without = [[0, 1, 1], [0, 1, 2]]
    assert stats.krippendorff_alpha(with_singletons) == pytest.approx(
        stats.krippendorff_alpha(without)
    )


def test_krippendorff_alpha_rejects_bad_level_and_shape():
    with pytest.raises(ValueError, match="level must be one of"):
        stats.krippendorff_alpha([[0, 1]], level="fuzzy")
    with pytest.raises(ValueError, match="must be 2-d"):
        stats.krippendorff_alpha([0, 1, 1])


def test_confusion_orders_rows_gold_columns_judge_and_drops_unparseable():
    gold = [S, S, S, C, N, N, S, None]
    judge = [S, C, "UNPARSEABLE", C, S, N, N, S]
    table = stats.confusion(gold, judge)
    assert list(table.index) == [S, C, N]
    assert list(table.columns) == [S, C, N]
    assert table.index.name == "gold"
    assert table.columns.name == "judge"
    expected = np.array([[1, 1, 1], [0, 1, 0], [1, 0, 1]])
    np.testing.assert_array_equal(table.to_numpy(), expected)
    assert int(table.to_numpy().sum()) == 6  # the UNPARSEABLE row and the missing gold are out


def test_confusion_empty_is_all_zero():
    assert int(stats.confusion([], []).to_numpy().sum()) == 0


def test_sensitivity_specificity_hand_worked():
    # gold S: 8 claims, judge says S on 6 -> se = 6/8; gold not S: 5 claims, judge not S on 3 ->
    # sp = 3/5 (C/NIP confusion between them still counts as "not SUPPORTED").
    gold = [S] * 8 + [C] * 2 + [N] * 3
    judge = [S] * 6 + [C, N] + [S, N] + [S, C, N]
    out = stats.sensitivity_specificity(gold, judge)
    se, sp = out["sensitivity"], out["specificity"]
    assert (se["successes"], se["n"], se["value"]) == (6, 8, 0.75)
    assert (sp["successes"], sp["n"], sp["value"]) == (3, 5, 0.6)
    assert se["ci"] == stats.wilson_interval(6, 8)
    assert sp["ci"] == stats.wilson_interval(3, 5)
    assert out["youden_j"] == pytest.approx(0.35)


def test_sensitivity_specificity_missing_side_is_nan():
    out = stats.sensitivity_specificity([S, S], [S, C])
    assert out["sensitivity"]["value"] == 0.5
    assert out["specificity"]["n"] == 0
    assert math.isnan(out["specificity"]["value"])
    assert all(math.isnan(v) for v in out["specificity"]["ci"])
    assert math.isnan(out["youden_j"])


def test_asymmetry_counts_over_and_under_marking():
    gold = [S, S, C, N, N, N]
    judge = [S, N, S, S, S, N]
    out = stats.asymmetry(gold, judge)
    assert out["over_supported"] == {"count": 3, "rate": 0.5}
    assert out["under_supported"]["count"] == 1
    assert out["direction"] == "over"
    assert stats.asymmetry([], [])["direction"] == "none"


def test_pairwise_kappas_scores_each_pair_on_shared_units():
    frame = pd.DataFrame(
        {
            "ann": [S, S, C, N, S, None],
            "bob": [S, C, C, N, None, S],
            "cat": [None, None, None, None, None, None],
        }
    )
    out = stats.pairwise_kappas(frame)
    assert list(out.columns) == ["coder_a", "coder_b", "n", "agreement", "kappa"]
    ab = out[(out.coder_a == "ann") & (out.coder_b == "bob")].iloc[0]
    assert ab["n"] == 4
    assert ab["agreement"] == pytest.approx(0.75)
    assert ab["kappa"] == pytest.approx(stats.cohen_kappa([S, S, C, N], [S, C, C, N]))
    ac = out[(out.coder_a == "ann") & (out.coder_b == "cat")].iloc[0]
    assert ac["n"] == 0
    assert math.isnan(ac["kappa"])


def test_agreement_of_a_single_pair():
    assert stats.agreement([S], [S]) == 1.0
    assert stats.agreement([S], [N]) == 0.0


@pytest.mark.parametrize(
    ("gold", "judge", "over", "under", "direction"),
    [
        # gold S judged C and N: two under-marks, none over (the C cell counts too).
        ([S, S, S, C], [C, N, S, C], 0, 2, "under"),
        ([S, C], [N, S], 1, 1, "balanced"),
        ([S, S, N], [S, C, S], 1, 1, "balanced"),
    ],
)
def test_asymmetry_under_and_balanced_by_hand(gold, judge, over, under, direction):
    out = stats.asymmetry(gold, judge)
    n = len(gold)
    assert out == {
        "n": n,
        "over_supported": {"count": over, "rate": over / n},
        "under_supported": {"count": under, "rate": under / n},
        "direction": direction,
    }


def test_pairwise_kappas_takes_a_mapping_and_lists_columns_without_pairs():
    mapping = {"ann": [S, S, C, N], "bob": [S, C, C, N]}
    out = stats.pairwise_kappas(mapping)
    assert out.to_dict("records") == [
        {
            "coder_a": "ann",
            "coder_b": "bob",
            "n": 4,
            "agreement": 0.75,
            "kappa": pytest.approx(cohen_kappa_score(mapping["ann"], mapping["bob"])),
        }
    ]
    alone = stats.pairwise_kappas({"ann": [S, C]})
    assert alone.empty
    assert list(alone.columns) == ["coder_a", "coder_b", "n", "agreement", "kappa"]


# --- metrics.stats.agreement.krippendorff_alpha: two distinct values are enough ------------


def test_krippendorff_alpha_of_binary_codes_matches_the_krippendorff_package():
    import krippendorff

    from metrics.stats.agreement import krippendorff_alpha

    data = np.array(
        [
            [1, 0, 1, 1, 0, 1, np.nan, 0, 1, 1],
            [1, 0, 0, 1, 0, 1, 1, 0, 1, np.nan],
            [1, 1, 0, 1, 0, np.nan, 1, 0, 1, 0],
        ]
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert krippendorff_alpha(data) == pytest.approx(expected, abs=1e-12)
    # Two coders, four units, one disagreement, by hand: the coincidence matrix of the 8 pairable
    # values has o_00 = 2, o_11 = 4, o_01 = o_10 = 1, so n_0 = 3, n_1 = 5, n = 8 and
    # α = 1 − (n − 1)·o_01 / (n_0·n_1) = 1 − 7·1/15 = 8/15.
    assert krippendorff_alpha([[0, 1, 1, 1], [0, 1, 1, 0]]) == pytest.approx(8 / 15)
