"""The dashboard's answer first, the glossary and the audit card page (issue 19 items 5-6),
through the views, on the planted project (tests/metrics/factories_report.py)."""

import re

import pytest
from django.urls import reverse

from annotate.models import Role
from metrics.glossary import GLOSSARY
from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from tests.factories import PASSWORD, MembershipFactory, UserFactory
from tests.metrics.factories_report import GOLD, JUDGE, build_planted_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def planted(client):
    planted = build_planted_project()
    client.login(username="lead", password=PASSWORD)
    return planted


def _compute(planted, judge):
    snapshot = snapshot_create(project=planted.project, judge=judge)
    snapshot_compute(snapshot_id=snapshot.pk)


def url(name, planted):
    return reverse(f"metrics:{name}", args=[planted.project.slug])


def _half_up(share: float) -> int:
    """Whole percent, halves up, worked on exact fractions (an independent route)."""
    from fractions import Fraction

    value = Fraction(share).limit_denominator(1000) * 100
    return int(value + Fraction(1, 2)) if value >= 0 else 0


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_dashboard_answers_first_with_the_judges_agreement_counted_by_hand(client, planted):
    _compute(planted, planted.judge)
    html = client.get(url("dashboard", planted), {"judge": planted.judge.pk}).content.decode()
    agree = sum(g == j for g, j in zip(GOLD, JUDGE, strict=False)) / len(GOLD)
    trust = "trustworthy" if agree >= 0.80 else "not trustworthy"
    text = _text(html)
    assert (
        f"The lenient judge is {trust} here: it agrees with analysts on {_half_up(agree)}% "
        "of claims (needs ≥ 80%)." in text
    )
    assert "from 40 audited claims" in text
    # The summary comes before every section, which open on demand.
    assert html.index('data-testid="dashboard-summary"') < html.index("<details")
    for section in ("agreement", "estimates", "calibration", "frontier", "analysts"):
        assert f'id="sec-{section}"' in html
    assert f'title="{GLOSSARY["kappa"][1]}"' in html.replace("&#x27;", "'")
    assert reverse("metrics:glossary") in html
    assert url("audit-card-page", planted) in html
    # What to do next: the active audit's forecast, read from the stored report as it is.
    report = ReportSnapshot.objects.get(project=planted.project, judge=planted.judge).data
    active = report["active_audit"]
    forecast = active["forecast"].get(active["design"]) or active["forecast"]["uniform"]
    points = round(100 * forecast["target_half_width"])
    if active["reached"]:
        assert f"The audit has reached ±{points} points" in text
    elif forecast["answers_more"]:  # more labels than the claims present: import answers
        answers = forecast["answers_more"]
        assert f"Import about {answers} more answer{'s' if answers != 1 else ''} to reach" in text
        assert f"these answers hold {forecast['claims']} claims" in text
    else:
        more = forecast["labels_more"]
        assert (
            f"Label about {more} more claim{'s' if more != 1 else ''} to reach ±{points} " in text
        )
    assert html.index('data-testid="summary-next"') < html.index('id="active-audit-panel"')


def test_dashboard_hides_the_next_step_of_a_report_without_an_active_audit(client, planted):
    _compute(planted, planted.judge)
    snapshot = ReportSnapshot.objects.get(project=planted.project, judge=planted.judge)
    snapshot.data.pop("active_audit")  # a report stored before the active audit existed
    snapshot.save(update_fields=["data"])
    html = client.get(url("dashboard", planted), {"judge": planted.judge.pk}).content.decode()
    assert 'data-testid="dashboard-summary"' in html
    assert 'data-testid="summary-next"' not in html
    assert 'id="active-audit-panel"' not in html


def test_dashboard_gold_only_summary_reads_the_gold_share(client, planted):
    _compute(planted, None)
    html = client.get(url("dashboard", planted), {"judge": "none"}).content.decode()
    faith = GOLD.count("SUPPORTED") / len(GOLD)
    assert f"About {_half_up(faith)}% of claims are supported" in _text(html)
    assert "from 40 gold claims" in _text(html)
    assert 'data-testid="summary-judge"' not in html


def test_glossary_lists_every_term_once_for_any_signed_in_user(client, planted):
    html = client.get(reverse("metrics:glossary")).content.decode()
    for key in GLOSSARY:
        assert html.count(f'id="{key}"') == 1
    client.logout()
    assert client.get(reverse("metrics:glossary")).status_code == 302  # to the login page


def test_audit_card_page_shows_the_rounded_figures_and_links_the_downloads(client, planted):
    _compute(planted, planted.judge)
    response = client.get(url("audit-card-page", planted), {"judge": planted.judge.pk})
    assert response.status_code == 200
    html = response.content.decode()
    text = _text(html)
    agree = sum(g == j for g, j in zip(GOLD, JUDGE, strict=False)) / len(GOLD)
    assert f"Agreement with gold {_half_up(agree)}%" in text
    assert "Audit card: lenient" in text
    assert "Prompt version" in text
    assert "40 audited claims" in text
    assert 'media="print"' in html
    assert "print.css" in html
    for fmt in ("md", "json", "csv"):
        assert f"format={fmt}" in html
    assert "Limits" in text
    assert "exchangeable" in text


def test_audit_card_markdown_download(client, planted):
    _compute(planted, planted.judge)
    response = client.get(url("audit-card", planted), {"judge": planted.judge.pk, "format": "md"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert 'filename="audit-card-planted-lenient-' in response["Content-Disposition"]
    assert ".md" in response["Content-Disposition"]
    body = response.content.decode()
    assert body.startswith("# Audit card: lenient")
    assert "| Figure | Value | 95% interval | How |" in body


def test_audit_card_page_without_a_report_or_a_judge_goes_back_to_the_dashboard(client, planted):
    response = client.get(url("audit-card-page", planted), {"judge": planted.judge.pk})
    assert response.status_code == 302
    assert response["Location"].endswith("/dashboard/")
    response = client.get(url("audit-card-page", planted), {"judge": "none"})
    assert response.status_code == 302
    assert client.get(url("audit-card-page", planted), {"format": "pdf"}).status_code == 404


@pytest.mark.parametrize("role", [Role.ANALYST, None])
def test_audit_card_page_is_404_for_analysts_and_strangers(client, planted, role):
    _compute(planted, planted.judge)
    user = UserFactory(username=f"u-{role}")
    if role:
        MembershipFactory(project=planted.project, user=user, role=role)
    client.force_login(user)
    assert (
        client.get(url("audit-card-page", planted), {"judge": planted.judge.pk}).status_code == 404
    )
