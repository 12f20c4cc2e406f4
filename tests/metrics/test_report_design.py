"""The report under the audit's design, through the database: one claim per answer gives exactly
today's published figures; strata from the file and from the queue weight the rates by N_h/N;
a stratum without gold is not extrapolated over; labels made outside the queue are left out.

Expected figures: Wilson, Reiczigel's Lang–Reiczigel script and ppi_py (tests/metrics/
independent.py), and stratified means worked by hand here.
"""

import pytest

from annotate.models import Claim, Gold, Label
from judges.models import JudgeVerdict
from metrics.services import report_compute
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    ProjectFactory,
    UserFactory,
)
from tests.metrics import independent as ref
from tests.metrics.factories_report import CONF, GOLD, JUDGE, REST, REST_CONF

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def _claims(project, per_answer, count, **answer_fields):
    out = []
    for _ in range(count // per_answer):
        answer = AnswerFactory(project=project, **answer_fields)
        out.extend(ClaimFactory(answer=answer) for _ in range(per_answer))
    return out


def test_one_claim_per_answer_and_one_stratum_gives_exactly_todays_published_figures():
    """The planted vectors with every claim its own answer: Wilson, Lang–Reiczigel and PPI++
    exactly as before the design (a regression test of issue 13's "simple case")."""
    import numpy as np

    project = ProjectFactory()
    gold_claims = _claims(project, 1, 40)
    rest = _claims(project, 1, 20)
    for claim, verdict in zip(gold_claims, GOLD, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    judge = JudgeFactory(project=project, name="lenient", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for claim, verdict, conf in zip(
        gold_claims + rest, JUDGE + REST, CONF + REST_CONF, strict=True
    ):
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=conf)
    report = report_compute(project=project, judge=judge)

    k = GOLD.count(S)
    assert report["faithfulness"]["pooled"]["ci"] == pytest.approx(ref.wilson(k, 40), abs=1e-12)
    assert report["contradiction_rate"]["ci"] == pytest.approx(
        ref.wilson(GOLD.count(C), 40), abs=1e-12
    )
    assert report["faithfulness"]["pooled"]["design_effect"] == 1.0
    assert "95% Wilson interval." in report["method"]["faithfulness"]
    block = report["judge"]
    gold, said = np.array(GOLD), np.array(JUDGE)
    tp = int(np.sum((gold == S) & (said == S)))
    tn = int(np.sum((gold != S) & (said != S)))
    pos, neg = int(np.sum(gold == S)), int(np.sum(gold != S))
    assert block["sensitivity"]["ci"] == pytest.approx(ref.wilson(tp, pos), abs=1e-12)
    assert block["specificity"]["ci"] == pytest.approx(ref.wilson(tn, neg), abs=1e-12)
    assert block["agreement_ci"] == pytest.approx(
        ref.wilson(int(np.sum(gold == said)), 40), abs=1e-12
    )
    assert block["gold_only_faithfulness"]["ci"] == pytest.approx(ref.wilson(k, 40), abs=1e-12)
    # Kappa's interval (new): the Fleiss–Cohen–Everitt standard error by statsmodels, CR1-scaled.
    from scipy.stats import t as student_t
    from statsmodels.stats.inter_rater import cohens_kappa

    table = [[int(np.sum((gold == g) & (said == j))) for j in (S, C, N)] for g in (S, C, N)]
    fleiss = cohens_kappa(np.array(table))
    half = student_t.ppf(0.975, 39) * fleiss.std_kappa * np.sqrt(40 / 39)
    assert block["kappa_ci"] == pytest.approx([fleiss.kappa - half, fleiss.kappa + half])
    judged_supported = JUDGE.count(S) + REST.count(S)
    se, sp = tp / pos, tn / neg
    rg = min(max((judged_supported / 60 + sp - 1) / (se + sp - 1), 0.0), 1.0)
    lo, hi = ref.lang_reiczigel(judged_supported, 60, tp, pos, tn, neg)
    assert block["debiased_faithfulness"]["ci"] == pytest.approx(
        [min(lo, rg), max(hi, rg)], abs=1e-9
    )
    theta, ci, lam = ref.ppi((gold == S).astype(float), np.array(CONF), np.array(REST_CONF))
    assert block["ppi_faithfulness"]["value"] == pytest.approx(theta, abs=1e-12)
    assert block["ppi_faithfulness"]["ci"] == pytest.approx(list(ci), abs=1e-9)
    assert block["ppi_faithfulness"]["lambda"] == pytest.approx(lam, abs=1e-12)
    design = report["design"]
    assert [s["name"] for s in design["strata"]] == ["whole project"]
    effects = {row["key"]: row["design_effect"] for row in design["design_effects"]}
    assert effects["judge_ppi_faithfulness"] == 1.0
    assert effects["faithfulness"] == 1.0


def _gold(claims, verdicts, **label):
    user = label.pop("annotator", None)
    for claim, verdict in zip(claims, verdicts, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
        if user is not None:
            Label.objects.create(claim=claim, annotator=user, verdict=verdict, **label)


def test_file_strata_weight_the_rate_by_their_share_and_an_unaudited_stratum_is_named():
    project = ProjectFactory()
    a = _claims(project, 2, 20)
    b = _claims(project, 2, 20)
    c = _claims(project, 2, 10)
    for claims, name in ((a, "accepted"), (b, "rejected"), (c, "unseen")):
        for claim in claims:
            claim.stratum = name
            claim.save(update_fields=["stratum"])
    _gold(a, [S] * 16 + [N] * 4)  # all 20 audited: 0.8
    _gold(b[:4], [S, N, N, N])  # 4 of 20 audited (oversampled 1:5 less): 0.25
    report = report_compute(project=project)
    pooled = report["faithfulness"]["pooled"]
    # Hand: N_accepted = N_rejected = 20 over the seen strata -> 0.5·0.8 + 0.5·0.25.
    assert pooled["value"] == pytest.approx(0.5 * 0.8 + 0.5 * 0.25)
    assert (pooled["numerator"], pooled["denominator"]) == (17, 24)
    assert pooled["unseen_share"] == pytest.approx(10 / 50)
    design = report["design"]
    rows = {s["name"]: s for s in design["strata"]}
    assert rows["accepted"] == {
        "name": "accepted",
        "source": "file",
        "claims": 20,
        "gold": 20,
        "weight": 0.5,
        "share_of_project": 0.4,
    }
    assert (rows["rejected"]["gold"], rows["rejected"]["weight"]) == (4, 0.5)
    assert (rows["unseen"]["gold"], rows["unseen"]["weight"]) == (0, 0.0)
    assert design["unseen_share"] == pytest.approx(0.2)
    assert "20% of the project's claims are in strata with no gold (unseen)" in design["method"]
    assert "clustered by answer, 12 answers" in design["method"]
    assert "2 strata" in report["method"]["faithfulness"]


def test_a_queue_stratum_counts_every_claim_its_restriction_covers():
    project = ProjectFactory()
    user = UserFactory()
    health = _claims(project, 2, 20, risk_category="health")
    legal = _claims(project, 2, 20, risk_category="legal")
    _gold(health[:4], [S, S, S, N], annotator=user, stratum={"risk_category": "health"})
    _gold(legal[:10], [S] * 5 + [N] * 5, annotator=user, stratum={})
    report = report_compute(project=project)
    rows = {s["name"]: (s["claims"], s["gold"], s["source"]) for s in report["design"]["strata"]}
    assert rows == {
        "risk category health": (20, 4, "queue"),
        "whole project": (20, 10, "default"),
    }
    assert report["faithfulness"]["pooled"]["value"] == pytest.approx(0.5 * 0.75 + 0.5 * 0.5)


def test_labels_made_outside_the_queue_are_left_out_unless_the_project_counts_them():
    project = ProjectFactory()
    user = UserFactory()
    claims = _claims(project, 2, 20)
    _gold(claims[:10], [S] * 10, annotator=user, stratum={})
    _gold(claims[10:13], [N] * 3, annotator=user, stratum={"outside_queue": True})
    report = report_compute(project=project)
    assert report["claims"]["total"] == 10
    assert report["faithfulness"]["pooled"]["value"] == 1.0
    outside = report["design"]["outside_queue"]
    assert (outside["labels"], outside["gold_claims_left_out"], outside["counted"]) == (
        3,
        3,
        False,
    )
    assert (
        "3 labels made outside the queue are not in the audit." in report["method"]["faithfulness"]
    )

    project.count_outside_queue_labels = True
    project.save(update_fields=["count_outside_queue_labels"])
    counted = report_compute(project=project)
    assert counted["claims"]["total"] == 13
    assert counted["faithfulness"]["pooled"]["value"] == pytest.approx(10 / 13)
    assert counted["design"]["outside_queue"]["counted"] is True
    assert "counted in the audit" in counted["method"]["faithfulness"]


def test_the_stratified_queue_designs_stratum_is_the_labels_design_stratum():
    # Issue 14: labels saved under the stratified design record {"active_stratum": name}; the
    # stratum's N_h is every claim of that stratum, labelled or not.
    project = ProjectFactory()
    user = UserFactory()
    low = _claims(project, 2, 20)
    high = _claims(project, 2, 20)
    for claims, name in ((low, "CONTRADICTED · conf 0.9–1 · none"), (high, "SUPPORTED · x")):
        Claim.objects.filter(pk__in=[c.pk for c in claims]).update(active_stratum=name)
    _gold(
        low[:4],
        [S, N, N, N],
        annotator=user,
        stratum={"active_stratum": "CONTRADICTED · conf 0.9–1 · none"},
    )
    _gold(high[:10], [S] * 9 + [N], annotator=user, stratum={"active_stratum": "SUPPORTED · x"})
    report = report_compute(project=project)
    rows = {s["name"]: (s["claims"], s["gold"], s["source"]) for s in report["design"]["strata"]}
    assert rows == {
        "stratum CONTRADICTED · conf 0.9–1 · none": (20, 4, "queue"),
        "stratum SUPPORTED · x": (20, 10, "queue"),
    }
    # Hand: equal N_h -> 0.5 · 1/4 + 0.5 · 9/10 (the unweighted 10/14 would be 0.714).
    assert report["faithfulness"]["pooled"]["value"] == pytest.approx(0.5 * 0.25 + 0.5 * 0.9)


def _stratified_judged(audited_in_b: int):
    """Two file strata of 20 one-claim answers, stratum a audited whole, b `audited_in_b`;
    every claim judged with a confidence."""
    project = ProjectFactory()
    a = _claims(project, 1, 20)
    b = _claims(project, 1, 20)
    for claims, name in ((a, "a"), (b, "b")):
        for claim in claims:
            claim.stratum = name
            claim.save(update_fields=["stratum"])
    _gold(a, [S] * 15 + [N] * 5)
    _gold(b[:audited_in_b], ([S, N] * 10)[:audited_in_b])
    judge = JudgeFactory(project=project, name="j", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for i, claim in enumerate(a + b):
        JudgeVerdict.objects.create(
            run=run, claim=claim, verdict=S if i % 3 else N, confidence=0.3 + 0.6 * (i % 3) / 2
        )
    return report_compute(project=project, judge=judge)["judge"]


def test_calibration_is_not_shown_when_strata_were_audited_at_different_rates():
    """Stratum a audited whole, b at a quarter: an unweighted calibration curve would speak for
    a; it is not shown, with the reason. Both audited whole: it is shown as before."""
    from metrics.services.by_category import PER_CATEGORY_NOT_UNDER_STRATA
    from metrics.services.judge_audit import NOT_UNDER_STRATA

    unequal = _stratified_judged(5)
    by_category = unequal["error_rates_by_risk_category"]
    assert by_category["not_under_design"] == PER_CATEGORY_NOT_UNDER_STRATA
    assert by_category["correction"] == "pooled"
    assert unequal["calibration"]["not_computed"] == NOT_UNDER_STRATA
    assert unequal["frontier"] == []
    assert unequal["frontier_not_computed"] == NOT_UNDER_STRATA
    assert unequal["crc"]["not_computed"] == NOT_UNDER_STRATA
    assert set(unequal["ece"].values()) == {None}
    equal = _stratified_judged(20)
    assert equal["error_rates_by_risk_category"]["not_under_design"] is None
    assert not equal["calibration"]["not_computed"]
    assert any(value is not None for value in equal["ece"].values())
