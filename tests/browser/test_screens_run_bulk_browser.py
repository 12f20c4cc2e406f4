"""A lead runs a judge on the answers list's filtered set in real Chromium (issue 19 item 7):
filter by risk category, "Run a judge…", pick the judge, and land on the run's page, which
names the filters and counts exactly those answers' claims (the offline baseline judge, run
in-process)."""

import pytest

from annotate.models import Role
from judges.models import JudgeRun, JudgeVerdict
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    MembershipFactory,
    PassageFactory,
)

pytestmark = pytest.mark.browser


def test_a_lead_runs_a_judge_on_the_filtered_answers(browser_page, screenshot):
    from playwright.sync_api import expect

    lead = MembershipFactory(role=Role.LEAD).user
    project = lead.memberships.get().project
    judge = JudgeFactory(project=project, name="lexical")  # the offline baseline
    health = []
    for n, risk in enumerate(["health", "legal", "health", "legal", "legal"]):
        answer = AnswerFactory(project=project, external_id=f"A{n}", risk_category=risk)
        PassageFactory(answer=answer, rank=1, text="Refunds take 14 days by card.")
        claims = [ClaimFactory(answer=answer, text=f"Refunds take {d} days.") for d in (14, 20)]
        if risk == "health":
            health += claims

    page = browser_page(lead, width=1280, height=720)
    page.goto(f"{page.base_url}/p/{project.slug}/")
    page.select_option("#answer-risk", "health")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("h2", has_text="Answers")).to_contain_text("(2 found)")
    page.get_by_role("link", name="Run a judge…").click()
    expect(page.get_by_test_id("run-bulk-scope")).to_have_text(
        "The 2 answers the answers list shows (filtered: risk category Health): 4 claims."
    )
    page.select_option("#run-judge", str(judge.pk))
    screenshot(page, "screens-run-bulk-form.png", full_page=False)
    page.get_by_role("button", name="Run the judge").click()

    run = JudgeRun.objects.get()
    page.wait_for_url(f"**/judges/runs/{run.pk}/")
    expect(page.get_by_test_id("run-answers")).to_have_text(
        "Over the claims of 2 answers of the answers list (filtered: risk category Health)."
    )
    expect(page.locator("#run-progress")).to_contain_text("4 of 4 claims processed")
    screenshot(page, "screens-run-bulk-done.png", full_page=False)
    judged = set(JudgeVerdict.objects.filter(run=run).values_list("claim_id", flat=True))
    assert judged == {claim.pk for claim in health}
