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
    page.get_by_role("link", name="open every section").click()
    expect(page.locator("details#sec-frontier")).to_have_attribute("open", "")

    # 29 of 40 supported, 72.5%: a whole percent rounded half up (metrics/format.py) reads 73%.
    assert GOLD.count("SUPPORTED") == 29
    expect(page.locator("[data-figure=faithfulness]")).to_have_text("73%")
    # the first screen's estimates side by side (issue 32 item 6), then the sections' three
    expect(page.get_by_test_id("estimates-picture").locator("svg.chart")).to_have_count(1)
    charts = page.locator("details svg.chart")
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


def test_dashboard_design_panel_shows_strata_design_effects_and_labels_left_out(
    browser_page, screenshot
):
    """The lead sees the audit's design: strata with N_h, gold n_h and weight, each headline's
    design effect, and the labels made outside the queue that the audit leaves out."""
    from playwright.sync_api import expect

    from annotate.models import Label

    planted = build_planted_project()
    for claim in planted.rest:
        claim.stratum = "unaudited batch"
        claim.save(update_fields=["stratum"])
    # Claims 36–39 were labelled by analyst A alone: reached outside the queue's order.
    Label.objects.filter(claim__in=planted.claims[36:]).update(stratum={"outside_queue": True})
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    report = ReportSnapshot.objects.get(pk=snapshot.pk).data
    page = browser_page(planted.lead)
    page.goto(f"{page.base_url}/p/{planted.project.slug}/dashboard/")
    page.get_by_text("Design: how the audited claims were sampled").click()  # open the section
    panel = page.locator("#design-panel")
    expect(panel.get_by_role("heading", name="Audit design")).to_be_visible()
    whole = panel.locator("tr[data-stratum='whole project'] td")
    expect(whole).to_have_text(["whole project", "default", "40", "36", "1.000"])
    unaudited = panel.locator("tr[data-stratum='unaudited batch'] td")
    expect(unaudited).to_have_text(["unaudited batch", "file", "20", "0", "not estimated"])
    expect(panel.get_by_test_id("design-unseen")).to_contain_text("33% of the project's claims")
    expect(panel.get_by_test_id("design-outside-queue")).to_contain_text(
        "4, on 4 gold claims left out of the audit sample"
    )
    expect(panel.get_by_test_id("design-method")).to_contain_text(
        "4 labels made outside the queue are not in the audit."
    )
    # Each headline's design effect, as the report computed it (the planted answers hold four
    # claims each, so the faithfulness interval is clustered and its effect is not 1).
    effects = {row["key"]: row["design_effect"] for row in report["design"]["design_effects"]}
    assert effects["faithfulness"] != pytest.approx(1.0)
    for key in ("faithfulness", "judge_gold_only_faithfulness", "judge_ppi_faithfulness"):
        cell = panel.locator(f"tr[data-design-effect='{key}'] td.num")
        expect(cell).to_have_text(f"{effects[key]:.2f}")
        expect(cell).to_be_visible()
    panel.scroll_into_view_if_needed()
    screenshot(page, "dashboard_design_panel.png")
