"""Issue 32 item 1 in real Chromium, on the demo: the first system's 27 claims cannot take the
labels ±10 points needs, so the dashboard and the forecast card say to import about N more
answers (N from the report's labels in all, the system's claims and answers, by hand); after
the lead applies Stratified on the queue-design page, the project page no longer calls the
report's Uniform card "in use" and says the forecast is from the last report. Screenshots:
tests/artifacts/forecast-import-answers.png, forecast-stale-design.png. axe-core on both."""

import math

import pytest
from django.urls import reverse

from annotate.models import Answer, Claim
from judges.models import JudgeRun
from metrics.models import ReportSnapshot
from metrics.selectors import systems_for_project
from metrics.services import snapshot_compute, snapshot_create
from tests.browser.test_screens_pages_browser import axe_serious, demo  # noqa: F401

pytestmark = pytest.mark.browser


def test_the_forecast_asks_for_answers_and_follows_the_applied_design(
    browser_page,
    demo,  # noqa: F811
    screenshot,
):
    from playwright.sync_api import expect

    run = JudgeRun.objects.get(project__slug="demo")
    project = run.project
    snapshot = snapshot_create(project=project, judge=run.judge)  # unscoped: the first system
    snapshot_compute(snapshot_id=snapshot.pk)
    report = ReportSnapshot.objects.get(pk=snapshot.pk).data
    total = report["active_audit"]["forecast"]["uniform"]["labels_total"]
    system = systems_for_project(project=project)[0]  # the default snapshot's system
    claims = Claim.objects.filter(answer__system=system).count()
    # the answers holding those claims (an abstaining answer has none)
    answers = Answer.objects.filter(system=system, claims__isnull=False).distinct().count()
    assert claims == 27
    assert total > claims  # the demo's forecast is past the claims present
    more = math.ceil((total - claims) * answers / claims)  # at claims/answers each

    page = browser_page(demo["lead"], width=1280, height=720)
    page.goto(
        page.base_url
        + reverse("metrics:dashboard", args=["demo"])
        + f"?judge={run.judge_id}&system={system.pk}"
    )
    expect(page.get_by_test_id("summary-next")).to_contain_text(
        f"Import about {more} more answers to reach ±10 points: these answers hold 27 claims"
    )
    card = page.get_by_test_id("forecast-more-uniform")
    expect(card).to_have_text(f"import about {more} more answers")
    expect(page.get_by_test_id("forecast-claims-uniform")).to_contain_text(
        f"{total} labels in all for ±0.100, but these answers hold 27 claims"
    )
    assert "Label about" not in page.get_by_test_id("summary-next").inner_text()
    screenshot(page, "forecast-import-answers.png")
    assert axe_serious(page) == []

    page.goto(page.base_url + reverse("metrics:queue-design", args=["demo"]))
    page.get_by_label("Queue design").select_option("stratified")
    page.get_by_label("Judge run").select_option(str(run.pk))
    page.get_by_role("button", name="Apply design").click()
    expect(page.locator("#design-job")).to_contain_text("Applied")
    project.refresh_from_db()
    assert project.queue_design == "stratified"

    page.goto(page.base_url + reverse("annotate:project-detail", args=["demo"]))
    panel = page.locator("#active-audit-panel")
    expect(panel.locator("#queue-design-from-panel")).to_contain_text("Stratified")
    uniform = panel.locator("[data-forecast=uniform]")
    assert uniform.locator("strong.tag").all_inner_texts() == [
        "in use when this report was computed"
    ]
    assert "in use" not in [tag.strip() for tag in panel.locator("strong.tag").all_inner_texts()]
    expect(panel.get_by_test_id("forecast-stale")).to_contain_text(
        "the queue now follows Stratified"
    )
    screenshot(page, "forecast-stale-design.png")
    assert axe_serious(page) == []
