"""Issue 14 in real Chromium: a lead puts a project on the active queue with a target width, an
analyst labels a few claims through the queue, and the dashboard's forecast and progress bar
move; the project page shows the same panel. Screenshot: tests/artifacts/active_audit.png."""

import re

import numpy as np
import pytest

from annotate.models import Claim, Gold, Label
from judges.models import JudgeRun, JudgeVerdict
from tests.annotate.test_import_job_worker import wait_for
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_CLAIMS = 60
N_GOLD = 14


def active_project():
    """60 claims, one per answer, judged with confidences; 14 already labelled under the active
    design (π recorded), the rest open. Returns (project, lead, analyst, judge)."""
    rng = np.random.default_rng(14)
    project = ProjectFactory(slug="active", name="Active audit", quote_required=False)
    lead = UserFactory(username="lead-active")
    analyst = UserFactory(username="ana-active")
    MembershipFactory(project=project, user=lead, role="lead")
    MembershipFactory(project=project, user=analyst, role="analyst")
    judge = JudgeFactory(project=project, name="hhem", model="m-a")
    run = JudgeRunFactory(judge=judge, prompt_version="p-a", model="m-a")
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.DONE)
    claims = []
    for index in range(N_CLAIMS):
        answer = AnswerFactory(project=project, question=f"Question {index}?")
        PassageFactory(answer=answer, rank=1, text=f"Passage {index} says little.")
        claim = ClaimFactory(answer=answer, text=f"Claim number {index}.", position=0)
        p = float(rng.uniform(0.05, 0.95))
        JudgeVerdict.objects.create(
            run=run, claim=claim, verdict="SUPPORTED" if p >= 0.5 else "NOT_IN_PILE", confidence=p
        )
        claims.append((claim, p))
    return project, lead, analyst, judge, run, claims


def _choose_active_design_on_the_settings_page(page, project, run):
    """The lead's part: the queue design page (active queue, budget 30 labels, target ±0.05,
    the finished run), applied in-process (Celery eager in the tests)."""
    from playwright.sync_api import expect

    page.goto(f"{page.base_url}/p/{project.slug}/queue-design/")
    page.get_by_label("Queue design").select_option("active")
    page.get_by_label("Label budget").fill("30")
    page.get_by_label("Target half-width").fill("0.05")
    page.get_by_label("Judge run").select_option(str(run.pk))
    page.get_by_role("button", name="Apply design").click()
    expect(page.locator("#design-job")).to_contain_text("Applied")
    project.refresh_from_db()
    assert project.queue_design == "active"
    assert project.target_half_width == 0.05


def _label_first_claims_in_queue_order(project, analyst, claims, count):
    """Gold made before the browser part, as the queue would have served it: the first
    `count` claims in the active design's order (ascending u/π), each label recording its π."""
    rng = np.random.default_rng(7)
    p_of = {claim.pk: p for claim, p in claims}
    first = Claim.objects.filter(project=project).order_by("queue_key")[:count]
    for claim in first:
        assert claim.inclusion_probability is not None
        verdict = "SUPPORTED" if rng.random() < p_of[claim.pk] else "NOT_IN_PILE"
        Label.objects.create(
            claim=claim,
            annotator=analyst,
            verdict=verdict,
            design="active",
            inclusion_probability=claim.inclusion_probability,
        )
        Claim.objects.filter(pk=claim.pk).update(label_count=1)
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")


def _read_panel(page):
    from playwright.sync_api import expect

    panel = page.locator("#active-audit-panel")
    expect(panel).to_be_visible()
    return {
        "more_active": panel.get_by_test_id("forecast-more-active").inner_text(),
        "more_uniform": panel.get_by_test_id("forecast-more-uniform").inner_text(),
        "progress": float(page.locator("#active-progress-text").get_attribute("data-progress")),
        "bar": page.locator("#active-progress-bar").get_attribute("value"),
        "text": page.locator("#active-progress-text").inner_text(),
    }


def _recompute(page):
    shown = page.locator(".snapshot-info time")
    before = shown.get_attribute("datetime") if shown.count() else ""
    page.get_by_role("button", name="Recompute").click()
    page.wait_for_function(
        "(before) => { const t = document.querySelector('.snapshot-info time');"
        " return t && t.getAttribute('datetime') !== before; }",
        arg=before,
    )


def test_active_queue_forecast_and_progress_move_as_an_analyst_labels(browser_page, screenshot):
    from playwright.sync_api import expect

    project, lead, analyst, judge, run, claims = active_project()
    lead_page = browser_page(lead)
    _choose_active_design_on_the_settings_page(lead_page, project, run)
    _label_first_claims_in_queue_order(project, analyst, claims, N_GOLD)

    lead_page.goto(f"{lead_page.base_url}/p/{project.slug}/dashboard/?judge={judge.pk}")
    _recompute(lead_page)
    before = _read_panel(lead_page)
    expect(lead_page.locator("#active-audit-panel")).to_have_attribute("data-design", "active")
    # both designs need more labels than the 60 claims at ±0.05: the cards ask for answers
    assert re.fullmatch(r"import about \d+ more answers", before["more_active"])
    assert re.fullmatch(r"import about \d+ more answers", before["more_uniform"])
    assert 0 < before["progress"] < 1
    # the bar and its text say the same thing
    assert before["bar"] == str(round(100 * before["progress"]))
    assert f"{before['bar']}% of the labels the target needs" in before["text"]

    analyst_page = browser_page(analyst)
    analyst_page.goto(f"{analyst_page.base_url}/p/{project.slug}/label/")
    for _ in range(4):
        shown = analyst_page.get_by_test_id("claim-text").inner_text()
        analyst_page.keyboard.press("3")
        analyst_page.keyboard.press("Enter")
        analyst_page.wait_for_function(
            "t => document.querySelector('[data-testid=claim-text]')?.innerText !== t", arg=shown
        )
    labelled = Label.objects.filter(claim__project=project, annotator=analyst)
    # the next claim is shown before its save is answered: wait for the last save to land
    wait_for(lambda: labelled.count() >= N_GOLD + 4, timeout=30, what="the fourth save")
    assert labelled.count() == N_GOLD + 4
    assert labelled.filter(design="active").count() == N_GOLD + 4  # drawn through the queue

    _recompute(lead_page)
    after = _read_panel(lead_page)
    assert after["progress"] != before["progress"]
    assert after["bar"] == str(round(100 * after["progress"]))
    assert after["more_active"] != before["more_active"]
    expect(lead_page.get_by_test_id("active-headline")).to_contain_text(
        f"from {N_GOLD + 4} labelled claims"
    )
    path = screenshot(lead_page, "active_audit_dashboard.png")
    # the panel itself, readable at its own size
    lead_page.locator("#active-audit-panel").screenshot(path=str(path.parent / "active_audit.png"))

    # The project page shows the same panel to the lead (the action) and to the analyst (not).
    lead_page.goto(f"{lead_page.base_url}/p/{project.slug}/")
    expect(lead_page.locator("#active-audit-panel")).to_be_visible()
    expect(lead_page.get_by_role("button", name="Route claims")).to_be_visible()
    analyst_page.goto(f"{analyst_page.base_url}/p/{project.slug}/")
    expect(analyst_page.locator("#active-audit-panel")).to_be_visible()
    expect(analyst_page.get_by_role("button", name="Route claims")).to_have_count(0)
