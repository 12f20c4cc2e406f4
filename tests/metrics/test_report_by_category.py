"""The report on a judge whose error rates differ by risk category, and on a judge that gives
no confidences. Expected figures are derived by hand from the planted counts below."""

import math

import pytest

from annotate.models import Gold
from judges.models import JudgeVerdict
from metrics.services import report_compute
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    ProjectFactory,
)

pytestmark = pytest.mark.django_db
S, C = "SUPPORTED", "CONTRADICTED"
NOT_COMPUTED = "not computed: this judge gives no confidences"


def _project(*, health_sp_hits: int, confidence: bool = True):
    """Health: 40 audited (20 gold S all judged S; 20 gold C, `health_sp_hits` judged C) and
    100 unaudited (80 judged S). Legal: 40 audited judged perfectly and 20 unaudited (10 S).
    Answers of 4 claims each."""
    project = ProjectFactory(slug="drift")
    judge = JudgeFactory(project=project, name="drifty", model="m")
    run = JudgeRunFactory(judge=judge, prompt_version="p", model="m")
    rows = []  # (category, gold or None, judge verdict)
    rows += [("health", S, S)] * 20
    rows += [("health", C, C)] * health_sp_hits + [("health", C, S)] * (20 - health_sp_hits)
    rows += [("health", None, S)] * 80 + [("health", None, C)] * 20
    rows += [("legal", S, S)] * 20 + [("legal", C, C)] * 20
    rows += [("legal", None, S)] * 10 + [("legal", None, C)] * 10
    answer = None
    verdicts, golds = [], []
    for index, (category, gold, verdict) in enumerate(rows):
        if index % 4 == 0:
            answer = AnswerFactory(project=project, risk_category=category)
        claim = ClaimFactory(answer=answer)
        if gold:
            golds.append(Gold(claim=claim, verdict=gold, source="unanimous"))
        conf = (0.9 if verdict == S else 0.2) if confidence else None
        verdicts.append(JudgeVerdict(run=run, claim=claim, verdict=verdict, confidence=conf))
    Gold.objects.bulk_create(golds)
    JudgeVerdict.objects.bulk_create(verdicts)
    return project, judge


def test_rates_that_differ_by_category_use_the_per_category_correction():
    project, judge = _project(health_sp_hits=10)
    block = report_compute(project=project, judge=judge)["judge"]
    by_cat = block["error_rates_by_risk_category"]
    rows = {row["category"]: row for row in by_cat["categories"]}
    assert rows["health"]["specificity"]["value"] == pytest.approx(0.5)
    assert rows["legal"]["specificity"]["value"] == pytest.approx(1.0)
    assert rows["health"]["judged"] == 140
    assert rows["legal"]["judged"] == 60
    assert rows["health"]["share"] == pytest.approx(0.7)
    # Specificity: table [[10, 20], [10, 0]], Pearson chi-square 13.33, 1 df.
    sp_test = by_cat["equality"]["specificity"]
    assert sp_test["statistic"] == pytest.approx(40 / 3)
    assert by_cat["equality"]["sensitivity"]["p_value"] is None  # 40 of 40: no variation
    assert by_cat["equality"]["differ"] is True
    assert by_cat["correction"] == "per_category"
    # Pooled: se 1, sp 30/40, p_obs 140/200 → (0.7 − 0.25)/0.75 = 0.6; per category:
    # health (110/140 − 0.5)/0.5, legal 0.5, combined 0.7·0.5714 + 0.3·0.5 = 0.55.
    assert by_cat["pooled"]["debiased_faithfulness"]["value"] == pytest.approx(0.6)
    assert block["debiased_faithfulness"]["value"] == pytest.approx(0.55)
    assert "per risk category" in block["debiased_faithfulness"]["method"]
    assert "per risk category" in block["ppi_faithfulness"]["method"]
    assert "use each category's own correction" in block["method"]
    assert "differ by risk category" in by_cat["note"]


def test_equal_rates_keep_the_pooled_figures():
    project, judge = _project(health_sp_hits=20)
    block = report_compute(project=project, judge=judge)["judge"]
    by_cat = block["error_rates_by_risk_category"]
    assert by_cat["correction"] == "pooled"
    assert by_cat["note"] is None
    assert block["debiased_faithfulness"] == by_cat["pooled"]["debiased_faithfulness"]
    assert block["debiased_faithfulness"]["method"].startswith("Rogan–Gladen, Lang–Reiczigel")
    # A perfect judge: Rogan–Gladen is the judge's SUPPORTED share, 130 of 200.
    assert block["debiased_faithfulness"]["value"] == pytest.approx(130 / 200)


def test_a_judge_without_confidences_says_what_was_not_computed():
    project, judge = _project(health_sp_hits=20, confidence=False)
    block = report_compute(project=project, judge=judge)["judge"]
    assert block["calibration"]["not_computed"] == NOT_COMPUTED
    assert block["crc"]["not_computed"] == NOT_COMPUTED
    assert block["frontier_not_computed"] == NOT_COMPUTED
    assert block["crc"]["splits"] is None
    assert "calibration out of fold" not in block["method"]
    assert (
        "Calibration, the frontier and conformal risk control: " + NOT_COMPUTED in block["method"]
    )
    assert all(value is None for value in block["ece"].values())


def test_a_judge_with_confidences_computes_them():
    project, judge = _project(health_sp_hits=20)
    block = report_compute(project=project, judge=judge)["judge"]
    assert block["calibration"]["not_computed"] is None
    assert block["crc"]["not_computed"] is None
    assert "calibration out of fold" in block["method"]
    assert not math.isnan(block["ece"]["raw"])


def _dashboard(client, project, judge) -> str:
    from django.urls import reverse

    from annotate.models import Role
    from metrics.services import snapshot_compute, snapshot_create
    from tests.factories import PASSWORD, MembershipFactory, UserFactory

    lead = UserFactory(username="drift-lead")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    client.login(username="drift-lead", password=PASSWORD)
    snapshot = snapshot_create(project=project, judge=judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    response = client.get(reverse("metrics:dashboard", args=[project.slug]), {"judge": judge.pk})
    assert response.status_code == 200
    return response.content.decode()


def test_dashboard_says_the_correction_is_per_category(client):
    project, judge = _project(health_sp_hits=10)
    html = _dashboard(client, project, judge)
    assert 'data-testid="jaudit-by-category"' in html
    assert "The judge&#x27;s error rates differ by risk category" in html
    assert "by-category-rates" in html
    assert 'data-figure="realized-mean"' in html
    assert 'data-figure="auc"' in html


def test_dashboard_says_what_was_not_computed_without_confidences(client):
    project, judge = _project(health_sp_hits=20, confidence=False)
    html = _dashboard(client, project, judge)
    assert 'data-testid="not-computed"' in html
    assert NOT_COMPUTED in html
    assert 'data-figure="realized-mean"' not in html


# --- by_category: the per-category PPI++ has no single λ ----------------------------------------


@pytest.mark.django_db
def test_per_category_ppi_has_no_single_lambda():
    """by_category `category_correction` `_37` (its `"lambda": None` written under another key:
    the per-category PPI++ kept a λ that belongs to no single category). The drifting judge of
    test_report_by_category.py (specificity 0.5 on health, 1.0 on legal)."""

    project, judge = _project(health_sp_hits=10)
    block = report_compute(project=project, judge=judge)["judge"]
    assert block["error_rates_by_risk_category"]["correction"] == "per_category"
    assert block["ppi_faithfulness"]["lambda"] is None
    assert "LAMBDA" not in block["ppi_faithfulness"]
