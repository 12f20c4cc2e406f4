"""One figure, one reading (issue 32 item 4): the judge's agreement with gold reads the same on
every page that shows it. The planted judge agrees with gold on exactly 5 of 8 claims, 62.5%:
the one rounding rule (metrics/format.py, whole percents, halves up) shows it as 63% on the
dashboard's headline, in the Agreement section's title and its table, on the audit card page
and in its Markdown, and on the run page. Before the rule the same figure read 63%, 62% and
62.5% (Python's rounding sends 62.5 to the even 62)."""

import re

import pytest
from django.urls import reverse

from annotate.models import Gold, Role
from judges.models import JudgeVerdict
from metrics import format as fmt
from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from tests.factories import (
    PASSWORD,
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)
from tests.metrics.factories_report import build_planted_project

pytestmark = pytest.mark.django_db

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
# 8 gold claims in 4 answers; the judge agrees on the first 5 and differs on the last 3.
GOLD = [S, S, C, S, N, S, C, S]
JUDGE = [S, S, C, S, N, N, S, C]
SHOWN = "63%"


def build_eighths():
    """(project, judge, run, lead): 8 gold claims, the judge's run agreeing on 5, reported."""
    project = ProjectFactory(slug="eighths", name="Eighths")
    lead = UserFactory(username="lead")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    judge = JudgeFactory(project=project, name="halfway", model="m-1")
    answers = [AnswerFactory(project=project, external_id=f"a{i}") for i in range(4)]
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    for index, (gold, verdict) in enumerate(zip(GOLD, JUDGE, strict=True)):
        claim = ClaimFactory(answer=answers[index // 2])
        Gold.objects.create(claim=claim, verdict=gold, source="unanimous")
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=verdict, confidence=0.8)
    snapshot = snapshot_create(project=project, judge=judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    return project, judge, run, lead


@pytest.fixture
def eighths(client):
    project, judge, run, _ = build_eighths()
    client.login(username="lead", password=PASSWORD)
    return project, judge, run


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _inner(html: str, marker: str, closing: str) -> str:
    """The text of the element that `marker` opens, up to its first `closing` tag."""
    start = html.index(marker)
    start = html.index(">", start) + 1
    return _text(html[start : html.index(closing, start)])


def test_planted_agreement_is_exactly_five_of_eight():
    agree = sum(g == j for g, j in zip(GOLD, JUDGE, strict=True))
    assert (agree, len(GOLD)) == (5, 8)
    assert f"{100 * agree / len(GOLD):.0f}%" == "62%"  # what Python's own rounding prints


def test_agreement_of_62_5_percent_reads_63_on_every_page(client, eighths):
    project, judge, run = eighths
    dashboard = client.get(
        reverse("metrics:dashboard", args=[project.slug]), {"judge": judge.pk}
    ).content.decode()
    headline = _inner(dashboard, 'data-figure="summary-agreement"', "</div>")
    section_title = _inner(dashboard, "<summary>Agreement:", "</summary>")
    table = _inner(dashboard, 'data-figure="agreement"', "</td>")
    assert headline == SHOWN
    assert f"({SHOWN} on 8 audited claims)" in section_title
    assert table == SHOWN
    assert f"agrees with analysts on {SHOWN} of claims" in _text(dashboard)

    card = client.get(
        reverse("metrics:audit-card-page", args=[project.slug]), {"judge": judge.pk}
    ).content.decode()
    assert f"Agreement with gold {SHOWN}" in _text(card)
    markdown = client.get(
        reverse("metrics:audit-card", args=[project.slug]), {"judge": judge.pk, "format": "md"}
    ).content.decode()
    assert re.search(rf"\| Agreement with gold \| {SHOWN} \|", markdown)

    run_page = client.get(
        reverse("judges:run-detail", args=[project.slug, run.pk])
    ).content.decode()
    assert _inner(run_page, 'data-figure="run-agreement"', "</div>") == SHOWN

    # Nowhere does the same figure read otherwise.
    for page in (dashboard, card, markdown, run_page):
        assert "62.5%" not in page
        assert "62%" not in _text(page)


def test_the_two_half_widths_in_the_active_audit_panel_say_what_each_is(client):
    """The headline's ± is half its 95% interval; a forecast's ± is its own variance formula's
    at today's labels, under another estimator: close numbers that are not the same figure,
    so each names its estimator (the planted project: 40 gold claims, a lenient judge)."""
    planted = build_planted_project()
    client.login(username="lead", password=PASSWORD)
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    block = ReportSnapshot.objects.get(pk=snapshot.pk).data["active_audit"]
    headline, forecast = block["headline"], block["forecast"]["uniform"]
    assert headline["half_width"] != forecast["half_width_now"]
    names = {"gold_only_faithfulness": "gold only", "ppi_faithfulness": "PPI++"}
    names |= {"debiased_faithfulness": "Rogan–Gladen", "uniform_gold": "gold only"}
    names |= {"uniform_ppi": "PPI++"}

    html = client.get(
        reverse("metrics:dashboard", args=[planted.project.slug]), {"judge": planted.judge.pk}
    ).content.decode()
    low, high = headline["ci"]
    assert _inner(html, 'data-testid="headline-half-width"', "</span>") == (
        f"{names[headline['estimator']]}; ±{fmt.number((high - low) / 2)}, half its width"
    )
    assert _inner(html, 'data-testid="forecast-half-width-uniform"', "</span>") == (
        f"±{fmt.number(forecast['half_width_now'])} now by this forecast's variance formula "
        f"({names[forecast['estimator']]})"
    )
