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
    expect(picker.locator("[aria-current=page]")).to_have_text("all systems")  # the default
    picker.get_by_role("link", name="assistant@2024-07").click()
    expect(picker.locator("[aria-current=page]")).to_have_text("assistant@2024-07")
    before = ReportSnapshot.objects.filter(project__slug="demo", system=b).count()
    with page.expect_navigation():  # computed in-process: the answer refreshes the page
        page.get_by_role("button", name="Recompute").click()
    note = page.locator(".report-system")
    expect(note).to_contain_text("This report covers the answers of system assistant@2024-07")
    expect(page.locator(".snapshot-info")).to_contain_text("no labels since this report")
    assert ReportSnapshot.objects.filter(project__slug="demo", system=b).count() == before + 1
    snapshot = ReportSnapshot.objects.filter(project__slug="demo", system=b).latest("id")
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


def test_the_default_dashboard_shows_every_system_and_a_chart_on_the_first_screen(
    browser_page, screenshot
):
    """At 1280×720 the lead's first screen holds the pooled headline, each system's headline
    and interval in a chart and a table (issue 32 item 5); the rows read what each system's
    own dashboard reads; axe-core finds nothing serious."""
    from playwright.sync_api import expect

    from tests.browser.test_screens_pages_browser import axe_serious

    call_command("demo_load", stdout=io.StringIO())
    page = browser_page(get_user_model().objects.get(username="lead"), width=1280, height=720)
    page.goto(f"{page.base_url}/p/demo/dashboard/")
    panel = page.get_by_test_id("systems-headlines")
    expect(panel).to_be_visible()
    chart = panel.get_by_role("img", name="Faithfulness of each system, with its 95% interval")
    box = chart.bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= 720, box  # above the fold
    assert box["width"] >= 300
    table = panel.locator("table")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("all systems pooled")
    headline = page.locator("[data-figure=summary-faithfulness]").inner_text()
    expect(rows.nth(0).locator("td").first).to_have_text(headline)
    screenshot(page, "dashboard-all-systems.png", full_page=False)
    assert axe_serious(page) == []
    for system in System.objects.filter(project__slug="demo").order_by("id"):
        shown = rows.filter(has_text=f"{system.name}@{system.version}").locator("td").first
        value = shown.inner_text()
        table.get_by_role("link", name=f"{system.name}@{system.version}").click()
        expect(page.locator("[data-figure=summary-faithfulness]")).to_have_text(value)
        # one system's first screen pictures its estimates side by side, the headline first
        estimates = page.get_by_test_id("estimates-picture")
        box = estimates.get_by_role("img").bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= 720, box
        expect(estimates.locator("tbody tr").first).to_contain_text(value)
        page.go_back()
    page.goto(f"{page.base_url}/p/demo/dashboard/?system={system.pk}")
    screenshot(page, "dashboard-one-system.png", full_page=False)
    assert axe_serious(page) == []
