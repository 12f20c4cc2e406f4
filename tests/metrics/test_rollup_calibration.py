"""Issue 30: the calibration section and CRC from rollups — gold rows and the judge's
confidences counted by value, never every claim — equal the report's, and the confidence bins
a large project reads move the figures by less than 1e-6."""

import math

import numpy as np
import pandas as pd
import pytest

from annotate.models import Fact, Gold, Label
from judges.models import JudgeVerdict
from metrics.services import report_compute
from metrics.services.calibration import _calibration, confidence_counts
from metrics.services.conformal import CRC_ALPHA_GRID, crc_from_inputs
from metrics.services.rollups import (
    calibration_from_rollups,
    rollups_confidences,
    rollups_read,
)
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)
from tests.metrics.test_rollups import N, S, _project

CRC_FIELDS = (
    "lambda_hat",
    "retained",
    "test_claims",
    "realized_false_claim_rate",
    "retained_all_judged",
    "judged_with_confidence",
    "calibration_answers",
)


def _missing(value) -> bool:
    """No finite value: the report's JSON form writes NaN and ∞ (λ̂ retaining nothing) as null."""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def _same(got, want):
    """Equal to 1e-12; "no value" alike whether non-finite or None."""
    if _missing(want):
        assert _missing(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


def _rows_same(got: list[dict], want: list[dict]):
    assert len(got) == len(want)
    for row, other in zip(got, want, strict=True):
        assert row.keys() == other.keys()
        for key, value in other.items():
            _same(row[key], value)


# Each answer's pile: two sentences a fact may be marked on and a quote may be taken from.
PILE = "Refunds are processed within 14 days. They are issued to the original card."
SENTENCES = ((0, 37), (38, len(PILE)))


def _one_stratum_project(seed):
    """Clustered answers, one stratum, gold drawn claim by claim (answers span gold and
    unaudited claims), an abstaining answer, some verdicts without a confidence; facts marked
    on most answers' piles (the abstaining one's too), and SUPPORTED labels quoting one
    sentence or the other, on gold claims of either verdict and on unaudited claims, so the
    frontier's coverage counts some facts grounded and others not."""
    rng = np.random.default_rng(seed)
    project = ProjectFactory()
    analyst = UserFactory()
    judge = JudgeFactory(project=project, name="j", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for a in range(60):
        answer = AnswerFactory(project=project, abstention=(a == 59))
        passage = PassageFactory(answer=answer, rank=1, text=PILE)
        for start, end in SENTENCES:
            if rng.random() < 0.7:
                Fact.objects.create(
                    answer=answer, passage=passage, start=start, end=end, text=PILE[start:end]
                )
        for _ in range(int(rng.integers(2, 6))):
            claim = ClaimFactory(answer=answer)
            true = rng.random() < 0.7
            said = S if (rng.random() < 0.8) == true else N
            conf = float(np.clip((0.75 if said == S else 0.25) + rng.normal(0, 0.15), 0, 1))
            confidence = None if rng.random() < 0.05 else round(conf, 3)
            JudgeVerdict.objects.create(run=run, claim=claim, verdict=said, confidence=confidence)
            if rng.random() < 0.4:
                Gold.objects.create(claim=claim, verdict=S if true else N, source="unanimous")
            if rng.random() < 0.6:
                start, end = SENTENCES[int(rng.integers(0, 2))]
                Label.objects.create(
                    claim=claim,
                    annotator=analyst,
                    verdict=S,
                    evidence_passage=passage,
                    evidence_start=start,
                    evidence_end=end,
                    evidence_quote=PILE[start:end],
                )
    return project, judge, run


def _check(project, judge, run):
    report = report_compute(project=project, judge=judge)["judge"]
    rollups = rollups_read(project=project, run=run)
    got = calibration_from_rollups(
        rollups, rollups_confidences(project=project, run=run, digits=None)
    )
    for name in ("raw", "platt", "isotonic"):
        _same(got["ece"][name], report["ece"][name])
    for key in ("used_for_frontier", "n", "answers", "enough", "not_computed"):
        assert got["calibration"][key] == report["calibration"][key]
    _rows_same(got["calibration"]["bins"]["raw"], report["calibration"]["bins"]["raw"])
    for field in CRC_FIELDS:
        _same(got["crc"][field], report["crc"][field])
    assert got["crc"]["not_computed"] == report["crc"]["not_computed"]
    _rows_same(got["frontier"], report["frontier"])
    assert got["frontier_not_computed"] == report["frontier_not_computed"]
    return got


def _check_both(seed):
    got = _check(*_one_stratum_project(seed))
    assert got["calibration"]["n"] > 40
    assert got["ece"]["isotonic"] is not None
    # every judged claim with a confidence counted, gold and unaudited alike
    assert got["crc"]["judged_with_confidence"] > 2 * got["calibration"]["n"]
    assert len(got["frontier"]) > 0
    # the coverage along the frontier read from gold's facts and quotes, some facts grounded
    coverage = [row["coverage"] for row in got["frontier"]]
    assert all(c is not None and 0 <= c < 1 for c in coverage), coverage
    assert max(coverage) > 0
    assert got["crc"]["not_computed"] is None
    # Strata audited at different rates: the report leaves these unshown, and so do rollups.
    unequal = _check(*_project(seed=seed))
    assert unequal["frontier"] == []
    assert unequal["crc"]["not_computed"]


@pytest.mark.django_db
def test_calibration_and_crc_from_rollups_equal_the_report():
    _check_both(seed=7)


@pytest.mark.postgres
@pytest.mark.django_db
def test_calibration_and_crc_from_rollups_equal_the_report_on_postgresql():
    _check_both(seed=8)


def _synthetic(seed=11, gold=3_000, judged=300_000):
    """A judge whose continuous P(SUPPORTED) tracks the truth; gold on 3,000 claims in 1,000
    answers, 300,000 judged claims each with its own confidence (no two alike)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(gold) < 0.75
    conf = np.clip(np.where(truth, rng.beta(6, 2, gold), rng.beta(2, 5, gold)), 0, 1)
    every = np.concatenate([conf, rng.beta(5, 2, judged - gold)])
    return conf, truth.astype(float), np.repeat(np.arange(1_000), 3), every


def _crc_by_alpha(conf, supported, answers, judged_confidence) -> dict:
    empty = pd.DataFrame({"claim_id": [], "fact_id": []}, dtype=np.int64)
    block, inputs = _calibration(
        confidence=conf,
        supported=supported,
        answer_ids=answers,
        claim_ids=np.arange(conf.size),
        judged_confidence=judged_confidence,
        grounded_links=empty,
        facts=pd.DataFrame({"answer_id": [], "fact_id": []}, dtype=np.int64),
    )
    return block, {alpha: crc_from_inputs(inputs, alpha=alpha) for alpha in CRC_ALPHA_GRID}


def test_confidence_bins_of_one_millionth_move_the_figures_by_less_than_1e_6():
    conf, supported, answers, every = _synthetic()
    exact_block, exact = _crc_by_alpha(conf, supported, answers, confidence_counts(every))
    assert np.unique(every).size == every.size  # the worst case: every confidence its own
    binned_counts = confidence_counts(np.round(every, 6))
    assert binned_counts[0].size <= 1_000_001
    binned_block, binned = _crc_by_alpha(conf, supported, answers, binned_counts)
    assert binned_block["ece"] == exact_block["ece"]  # gold rows: untouched by the bins
    _rows_same(binned_block["frontier"], exact_block["frontier"])
    total = every.size
    moved_any = 0.0
    for alpha in CRC_ALPHA_GRID:
        assert binned[alpha]["lambda_hat"] == exact[alpha]["lambda_hat"]
        assert binned[alpha]["judged_with_confidence"] == total
        moved = abs(binned[alpha]["retained_all_judged"] - exact[alpha]["retained_all_judged"])
        moved_any = max(moved_any, moved / total)
    assert moved_any < 1e-6
    # Coarser bins do move it: the test can tell bins that are fine enough from bins that are not.
    coarse = _crc_by_alpha(conf, supported, answers, confidence_counts(np.round(every, 2)))[1]
    coarse_moved = max(
        abs(coarse[a]["retained_all_judged"] - exact[a]["retained_all_judged"]) / total
        for a in CRC_ALPHA_GRID
    )
    assert coarse_moved > 1e-4
