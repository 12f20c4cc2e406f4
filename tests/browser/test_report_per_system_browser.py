"""A lead picks one of the demo's two systems on the dashboard in real Chromium, recomputes,
and reads that system's report; the audit card names the system."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import Gold, System, Verdict
from metrics.models import ReportSnapshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_picks_a_system_recomputes_and_reads_its_report(browser_page, screenshot):
    from playwright.sync_api import expect

    call_command("demo_load", stdout=io.StringIO())
    b = System.objects.get(project__slug="demo", version="2024-07")
    page = browser_page(get_user_model().objects.get(username="lead"))
    page.goto(f"{page.base_url}/p/demo/dashboard/")
    picker = page.get_by_role("navigation", name="Answers of")
    expect(picker.locator("[aria-current=page]")).to_have_text("assistant@2024-06")
    picker.get_by_role("link", name="assistant@2024-07").click()
    expect(picker.locator("[aria-current=page]")).to_have_text("assistant@2024-07")
    expect(page.get_by_text("No report computed yet")).to_be_visible()
    page.get_by_role("button", name="Recompute").click()
    note = page.locator(".report-system")
    expect(note).to_contain_text("This report covers the answers of system assistant@2024-07")
    snapshot = ReportSnapshot.objects.get(project__slug="demo", system=b)
    supported = Gold.objects.filter(
        claim__answer__system=b, claim__answer__abstention=False, verdict=Verdict.SUPPORTED
    ).count()
    assert snapshot.data["claims"]["SUPPORTED"] == supported
    screenshot(page, "dashboard_per_system.png")

    # The demo's judge (the baseline) is the dashboard's default: its audit card is of B.
    with page.expect_download() as download_info:
        page.locator("a.audit-card-json").click()
    download = download_info.value
    assert "assistant-2024-07" in download.suggested_filename
    card = json.loads(download.path().read_text(encoding="utf-8"))
    assert card["system"] == "assistant@2024-07"
