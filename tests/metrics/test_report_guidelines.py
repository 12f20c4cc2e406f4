"""Agreement per guidelines version (issue 28 item 5): analysts' and the judge's agreement
measured under each version, gold made under an older version called out, and a project that
never changed its guidelines reported exactly as before.

Expected figures: Krippendorff's alpha from the `krippendorff` package, Cohen's kappa from
scikit-learn, raw agreement counted by hand, and the clustered agreement interval derived here
from its formula (CR1 variance by answer, Wilson at the effective n) with scipy's quantiles.
"""

import math

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from scipy.stats import norm
from scipy.stats import t as student_t
from sklearn.metrics import cohen_kappa_score

from annotate.models import Gold, Role
from metrics.services import report_compute, snapshot_compute, snapshot_create
from metrics.services.audit_card import audit_card, audit_card_rows
from metrics.services.audit_card_text import audit_card_readable
from tests.factories import (
    PASSWORD,
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    LabelFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
CODE = {S: 0, C: 1, N: 2}
# Twelve answers of two claims: answers 0-5 labelled under guidelines v1, 6-11 under v2.
GOLD = [S, S, C, S, N, S, S, C, S, S, C, N, S, S, C, S, S, N, S, C, S, S, N, S]
BOB = [S, S, C, S, N, S, S, C, S, S, C, N, S, S, C, S, S, N, S, C, S, S, N, S]
ANA = [S, C, C, S, N, S, S, C, N, S, C, N, S, S, C, S, S, N, S, C, S, S, N, S]
JUDGE = [S, S, S, S, N, S, C, C, S, S, C, S, S, S, C, S, S, N, S, C, S, S, S, S]
ANSWERS = np.repeat(np.arange(12), 2)


def _version(i: int) -> int:
    return 1 if i < 12 else 2


def _project(*, versions=_version, guidelines_version: int = 2):
    project = ProjectFactory(guidelines_version=guidelines_version)
    bob, ana = UserFactory(username="bob"), UserFactory(username="ana")
    run = JudgeRunFactory(judge__project=project, project=project)
    answers = [AnswerFactory(project=project, external_id=f"a{a}") for a in range(12)]
    for i, gold in enumerate(GOLD):
        claim = ClaimFactory(answer=answers[ANSWERS[i]], position=i % 2, text=f"claim {i}")
        GoldFactory(claim=claim, verdict=gold, source=Gold.Source.ADJUDICATED)
        LabelFactory(claim=claim, annotator=bob, verdict=BOB[i], guideline_version=versions(i))
        LabelFactory(claim=claim, annotator=ana, verdict=ANA[i], guideline_version=versions(i))
        JudgeVerdictFactory(run=run, claim=claim, verdict=JUDGE[i], confidence=0.8)
    return project, run.judge


def _alpha(a, b):
    data = np.array([[CODE[v] for v in a], [CODE[v] for v in b]], dtype=float)
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def _clustered_wilson(y: np.ndarray, ids: np.ndarray) -> tuple[float, float]:
    """A share's interval clustered by answer, from the formula: V = G/(G−1)·Σ_g e_g²/n²,
    e_g the answer's summed residuals, never below the independent claims' V₀ = θ(1−θ)/(n−1)
    (design effect floored at 1, DESIGN.md); Wilson at n* = θ(1−θ)/max(V, V₀)·(z/t_{G−1})²."""
    n, theta = y.size, y.mean()
    groups = np.unique(ids)
    g = groups.size
    e = np.array([(y[ids == k] - theta).sum() for k in groups])
    v = max(g / (g - 1) * (e**2).sum() / n**2, theta * (1 - theta) / (n - 1))
    z = norm.ppf(0.975)
    n_star = theta * (1 - theta) / v * (z / student_t.ppf(0.975, g - 1)) ** 2
    centre = (theta + z**2 / (2 * n_star)) / (1 + z**2 / n_star)
    half = (
        z * math.sqrt(theta * (1 - theta) / n_star + z**2 / (4 * n_star**2)) / (1 + z**2 / n_star)
    )
    return centre - half, centre + half


def test_agreement_is_measured_under_each_guidelines_version():
    project, judge = _project()
    report = report_compute(project=project, judge=judge)
    section = report["guidelines"]
    assert section["current_version"] == 2
    v2, v1 = section["versions"]  # newest first
    assert (v2["version"], v2["current"], v1["version"], v1["current"]) == (2, True, 1, False)
    for row, part in ((v1, slice(0, 12)), (v2, slice(12, 24))):
        bob, ana, gold, judged = BOB[part], ANA[part], GOLD[part], JUDGE[part]
        assert (row["labels"], row["analysts"], row["analyst_pairs"]) == (24, 2, 12)
        assert row["analyst_agreement"] == pytest.approx(np.mean(np.array(bob) == np.array(ana)))
        assert row["krippendorff_alpha"] == pytest.approx(_alpha(bob, ana))
        assert (row["gold_claims"], row["judge_audited"]) == (12, 12)
        agree = (np.array(gold) == np.array(judged)).astype(float)
        assert row["judge_agreement"] == pytest.approx(agree.mean())
        assert row["judge_kappa"] == pytest.approx(cohen_kappa_score(gold, judged))
        # Clustered by answer: two claims per answer, not the 12 claims' Wilson interval.
        low, high = _clustered_wilson(agree, ANSWERS[part])
        assert row["judge_agreement_ci"] == pytest.approx([low, high])
    # v1's analysts disagree on two claims of twelve, v2's on none: a lead sees the change.
    assert v1["analyst_agreement"] == pytest.approx(10 / 12)
    assert v2["analyst_agreement"] == 1.0
    assert section["mixed_gold"] is True
    assert "12 under v2, 12 under v1 (current: v2); 12 gold claims predate" in section["warning"]


def test_gold_counts_under_the_newest_version_of_its_labels_and_mixed_pairs_count_nowhere():
    project, judge = _project(versions=lambda i: 1 if i < 12 else 2)
    claim = project.answers.get(external_id="a0").claims.get(position=0)
    claim.labels.filter(annotator__username="ana").update(guideline_version=2)
    section = report_compute(project=project, judge=judge)["guidelines"]
    v2, v1 = section["versions"]
    assert (v2["gold_claims"], v1["gold_claims"]) == (13, 11)
    assert (v2["labels"], v1["labels"]) == (25, 23)
    # The claim's two labels were made under different versions: a pair of neither.
    assert (v2["analyst_pairs"], v1["analyst_pairs"]) == (12, 11)


def test_imported_labels_without_a_version_are_listed_apart():
    project, judge = _project(versions=lambda i: None if i < 4 else (1 if i < 12 else 2))
    section = report_compute(project=project, judge=judge)["guidelines"]
    assert [row["version"] for row in section["versions"]] == [2, 1, None]
    assert section["versions"][2]["gold_claims"] == 4
    assert section["versions"][2]["current"] is False


def test_one_guidelines_version_leaves_the_report_as_it_was():
    project, judge = _project(versions=lambda i: 1, guidelines_version=1)
    report = report_compute(project=project, judge=judge)
    assert "guidelines" not in report
    unversioned, judge2 = _project(versions=lambda i: None)
    assert "guidelines" not in report_compute(project=unversioned, judge=judge2)


def test_the_audit_card_names_the_versions_and_warns_of_pooled_gold():
    project, judge = _project()
    report = report_compute(project=project, judge=judge)
    card = audit_card(report=report)
    rows = {field: (value, low, high) for field, value, low, high in audit_card_rows(card)}
    assert rows["guideline_versions.v1.gold_claims"][0] == 12
    v1 = report["guidelines"]["versions"][1]
    assert rows["guideline_versions.v1.judge_agreement"][0] == repr(v1["judge_agreement"])
    assert rows["guideline_versions.v1.judge_agreement_ci"][1:] == tuple(
        repr(x) for x in v1["judge_agreement_ci"]
    )
    readable = audit_card_readable(card=card, design=report.get("design"))
    assert any("Gold made under different guidelines is pooled" in x for x in readable["limits"])
    lines = readable["guidelines"]
    assert lines[0].startswith("v2 (current): 12 gold claims")
    assert "analysts agree on 100%" in lines[0]


def test_the_card_of_a_project_with_one_version_has_no_guideline_rows():
    project, judge = _project(versions=lambda i: 1, guidelines_version=1)
    card = audit_card(report=report_compute(project=project, judge=judge))
    assert "guideline_versions" not in card


def _dashboard(client, project, judge) -> str:
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    client.login(username=lead.username, password=PASSWORD)
    snapshot_compute(snapshot_id=snapshot_create(project=project, judge=judge).pk)
    url = reverse("metrics:dashboard", args=[project.slug])
    return client.get(url, {"judge": judge.pk}).content.decode()


def test_the_dashboard_warns_of_pooled_gold_above_the_sections_and_tables_the_versions(client):
    project, judge = _project()
    html = _dashboard(client, project, judge)
    warning = html.index('data-testid="guidelines-warning"')
    assert warning < html.index('id="sec-gold"')  # on the first screen, not in a section
    assert "12 gold claims predate the current guidelines" in html[warning:]
    panel = html[html.index('data-testid="guidelines-versions"') :]
    panel = panel[: panel.index("</section>")]
    assert "version 2 (current)" in panel
    assert "version 1</td>" in panel
    assert '<td class="num">83%</td>' in panel  # v1's analysts: 10 of 12 pairs


def test_the_dashboard_of_one_version_has_no_warning(client):
    project, judge = _project(versions=lambda i: 1, guidelines_version=1)
    html = _dashboard(client, project, judge)
    assert "guidelines-warning" not in html
    assert "guidelines-versions" not in html
