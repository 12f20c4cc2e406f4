"""A lead reads the dashboard in real Chromium: charts render, recompute, α form, audit card."""

import json

import pytest

from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from tests.metrics.factories_report import GOLD, build_planted_project
from tests.metrics.test_views import _planted_crc_at

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_dashboard_charts_recompute_and_audit_card_download(browser_page, screenshot):
    from playwright.sync_api import expect

    planted = build_planted_project()
    first = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=first.pk)
    page = browser_page(planted.lead)
    page.goto(f"{page.base_url}/p/{planted.project.slug}/")
    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()

    faith = f"{100 * GOLD.count('SUPPORTED') / 40:.1f}%"
    expect(page.locator("[data-figure=faithfulness]")).to_have_text(faith)
    charts = page.locator("svg.chart")
    expect(charts).to_have_count(3)
    for index in range(3):
        box = charts.nth(index).bounding_box()
        assert box is not None
        assert box["width"] > 200
        assert box["height"] > 150
    # The heat map's nine cells and the two reliability curves are drawn, not just the frame.
    expect(page.locator("svg.chart rect.heat-cell")).to_have_count(9)
    assert page.locator("svg.chart polyline").count() >= 3
    expect(page.get_by_text("lenient · m-1 · prompt p-1").first).to_be_visible()
    screenshot(page, "dashboard.png")

    # The lead types an α; the CRC panel is recut in place: at 0.10 five calibration answers
    # certify no cut, at 0.2 the cut and the held-out claims kept are those derived from the
    # planted lists (tests/metrics/test_views.py), and the page did not reload.
    lambda_hat = page.locator("#crc [data-figure=lambda-hat]")
    expect(lambda_hat).to_have_text("none meets α: keep nothing")
    cut, kept = _planted_crc_at(0.2)
    page.evaluate("window.__same_page = true")
    page.fill("#alpha", "0.2")
    page.locator("#crc button[type=submit]").click()
    expect(lambda_hat).to_have_text(f"{cut:.3f}")
    expect(page.locator("#crc")).to_contain_text(f"{kept} of 20")
    expect(page.locator("#alpha")).to_have_value("0.2")
    assert page.evaluate("window.__same_page === true")

    # Recompute: a new snapshot is computed and the page reloads to show it.
    shown = page.locator(".snapshot-info time").get_attribute("datetime")
    page.get_by_role("button", name="Recompute").click()
    page.wait_for_function(
        "(before) => { const t = document.querySelector('.snapshot-info time');"
        " return t && t.getAttribute('datetime') !== before; }",
        arg=shown,
    )
    expect(page.locator(".labels-since")).to_have_text("no labels since this report")
    snapshots = ReportSnapshot.objects.filter(project=planted.project, judge=planted.judge)
    assert snapshots.count() == 2
    assert all(s.status == ReportSnapshot.Status.DONE for s in snapshots)

    with page.expect_download() as download_info:
        page.locator("a.audit-card-json").click()
    download = download_info.value
    assert download.suggested_filename.startswith("audit-card-planted-lenient-")
    card = json.loads(download.path().read_text(encoding="utf-8"))
    for key in ("judge", "model", "prompt_version", "audit_sample_size", "sensitivity",
                "specificity", "debiased_faithfulness", "ece", "crc", "method"):  # fmt: skip
        assert key in card
    assert card["audit_sample_size"] == 40
