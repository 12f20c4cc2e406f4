"""The whole report under the design the active queue drew its labels with (issue 33).

Seeded draws, each a new project labelled the way the product's queue labels it: π from
`active_design.active_probabilities` (√(p(1 − p)) of the judge's support probability, summed
to the budget), served in Ohlsson's sequential-Poisson order (`stats.sequential_poisson_keys`),
the first n served labelled with the π the queue records. The design is then read by the
report's own `audit_design.design_phases` / `assemble_design` (from the labels' recorded
designs and π, as `audit_design_read` reads them from the database) and the figures come from
the report's assembly (`rates._verdict_rates`, `judge_audit._agreement`, `_faithfulness`).

The values to cover are the project's own: its claims' faithfulness, the judge's sensitivity
and specificity over all its claims. The same labels read as a uniform sample (no weights,
which is what every figure but the active block did before) must fail: the queue oversamples
the claims the judge is unsure of, so the unweighted figures lean toward the hard claims.

World: 300 answers of 1–9 claims (about 1,500), truth ≈ 0.80 with answers differing
(intra-answer correlation 0.1), the judge's confidence informative (AUC ≈ 0.8, checked with
scikit-learn on every draw), 150 labels. A second scenario switches halfway: 100 labels in the
uniform queue's random order, then 100 drawn by the active queue from the claims not yet
labelled (π over those claims), 200 labels in all.
"""

import os
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from django.test import override_settings
from sklearn.metrics import roc_auc_score

from metrics import stats
from metrics.services.active_design import active_probabilities
from metrics.services.audit_design import DEFAULT_STRATUM, assemble_design
from metrics.services.design_phases import design_phases, no_phases
from metrics.services.judge_audit import _agreement, _faithfulness
from metrics.services.judged import Judged
from metrics.services.rates import _verdict_rates

DRAWS = int(os.environ.get("FA_DRAWS", 500))
ANSWERS, RHO = 300, 0.1
FIGURES = ("headline", "pooled", "se", "sp")
SHARP = 2.0
CLAIM_ORDER = SimpleNamespace(queue_order="claim")


def _world(rng):
    """One project: truth per claim, the judge's confidence and verdict (codes as the report
    keeps them: 0 SUPPORTED, 1 CONTRADICTED, 2 NOT_IN_PILE)."""
    sizes = rng.integers(1, 10, ANSWERS)
    ids = np.repeat(np.arange(ANSWERS), sizes)
    total = (1 - RHO) / RHO
    p = rng.beta(0.8 * total, 0.2 * total, ANSWERS)[ids]
    truth = rng.random(ids.size) < p
    score = np.where(truth, 1.9, 0.0) + rng.normal(0.0, 1.1, ids.size)
    # an overconfident judge (AUC is the same for any sharpening): most claims near 0 or 1,
    # the few it is unsure of drawn far more often by the active queue
    confidence = 1.0 / (1.0 + np.exp(-SHARP * (score - 0.6)))
    says = confidence >= 0.5
    judge = np.where(says, 0, 2).astype(np.int8)
    return ids, truth, confidence, judge


def _active_draw(rng, confidence, eligible, budget):
    """The claims the active queue serves first among `eligible`, and the π it records."""
    at = np.flatnonzero(eligible)
    pi = active_probabilities(project=CLAIM_ORDER, support={"p": confidence[at]}, budget=budget)
    keys = stats.sequential_poisson_keys(pi, u=rng.random(at.size))
    first = np.argsort(keys, kind="stable")[:budget]
    return at[first], pi[first]


def _labels(rng, confidence, switch, labels):
    """The label rows (claim, design, π) in the order they were saved."""
    n = confidence.size
    rows = []
    taken = np.zeros(n, bool)
    if switch:
        uniform = rng.choice(n, labels // 2, replace=False)
        taken[uniform] = True
        rows += [(int(c), "uniform", np.nan) for c in uniform]
    drawn, pi = _active_draw(rng, confidence, ~taken, labels - int(taken.sum()))
    rows += [(int(c), "active", float(q)) for c, q in zip(drawn, pi, strict=True)]
    return pd.DataFrame(rows, columns=["claim_id", "design", "inclusion_probability"])


class _Stub:
    """The slice of `_Data` that `_verdict_rates` reads."""

    def __init__(self, gold, answer_ids, design):
        self.claims = pd.DataFrame({"gold": gold})
        self._ids = answer_ids
        self.design = design

    def answer_ids(self):
        return self._ids


def _figures(gold, judge, confidence, ids, design):
    rates = _verdict_rates(_Stub(gold, ids, design), np.ones(ids.size, bool))
    judged = Judged(
        position=np.arange(ids.size),
        judge_codes=judge,
        confidence=confidence,
        gold_codes=gold,
        answer_ids=ids,
        audited=gold >= 0,
        strata=design.stratum,
        sizes=design.sizes(),
        weights=design.weight,
        census=design.census,
        names=design.names,
    )
    fields, sesp = _agreement(judged, human_kappa=float("nan"))
    faith = _faithfulness(judged, sesp)
    return {
        "headline": faith[faith["headline_estimate"]]["ci"],
        "pooled": rates["faithfulness"]["pooled"]["ci"],
        "se": fields["sensitivity"]["ci"],
        "sp": fields["specificity"]["ci"],
    }, faith["headline_estimate"]


def _covers(ci, value):
    return ci[0] is not None and ci[0] <= value <= ci[1]


def _simulate(seed, switch, n_labels):
    rng = np.random.default_rng(seed)
    weighted = dict.fromkeys(FIGURES, 0)
    unweighted = dict.fromkeys(FIGURES, 0)
    aucs, headlines, designs = [], set(), set()
    with override_settings(FAITHAUDIT_FINITE_POPULATION_CORRECTION=True):
        for _ in range(DRAWS):
            ids, truth, confidence, judge = _world(rng)
            says = judge == 0
            aucs.append(roc_auc_score(truth, confidence))
            project = {
                "headline": truth.mean(),
                "pooled": truth.mean(),
                "se": says[truth].mean(),
                "sp": (~says[~truth]).mean(),
            }
            labels = _labels(rng, confidence, switch, n_labels)
            claim_ids = np.arange(ids.size)
            gold = np.full(ids.size, -1, np.int8)
            at = labels["claim_id"].to_numpy()
            gold[at] = np.where(truth[at], 0, 2)
            names = np.full(ids.size, DEFAULT_STRATUM, dtype=object)
            phases = design_phases(labels, claim_ids, gold)
            design = assemble_design(names, gold.copy(), phases)
            designs.add(design.name)
            got, headline = _figures(gold, judge, confidence, ids, design)
            headlines.add(headline)
            plain = assemble_design(names, gold.copy(), no_phases(ids.size))
            naive, _ = _figures(gold, judge, confidence, ids, plain)
            for figure in FIGURES:
                weighted[figure] += _covers(got[figure], project[figure])
                unweighted[figure] += _covers(naive[figure], project[figure])
    share = {k: v / DRAWS for k, v in weighted.items()}
    naive_share = {k: v / DRAWS for k, v in unweighted.items()}
    return share, naive_share, float(np.min(aucs)), headlines, designs


@pytest.fixture(scope="module")
def active_only():
    return _simulate(20261202, switch=False, n_labels=150)


@pytest.fixture(scope="module")
def uniform_then_active():
    return _simulate(20261203, switch=True, n_labels=200)


def _check(result, design_name, naive_fails):
    share, naive, auc, headlines, designs = result
    assert auc >= 0.75, auc  # an informative judge in every draw
    assert designs == {design_name}
    assert headlines <= {"ppi_faithfulness", "gold_only_faithfulness", "debiased_faithfulness"}
    for figure in FIGURES:
        assert 0.93 <= share[figure] <= 0.97, (figure, share, naive)
    # read as a uniform sample, the same labels miss the project's values
    for figure in naive_fails:
        assert naive[figure] < 0.85, (figure, naive)


def test_every_figure_covers_the_project_under_the_active_queue(active_only):
    """500 draws, 150 labels: weighted 0.956 / 0.942 / 0.952 / 0.944 (headline, pooled, se,
    sp); unweighted 0.944 / 0.784 / 0.348 / 0.894 — the pooled rate and the sensitivity fail
    (the unweighted PPI++ headline leans on the judge's predictions over every claim, which the
    design does not bias; its rectifier does)."""
    _check(active_only, "active", naive_fails=("pooled", "se"))


def test_every_figure_covers_the_project_after_switching_from_uniform_to_active(
    uniform_then_active,
):
    """500 draws, 100 uniform then 100 active labels: weighted 0.936 / 0.958 / 0.948 / 0.946;
    unweighted sensitivity 0.712 (half the labels uniform, the pooled rate's bias is halved:
    0.910)."""
    _check(uniform_then_active, "uniform, then active", naive_fails=("se",))
