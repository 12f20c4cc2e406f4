"""The report's own assembly under a realistic audit design, 1,000 seeded draws each.

Through `metrics.services.rates._verdict_rates` (pooled faithfulness) and
`metrics.services.judge_audit._agreement` / `_faithfulness` (sensitivity, specificity, gold-only,
Rogan–Gladen, PPI++ and the headline), fed in-memory arrays shaped as `_Data` and `Judged`
hold them — what the report does after its reads, without a database per draw.

World (issue 13 "Must show"): 30–200 answers of 2–8 claims; an answer's supported rate and the
judge's sensitivity and specificity on it vary by answer with intra-answer correlation ρ = 0.3
(Beta with a + b = (1 − ρ)/ρ). The planted values are the world's means. The same draws give
the independent-claims intervals (every claim its own answer), which must fail: that is what
makes these tests able to fail.
"""

import numpy as np
import pandas as pd
import pytest

from metrics import stats
from metrics.services.audit_design import AuditDesign
from metrics.services.judge_audit import _agreement, _faithfulness
from metrics.services.judged import Judged
from metrics.services.rates import _verdict_rates

DRAWS = int(__import__("os").environ.get("FA_DRAWS", 1000))
RHO = 0.3
PI, SE, SP = 0.7, 0.85, 0.7


def _beta(rng, mean, size):
    total = (1 - RHO) / RHO
    return rng.beta(mean * total, (1 - mean) * total, size)


class _Stub:
    """The slice of `_Data` that `_verdict_rates` reads."""

    def __init__(self, gold_codes, answer_ids, strata, names):
        self.claims = pd.DataFrame({"gold": gold_codes})
        self._ids = answer_ids
        self.design = AuditDesign(stratum=strata, names=names)

    def answer_ids(self):
        return self._ids


def _judged(gold_codes, judge_codes, answer_ids, strata, names):
    n = gold_codes.size
    return Judged(
        position=np.arange(n),
        judge_codes=judge_codes,
        confidence=np.full(n, np.nan),
        gold_codes=gold_codes,
        answer_ids=answer_ids,
        audited=gold_codes >= 0,
        strata=strata,
        sizes=AuditDesign(stratum=strata, names=names).sizes(),
    )


def _clustered_world(rng):
    """One project: every claim judged, gold on the claims of a random half of the answers."""
    answers = int(rng.integers(30, 201))
    sizes = rng.integers(2, 9, answers)
    ids = np.repeat(np.arange(answers), sizes)
    p = _beta(rng, PI, answers)[ids]
    se = _beta(rng, SE, answers)[ids]
    sp = _beta(rng, SP, answers)[ids]
    truth = rng.random(ids.size) < p
    says = np.where(truth, rng.random(ids.size) < se, rng.random(ids.size) >= sp)
    audited = (rng.random(answers) < 0.5)[ids]
    gold = np.where(audited, np.where(truth, 0, 1), -1).astype(np.int8)
    judge = np.where(says, 0, 2).astype(np.int8)
    return gold, judge, ids


def _covers(ci, value):
    return ci[0] <= value <= ci[1]


@pytest.fixture(scope="module")
def clustered_draws():
    rng = np.random.default_rng(20261201)
    names = ["whole project"]
    hits = dict.fromkeys(("pooled", "se", "sp", "gold_only", "rg", "ppi", "headline"), 0)
    naive = dict.fromkeys(("pooled", "se", "sp", "rg", "ppi"), 0)
    for _ in range(DRAWS):
        gold, judge, ids = _clustered_world(rng)
        strata = np.zeros(ids.size, np.int64)
        rates = _verdict_rates(_Stub(gold, ids, strata, names), np.ones(ids.size, bool))
        hits["pooled"] += _covers(rates["faithfulness"]["pooled"]["ci"], PI)
        judged = _judged(gold, judge, ids, strata, names)
        fields, sesp = _agreement(judged, human_kappa=float("nan"))
        hits["se"] += _covers(fields["sensitivity"]["ci"], SE)
        hits["sp"] += _covers(fields["specificity"]["ci"], SP)
        faith = _faithfulness(judged, sesp)
        hits["gold_only"] += _covers(faith["gold_only_faithfulness"]["ci"], PI)
        hits["rg"] += _covers(faith["debiased_faithfulness"]["ci"], PI)
        hits["ppi"] += _covers(faith["ppi_faithfulness"]["ci"], PI)
        hits["headline"] += _covers(faith[faith["headline_estimate"]]["ci"], PI)
        # The same draw with every claim its own answer: today's independent-claims intervals.
        a = gold >= 0
        y, j = gold[a] == 0, judge == 0
        k, n = int(y.sum()), int(a.sum())
        naive["pooled"] += _covers(stats.wilson_interval(k, n), PI)
        tp, tn, neg = int((y & j[a]).sum()), int((~y & ~j[a]).sum()), int((~y).sum())
        naive["se"] += _covers(stats.wilson_interval(tp, k), SE)
        naive["sp"] += _covers(stats.wilson_interval(tn, neg), SP)
        rg = stats.rogan_gladen_interval(
            int(j.sum()), j.size, tp, k, tn, neg, method="lang-reiczigel"
        )
        naive["rg"] += _covers(rg, PI)
        ppi = stats.ppi_mean_interval(y.astype(float), j[a].astype(float), j[~a].astype(float))
        naive["ppi"] += _covers(ppi["ci"], PI)
    return {k: v / DRAWS for k, v in hits.items()}, {k: v / DRAWS for k, v in naive.items()}


@pytest.mark.parametrize("figure", ["pooled", "se", "sp", "gold_only", "rg", "ppi", "headline"])
def test_report_intervals_clustered_by_answer_cover_the_planted_value(clustered_draws, figure):
    coverage, _ = clustered_draws
    assert coverage[figure] >= 0.93, coverage


@pytest.mark.parametrize("figure", ["pooled", "se", "sp", "ppi"])
def test_the_independent_claims_intervals_fail_on_the_same_draws(clustered_draws, figure):
    coverage, naive = clustered_draws
    assert naive[figure] < 0.90, naive
    assert coverage[figure] - naive[figure] > 0.05, (coverage, naive)


def _stratified_world(rng):
    """An audit drawn by the judge's verdict: 10% of the claims it accepted, 60% of those it
    rejected (1:6), as teams that audit elsewhere oversample what the judge rejected."""
    answers = int(rng.integers(60, 201))
    sizes = rng.integers(2, 9, answers)
    ids = np.repeat(np.arange(answers), sizes)
    p = _beta(rng, 0.74, answers)[ids]
    truth = rng.random(ids.size) < p
    says = np.where(truth, rng.random(ids.size) < SE, rng.random(ids.size) >= SP)
    strata = np.where(says, 0, 1).astype(np.int64)
    audited = rng.random(ids.size) < np.where(says, 0.10, 0.60)
    gold = np.where(audited, np.where(truth, 0, 1), -1).astype(np.int8)
    judge = np.where(says, 0, 2).astype(np.int8)
    return gold, judge, ids, strata, float(truth.mean())


@pytest.fixture(scope="module")
def stratified_draws():
    rng = np.random.default_rng(1306)
    names = ["judge verdict SUPPORTED", "judge verdict not SUPPORTED"]
    hits = {"headline": 0, "pooled": 0, "unweighted": 0}
    for _ in range(DRAWS):
        gold, judge, ids, strata, planted = _stratified_world(rng)
        judged = _judged(gold, judge, ids, strata, names)
        _, sesp = _agreement(judged, human_kappa=float("nan"))
        faith = _faithfulness(judged, sesp)
        hits["headline"] += _covers(faith[faith["headline_estimate"]]["ci"], planted)
        rates = _verdict_rates(_Stub(gold, ids, strata, names), np.ones(ids.size, bool))
        hits["pooled"] += _covers(rates["faithfulness"]["pooled"]["ci"], planted)
        # The unweighted estimate: the audit's plain share, as if it were a simple sample.
        y = gold[gold >= 0] == 0
        hits["unweighted"] += _covers(stats.wilson_interval(int(y.sum()), y.size), planted)
    return {k: v / DRAWS for k, v in hits.items()}


def test_a_1_to_6_oversampled_audit_headline_covers_the_project_rate(stratified_draws):
    assert stratified_draws["headline"] >= 0.93, stratified_draws
    assert stratified_draws["pooled"] >= 0.93, stratified_draws


def test_a_1_to_6_oversampled_audit_unweighted_estimate_misses(stratified_draws):
    assert stratified_draws["unweighted"] < 0.5, stratified_draws
