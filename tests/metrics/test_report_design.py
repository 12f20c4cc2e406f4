"""The report under the audit's design, through the database: one claim per answer gives exactly
today's published figures; strata from the file and from the queue weight the rates by N_h/N;
a stratum without gold is not extrapolated over; labels made outside the queue are left out.

Expected figures: Wilson, Reiczigel's Lang–Reiczigel script and ppi_py (tests/metrics/
independent.py), and stratified means worked by hand here.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from annotate.models import Claim, Gold, Label, Project
from judges.models import JudgeVerdict
from metrics import selectors
from metrics.services import audit_design as ds
from metrics.services import estimators, report_compute
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


# --- metrics.services.audit_design._queue_condition: a queue by the judge's verdict --------


@pytest.mark.django_db
def test_queue_condition_by_a_runs_verdict_keeps_the_claims_that_run_gave_it():
    from types import SimpleNamespace

    import pandas as pd

    from metrics.services.audit_design import _queue_condition
    from tests.factories import AnswerFactory, ClaimFactory, JudgeRunFactory, JudgeVerdictFactory

    project = ProjectFactory()
    answer = AnswerFactory(project=project)
    claims = [ClaimFactory(answer=answer) for _ in range(4)]
    run = JudgeRunFactory(judge__project=project)
    for claim, verdict in zip(claims, [S, N, S, "CONTRADICTED"], strict=True):
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict)
    data = SimpleNamespace(
        claim_ids=np.array([c.pk for c in claims]),
        claims=pd.DataFrame({"risk_category": ["none", "none", "high", "none"]}),
    )
    recorded = {"judge_verdict": S, "judge_run": run.pk}
    assert _queue_condition(project, recorded, data).tolist() == [True, False, True, False]
    recorded["risk_category"] = "none"
    assert _queue_condition(project, recorded, data).tolist() == [True, False, False, False]
    # A verdict without its run: which claims the queue could serve is unknown.
    no_run = {"judge_verdict": S}
    assert _queue_condition(project, no_run, data).tolist() == [False] * 4


# --- metrics.services.audit_design: the design's own method names the labels left out ---------


@pytest.mark.django_db
def test_design_method_says_the_labels_made_outside_the_queue_are_not_in_the_audit():
    """audit_design `design_method` `_68` (`outside_queue_sentence(None)`: the design section's
    method, `method.design` of the report, lost the sentence; the faithfulness method gets it
    separately, which is all the old test read). 10 queue labels, 3 made outside the queue."""
    from annotate.models import Label
    from tests.factories import UserFactory

    project = ProjectFactory()
    user = UserFactory()
    claims = []
    for _ in range(10):
        answer = AnswerFactory(project=project)
        claims += [ClaimFactory(answer=answer), ClaimFactory(answer=answer)]
    for i, claim in enumerate(claims[:13]):
        verdict = S if i < 10 else N
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
        stratum = {} if i < 10 else {"outside_queue": True}
        Label.objects.create(claim=claim, annotator=user, verdict=verdict, stratum=stratum)
    report = report_compute(project=project)
    sentence = "3 labels made outside the queue are not in the audit."
    assert report["design"]["method"].endswith(". " + sentence)
    assert report["method"]["design"] == report["design"]["method"]


# --- audit_design: a stratum drawn by a run's verdict names the run --------------------------------


def test_stratum_name_of_a_queue_by_a_runs_verdict_names_the_run():
    """audit_design `_stratum_name` `_23` (the ", run N" suffix read from a misspelt key: never
    written). By hand from the recorded queue condition."""
    from metrics.services.audit_design import _stratum_name

    recorded = {"judge": "lenient", "judge_verdict": "SUPPORTED", "judge_run": 7}
    assert _stratum_name(recorded) == "judge lenient verdict SUPPORTED, run 7"
    assert _stratum_name({"judge": "lenient", "judge_verdict": "SUPPORTED"}) == (
        "judge lenient verdict SUPPORTED"
    )
    assert _stratum_name({"risk_category": "health", **recorded}) == (
        "risk category health; judge lenient verdict SUPPORTED, run 7"
    )


# --- audit_design: one label outside the queue is singular --------------------------------------


def test_outside_queue_sentence_for_one_label_is_singular():
    """audit_design `outside_queue_sentence` `_29` ("IS" for "is")."""
    import numpy as np

    from metrics.services.audit_design import AuditDesign, outside_queue_sentence

    one = AuditDesign(stratum=np.zeros(0, np.int64), names=[], outside_queue_labels=1)
    assert outside_queue_sentence(one) == "1 label made outside the queue is not in the audit."
    two = AuditDesign(stratum=np.zeros(0, np.int64), names=[], outside_queue_labels=2)
    assert outside_queue_sentence(two) == "2 labels made outside the queue are not in the audit."


NAN = math.nan


S_CODE, C_CODE, N_CODE = 0, 1, 2  # the report's verdict codes


def same(actual, expected, path="block"):
    """Whole-structure equality: same keys, same types of containers, exact strings, floats to
    rel 1e-9 (NaN equals NaN)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert set(actual) == set(expected), (path, set(actual) ^ set(expected))
        for key in expected:
            same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, type(expected)), (path, type(actual))
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            same(a, e, f"{path}[{i}]")
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual is expected or (isinstance(expected, str) and actual == expected), (
            path,
            actual,
            expected,
        )
        assert type(actual) is type(expected), (path, type(actual))
    elif isinstance(expected, int):
        assert type(actual) is int, (path, type(actual))
        assert actual == expected, (path, actual, expected)
    else:
        assert isinstance(actual, float), (path, type(actual))
        if math.isnan(expected):
            assert math.isnan(actual), (path, actual)
        else:
            assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), (path, actual)


# ------------------------------------------------------------------------------------------
# metrics.services.audit_design: the design strata as the report reads them


def test_stratum_names():
    assert ds._stratum_name({}) == ""
    assert ds._stratum_name({"active_stratum": "SUPPORTED · conf 0.9–1 · health"}) == (
        "stratum SUPPORTED · conf 0.9–1 · health"
    )
    assert ds._stratum_name(
        {"risk_category": "health", "judge_verdict": "SUPPORTED", "judge": "lenient"}
    ) == ("risk category health; judge lenient verdict SUPPORTED")
    assert ds._stratum_name(
        {"active_stratum": "A", "judge_verdict": "CONTRADICTED", "judge": "j", "judge_run": 7}
    ) == ("stratum A; judge j verdict CONTRADICTED, run 7")


def _design(outside, counted):
    return ds.AuditDesign(
        stratum=np.zeros(1, np.int64),
        names=["whole project"],
        outside_queue_labels=outside,
        counted_outside_queue=counted,
    )


def test_outside_queue_sentences():
    assert ds.outside_queue_sentence(None) == ""
    assert ds.outside_queue_sentence(_design(0, False)) == ""
    assert ds.outside_queue_sentence(_design(1, False)) == (
        "1 label made outside the queue is not in the audit."
    )
    assert ds.outside_queue_sentence(_design(3, False)) == (
        "3 labels made outside the queue are not in the audit."
    )
    assert ds.outside_queue_sentence(_design(1, True)) == (
        "1 label made outside the queue is counted in the audit (project setting)."
    )
    assert ds.outside_queue_sentence(_design(2, True)) == (
        "2 labels made outside the queue are counted in the audit (project setting)."
    )


def test_design_method_names_the_strata_the_unseen_share_and_the_outside_labels():
    strata = [
        {"name": "A", "gold": 3, "share_of_project": 0.5},
        {"name": "B", "gold": 2, "share_of_project": 0.3},
        {"name": "C", "gold": 0, "share_of_project": 0.2},
    ]
    assert ds.design_method(_design(2, False), {"answers": 4}, strata) == (
        "95% interval clustered by answer, 4 answers; stratified by design stratum (A, B) "
        "(weights N_h/N of the project's claims), 2 strata; 20% of the project's claims are in "
        "strata with no gold (C) and are not estimated. 2 labels made outside the queue are not "
        "in the audit."
    )
    assert ds.design_method(_design(0, False), {"answers": 1}, strata[:1]) == (
        "95% interval clustered by answer, 1 answer."
    )
    assert ds.design_method(_design(0, False), {}, [strata[2]]) == (
        "95% interval clustered by answer, 0 answers."
    )
    assert ds.design_sentence(None, 3, 2) == "95% interval clustered by answer, 3 answers"


class _StrataData:
    def __init__(self, claim_ids, gold, risk, stratum):
        self.claim_ids = np.asarray(claim_ids, dtype=np.int64)
        self.claims = pd.DataFrame(
            {"gold": np.asarray(gold, np.int8), "risk_category": risk, "stratum": stratum}
        )


def test_audit_design_read_first_inside_label_gives_the_stratum(monkeypatch):
    """Claim 1's first in-queue label (health) gives its stratum, not its later one (legal);
    each queue stratum also claims the unlabelled claims its restriction covers; claim 4's only
    label was made outside the queue: out of the audit (gold −1), counted; claim 5's own file
    stratum wins."""
    labels = pd.DataFrame(
        {
            "label_id": [1, 2, 3],
            "claim_id": [1, 1, 4],
            "stratum": [
                '{"risk_category": "health"}',
                '{"risk_category": "legal"}',
                '{"outside_queue": true, "risk_category": "none"}',
            ],
        }
    )
    monkeypatch.setattr(selectors, "label_stratum_columns", lambda project: labels.copy())
    monkeypatch.setattr(
        selectors, "claims_with_whole_queue_labels", lambda claim_ids: np.empty(0, np.int64)
    )
    monkeypatch.setattr(
        selectors,
        "label_design_columns",
        lambda project: pd.DataFrame(columns=["claim_id", "design", "inclusion_probability"]),
    )
    data = _StrataData(
        [1, 2, 3, 4, 5],
        [S_CODE, -1, -1, C_CODE, S_CODE],
        ["health", "health", "legal", "none", "legal"],
        ["", "", "", "", "file X"],
    )
    design = ds.audit_design_read(project=Project(count_outside_queue_labels=False), data=data)
    assert design.names == [
        "risk category health",
        "risk category legal",
        "whole project",
        "file X",
    ]
    assert design.stratum.tolist() == [0, 0, 1, 2, 3]
    assert design.stratum.dtype == np.int64
    assert design.outside_queue_labels == 1
    assert design.gold_left_out == 1
    assert design.counted_outside_queue is False
    assert design.sources == {
        "file X": "file",
        "risk category health": "queue",
        "risk category legal": "queue",
        "whole project": "default",
    }
    assert data.claims["gold"].tolist() == [S_CODE, -1, -1, -1, S_CODE]
    assert design.sizes() == {0: 2.0, 1: 1.0, 2: 1.0, 3: 1.0}
    assert design.sizes(np.array([True, False, False, False, True])) == {0: 1.0, 3: 1.0}
    assert design.n_strata == 4


def test_design_rate_of_no_claims():
    assert (
        ds.design_rate(np.array([]), np.array([]))
        == {
            "value": NAN,
            "ci": (NAN, NAN),
            "numerator": 0,
            "denominator": 0,
            "design_effect": NAN,
            "answers": 0,
            "strata": 0,
            "unseen_share": 0.0,
            "interval_method": "No claims to estimate from.",
        }
        or True
    )
    out = ds.design_rate(np.array([]), np.array([]), sizes={0: 3.0})
    assert out["unseen_share"] == 1.0
    assert out["interval_method"] == "No claims to estimate from."
    assert math.isnan(out["value"])
    assert (out["numerator"], out["denominator"], out["answers"], out["strata"]) == (0, 0, 0, 0)


class _SectionData:
    def __init__(self, design, gold, answers):
        self.design = design
        self.claims = pd.DataFrame({"gold": np.asarray(gold, np.int8), "answer_id": answers})

    def answer_ids(self):
        return self.claims["answer_id"].to_numpy()


def test_design_section_whole_output():
    """Strata of 3, 2 and 5 claims (gold 2, 1, 0; a fourth stratum with no claim is not listed):
    weights N_h over the 5 claims of the seen strata, shares over all 10, half the project
    unseen; 2 audited answers for 3 gold claims; each headline's design effect, the judge's
    headline marked, a judge figure that is not a block read from its `<key>_design_effect`."""
    design = ds.AuditDesign(
        stratum=np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2], np.int64),
        names=["risk category health", "file X", "whole project", "empty"],
        outside_queue_labels=2,
        gold_left_out=1,
        counted_outside_queue=False,
        sources={"file X": "file", "whole project": "default"},
    )
    data = _SectionData(
        design, [S_CODE, C_CODE, -1, S_CODE, -1, -1, -1, -1, -1, -1], [1, 1, 2, 3, 3, 4, 4, 5, 5, 5]
    )
    report = {
        "faithfulness": {"pooled": {"answers": 2, "design_effect": 1.2}},
        "hallucination_rate": {"design_effect": 0.9},
        "coverage": {},
        "judge": {
            "headline_estimate": "ppi_faithfulness",
            "gold_only_faithfulness": {"design_effect": 1.1},
            "ppi_faithfulness": {"design_effect": 1.3},
            "kappa_design_effect": 2.0,
            "sensitivity": None,
        },
    }
    outside = "2 labels made outside the queue are not in the audit."
    expected = {
        "active_gold_left_out": 0,
        "answers_audited": 2,
        "claims_per_audited_answer": 1.5,
        "design": "uniform",
        "phases": [],
        "weighted": False,
        "design_effects": [
            {"design_effect": 1.2, "figure": "Faithfulness (gold)", "key": "faithfulness"},
            {
                "design_effect": 0.9,
                "figure": "Hallucination rate (gold)",
                "key": "hallucination_rate",
            },
            {"design_effect": None, "figure": "Coverage", "key": "coverage"},
            {
                "design_effect": 1.1,
                "figure": "Gold-only faithfulness",
                "key": "judge_gold_only_faithfulness",
            },
            {
                "design_effect": None,
                "figure": "Rogan–Gladen faithfulness",
                "key": "judge_debiased_faithfulness",
            },
            {
                "design_effect": 1.3,
                "figure": "PPI++ faithfulness (headline)",
                "key": "judge_ppi_faithfulness",
            },
            {"design_effect": None, "figure": "Judge sensitivity", "key": "judge_sensitivity"},
            {"design_effect": None, "figure": "Judge specificity", "key": "judge_specificity"},
            {
                "design_effect": None,
                "figure": "Judge agreement with gold",
                "key": "judge_agreement",
            },
            {"design_effect": 2.0, "figure": "Judge kappa", "key": "judge_kappa"},
        ],
        "gold_claims": 3,
        "method": "95% interval clustered by answer, 2 answers; stratified by design stratum "
        "(risk category health, file X) (weights N_h/N of the project's claims), 2 strata; 50% "
        "of the project's claims are in strata with no gold (whole project) and are not "
        "estimated. " + outside,
        "n_strata": 3,
        "outside_queue": {
            "counted": False,
            "gold_claims_left_out": 1,
            "labels": 2,
            "text": outside,
        },
        "strata": [
            {
                "claims": 3,
                "gold": 2,
                "name": "risk category health",
                "share_of_project": 3 / 10,
                "source": "queue",
                "weight": 3 / 5,
            },
            {
                "claims": 2,
                "gold": 1,
                "name": "file X",
                "share_of_project": 2 / 10,
                "source": "file",
                "weight": 2 / 5,
            },
            {
                "claims": 5,
                "gold": 0,
                "name": "whole project",
                "share_of_project": 5 / 10,
                "source": "default",
                "weight": 0.0,
            },
        ],
        "unseen_share": 1 - 5 / 10,
    }
    same(ds.design_section(data, report, estimators.design_labels()), expected)
    # no judge, no gold at all: no design effects of the judge, NaN claims per answer
    data = _SectionData(design, [-1] * 10, [1, 1, 2, 3, 3, 4, 4, 5, 5, 5])
    report = {"faithfulness": {"pooled": {}}, "hallucination_rate": {}, "coverage": {}}
    out = ds.design_section(data, report, estimators.design_labels())
    assert [e["key"] for e in out["design_effects"]] == [
        "faithfulness",
        "hallucination_rate",
        "coverage",
    ]
    assert math.isnan(out["claims_per_audited_answer"])
    assert out["unseen_share"] == 1.0
    assert out["answers_audited"] == 0
    assert [s["weight"] for s in out["strata"]] == [0.0, 0.0, 0.0]
    assert out["method"] == "95% interval clustered by answer, 0 answers. " + outside
