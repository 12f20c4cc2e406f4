"""Issue 32 items 8 and 7 in real Chromium, on the demo: the lead reads the baseline run's
agreement with gold on its page as the all-systems dashboard shows it (the same figure and
interval, "From the report of …"); the queue-design page opens on that finished run, and the
practice project's, with no run, says where to start one. axe-core finds nothing serious on
either page."""

import re

import pytest
from django.urls import reverse

from judges.models import JudgeRun
from metrics.services import snapshot_compute, snapshot_create
from tests.browser.test_screens_pages_browser import axe_serious, demo  # noqa: F401

pytestmark = pytest.mark.browser


def test_the_run_page_reads_the_reports_agreement_and_the_design_menu_opens_on_the_run(
    browser_page,
    demo,  # noqa: F811
    screenshot,
):
    run = JudgeRun.objects.get(project__slug="demo")
    assert run.status == JudgeRun.Status.DONE
    snapshot = snapshot_create(project=run.project, judge=run.judge, all_systems=True)
    snapshot_compute(snapshot_id=snapshot.pk)
    page = browser_page(demo["lead"], width=1280, height=720)

    dashboard = reverse("metrics:dashboard", args=["demo"])
    page.goto(f"{page.base_url}{dashboard}?judge={run.judge_id}&system=all&open=all")
    figure = page.locator("[data-figure=agreement]").inner_text()
    row = page.locator("tr", has=page.locator("[data-figure=agreement]")).inner_text()
    interval = re.search(r"95% CI (\S+)", row).group(1)

    page.goto(page.base_url + reverse("judges:run-detail", args=["demo", run.pk]))
    assert page.locator("[data-figure=run-agreement]").inner_text() == figure
    assert page.locator("[data-figure=run-agreement-ci]").inner_text() == interval
    source = page.get_by_test_id("run-agreement-source").inner_text()
    assert source.startswith("From the report of ")
    assert "No claim of this run has gold yet" not in page.content()
    screenshot(page, "run-page-report-agreement.png")
    assert axe_serious(page) == []

    page.goto(page.base_url + reverse("metrics:queue-design", args=["demo"]))
    menu = page.get_by_label("Judge run")
    assert menu.input_value() == str(run.pk)
    assert menu.locator("option:checked").inner_text().startswith(f"run {run.pk} · baseline")
    screenshot(page, "queue-design-run-menu.png")
    assert axe_serious(page) == []

    page.goto(page.base_url + reverse("metrics:queue-design", args=["demo-practice"]))
    assert page.get_by_label("Judge run").input_value() == ""
    assert "Start a judge run" in page.get_by_test_id("design-run-none").inner_text()
    assert axe_serious(page) == []
