"""Grounding bits audited like an instrument: the report's `grounding_bits` block against values
computed here (sklearn's AUC, statsmodels' Wilson interval, this file's own bigram bits), the
AUC interval's coverage in a seeded simulation, and the histogram by hand."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from metrics.services import bits as bits_mod
from metrics.services import report_compute
from metrics.services.bits import (
    METHOD,
    combine_out_of_fold,
    grounding_bits_block,
    histogram_counts,
    histogram_edges,
    with_judge_block,
)
from metrics.stats.ranking import auc_delong
from tests.factories import AnswerFactory, ClaimFactory, GoldFactory, PassageFactory, ProjectFactory
from tests.judges.conftest import llm  # noqa: F401 - the loopback server fixture
from tests.judges.test_bits_backend import expected_bits
from tests.metrics import independent as ref


# --- the AUC and its interval --------------------------------------------------------------
def test_auc_equals_sklearn_with_ties():
    rng = np.random.default_rng(3)
    pos = np.round(rng.normal(0.7, 1, 40), 1)
    neg = np.round(rng.normal(0, 1, 55), 1)
    y = np.r_[np.ones(40), np.zeros(55)]
    got = auc_delong(pos, neg)
    assert got.value == pytest.approx(roc_auc_score(y, np.r_[pos, neg]), abs=1e-12)
    assert (got.positives, got.negatives) == (40, 55)


def test_delong_variance_equals_brute_force_placements():
    rng = np.random.default_rng(4)
    pos, neg = rng.integers(0, 6, 17).astype(float), rng.integers(0, 5, 23).astype(float)
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = v10.var(ddof=1) / 17 + v01.var(ddof=1) / 23
    assert auc_delong(pos, neg).se == pytest.approx(math.sqrt(var), rel=1e-12)


def test_auc_of_a_perfect_separation_has_a_wilson_interval_of_the_smaller_group():
    got = auc_delong([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0, -4.0])
    lo, hi = proportion_confint(3, 3, alpha=0.05, method="wilson")
    assert got.value == 1.0
    assert (got.lower, got.upper) == (pytest.approx(lo), 1.0)


def test_auc_is_nan_without_one_of_the_groups():
    assert math.isnan(auc_delong([], [1.0]).value)


def test_delong_interval_covers_the_binormal_auc():
    """Binormal scores, shift 1: AUC = Φ(1/√2) = 0.7602. DeLong's interval covers it about 95%
    of the time; the naive interval that treats the m·n pairs as independent trials does not."""
    from scipy.stats import norm

    truth = norm.cdf(1 / math.sqrt(2))
    rng = np.random.default_rng(18)
    covered = naive = 0
    reps = 600
    for _ in range(reps):
        pos, neg = rng.normal(1, 1, 30), rng.normal(0, 1, 45)
        got = auc_delong(pos, neg)
        covered += got.lower <= truth <= got.upper
        lo, hi = proportion_confint(round(got.value * 1350), 1350, method="wilson")
        naive += lo <= truth <= hi
    assert 0.925 <= covered / reps <= 0.975
    assert naive / reps < 0.70


# --- the histogram ---------------------------------------------------------------------------
def test_histogram_bins_are_round_right_closed_and_zero_is_an_edge():
    values = np.array([-2.3, -0.4, 0.0, 0.2, 1.1, 3.6])
    edges = histogram_edges(values, bins=6)
    # span 5.9 over 6 bins -> width 1 (the next round number up from 0.98)
    assert edges.tolist() == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    # (-3,-2]: -2.3; (-1,0]: -0.4 and 0.0; (0,1]: 0.2; (1,2]: 1.1; (3,4]: 3.6
    assert histogram_counts(values, edges) == [1, 0, 2, 1, 1, 0, 1]


def test_a_lowest_value_on_an_edge_gets_the_bin_below():
    edges = histogram_edges(np.array([-2.0, 1.0]), bins=3)
    assert edges[0] < -2.0
    assert sum(histogram_counts(np.array([-2.0, 1.0]), edges)) == 2


# --- the report's block on a project scored by the loopback server -----------------------------
TOPICS = [
    ("refunds", "Refunds are processed within 14 days. They are issued to the original card."),
    ("parcels", "Parcels ship from Leeds on weekdays. Tracking links arrive by email."),
    ("returns", "Returns are free for members. Labels are printed at the counter."),
    ("hours", "The shop opens at nine on Mondays. It closes early on public holidays."),
    ("gifts", "Gift cards never expire. They cannot be exchanged for cash."),
    ("repairs", "Repairs take up to three weeks. A loan phone is offered meanwhile."),
]


def _claims(name, pile):
    first, second = (
        s.strip() + ("" if s.strip().endswith(".") else ".") for s in pile.split(". ", 1)
    )
    swapped = first.replace("14", "30").replace("Leeds", "Derby").replace("nine", "ten")
    swapped = swapped.replace("free", "paid").replace("never", "often").replace("three", "six")
    return [
        (first, "SUPPORTED"),
        (second, "SUPPORTED"),
        (swapped, "CONTRADICTED"),
        (f"Our drones deliver {name} to the moon.", "NOT_IN_PILE"),
        (f"Staff who handle {name} speak seven languages.", "NOT_IN_PILE"),
    ]


@pytest.mark.django_db
def test_report_block_matches_independent_figures(llm, django_capture_on_commit_callbacks):  # noqa: F811
    from judges.services import judge_create, judge_run_start
    from metrics.services import report_compute

    _, ctl = llm
    project = ProjectFactory()
    gold_of = {}
    for name, pile in TOPICS:
        answer = AnswerFactory(project=project, question=f"What about {name}?")
        PassageFactory(answer=answer, rank=1, text=pile)
        for position, (text, verdict) in enumerate(_claims(name, pile)):
            claim = ClaimFactory(answer=answer, project=project, text=text, position=position)
            GoldFactory(claim=claim, verdict=verdict)
            gold_of[claim.pk] = (text, verdict)
    judge = judge_create(
        project=project, name="bits", backend="bits", model="loopback", endpoint="loopback"
    )
    with django_capture_on_commit_callbacks(execute=True):
        judge_run_start(judge=judge)
    report = report_compute(project=project, judge=judge)
    block = report["grounding_bits"]

    # The bits, recomputed from the prompts the server saw with this test's own bigram model.
    texts = {text for text, _ in gold_of.values()}
    assert len(texts) == len(gold_of)  # one claim per text: the log finds each one's prompts
    mine = {text: expected_bits(ctl, text)[0] for text in texts}
    y = np.array([v == "SUPPORTED" for _, v in gold_of.values()])
    b = np.array([mine[t] for t, _ in gold_of.values()])
    assert block["n_audited"] == len(gold_of) == 30
    assert block["auc"]["auc"] == pytest.approx(roc_auc_score(y, b), abs=1e-9)
    k, n = int((b[~y] <= 0).sum()), int((~y).sum())
    share = block["unsupported_non_positive"]
    assert (share["numerator"], share["denominator"]) == (k, n)
    assert share["ci"] == pytest.approx(proportion_confint(k, n, method="wilson"))
    assert block["sensitivity"]["value"] == pytest.approx((b[y] > 0).mean())
    assert block["specificity"]["value"] == pytest.approx((b[~y] <= 0).mean())
    assert block["mean_bits"]["SUPPORTED"] == pytest.approx(b[y].mean())
    assert block["mean_bits"]["unsupported"] == pytest.approx(b[~y].mean())
    # The copied claims score positive; the fabricated ones non-positive, but for the one that
    # repeats a bigram of its pile ("to the", from "issued to the original card").
    assert (b[y] > 0).all()
    positive_fabrications = [t for t, v in gold_of.values() if v == "NOT_IN_PILE" and mine[t] > 0]
    assert positive_fabrications == ["Our drones deliver refunds to the moon."]
    assert k == 11  # the 11 other fabrications; every swapped figure scores positive
    counts = block["histogram"]["counts"]
    assert sum(counts["SUPPORTED"]) == 12
    assert sum(counts["NOT_IN_PILE"]) == 12
    assert sum(counts["CONTRADICTED"]) == 6
    zero = block["histogram"]["zero_index"]
    assert block["histogram"]["edges"][zero] == 0.0
    assert sum(counts["NOT_IN_PILE"][:zero]) == 11  # at or left of the zero line
    assert sum(counts["SUPPORTED"][:zero]) == 0
    assert block["calibration"]["enough"] is True
    # The same run is the report's judge: its audit blocks (PPI++, calibration, CRC) apply.
    assert report["judge"]["backend"] == "bits"
    assert report["judge"]["n_audited"] == 30
    assert block["with_judge"] is None  # no prompted judge in this project


@pytest.mark.django_db
def test_with_a_prompted_judge_the_block_counts_disagreements_on_gold():
    from metrics.services import report_compute
    from tests.factories import JudgeFactory, JudgeRunFactory, JudgeVerdictFactory
    from tests.metrics.factories_bits import build_bits_project

    built = build_bits_project(n_answers=10)
    other = JudgeFactory(project=built.project, name="prompted", backend="openai", model="m")
    run = JudgeRunFactory(judge=other, prompt_version="p1")
    rng = np.random.default_rng(5)
    says = {}
    for claim in built.claims:
        verdict = "SUPPORTED" if rng.random() < 0.6 else "NOT_IN_PILE"
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict, confidence=None)
        says[claim.pk] = verdict == "SUPPORTED"
    report = report_compute(project=built.project, judge=built.judge)
    w = report["grounding_bits"]["with_judge"]
    assert (w["judge"], w["n"]) == ("prompted", 40)
    bits_says = {c.pk: built.bits[c.pk] > 0 for c in built.claims}
    assert w["disagree"] == sum(bits_says[c.pk] != says[c.pk] for c in built.claims)
    gold_s = [c for c in built.claims if c.gold.verdict == "SUPPORTED"]
    assert w["disagreements"]["SUPPORTED"]["bits_only_supported"] == sum(
        bits_says[c.pk] and not says[c.pk] for c in gold_s
    )
    assert set(w["combination"]) >= {"judge", "bits", "combined", "offered"}


# --- two instruments together --------------------------------------------------------------
def _two_signals(rng, n, judge_signal):
    y = rng.random(n) < 0.6
    groups = np.arange(n) // 4
    bits = rng.normal(np.where(y, 0.8, -0.8), 1.0)
    judge = 1 / (1 + np.exp(-rng.normal(np.where(y, judge_signal, -judge_signal), 1.0)))
    return judge, bits, y, groups


def test_combination_out_of_fold_figures_equal_sklearns_cross_val_predict():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from metrics.services.bits import combine_out_of_fold

    judge, bits, y, groups = _two_signals(np.random.default_rng(7), 200, 0.8)
    got = combine_out_of_fold(judge, bits, y, groups)
    p = cross_val_predict(
        make_pipeline(StandardScaler(), LogisticRegression()),
        np.column_stack([judge, bits]),
        y.astype(int),
        groups=groups,
        cv=GroupKFold(5),
        method="predict_proba",
    )[:, 1]
    assert got["combined"]["log_loss"] == pytest.approx(log_loss(y, p), rel=1e-9)
    assert got["combined"]["auc"] == pytest.approx(roc_auc_score(y, p), rel=1e-9)


def test_combination_is_offered_when_both_carry_signal_and_rarely_for_a_noise_judge():
    """Seeded simulation: two independent informative instruments → the combination beats both
    out of fold in nearly every data set; a judge of pure noise adds nothing, and the rule
    offers the combination far less often (only when the noise happens to help out of fold)."""
    from metrics.services.bits import combine_out_of_fold

    rng = np.random.default_rng(180)
    informative = sum(
        combine_out_of_fold(*_two_signals(rng, 240, 0.8))["offered"] for _ in range(40)
    )
    noise = sum(combine_out_of_fold(*_two_signals(rng, 240, 0.0))["offered"] for _ in range(40))
    assert informative >= 38
    assert noise <= 16


# --- metrics.services.bits._bits_calibration: the block names its claim count --------------


def test_bits_calibration_block_counts_its_claims_and_says_when_it_can_recalibrate():
    import pandas as pd

    from metrics.services.bits import _bits_calibration

    conf = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    supported = np.array([True, True, False, True, False, False])
    rows = pd.DataFrame({"confidence": conf, "answer_id": [1, 1, 2, 2, 3, 3]})
    out = _bits_calibration(rows, supported)
    assert out["n"] == 6
    assert out["enough"] is True
    # Raw ECE, 10 equal bins, by hand: every claim alone in its bin, so Σ|c − y|/6 =
    # (0.1 + 0.2 + 0.3 + 0.4 + 0.2 + 0.7)/6 = 1.9/6.
    assert out["ece"]["raw"] == pytest.approx(1.9 / 6)
    assert out["ece"]["raw"] == pytest.approx(ref.ece(conf, supported.astype(float)))
    one = _bits_calibration(rows.iloc[:2], supported[:2])  # one answer, both supported
    assert (one["n"], one["enough"]) == (2, False)


S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


# --- metrics.services.bits: the bits-vs-judge table, every cell by brute force ------------------


@pytest.mark.django_db
def test_bits_and_a_prompted_judge_every_disagreement_cell_counted_by_brute_force():
    """bits `with_judge_block` `_54` (`neither` counted as "bits say no, the judge says yes").
    The project of test_bits_audit.py with a prompted judge's verdicts drawn at random: for each
    gold verdict, the four cells (bits only, judge only, both, neither say SUPPORTED) counted
    claim by claim; they add up to the claims with that gold."""
    import numpy as np

    from metrics.services import report_compute
    from tests.factories import JudgeFactory, JudgeRunFactory, JudgeVerdictFactory
    from tests.metrics.factories_bits import build_bits_project

    built = build_bits_project(n_answers=10)
    other = JudgeFactory(project=built.project, name="prompted", backend="openai", model="m")
    run = JudgeRunFactory(judge=other, prompt_version="p1")
    rng = np.random.default_rng(5)
    judge_says = {}
    for claim in built.claims:
        verdict = "SUPPORTED" if rng.random() < 0.6 else "NOT_IN_PILE"
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict, confidence=None)
        judge_says[claim.pk] = verdict == "SUPPORTED"
    w = report_compute(project=built.project, judge=built.judge)["grounding_bits"]["with_judge"]
    for gold in ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"):
        mine = [c for c in built.claims if c.gold.verdict == gold]
        cells = {
            "bits_only_supported": 0,
            "judge_only_supported": 0,
            "both_supported": 0,
            "neither": 0,
        }
        for c in mine:
            bits, judge = built.bits[c.pk] > 0, judge_says[c.pk]
            key = {
                (True, False): "bits_only_supported",
                (False, True): "judge_only_supported",
                (True, True): "both_supported",
                (False, False): "neither",
            }[(bits, judge)]
            cells[key] += 1
        assert w["disagreements"][gold] == {"claims": len(mine), **cells}, gold
    assert sum(w["disagreements"][g]["neither"] for g in w["disagreements"]) > 0  # reached


# --- metrics.services.bits: the share of supported claims the bits score positive -------------


@pytest.mark.django_db
def test_bits_block_supported_positive_is_the_share_above_zero_with_its_wilson_interval():
    """bits `grounding_bits_block` `_100` (`pos > 1` for `pos > 0`: supported claims scoring
    between 0 and 1 bit counted as not positive). The bits project of test_bits_audit.py (40
    gold claims, 20 SUPPORTED, bits drawn around each verdict's mean): the share counted claim by
    claim, its Wilson interval from statsmodels."""
    from statsmodels.stats.proportion import proportion_confint

    from tests.metrics.factories_bits import build_bits_project

    built = build_bits_project(n_answers=10)
    block = report_compute(project=built.project, judge=built.judge)["grounding_bits"]
    pos = [built.bits[c.pk] for c in built.claims if c.gold.verdict == S]
    assert any(0 < b <= 1 for b in pos)  # the case the share must count
    k, n = sum(b > 0 for b in pos), len(pos)
    share = block["supported_positive"]
    assert (share["numerator"], share["denominator"]) == (k, n)
    assert share["value"] == pytest.approx(k / n)
    assert list(share["ci"]) == pytest.approx(proportion_confint(k, n, method="wilson"))


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
