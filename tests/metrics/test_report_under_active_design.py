"""A project labelled through the active queue: the whole report under its design (issue 33).

The planted project of tests/metrics/test_active_audit.py (40 gold claims of one-claim answers,
20 judged only), its gold labelled by the active queue with π 0.8 where the judge said
SUPPORTED and 0.2 elsewhere. Expected figures are hand Hájek means Σ w·y / Σ w (w = 1/π).
"""

import numpy as np
import pytest

from metrics.services import report_compute
from metrics.services.judge_audit import NOT_UNDER_DESIGN
from tests.metrics.factories_report import GOLD, JUDGE
from tests.metrics.test_active_audit import _active_labels, _planted_one_per_answer

S = "SUPPORTED"
pytestmark = pytest.mark.django_db


@pytest.fixture
def report():
    project, judge, gold_claims, _rest = _planted_one_per_answer(queue_design="active")
    _active_labels(gold_claims, [0.8 if v == S else 0.2 for v in JUDGE])
    return report_compute(project=project, judge=judge)


def _hajek(y, w):
    return float(np.sum(w * y) / np.sum(w))


def test_pooled_faithfulness_and_the_judge_are_weighted_by_one_over_pi(report):
    y = np.array([v == S for v in GOLD], float)
    j = np.array([v == S for v in JUDGE], float)
    w = np.where(j == 1, 1 / 0.8, 1 / 0.2)
    pooled = report["faithfulness"]["pooled"]
    assert pooled["value"] == pytest.approx(_hajek(y, w), abs=1e-12)
    assert pooled["value"] != pytest.approx(y.mean(), abs=1e-6)  # not the unweighted share
    assert "each label weighted by 1/π" in pooled["interval_method"]
    judge = report["judge"]
    pos, neg = y == 1, y == 0
    assert judge["sensitivity"]["value"] == pytest.approx(_hajek(j[pos], w[pos]), abs=1e-12)
    assert judge["specificity"]["value"] == pytest.approx(_hajek(1 - j[neg], w[neg]), abs=1e-12)
    assert report["design"]["design"] == "active"
    assert report["design"]["weighted"] is True
    assert report["design"]["method"].startswith("Labels drawn by the active queue")


def test_figures_with_no_weighted_version_are_not_shown_with_the_reason(report):
    judge = report["judge"]
    assert judge["frontier"] == []
    assert judge["frontier_not_computed"] == NOT_UNDER_DESIGN
    assert judge["crc"]["not_computed"] == NOT_UNDER_DESIGN
    assert set(judge["ece"].values()) == {None}
    by_category = judge["error_rates_by_risk_category"]
    assert by_category["correction"] == "pooled"
    assert "unweighted" in by_category["not_under_design"]


def _two_strata(gold, judge):
    """20 audited claims, one per answer: stratum A (claims 0–9) of 20 claims in the project,
    B (10–19) of 80, so each stands for N_h/n_h = 2 and 8 claims."""
    from metrics.services.judged import Judged

    return Judged(
        position=np.arange(20),
        judge_codes=judge,
        confidence=np.full(20, np.nan),
        gold_codes=gold,
        answer_ids=np.arange(20),
        audited=np.ones(20, bool),
        strata=np.array([0] * 10 + [1] * 10),
        sizes={0: 20.0, 1: 80.0},
        names=["A", "B"],
    )


def test_kappa_and_the_table_under_strata_sampled_unequally():
    """Two strata of 20 and 80 claims, 10 audited in each (half of one, an eighth of the
    other): κ and the table's shares weight each audited claim by N_h/n_h (2 and 8). κ from
    scikit-learn's cohen_kappa_score with those sample weights; the shares by hand."""
    from sklearn.metrics import cohen_kappa_score

    from metrics.services.judge_audit import _agreement

    gold = np.array([0] * 8 + [2] * 2 + [0] * 4 + [2] * 6, np.int8)
    judge = np.array([0] * 7 + [2] * 3 + [0] * 6 + [2] * 4, np.int8)
    judged = _two_strata(gold, judge)
    fields, _ = _agreement(judged, human_kappa=float("nan"))
    weight = np.where(judged.strata == 0, 2.0, 8.0)
    assert fields["kappa"] == pytest.approx(
        cohen_kappa_score(gold, judge, sample_weight=weight), abs=1e-12
    )
    assert fields["kappa"] != pytest.approx(cohen_kappa_score(gold, judge), abs=1e-3)
    shares = np.array(fields["confusion"]["estimated_shares"])
    # gold S judged S: 7 in A (·2) and 4 in B (·8) of 100 claims
    assert shares[0, 0] == pytest.approx((7 * 2 + 4 * 8) / 100, abs=1e-12)
    assert shares.sum() == pytest.approx(1.0, abs=1e-12)
    assert fields["confusion"]["matrix"][0][0] == 11  # the counts stay the counts


def test_agreement_per_risk_category_weights_each_claim_by_its_share_of_the_project():
    """The same two unequally sampled strata: a category's agreement is Σ w·agree / Σ w with
    w = N_h/n_h (2 in A, 8 in B), by hand; tags likewise."""
    from types import SimpleNamespace

    import pandas as pd

    from metrics.services.judge_audit import _failures

    gold = np.array([0] * 10 + [0] * 10, np.int8)
    judge = np.array([0] * 9 + [2] + [0] * 5 + [2] * 5, np.int8)  # A: 9 of 10 agree, B: 5
    judged = _two_strata(gold, judge)
    data = SimpleNamespace(
        claims=pd.DataFrame({"risk_category": ["legal"] * 20}),
        tag_masks={"numbers": np.array([True] * 5 + [False] * 5 + [True] * 5 + [False] * 5)},
    )
    failures = _failures(data, judged)
    [legal] = failures["by_risk_category"]
    assert legal["n"] == 20
    # (9·2 + 5·8) / (10·2 + 10·8) = 58/100, not the unweighted 14/20.
    assert legal["agreement"] == pytest.approx(58 / 100, abs=1e-12)
    [numbers] = failures["by_tag"]
    # claims 0–4 (A, ·2) and 10–14 (B, ·8) all agree: 1.0 weighted or not
    assert numbers["agreement"] == pytest.approx(1.0)
    judged.judge_codes[10] = 2  # one B claim of the tag disagrees: (5·2 + 4·8)/(5·2 + 5·8)
    assert _failures(data, judged)["by_tag"][0]["agreement"] == pytest.approx(42 / 50, abs=1e-12)
