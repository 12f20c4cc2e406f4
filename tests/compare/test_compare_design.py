"""The comparison under the audit's design: strata from the import file and the active design's
inclusion probabilities weigh the gold, as the report's do; the expected figures are hand sums
and statsmodels' WLS with a covariance clustered by question."""

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotate.models import Claim, Label, Membership, Role
from judges.models import Judge
from metrics.services.compare import system_resolve, systems_compare
from tests.compare.builders import answer_record, import_records
from tests.factories import ProjectFactory, UserFactory
from tests.metrics.stats.test_paired_design import _wls_contrast

pytestmark = pytest.mark.django_db
S, N = "SUPPORTED", "NOT_IN_PILE"


def _stratified_world(project, rng, g=40, high=10):
    """g questions, the first `high` high-risk (claims in stratum "high"); every high claim has
    gold, one low claim in four; B is better on the high questions only."""
    records, rows = [], []
    for i in range(g):
        stratum = "high" if i < high else "low"
        for side, system in enumerate(("rag@1", "rag@2")):
            p = (0.45 + 0.35 * side) if stratum == "high" else 0.85
            claims = []
            for _ in range(3):
                y = rng.random() < p
                labelled = stratum == "high" or rng.random() < 0.25
                judge = y if rng.random() < 0.9 else not y
                claims.append(((S if y else N) if labelled else None, S if judge else N))
                rows.append((side, f"q{i}", stratum, float(y) if labelled else np.nan, judge))
            record = answer_record(f"q{i}", system, claims)
            for claim in record["claims"]:
                claim["stratum"] = stratum
            records.append(record)
    import_records(project, records)
    side, q, h, gold, judge = (np.array(col) for col in zip(*rows, strict=True))
    return side.astype(int), q, h, gold.astype(float), judge.astype(float)


def test_strata_from_the_file_weigh_each_systems_gold_by_its_share_of_claims():
    project = ProjectFactory()
    s, q, h, gold, _judge = _stratified_world(project, np.random.default_rng(4))
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b)
    faith = result["rates"]["faithfulness"]["gold_only"]
    # Hand: each system's rate is Σ_h (N_sh / N_s)·(mean gold in h), N_sh = 30 and 90 claims.
    labelled = ~np.isnan(gold)

    def rate(side):
        return sum(
            ((s == side) & (h == name)).sum()
            / (s == side).sum()
            * gold[labelled & (s == side) & (h == name)].mean()
            for name in ("high", "low")
        )

    assert faith["rate_a"] == pytest.approx(rate(0))
    assert faith["rate_b"] == pytest.approx(rate(1))
    value, se = _wls_contrast(gold, s, q, h, np.ones(s.size))
    assert faith["value"] == pytest.approx(value)
    assert faith["std_error"] == pytest.approx(se)
    # The plain mean over the gold, which the high stratum dominates, is another figure.
    plain = gold[labelled & (s == 1)].mean() - gold[labelled & (s == 0)].mean()
    assert abs(plain - value) > 0.02
    assert result["design"]["kind"] == "stratified"
    assert {row["name"]: row["claims"] for row in result["design"]["strata"]} == {
        "high": [30, 30],
        "low": [90, 90],
    }
    assert (
        "Gold is weighted by the audit's design: stratified over 2 design strata"
        in (result["method"])
    )
    assert "stratified over 2 design strata" in faith["method"]


def test_a_judge_on_a_stratified_audit_gives_stratified_ppi():
    project = ProjectFactory()
    _stratified_world(project, np.random.default_rng(5))
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b, judge=Judge.objects.get(name="j"))
    ppi = result["rates"]["faithfulness"]["ppi"]
    assert ppi["design"] == "stratified"
    assert ppi["n_questions"] == 40
    assert "PPI++ on the per-question differences, paired by question, weighted" in ppi["method"]


def test_the_active_designs_inclusion_probabilities_weigh_the_gold():
    project = ProjectFactory(queue_design="active")
    rng = np.random.default_rng(9)
    records, truth = [], []
    for i in range(30):
        for side, system in enumerate(("rag@1", "rag@2")):
            claims = [(S if rng.random() < 0.6 + 0.1 * side else N, None) for _ in range(2)]
            records.append(answer_record(f"q{i}", system, claims))
            truth += [(side, f"q{i}", c[0]) for c in claims]
    import_records(project, records)
    analyst = UserFactory()
    claims = list(Claim.objects.filter(project=project).order_by("id"))
    pis = rng.choice([0.2, 0.5, 0.9], len(claims))
    for claim, pi in zip(claims, pis, strict=True):
        verdict = claim.gold.verdict
        Label.objects.create(
            claim=claim,
            annotator=analyst,
            verdict=verdict,
            design="active",
            inclusion_probability=float(pi),
        )
    result = systems_compare(
        project=project,
        a=system_resolve(project=project, ref="rag@1"),
        b=system_resolve(project=project, ref="rag@2"),
    )
    faith = result["rates"]["faithfulness"]["gold_only"]
    side = np.array([t[0] for t in truth])
    question = np.array([t[1] for t in truth])
    y = np.array([t[2] == S for t in truth], dtype=float)
    by_claim = {c.pk: p for c, p in zip(claims, pis, strict=True)}
    # Claims come back in id order, which is the records' order.
    w = 1 / np.array([by_claim[c.pk] for c in claims])
    # Hájek by hand: Σ w·y / Σ w per system.
    hajek = [float((w * y)[side == k].sum() / w[side == k].sum()) for k in (0, 1)]
    assert (faith["rate_a"], faith["rate_b"]) == (pytest.approx(hajek[0]), pytest.approx(hajek[1]))
    value, se = _wls_contrast(y, side, question, np.full(y.size, "whole project"), w)
    assert faith["std_error"] == pytest.approx(se)
    assert result["design"]["kind"] == "weighted"
    assert result["design"]["queue_design"] == "active"
    assert "each gold claim weighted by 1/π" in result["method"]


def test_without_strata_the_page_says_the_gold_is_a_simple_random_sample():
    project = ProjectFactory(slug="plain")
    import_records(
        project,
        [answer_record(f"q{i}", sys, [(S, S), (N, N)]) for i in range(3) for sys in ("x@1", "x@2")],
    )
    lead = get_user_model().objects.create_user("leadx", password="x")
    Membership.objects.create(user=lead, project=project, role=Role.LEAD)
    client = Client()
    client.force_login(lead)
    a = system_resolve(project=project, ref="x@1")
    b = system_resolve(project=project, ref="x@2")
    page = client.get(reverse("metrics:compare", args=["plain"]), {"a": a.pk, "b": b.pk})
    assert page.status_code == 200
    assert "The audit&#x27;s gold is a simple random sample here" in page.content.decode()


def test_an_active_project_whose_gold_has_no_recorded_pi_counts_it_unweighted():
    """Gold imported (no label drawn under the design): nothing to weigh it by, and leaving it
    all out would leave no comparison; it is the paired t interval of scipy."""
    from scipy import stats as scipy_stats

    project = ProjectFactory(queue_design="active")
    rng = np.random.default_rng(12)
    a = rng.random(25) < 0.5
    b = rng.random(25) < 0.7
    verdict = {True: S, False: N}
    import_records(
        project,
        [
            answer_record(f"q{i}", system, [(verdict[bool(x)], None)])
            for i, pair in enumerate(zip(a, b, strict=True))
            for system, x in zip(("rag@1", "rag@2"), pair, strict=True)
        ],
    )
    result = systems_compare(
        project=project,
        a=system_resolve(project=project, ref="rag@1"),
        b=system_resolve(project=project, ref="rag@2"),
    )
    faith = result["rates"]["faithfulness"]["gold_only"]
    lo, hi = scipy_stats.ttest_rel(b.astype(float), a.astype(float)).confidence_interval()
    assert faith["ci"] == [pytest.approx(lo), pytest.approx(hi)]
    assert result["design"]["kind"] == "simple"
    assert result["design"]["gold_left_out"] == 0


def test_gold_labelled_only_outside_the_queue_is_left_out_as_in_the_report():
    from scipy import stats as scipy_stats

    project = ProjectFactory()
    rng = np.random.default_rng(13)
    a = rng.random(20) < 0.5
    b = rng.random(20) < 0.7
    verdict = {True: S, False: N}
    import_records(
        project,
        [
            answer_record(f"q{i}", system, [(verdict[bool(x)], None)])
            for i, pair in enumerate(zip(a, b, strict=True))
            for system, x in zip(("rag@1", "rag@2"), pair, strict=True)
        ],
    )
    # q0 and q1: A's gold claim was labelled with j/k, outside the queue's random order.
    analyst = UserFactory()
    for question in ("q0", "q1"):
        claim = Claim.objects.get(answer__external_id=f"rag@1:{question}")
        Label.objects.create(
            claim=claim,
            annotator=analyst,
            verdict=claim.gold.verdict,
            stratum={"outside_queue": True},
        )
    result = systems_compare(
        project=project,
        a=system_resolve(project=project, ref="rag@1"),
        b=system_resolve(project=project, ref="rag@2"),
    )
    faith = result["rates"]["faithfulness"]["gold_only"]
    lo, hi = scipy_stats.ttest_rel(b[2:].astype(float), a[2:].astype(float)).confidence_interval()
    assert faith["n_questions"] == 18
    assert faith["ci"] == [pytest.approx(lo), pytest.approx(hi)]
    assert result["design"]["gold_left_out"] == 2
    assert (
        "2 gold claims labelled only outside the queue left out, as in the report."
        in (result["method"])
    )


def test_without_a_design_the_figures_are_todays_estimators_exactly():
    """Regression: a project with no strata and no π gives, to the last bit, what the
    unweighted paired estimators give on the same units (gold only and PPI++)."""
    from metrics.stats.paired import paired_gold_difference, paired_ppi_difference

    project = ProjectFactory()
    rng = np.random.default_rng(21)
    records, units = [], []
    for i in range(60):
        labelled = rng.random() < 0.4
        for side, system in enumerate(("rag@1", "rag@2")):
            claims = []
            for _ in range(int(rng.integers(1, 4))):
                y = rng.random() < 0.6 + 0.1 * side
                judge = y if rng.random() < 0.85 else not y
                claims.append(((S if y else N) if labelled else None, S if judge else N))
                units.append((float(y) if labelled else np.nan, float(judge), side, f"q{i}"))
            records.append(answer_record(f"q{i}", system, claims))
    import_records(project, records)
    result = systems_compare(
        project=project,
        a=system_resolve(project=project, ref="rag@1"),
        b=system_resolve(project=project, ref="rag@2"),
        judge=Judge.objects.get(name="j"),
    )
    gold, judge, side, question = (np.array(col) for col in zip(*units, strict=True))
    side = side.astype(int)
    has = ~np.isnan(gold)
    today_gold = paired_gold_difference(gold[has], side[has], question[has])
    today_ppi = paired_ppi_difference(gold, judge, side, question)
    faith = result["rates"]["faithfulness"]
    assert result["design"]["kind"] == "simple"
    assert faith["gold_only"]["value"] == today_gold.value
    assert faith["gold_only"]["ci"] == [today_gold.lower, today_gold.upper]
    assert faith["ppi"]["value"] == today_ppi.value
    assert faith["ppi"]["ci"] == [today_ppi.lower, today_ppi.upper]
    assert faith["ppi"]["lambda"] == today_ppi.extra["lambda"]
