"""The dashboard that answers first and the audit card page, in real Chromium on the demo
(issue 19 items 5-6): the summary fits 1280×720 without scrolling, a lead opens a section and
reads a term's definition, follows the glossary, opens the audit card, which axe-core finds
nothing serious on and which prints without the site's navigation; at 800 px wide, every
section open, nothing scrolls the page sideways."""

import io

import pytest
from django.core.management import call_command

from annotate.models import Membership
from metrics.glossary import GLOSSARY
from tests.browser.test_screens_pages_browser import WIDE, axe_serious

pytestmark = pytest.mark.browser


@pytest.fixture
def lead(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_load", stdout=io.StringIO())
    return Membership.objects.get(project__slug="demo", user__username="lead").user


def test_the_summary_answers_without_scrolling_at_1280x720(browser_page, lead, screenshot):
    from playwright.sync_api import expect

    page = browser_page(lead, width=1280, height=720)
    page.goto(page.base_url + "/p/demo/dashboard/")
    summary = page.get_by_test_id("dashboard-summary")
    expect(summary).to_be_visible()
    box = summary.bounding_box()
    assert box is not None
    assert page.evaluate("window.scrollY") == 0
    assert box["y"] >= 0
    assert box["y"] + box["height"] <= 720, box  # all of it above the fold
    expect(summary.get_by_test_id("summary-faithfulness")).to_contain_text(
        "of claims are supported (95% interval"
    )
    expect(summary.get_by_test_id("summary-judge")).to_contain_text("(needs ≥ 80%)")
    screenshot(page, "screens-dashboard-summary-1280x720.png", full_page=False)

    # The detail waits in closed sections; the lead opens one and reads a term on hover.
    table = page.locator("#sec-agreement table.confusion-table")
    expect(table).to_be_hidden()
    page.get_by_text("Agreement: how often").click()
    expect(table).to_be_visible()
    kappa = page.locator("#sec-agreement abbr[data-term=kappa]")
    expect(kappa).to_have_attribute("title", GLOSSARY["kappa"][1])
    screenshot(page, "screens-dashboard-agreement-open.png")

    page.get_by_role("link", name="What these words mean (glossary)").click()
    expect(page.get_by_role("heading", name="Glossary")).to_be_visible()
    expect(page.locator("dt#kappa + dd")).to_have_text(GLOSSARY["kappa"][1])


def test_a_lead_opens_the_audit_card_page_readable_accessible_and_printable(
    browser_page, lead, screenshot
):
    from playwright.sync_api import expect

    page = browser_page(lead, width=1280, height=720)
    page.goto(page.base_url + "/p/demo/dashboard/")
    page.locator("a.audit-card-page").click()
    expect(page.get_by_role("heading", name="Audit card: baseline")).to_be_visible()
    figures = page.locator("table.card-figures tbody tr")
    assert figures.count() >= 10
    headline = page.locator("table.card-figures tr.headline td")
    # Rounded for reading: a whole percent and an interval of two whole percents.
    assert headline.nth(0).inner_text().rstrip("%").isdigit()
    low, high = headline.nth(1).inner_text().rstrip("%").split("–")
    assert low.isdigit()
    assert high.isdigit()
    expect(page.locator(".card-limits li").first).to_be_visible()
    assert axe_serious(page) == []
    screenshot(page, "screens-audit-card.png")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Markdown").click()
    markdown = download_info.value.path().read_text(encoding="utf-8")
    assert markdown.startswith("# Audit card: baseline")

    page.emulate_media(media="print")
    expect(page.locator(".topbar")).to_be_hidden()
    expect(page.locator(".card-actions")).to_be_hidden()
    expect(page.locator("table.card-figures")).to_be_visible()
    screenshot(page, "screens-audit-card-print.png")


def test_every_dashboard_section_open_fits_800_px(browser_page, lead, screenshot):
    page = browser_page(lead, width=800, height=900)
    page.goto(page.base_url + "/p/demo/dashboard/?open=all")
    assert page.locator("details.dash-section:not([open])").count() == 0
    assert page.locator("details.dash-section").count() >= 6
    width, client = page.evaluate(WIDE)
    assert width <= client, (width, client)
    screenshot(page, "screens-dashboard-open-800.png")
    page.goto(page.base_url + "/p/demo/dashboard/audit-card/page/")
    width, client = page.evaluate(WIDE)
    assert width <= client, (width, client)
