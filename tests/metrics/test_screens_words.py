"""Issue 32 items 5 and 6 (part), on the demo: with two systems the dashboard says which one
it reports and links to the others and to all of them pooled, instead of telling the lead to
run `manage.py report --system`; the project page's forecast panel keeps its variance formula,
half-widths, design effects and the estimators' gain for leads (analysts read how many more
labels, and the progress)."""

import html as html_lib
import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.models import Membership, System

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_load", stdout=io.StringIO())
    return {m.user.username: m.user for m in Membership.objects.filter(project__slug="demo")}


def _text(client, url) -> str:
    response = client.get(url)
    assert response.status_code == 200
    page = re.sub(r"<[^>]+>", "", response.content.decode())
    return html_lib.unescape(re.sub(r"\s+", " ", page))


def test_the_dashboard_links_to_the_other_system_and_all_systems_not_to_manage_py(client, demo):
    client.force_login(demo["lead"])
    first, second = System.objects.filter(project__slug="demo").order_by("id")
    url = reverse("metrics:dashboard", args=["demo"])
    text = _text(client, url)  # the default: every system pooled, each one beside it
    assert (
        "This report covers the answers of all the project's 2 systems pooled "
        f"({first.name}@{first.version}, {second.name}@{second.version})"
    ) in text
    assert "manage.py" not in text
    assert "Why two half-widths: the headline's ±" in text  # the panel on the dashboard too
    page = client.get(url).content.decode()
    for system in (first, second):  # each system's row links to its own dashboard
        assert f'data-system-row="{system.pk}"><th scope="row"><a href="?judge=' in page
    text = _text(client, f"{url}?system={first.pk}")
    assert (
        f"This report covers the answers of system {first.name}@{first.version}, one of "
        f"the project's 2 systems. See instead: all 2 systems pooled, "
        f"{second.name}@{second.version}; or compare the systems on the questions they share."
    ) in text
    assert "manage.py" not in text
    page = client.get(f"{url}?system={first.pk}").content.decode()
    assert f'system={second.pk}" data-system-note="{second.pk}"' in page
    assert 'system=all" data-system-note="all"' in page


def test_analysts_read_the_forecast_without_formulas_or_design_effects(client, demo):
    url = reverse("annotate:project-detail", args=["demo"])
    client.force_login(demo["lead"])
    lead = _text(client, url)
    assert "How many more labels" in lead
    for word in ("variance formula", "V₁", "At ±0.130"):
        assert word in lead, word
    # The two half-widths a few lines apart say why they differ (issue 32 item 4).
    headline = re.search(r"PPI\+\+; ±(0\.\d{3}), half its width", lead).group(1)
    forecast = re.search(r"±(0\.\d{3}) now by this forecast's variance formula", lead).group(1)
    assert headline != forecast
    assert (
        f"Why two half-widths: the headline's ±{headline} is half its own 95% interval; the "
        f"forecast's ±{forecast} comes from the variance formula it projects with"
    ) in lead
    client.force_login(demo["ana"])
    ana = _text(client, url)
    assert "How many more labels" in ana
    # the project page reads the dashboard's default, every system pooled: 85 labels needed,
    # 54 claims in the 16 answers that hold them, so ⌈(85 − 54)·16/54⌉ = 10 (issue 32 item 1)
    assert "import about 10 more answers" in ana
    for word in ("V₁", "variance formula", "design effect", "±0.2", "Why two half-widths"):
        assert word not in ana, word
