"""Edges of the report-assembly services, mostly without a database: the grounding-bits block
(histogram bins at exact edges, the `> 0` / `> threshold` / `<= 0` boundaries hit by values of
exactly 0 and 1, the bits × judge table cell by cell), the dashboard summary (every branch,
whole dicts), the judge audit's failures (ties), and the snapshot queue (`_enqueue` passes the
snapshot's id). Expected figures are counted by hand or by numpy / scikit-learn / statsmodels,
never by the function under test."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from metrics.services import bits as bits_mod
from metrics.services.bits import (
    METHOD,
    combine_out_of_fold,
    grounding_bits_block,
    histogram_counts,
    histogram_edges,
    with_judge_block,
)
from metrics.services.summary import dashboard_summary

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
CODE = {S: 0, C: 1, N: 2}


def _nan_equal(a, b) -> bool:
    """Equal dicts/lists/floats where nan equals nan and floats compare to 1e-12."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_nan_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(_nan_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool):
            return a is b
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b and type(a) is type(b)


def _prop(k, n):
    """The `_proportion` dict, independently (statsmodels' Wilson)."""
    if n == 0:
        return {"value": math.nan, "ci": (math.nan, math.nan), "numerator": 0, "denominator": 0}
    return {
        "value": k / n,
        "ci": tuple(proportion_confint(k, n, method="wilson")),
        "numerator": k,
        "denominator": n,
    }


# --- histogram: right-closed bins at exact edges -------------------------------------------------


@pytest.mark.parametrize(
    ("values", "edges"),
    [
        # span 5 over 12 bins: 0.4167 → the nice width 0.5; the lowest value on an edge gets a
        # bin below it (right-closed bins)
        ([0.0, 1.0, 2.5, -0.5, -2.0, 3.0, 0.25], [x * 0.5 for x in range(-5, 7)]),
        # span exactly 12 over 12 bins: width exactly 1 (the 1e-12 slack)
        ([0.0, 12.0], [float(x) for x in range(13)]),
        ([-12.0, 0.0], [float(x) for x in range(-13, 1)]),
        # one value at 0: one bin [0, 1]
        ([0.0], [0.0, 1.0]),
        # all positive: 0 is still covered; span 0.7 → 0.7/12 = 0.0583 → 0.1
        ([0.3, 0.7], [x / 10 for x in range(8)]),
        # no values: −1 to 1 in steps of 0.2, no extra bin (nothing sits on the lowest edge)
        ([], [x / 5 for x in range(-5, 6)]),
        # the lowest value below zero but off an edge: no extra bin; 2.6/12 = 0.2167 → 0.25
        ([-0.6, 2.0], [x / 4 for x in range(-3, 9)]),
    ],
)
def test_histogram_edges_by_hand(values, edges):
    got = histogram_edges(np.array(values, dtype=float))
    assert got.tolist() == pytest.approx(edges, abs=1e-12)
    assert len(got) == len(edges)


def test_histogram_edges_bins_argument():
    # span 4 over 4 bins: width 1 exactly
    assert histogram_edges(np.array([0.0, 4.0]), bins=4).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    # span 4 over 3 bins: 1.333 → 2
    assert histogram_edges(np.array([0.0, 4.0]), bins=3).tolist() == [0.0, 2.0, 4.0]


def _brute_counts(values, edges):
    """(e_i, e_i+1] by hand; a value at or below the first edge in the first bin, above the last
    in the last bin."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(edges) - 1):
            if edges[i] < v <= edges[i + 1]:
                counts[i] += 1
                break
        else:
            counts[0 if v <= edges[0] else -1] += 1
    return counts


def test_histogram_counts_value_on_an_edge_falls_in_the_bin_to_its_left():
    edges = np.array([-1.0, 0.0, 1.0, 2.0])
    values = np.array([-1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, -3.0, 5.0])
    # (−1, 0]: −0.5, 0, 0 and, at or below the first edge, −1 and −3; (0, 1]: 0.5, 1;
    # (1, 2]: 1.5, 2 and, above the last edge, 5
    assert histogram_counts(values, edges) == [5, 2, 3]
    assert histogram_counts(values, edges) == _brute_counts(values.tolist(), edges.tolist())
    assert histogram_counts(np.array([]), edges) == [0, 0, 0]
    assert histogram_counts(np.array([1.0]), np.array([0.0, 1.0])) == [1]


# --- the grounding-bits block on a planted frame (selectors patched) -----------------------------

# (claim_id, answer_id, gold, bits); threshold 1.0. Gold SUPPORTED bits 0, 1, 2.5, −0.5;
# CONTRADICTED 0, 1; NOT_IN_PILE −2, 3, 0.25; claim 10 has no gold; claim 11 is not in the data.
CLAIMS = [
    (1, 100, S, 0.0),
    (2, 100, S, 1.0),
    (3, 101, S, 2.5),
    (4, 101, S, -0.5),
    (5, 100, C, 0.0),
    (6, 101, C, 1.0),
    (7, 100, N, -2.0),
    (8, 101, N, 3.0),
    (9, 101, N, 0.25),
    (10, 101, None, 7.0),
]


def _conf(b):
    return 1.0 / (1.0 + 2.0**-b)


def _frame(claims, model="m", prompt="p"):
    rows = []
    vid = 0
    for claim_id, _, _, b in claims:
        vid += 1
        # an older verdict of the same claim with other bits: the newest counts
        rows.append((vid, claim_id, "NOT_IN_PILE", b - 9.0, _conf(b - 9.0), model, prompt))
    for claim_id, _, _, b in claims:
        vid += 1
        verdict = S if b > 1.0 else N
        rows.append((vid, claim_id, verdict, b, _conf(b), model, prompt))
    vid += 1
    rows.append((vid, 11, S, 4.0, _conf(4.0), model, prompt))  # claim not in the data
    vid += 1
    rows.append((vid, 1, S, 50.0, _conf(50.0), "other-model", prompt))  # another instrument
    return pd.DataFrame(
        rows,
        columns=[
            "verdict_id",
            "claim_id",
            "verdict",
            "bits",
            "confidence",
            "model",
            "prompt_version",
        ],
    )


def _data(claims):
    return SimpleNamespace(
        claims=pd.DataFrame(
            {
                "claim_id": [c[0] for c in claims],
                "answer_id": [c[1] for c in claims],
                "gold": np.array([CODE.get(c[2], -1) for c in claims], dtype=np.int8),
                "extra": ["x"] * len(claims),
            }
        )
    )


@pytest.fixture
def patched(monkeypatch):
    """Selectors patched to a planted frame; `_other_judge_rows` records what it is given."""
    seen = {}

    def other_rows(judge, rows):
        seen["judge"], seen["rows"] = judge, rows.copy()
        return None, pd.DataFrame()

    def plant(frame, threshold=1.0):
        monkeypatch.setattr(
            bits_mod.selectors,
            "judge_bits_threshold",
            lambda *, judge, model, prompt_version: (
                seen.setdefault("threshold_args", (judge, model, prompt_version)) and threshold
            ),
        )
        monkeypatch.setattr(bits_mod.selectors, "judge_bits_columns", lambda *, judge: frame)

    monkeypatch.setattr(bits_mod, "_other_judge_rows", other_rows)
    seen["plant"] = plant
    return seen


def _ece(conf, y):
    """ECE over 10 equal-width bins (lo, hi], the first including 0, by hand."""
    conf, y = np.asarray(conf, float), np.asarray(y, float)
    idx = np.clip(np.ceil(conf * 10).astype(int) - 1, 0, 9)
    return sum(abs(conf[idx == b].sum() - y[idx == b].sum()) for b in range(10)) / conf.size


def test_grounding_bits_block_whole_on_exact_boundaries(patched):
    judge = SimpleNamespace(name="bits-j", pk=1)
    patched["plant"](_frame(CLAIMS))
    block = grounding_bits_block(data=_data(CLAIMS), judge=judge, model="m", prompt_version="p")
    pos = [0.0, 1.0, 2.5, -0.5]
    neg = [0.0, 1.0, -2.0, 3.0, 0.25]
    audited = [c for c in CLAIMS if c[2] is not None]
    auc = block.pop("auc")
    assert auc["auc"] == pytest.approx(roc_auc_score([1] * 4 + [0] * 5, pos + neg))
    assert (auc["m"], auc["n"]) == (4, 5)
    calibration = block.pop("calibration")
    y = [c[2] == S for c in audited]
    assert calibration["ece"]["raw"] == pytest.approx(_ece([_conf(c[3]) for c in audited], y))
    assert (calibration["n"], calibration["enough"]) == (9, True)
    assert all(math.isfinite(calibration["ece"][k]) for k in ("platt", "isotonic"))
    edges = [x * 0.5 for x in range(-5, 7)]
    expected = {
        "name": "bits-j",
        "model": "m",
        "prompt_version": "p",
        "threshold": 1.0,
        "n_scored": 10,
        "n_audited": 9,
        "method": METHOD,
        # bits ≤ 0 among unsupported: 0 and −2 (0 counts: ≤, not <)
        "unsupported_non_positive": _prop(2, 5),
        # bits > 0 among supported: 1 and 2.5 (1 counts: > 0, not > 1; 0 does not)
        "supported_positive": _prop(2, 4),
        # above the threshold 1: only 2.5 (1 itself is not above)
        "sensitivity": _prop(1, 4),
        # at or below the threshold: 0, 1, −2, 0.25
        "specificity": _prop(4, 5),
        "mean_bits": {S: 3.0 / 4, C: 0.5, N: 1.25 / 3, "unsupported": 2.25 / 5},
        "with_judge": None,
        "histogram": {
            "edges": edges,
            "width": 0.5,
            "counts": {
                S: _brute_counts(pos, edges),
                C: _brute_counts([0.0, 1.0], edges),
                N: _brute_counts([-2.0, 3.0, 0.25], edges),
            },
            "zero_index": 5,
        },
    }
    assert _nan_equal(block, expected), block
    assert expected["histogram"]["counts"][S] == [0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0]
    assert expected["histogram"]["counts"][N] == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    # with_judge gets the audited rows (claims 1–9, newest bits, with gold and answer)
    rows = patched["rows"]
    assert patched["judge"] is judge
    assert rows["claim_id"].tolist() == list(range(1, 10))
    assert rows["bits"].tolist() == [c[3] for c in audited]
    assert rows["gold"].tolist() == [CODE[c[2]] for c in audited]
    assert rows["answer_id"].tolist() == [c[1] for c in audited]
    assert patched["threshold_args"] == (judge, "m", "p")


def test_grounding_bits_block_only_supported_gold_has_nan_rates_and_no_calibration(patched):
    claims = [(1, 100, S, 0.5), (2, 101, S, -1.0), (3, 101, None, 2.0)]
    patched["plant"](_frame(claims), threshold=0.0)
    block = grounding_bits_block(
        data=_data(claims), judge=SimpleNamespace(name="b", pk=1), model="m", prompt_version="p"
    )
    auc = block.pop("auc")
    assert math.isnan(auc["auc"])
    assert (auc["m"], auc["n"]) == (2, 0)
    calibration = block.pop("calibration")
    assert calibration["n"] == 2
    assert calibration["enough"] is False
    assert math.isnan(calibration["ece"]["platt"])
    assert math.isnan(calibration["ece"]["isotonic"])
    # span 1.5 / 12 = 0.125 → 0.2; −1 is on the edge −5·0.2: a bin below it
    edges = [x / 5 for x in range(-6, 4)]
    expected = {
        "name": "b",
        "model": "m",
        "prompt_version": "p",
        "threshold": 0.0,
        "n_scored": 3,
        "n_audited": 2,
        "method": METHOD,
        "unsupported_non_positive": _prop(0, 0),
        "supported_positive": _prop(1, 2),
        "sensitivity": _prop(1, 2),
        "specificity": _prop(0, 0),
        "mean_bits": {S: -0.25, C: math.nan, N: math.nan, "unsupported": math.nan},
        "with_judge": None,
        "histogram": {
            "edges": edges,
            "width": 0.2,
            "counts": {S: _brute_counts([0.5, -1.0], edges), C: [0] * 9, N: [0] * 9},
            "zero_index": 6,
        },
    }
    assert _nan_equal(block, expected), block


def test_grounding_bits_block_without_gold_uses_every_scored_bit_for_the_edges(patched):
    claims = [(1, 100, None, 0.0), (2, 100, None, 12.0)]
    patched["plant"](_frame(claims))
    block = grounding_bits_block(
        data=_data(claims), judge=SimpleNamespace(name="b", pk=1), model="m", prompt_version="p"
    )
    assert block["histogram"]["edges"] == [float(x) for x in range(13)]
    assert (block["n_scored"], block["n_audited"]) == (2, 0)


def test_grounding_bits_block_with_no_row_of_the_instrument_is_the_empty_block(patched):
    patched["plant"](_frame(CLAIMS, model="other"), threshold=0.5)
    block = grounding_bits_block(
        data=_data(CLAIMS),
        judge=SimpleNamespace(name="bits-j", pk=1),
        model="m",
        prompt_version="p",
    )
    assert block == {
        "name": "bits-j",
        "model": "m",
        "prompt_version": "p",
        "threshold": 0.5,
        "n_scored": 0,
        "n_audited": 0,
        "method": METHOD,
    }


# --- the bits × judge table, every cell -----------------------------------------------------------


def test_with_judge_block_whole_table_by_counting(monkeypatch):
    # (gold, bits verdict, judge verdict, judge confidence) for 12 gold claims
    planted = [
        (S, S, S, 0.9),
        (S, S, N, 0.2),
        (S, N, S, None),
        (S, N, N, 0.1),
        (S, N, N, None),
        (C, S, S, 0.8),
        (C, N, N, 0.3),
        (C, N, C, 0.4),
        (N, S, N, None),
        (N, N, S, 0.7),
        (N, N, N, 0.05),
        (N, S, S, 0.6),
    ]
    rows = pd.DataFrame(
        {
            "claim_id": range(1, 13),
            "gold": [CODE[g] for g, *_ in planted],
            "verdict": [b for _, b, _, _ in planted],
            "verdict_judge": [j for _, _, j, _ in planted],
            "confidence_judge": [np.nan if c is None else c for *_, c in planted],
            "bits": np.linspace(-1, 1, 12),
            "answer_id": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6],
        }
    )
    other = SimpleNamespace(name="prompted")
    seen = {}
    monkeypatch.setattr(bits_mod, "_other_judge_rows", lambda judge, audited: (other, rows))

    def combine(score, bits, outcome, groups):
        seen.update(score=score, bits=bits, outcome=outcome, groups=groups)
        return {"offered": False}

    monkeypatch.setattr(bits_mod, "combine_out_of_fold", combine)
    block = with_judge_block(SimpleNamespace(name="bits"), rows)

    def cells(gold):
        mine = [(b == S, j == S) for g, b, j, _ in planted if g == gold]
        return {
            "claims": len(mine),
            "bits_only_supported": sum(b and not j for b, j in mine),
            "judge_only_supported": sum(j and not b for b, j in mine),
            "both_supported": sum(b and j for b, j in mine),
            "neither": sum(not b and not j for b, j in mine),
        }

    assert block == {
        "judge": "prompted",
        "n": 12,
        "disagree": sum((b == S) != (j == S) for _, b, j, _ in planted),
        "disagreements": {S: cells(S), C: cells(C), N: cells(N)},
        "combination": {"offered": False},
        "method": bits_mod.COMBINATION_METHOD,
    }
    # by hand: gold SUPPORTED 1 both, 1 bits only, 1 judge only, 2 neither; CONTRADICTED 1 both,
    # 2 neither (a CONTRADICTED verdict is not SUPPORTED); NOT_IN_PILE one of each
    assert block["disagreements"][S] == {
        "claims": 5,
        "bits_only_supported": 1,
        "judge_only_supported": 1,
        "both_supported": 1,
        "neither": 2,
    }
    assert block["disagreements"][C]["neither"] == 2
    assert block["disagreements"][N] == {
        "claims": 4,
        "bits_only_supported": 1,
        "judge_only_supported": 1,
        "both_supported": 1,
        "neither": 1,
    }
    assert block["disagree"] == 4
    # the judge's score: its confidence, or its 0/1 verdict where it gave none
    judge_score = [
        1.0 if c is None and j == S else 0.0 if c is None else c for _, _, j, c in planted
    ]
    assert seen["score"].tolist() == pytest.approx(judge_score)
    assert seen["bits"].tolist() == pytest.approx(np.linspace(-1, 1, 12).tolist())
    assert seen["outcome"].tolist() == [g == S for g, *_ in planted]
    assert seen["groups"].tolist() == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]


def test_with_judge_block_without_another_judge_or_rows_is_none(monkeypatch):
    monkeypatch.setattr(bits_mod, "_other_judge_rows", lambda judge, rows: (None, pd.DataFrame()))
    assert with_judge_block(SimpleNamespace(), pd.DataFrame()) is None
    monkeypatch.setattr(
        bits_mod,
        "_other_judge_rows",
        lambda judge, rows: (SimpleNamespace(name="x"), pd.DataFrame()),
    )
    assert with_judge_block(SimpleNamespace(), pd.DataFrame()) is None


@pytest.mark.parametrize(
    ("outcome", "groups", "expected"),
    [
        ([1, 0, 1, 0], [1, 1, 1, 1], {"n": 4, "folds": 1, "offered": False}),  # one answer
        ([1, 1, 1, 1], [1, 2, 3, 4], {"n": 4, "folds": 4, "offered": False}),  # one outcome
        # a training fold with one outcome only: answers 1 and 2 hold every positive
        ([1, 1, 0, 0, 0, 0], [1, 1, 2, 2, 3, 3], {"n": 6, "folds": 3, "offered": False}),
    ],
)
def test_combine_out_of_fold_returns_early_whole(outcome, groups, expected):
    n = len(outcome)
    got = combine_out_of_fold(np.linspace(0, 1, n), np.linspace(-1, 1, n), outcome, groups)
    assert got == expected


def test_combine_out_of_fold_folds_capped_by_answers_and_offered_rule():
    rng = np.random.default_rng(3)
    y = np.array([1, 0] * 20)
    judge = y * 0.6 + rng.random(40) * 0.4
    bits = y * 1.0 + rng.normal(0, 1, 40)
    groups = np.repeat(np.arange(8), 5)
    got = combine_out_of_fold(judge, bits, y, groups, folds=5)
    assert list(got) == ["n", "folds", "offered", "judge", "bits", "combined"]
    assert (got["n"], got["folds"]) == (40, 5)
    assert combine_out_of_fold(judge, bits, y, groups, folds=10)["folds"] == 8
    for name in ("judge", "bits", "combined"):
        assert set(got[name]) == {"log_loss", "brier", "auc"}
    best = min(got["judge"]["log_loss"], got["bits"]["log_loss"])
    assert got["offered"] is (got["combined"]["log_loss"] < best)


# --- the dashboard summary: every branch, whole dicts ----------------------------------------


def _report(**extra):
    return {
        "claims": {"total": 25},
        "faithfulness": {"pooled": {"value": 0.64, "ci": [0.4496, 0.8046]}},
        **extra,
    }


GOLD_25 = {
    "value": 64,
    "low": 45,
    "high": 80,
    "n": 25,
    "source": "gold",
    "text": "About 64% of claims are supported (95% interval 45–80%, from 25 gold claims).",
}


@pytest.mark.parametrize(
    ("report", "audit", "expected"),
    [
        (_report(), None, GOLD_25),
        # a headline whose estimate has no value: the gold figure instead
        (
            _report(),
            {"headline_estimate": "ppi", "ppi": {"value": None}, "n_audited": 9},
            GOLD_25,
        ),
        # a headline named but absent from the block: the gold figure
        (_report(), {"headline_estimate": "ppi", "n_audited": 9}, GOLD_25),
        # no headline chosen: the gold figure even though an estimate is there
        (_report(), {"headline_estimate": None, "ppi": {"value": 0.1}, "n_audited": 9}, GOLD_25),
        (
            _report(),
            {
                "headline_estimate": "ppi",
                "ppi": {"value": 0.125, "ci": [0.005, 0.995]},
                "n_audited": 1,
            },
            {
                "value": 13,
                "low": 1,
                "high": 100,
                "n": 1,
                "source": "audited",
                "text": "About 13% of claims are supported (95% interval 1–100%, from 1 audited "
                "claim).",
            },
        ),
        (
            {"claims": {"total": 2}, "faithfulness": {"pooled": {"value": 0.5, "ci": None}}},
            None,
            {
                "value": 50,
                "low": None,
                "high": None,
                "n": 2,
                "source": "gold",
                "text": "About 50% of claims are supported (from 2 gold claims; no interval).",
            },
        ),
        (
            {"claims": {"total": 1}, "faithfulness": {"pooled": {"value": 1.0, "ci": [0.2, None]}}},
            None,
            {
                "value": 100,
                "low": None,
                "high": None,
                "n": 1,
                "source": "gold",
                "text": "About 100% of claims are supported (from 1 gold claim; no interval).",
            },
        ),
        ({}, None, None),
        ({"faithfulness": None, "claims": None}, None, None),
        ({"faithfulness": {"pooled": {"value": 0.5}}, "claims": {}}, None, None),
        ({"faithfulness": {"pooled": {"value": 0.5}}, "claims": {"total": None}}, None, None),
        ({"faithfulness": {"pooled": None}, "claims": {"total": 3}}, None, None),
        ({"faithfulness": {"pooled": {"value": None}}, "claims": {"total": 3}}, None, None),
    ],
)
def test_summary_faithfulness_every_branch_whole(report, audit, expected):
    assert dashboard_summary(report=report, audit=audit)["faithfulness"] == expected


@pytest.mark.parametrize(
    ("audit", "expected"),
    [
        (None, None),
        ({}, None),
        (
            {"name": "lex", "n_audited": 0, "agreement": 0.9},
            {
                "trustworthy": None,
                "agreement": None,
                "needs": 80,
                "text": "The lex judge cannot be checked yet: none of its verdicts has a gold "
                "verdict to compare with.",
            },
        ),
        (
            {"name": "lex", "n_audited": 4, "agreement": None},
            {
                "trustworthy": None,
                "agreement": None,
                "needs": 80,
                "text": "The lex judge cannot be checked yet: none of its verdicts has a gold "
                "verdict to compare with.",
            },
        ),
        (
            {"name": "lex", "n_audited": 4, "agreement": 0.8},
            {
                "trustworthy": True,
                "agreement": 80,
                "needs": 80,
                "text": "The lex judge is trustworthy here: it agrees with analysts on 80% of "
                "claims (needs ≥ 80%).",
            },
        ),
        (
            {"name": "lex", "n_audited": 4, "agreement": 0.795},
            {
                "trustworthy": False,
                "agreement": 80,  # 79.5 shown as 80 (halves up), still below the bar
                "needs": 80,
                "text": "The lex judge is not trustworthy here: it agrees with analysts on 80% "
                "of claims (needs ≥ 80%).",
            },
        ),
        (
            {"name": "", "n_audited": 4, "agreement": 1.0},
            {
                "trustworthy": True,
                "agreement": 100,
                "needs": 80,
                "text": "The the judge judge is trustworthy here: it agrees with analysts on 100% "
                "of claims (needs ≥ 80%).",
            },
        ),
    ],
)
def test_summary_judge_every_branch_whole(audit, expected):
    assert dashboard_summary(report=_report(), audit=audit)["judge"] == expected


@pytest.mark.parametrize(
    ("active", "expected"),
    [
        (None, None),
        ({"forecast": None}, None),
        ({"forecast": {"uniform": {"labels_more": 3}}}, None),  # no target
        ({"forecast": {"uniform": {"target_half_width": 0.05}}}, None),  # no count, not reached
        (
            {"forecast": {"uniform": {"target_half_width": 0.05, "labels_more": 1}}},
            {"labels_more": 1, "target": 5, "text": "Label about 1 more claim to reach ±5 points."},
        ),
        (
            {"forecast": {"uniform": {"target_half_width": 0.1, "labels_more": 0}}},
            {
                "labels_more": 0,
                "target": 10,
                "text": "Label about 0 more claims to reach ±10 points.",
            },
        ),
        (
            {"reached": True, "forecast": {"uniform": {"target_half_width": 0.049}}},
            {
                "labels_more": 0,
                "target": 5,
                "text": "The audit has reached ±5 points: more labels would narrow the interval "
                "further, but it is not needed.",
            },
        ),
        # the design's own forecast first, uniform's where the design has none
        (
            {
                "design": "active",
                "forecast": {
                    "active": {"target_half_width": 0.1, "labels_more": 7},
                    "uniform": {"target_half_width": 0.2, "labels_more": 99},
                },
            },
            {
                "labels_more": 7,
                "target": 10,
                "text": "Label about 7 more claims to reach ±10 points.",
            },
        ),
        (
            {
                "design": "active",
                "forecast": {
                    "active": {},
                    "uniform": {"target_half_width": 0.2, "labels_more": 99},
                },
            },
            {
                "labels_more": 99,
                "target": 20,
                "text": "Label about 99 more claims to reach ±20 points.",
            },
        ),
        (
            {
                "design": "stratified",
                "forecast": {"uniform": {"target_half_width": 0.03, "labels_more": 2}},
            },
            {
                "labels_more": 2,
                "target": 3,
                "text": "Label about 2 more claims to reach ±3 points.",
            },
        ),
        ({"design": "active", "forecast": {"active": None, "uniform": None}}, None),
    ],
)
def test_summary_next_step_every_branch_whole(active, expected):
    report = _report() if active is None else _report(active_audit=active)
    assert dashboard_summary(report=report, audit=None)["next"] == expected


def test_summary_whole_dict_with_everything():
    audit = {
        "name": "lex",
        "n_audited": 24,
        "agreement": 0.625,
        "headline_estimate": "ppi_faithfulness",
        "ppi_faithfulness": {"value": 0.6478, "ci": [0.4443, 0.8514]},
    }
    report = _report(
        active_audit={"forecast": {"uniform": {"target_half_width": 0.1, "labels_more": 40}}}
    )
    assert dashboard_summary(report=report, audit=audit) == {
        "faithfulness": {
            "value": 65,
            "low": 44,
            "high": 85,
            "n": 24,
            "source": "audited",
            "text": "About 65% of claims are supported (95% interval 44–85%, from 24 audited "
            "claims).",
        },
        "judge": {
            "trustworthy": False,
            "agreement": 63,
            "needs": 80,
            "text": "The lex judge is not trustworthy here: it agrees with analysts on 63% of "
            "claims (needs ≥ 80%).",
        },
        "next": {
            "labels_more": 40,
            "target": 10,
            "text": "Label about 40 more claims to reach ±10 points.",
        },
    }


# --- judge audit: failures worst first, the larger group first, then the order given ---------


def test_failures_order_with_ties_whole():
    from metrics.services.judge_audit import _failures

    # 8 claims in the data; the judge judged 7 of them (positions below), 6 with gold
    risk = ["legal", "health", "health", "legal", "financial", "safety", "none", "legal"]
    claims = pd.DataFrame({"claim_id": range(8), "risk_category": risk})
    position = np.array([7, 0, 1, 2, 3, 4, 5])
    audited = np.array([True, True, True, True, True, True, False])
    # gold and judge codes per judged claim (position order)
    gold = np.array([0, 0, 1, 0, 2, 0, -1])
    judge = np.array([1, 0, 1, 2, 2, 0, 0])
    # agree per judged claim with gold (claims 7, 0, 1, 2, 3, 4): F, T, T, F, T, T
    tags = {
        "tag_same": np.array([1, 1, 0, 0, 0, 0, 0, 0], bool),  # claims 0, 1: 1.0 of 2
        "tag_small": np.array([1, 1, 0, 0, 0, 0, 0, 0], bool),  # the same: kept after it
        "tag_empty": np.array([0, 0, 0, 0, 0, 0, 1, 0], bool),  # claim 6 not judged: skipped
        "tag_big": np.array([1, 1, 0, 0, 1, 1, 0, 0], bool),  # 0, 1, 4 (5 no gold): 1.0 of 3
        "tag_half": np.array([0, 0, 1, 0, 0, 0, 0, 1], bool),  # claims 2, 7: F, F: 0.0 of 2
        "tag_twin": np.array([0, 0, 0, 0, 1, 1, 0, 0], bool),  # claim 4 (5 no gold): 1.0 of 1
    }
    data = SimpleNamespace(tag_masks=tags, claims=claims)
    judged = SimpleNamespace(
        position=position,
        audited=audited,
        gold_codes=gold,
        judge_codes=judge,
        strata=np.zeros(7, int),  # a simple random sample: one stratum, equal weights
        sizes={0: 8.0},
        weights=None,
    )
    # by risk: legal claims 0, 3, 7: T, T, F → 2/3; health claims 1, 2: T, F → 0.5; financial
    # claim 4: T; safety claim 5 has no gold and "none" claim 6 was not judged: both absent
    assert _failures(data, judged) == {
        "by_tag": [
            {"group": "tag_half", "n": 2, "agreement": 0.0},
            {"group": "tag_big", "n": 3, "agreement": 1.0},
            {"group": "tag_same", "n": 2, "agreement": 1.0},
            {"group": "tag_small", "n": 2, "agreement": 1.0},
            {"group": "tag_twin", "n": 1, "agreement": 1.0},
        ],
        "by_risk_category": [
            {"group": "health", "n": 2, "agreement": 0.5},
            {"group": "legal", "n": 3, "agreement": 2 / 3},
            {"group": "financial", "n": 1, "agreement": 1.0},
        ],
    }


# --- snapshots: the queue is handed the snapshot's id -----------------------------------------


def test_enqueue_eager_computes_the_snapshot_by_its_id(monkeypatch):
    from metrics.services import snapshots

    calls = []
    monkeypatch.setitem(snapshots.current_app.conf, "task_always_eager", True)
    monkeypatch.setattr(snapshots, "snapshot_compute", lambda **kw: calls.append(kw))
    monkeypatch.setattr(
        snapshots.current_app, "send_task", lambda *a, **kw: pytest.fail("sent in eager mode")
    )
    snapshots._enqueue(41)
    assert calls == [{"snapshot_id": 41}]


def test_enqueue_with_a_broker_sends_the_task_by_name_with_the_id(monkeypatch):
    from metrics.services import snapshots

    sent = []
    monkeypatch.setitem(snapshots.current_app.conf, "task_always_eager", False)
    monkeypatch.setattr(snapshots.current_app, "send_task", lambda *a, **kw: sent.append((a, kw)))
    monkeypatch.setattr(snapshots, "snapshot_compute", lambda **kw: pytest.fail("computed"))
    snapshots._enqueue(42)
    assert sent == [(("metrics.tasks.compute_report",), {"args": (42,)})]
    assert snapshots.COMPUTE_REPORT_TASK == "metrics.tasks.compute_report"


@pytest.mark.django_db
def test_enqueue_or_fail_with_the_broker_down_fails_only_that_pending_snapshot(monkeypatch):
    from kombu.exceptions import OperationalError

    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    pending = ReportSnapshot.objects.create(project=project)
    other = ReportSnapshot.objects.create(project=project)
    done = ReportSnapshot.objects.create(project=project, status=ReportSnapshot.Status.DONE)

    def down(snapshot_id):
        raise OperationalError("no broker")

    monkeypatch.setattr(snapshots, "_enqueue", down)
    snapshots._enqueue_or_fail(pending.pk)
    snapshots._enqueue_or_fail(done.pk)
    pending.refresh_from_db()
    other.refresh_from_db()
    done.refresh_from_db()
    assert (pending.status, pending.error) == (
        ReportSnapshot.Status.FAILED,
        "the task queue (Redis) could not be reached; press Recompute once it is back",
    )
    assert (other.status, other.error) == (ReportSnapshot.Status.PENDING, "")
    assert (done.status, done.error) == (ReportSnapshot.Status.DONE, "")
    ids = []
    monkeypatch.setattr(snapshots, "_enqueue", ids.append)
    snapshots._enqueue_or_fail(other.pk)
    assert ids == [other.pk]


@pytest.mark.django_db
def test_snapshot_compute_progress_clipped_and_rounded_then_done(monkeypatch):
    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    snap = ReportSnapshot.objects.create(project=project, error="old")
    seen = []

    from metrics.services.report import Report

    def fake_report(*, project, judge, progress, system, all_systems):
        row = ReportSnapshot.objects.get(pk=snap.pk)
        seen.append((row.status, row.progress, row.stage, row.error))
        for fraction, stage in ((1.7, "x" * 250), (-0.3, "neg"), (0.12345, "mid")):
            progress(fraction, stage)
            row = ReportSnapshot.objects.get(pk=snap.pk)
            seen.append((row.progress, row.stage))
        seen.append((project.pk, judge, system, all_systems))
        return Report({"labels_at_compute": 17, "k": 1}, [{"n": 2}])

    monkeypatch.setattr(snapshots, "report_build", fake_report)
    out = snapshots.snapshot_compute(snapshot_id=snap.pk)
    assert seen == [
        (ReportSnapshot.Status.RUNNING, 0.0, "starting", ""),
        (1.0, "x" * 200),
        (0.0, "neg"),
        (0.123, "mid"),
        (project.pk, None, None, False),
    ]
    assert (out.status, out.progress, out.stage, out.data, out.labels_at_compute) == (
        ReportSnapshot.Status.DONE,
        1.0,
        "done",
        {"labels_at_compute": 17, "k": 1},
        17,
    )
    assert out.crc_inputs == [{"n": 2}]  # beside the report, not in it
    assert out.computed_at is not None
    # done: left alone (the report is not computed again)
    monkeypatch.setattr(snapshots, "report_build", lambda **kw: pytest.fail("recomputed"))
    assert snapshots.snapshot_compute(snapshot_id=snap.pk).pk == snap.pk
    assert snapshots.snapshot_compute(snapshot_id=snap.pk + 1000) is None


@pytest.mark.django_db
def test_snapshot_compute_failure_names_the_error(monkeypatch):
    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    snap = ReportSnapshot.objects.create(project=ProjectFactory())

    def boom(**kw):
        raise ValueError("no claims at all")

    monkeypatch.setattr(snapshots, "report_build", boom)
    out = snapshots.snapshot_compute(snapshot_id=snap.pk)
    assert (out.status, out.error) == (ReportSnapshot.Status.FAILED, "ValueError: no claims at all")


@pytest.mark.django_db
def test_snapshot_request_reuses_a_fresh_pending_row_and_reenqueues_a_stale_one(
    monkeypatch, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    ids = []
    monkeypatch.setattr(snapshots, "_enqueue", ids.append)
    with django_capture_on_commit_callbacks(execute=True):
        first = snapshots.snapshot_request(project=project)
    assert ids == [first.pk]
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = snapshots.snapshot_request(project=project)
    assert again.pk == first.pk
    assert callbacks == []
    assert ids == [first.pk]
    ReportSnapshot.objects.filter(pk=first.pk).update(
        created_at=timezone.now() - timedelta(minutes=11)
    )
    with django_capture_on_commit_callbacks(execute=True):
        stale = snapshots.snapshot_request(project=project)
    assert stale.pk == first.pk
    assert ids == [first.pk, first.pk]
    assert ReportSnapshot.objects.filter(project=project).count() == 1
    # another judge scope is another row
    with django_capture_on_commit_callbacks(execute=True):
        pooled = snapshots.snapshot_request(project=project, all_systems=True)
    assert pooled.pk != first.pk
    assert pooled.all_systems is True
    assert ids[-1] == pooled.pk
    assert timedelta(minutes=10) == snapshots.SNAPSHOT_STALE_AFTER


@pytest.mark.django_db
def test_snapshot_request_refuses_another_projects_system():
    from annotate.models import System
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project, elsewhere = ProjectFactory(), ProjectFactory()
    system = System.objects.create(project=elsewhere, name="rag", version="1")
    with pytest.raises(ValueError, match=r"^the system must belong to the project$") as err:
        snapshots.snapshot_request(project=project, system=system)
    assert str(err.value) == "the system must belong to the project"


# --- method strings, instruments left out, abstention, the card's identity: whole outputs -------


@pytest.mark.parametrize(
    ("rate", "words"),
    [
        ({}, "95% Wilson interval."),
        ({"denominator": 0, "answers": 3}, "95% Wilson interval."),
        ({"denominator": 5, "answers": 5}, "95% Wilson interval."),
        (
            {"denominator": 6, "answers": 3, "design_effect": 1.234},
            "95% interval clustered by answer, 3 answers; design effect 1.23.",
        ),
        (
            {"denominator": 6, "answers": 3, "design_effect": math.nan, "strata": 1},
            "95% interval clustered by answer, 3 answers.",
        ),
        (
            {"denominator": 6, "answers": None, "strata": 2, "design_effect": None},
            "95% interval clustered by answer, 0 answers; stratified by design stratum, 2 strata "
            "(weights N_h/N).",
        ),
        (
            {"denominator": 9, "answers": 4, "strata": 3, "design_effect": 0.5},
            "95% interval clustered by answer, 4 answers; stratified by design stratum, 3 strata "
            "(weights N_h/N); design effect 0.50.",
        ),
    ],
)
def test_interval_words_every_branch(rate, words):
    from metrics.services.method import _interval_words

    assert _interval_words(rate) == words


def test_method_strings_whole():
    from metrics.services.method import _method_strings

    base = (
        "Method: manual, claim level, against the retrieved pile; gold = unanimous analysts or a "
        "lead's adjudication; abstentions excluded."
    )
    report = {
        "claims": {"SUPPORTED": 0, "total": 0, "CONTRADICTED": 0},
        "faithfulness": {
            "mean_per_answer": {"answers": 2},
            "pooled": {"denominator": 4, "answers": 2},
        },
        "abstention": {"abstentions": 1, "answers": 5},
        "answers_with_unsupported_rate": {"numerator": 2, "denominator": 4},
        "contradiction_rate": {"numerator": 3},
        "coverage": {"measured": True, "numerator": 3, "denominator": 7},
        "citation_accuracy": {"measured": True, "numerator": 1, "denominator": 2},
    }
    out = _method_strings(report)
    assert list(out) == [
        "faithfulness",
        "contradiction_rate",
        "answers_with_unsupported_rate",
        "abstention",
        "coverage",
        "coverage_by_risk_category",
        "coverage_by_tag",
        "citation_accuracy",
    ]
    assert out["faithfulness"] == (
        "No claims assessed yet (0 claims in 2 answers). Method: manual, claim level, against "
        "the retrieved pile. Gold = unanimous analysts or a lead's adjudication; abstentions "
        "excluded; 95% interval clustered by answer, 2 answers."
    )
    assert out["contradiction_rate"] == f"3 of 0 gold claims contradicted by their own pile. {base}"
    assert out["answers_with_unsupported_rate"] == (
        "2 of 4 answers have at least one claim that is not supported (what a reader "
        f"experiences). {base}"
    )
    assert out["abstention"] == (
        "1 of 5 answers are confirmed abstentions; on unanswerable questions an abstention is "
        "correct, on answerable ones it is a missed answer. Method: lead-confirmed abstention "
        "flag, answer level."
    )
    assert out["coverage"] == (
        "3 of 7 marked facts grounded by a gold-SUPPORTED claim whose evidence quote overlaps the "
        "fact. Method: manual fact marking, fact level."
    )
    assert out["citation_accuracy"] == (
        "1 of 2 checked cited claims are supported by their cited passages alone. Method: judge "
        "citation runs (verify call against the cited passages only)."
    )
    assert out["coverage_by_risk_category"].startswith("Coverage by risk category: the marked")
    assert out["coverage_by_tag"].startswith("Coverage by claim tag: facts belong to answers")
    report["coverage"] = {"measured": False}
    report["citation_accuracy"] = {"measured": False}
    out = _method_strings(report)
    assert out["coverage"] == "Not measured: no facts are marked in this project's piles."
    assert out["citation_accuracy"] == "Not measured: no citation run exists for this project."


def test_instruments_left_out_names_counts_and_order():
    from metrics.services.instruments import (
        _instrument_keys,
        _instrument_verdicts,
        _instruments_left_out,
        instruments_left_out_text,
    )

    stale = {("m2", "p1"): 1, ("m1", "p9"): 4, (None, "p0"): 2}
    assert _instruments_left_out([("m1", "p9")], stale) == [
        {"model": "m2", "prompt_version": "p1", "stale_verdicts": 1},
        {"model": None, "prompt_version": "p0", "stale_verdicts": 2},
    ]
    # a judge with no current verdict at all: nothing "left out" beside its one instrument
    assert _instruments_left_out([], stale) == []
    left = [
        {"model": "m2", "prompt_version": "p1", "stale_verdicts": 1},
        {"model": "", "prompt_version": "p0", "stale_verdicts": 2},
    ]
    assert instruments_left_out_text(left) == (
        "Left out, every verdict made on a claim's previous text (edited, split or merged "
        "since): model m2, prompt p1: 1 verdict; model —, prompt p0: 2 verdicts. Run the judge on "
        "unjudged claims to judge the new text."
    )
    verdicts = pd.DataFrame(
        {
            "verdict_id": [1, 2, 3, 4, 5],
            "model": ["a", "b", "a", "c", "b"],
            "prompt_version": ["p", "p", "p", "q", "p"],
        }
    )
    # newest first by each instrument's newest verdict id: b (5), c (4), a (3)
    assert _instrument_keys(verdicts) == [("b", "p"), ("c", "q"), ("a", "p")]
    part, n = _instrument_verdicts(verdicts, {("b", "p"): 3, ("a", "p"): 1}, "b", "p")
    assert (part["verdict_id"].tolist(), n) == ([2, 5], 3)
    part, n = _instrument_verdicts(verdicts, {("b", "p"): 3}, "c", "q")
    assert (part["verdict_id"].tolist(), n) == ([4], 0)
    part, n = _instrument_verdicts(verdicts, {("b", "p"): 3, ("a", "p"): 1}, None, None)
    assert (len(part), n) == (5, 4)


def test_abstention_block_whole():
    from metrics.services.abstention_coverage import _abstention

    answers = pd.DataFrame(
        {
            "abstention": [True, False, True, False, False, True],
            "answerable": [
                "answerable",
                "answerable",
                "unanswerable",
                "unanswerable",
                "unknown",
                "unanswerable",
            ],
        }
    )
    assert _nan_equal(
        _abstention(answers),
        {
            "rate": _prop(3, 6),
            "by_answerable": {
                "answerable": _prop(1, 2),
                "unanswerable": _prop(2, 3),
                "unknown": _prop(0, 1),
            },
            "abstentions": 3,
            "answers": 6,
        },
    )


def test_audit_card_identity_of_pooled_systems_and_an_instrument_by_index():
    from metrics.services.audit_card import _identity, _jaudit_fields

    block = {"name": "j", "backend": "b", "model": None, "prompt_version": "p"}
    report = {
        "computed_at": "t",
        "project": {"slug": "s"},
        "system_scope": "all",
        "systems": [{"name": "rag", "version": "1"}, {"name": "bm25", "version": ""}],
    }
    assert _identity(report, block) == {
        "judge": "j",
        "backend": "b",
        "model": None,
        "prompt_version": "p",
        "date": "t",
        "project": "s",
        "system": "all systems, pooled (rag@1, bm25)",
    }
    assert "system" not in _identity({**report, "system_scope": "one"}, block)
    one = {**report, "system": {"name": "rag", "version": None}}
    assert _identity(one, block)["system"] == "rag"
    # a block from before the correction by category and CRC splits: every field None
    assert _jaudit_fields({}) == {
        "error_rate_correction": None,
        "error_rates_equality_p": None,
        "crc_splits": {
            "splits": None,
            "lambda_hat_full": None,
            "realized_mean": None,
            "realized_sd": None,
            "share_over_alpha": None,
            "retained_share_mean": None,
            "confidence_auc": None,
            "confidence_auc_ci": None,
        },
        "not_computed": None,
    }


def test_audit_card_rows_flatten_intervals_lists_and_cells():
    from metrics.services.audit_card import audit_card_rows

    card = {
        "a": 0.1,
        "b": None,
        "c": {"ci": [0.25, None], "x_ci": [1, 2], "list": ["u", None, 3], "ci3": [1, 2]},
        "d": [0.5, 0.75],
        "e": True,
    }
    assert audit_card_rows(card) == [
        ("a", "0.1", "", ""),
        ("b", "", "", ""),
        ("c.ci", "", "0.25", ""),
        ("c.x_ci", "", 1, 2),
        ("c.list", "u –  – 3", "", ""),
        ("c.ci3", "1 – 2", "", ""),
        ("d", "0.5 – 0.75", "", ""),
        ("e", True, "", ""),
    ]
