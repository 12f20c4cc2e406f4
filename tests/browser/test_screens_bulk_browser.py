"""A lead works in bulk in real Chromium (issue 19 item 7): filters the answers list down to
the 200 answers of one risk category, sorts it, and splits those 200 into claims from the UI;
a real Celery worker calls a real loopback LLM endpoint, and the split job's progress bar
runs to the end. On a deployment with no LLM endpoint (the `make run` demo's), the same 200
split by rule, from the same page, with the same progress bar."""

import pytest

from annotate.models import Claim, Role
from judges.models import SplitJob
from tests.factories import AnswerFactory, ClaimFactory, JudgeFactory, MembershipFactory
from tests.llm_server import start_server

pytestmark = [pytest.mark.browser, pytest.mark.worker]

LEGAL = 200
OTHER = 12


@pytest.mark.django_db(transaction=True)
def test_a_lead_filters_the_answers_and_splits_200_of_them_with_a_progress_bar(
    llm_endpoints, celery_worker, browser_page, screenshot
):
    from playwright.sync_api import expect

    base_url, ctl = start_server()
    llm_endpoints(loopback=base_url)
    try:
        lead = MembershipFactory(role=Role.LEAD).user
        project = lead.memberships.get().project
        judge = JudgeFactory(
            project=project, name="splitter", backend="openai", model="loopback",
            endpoint="loopback",
        )  # fmt: skip
        for n in range(LEGAL):
            AnswerFactory(
                project=project,
                external_id=f"L{n:03d}",
                risk_category="legal",
                text=f"Clause {n} applies to leases. Clause {n} ends after a year.",
            )
        others = [
            AnswerFactory(project=project, external_id=f"H{n:02d}", risk_category="health")
            for n in range(OTHER)
        ]
        for _ in range(3):
            ClaimFactory(answer=others[0])

        page = browser_page(lead, width=1280, height=720)
        page.goto(f"{page.base_url}/p/{project.slug}/")
        expect(page.locator("h2", has_text="Answers")).to_contain_text(f"({LEGAL + OTHER})")
        # Sort: the one answer with claims comes first.
        page.select_option("#answer-sort", "-claims")
        page.get_by_role("button", name="Show").click()
        expect(page.locator("tbody tr").first.locator("td").first).to_have_text("H00")
        # Filter: the legal answers only, 50 a page on the server.
        page.select_option("#answer-risk", "legal")
        page.select_option("#answer-sort", "id")
        page.get_by_role("button", name="Show").click()
        expect(page.locator("h2", has_text="Answers")).to_contain_text(f"({LEGAL} found)")
        expect(page.locator("tbody tr")).to_have_count(50)
        expect(page.locator(".pager")).to_contain_text("Page 1 of 4")
        expect(page.locator("tbody tr").first.locator("td").first).to_have_text("L000")
        screenshot(page, "screens-answers-filtered.png", full_page=False)

        page.get_by_role("link", name="Split into claims…").click()
        expect(page.get_by_test_id("split-bulk-scope")).to_contain_text(
            f"The {LEGAL} answers the answers list shows with its filters: {LEGAL} without"
        )
        page.select_option("#split-judge", str(judge.pk))
        page.get_by_role("button", name=f"Split {LEGAL} answers").click()

        job_panel = page.get_by_test_id("split-job")
        expect(job_panel).to_be_visible()
        bar = job_panel.get_by_role("progressbar")
        expect(bar).to_have_attribute("aria-valuemax", str(LEGAL))
        screenshot(page, "screens-split-200-running.png", full_page=False)
        expect(job_panel).to_have_attribute("data-status", "done", timeout=180_000)
        expect(bar).to_have_attribute("aria-valuenow", str(LEGAL))
        expect(job_panel.locator("progress")).to_have_attribute("value", "100")
        expect(page.get_by_test_id("split-result")).to_contain_text(
            f"Split {LEGAL} answers into {2 * LEGAL} new claims"
        )
        screenshot(page, "screens-split-200-done.png", full_page=False)
    finally:
        ctl.stop()

    job = SplitJob.objects.get()
    assert (job.total, job.done, job.failed, job.claims_created) == (LEGAL, LEGAL, 0, 2 * LEGAL)
    assert Claim.objects.filter(answer__risk_category="legal").count() == 2 * LEGAL
    assert Claim.objects.filter(answer__risk_category="health").count() == 3  # untouched
    assert len(ctl.log) == LEGAL  # one decompose call per answer


@pytest.mark.django_db(transaction=True)
def test_with_no_llm_endpoint_a_lead_splits_200_answers_by_rule_with_a_progress_bar(
    llm_endpoints, celery_worker, browser_page, screenshot
):
    from playwright.sync_api import expect

    # llm_endpoints with nothing declared: no LLM anywhere, the demo's deployment. The demo's
    # baseline judge is there; it cannot split (it is not an LLM).
    lead = MembershipFactory(role=Role.LEAD).user
    project = lead.memberships.get().project
    JudgeFactory(project=project, name="baseline")
    for n in range(LEGAL):
        AnswerFactory(
            project=project,
            external_id=f"L{n:03d}",
            risk_category="legal",
            text=f"Clause {n} applies to leases. Clause {n} ends after a year.",
        )
    others = [
        AnswerFactory(project=project, external_id=f"H{n:02d}", risk_category="health")
        for n in range(OTHER)
    ]

    page = browser_page(lead, width=1280, height=720)
    page.goto(f"{page.base_url}/p/{project.slug}/")
    page.select_option("#answer-risk", "legal")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("h2", has_text="Answers")).to_contain_text(f"({LEGAL} found)")
    page.get_by_role("link", name="Split into claims…").click()

    expect(page.get_by_test_id("split-bulk-scope")).to_contain_text(
        f"The {LEGAL} answers the answers list shows with its filters: {LEGAL} without"
    )
    expect(page.get_by_test_id("split-unavailable")).to_contain_text(
        "No LLM endpoint is declared on this deployment, so answers split by rule here."
    )
    how = page.get_by_label("How to split")
    expect(how.locator("option")).to_have_text(["By rule (offline, deterministic)"])
    expect(how).to_have_value("")  # by rule, chosen already
    screenshot(page, "screens-split-rule-start.png", full_page=False)
    page.get_by_role("button", name=f"Split {LEGAL} answers").click()

    job_panel = page.get_by_test_id("split-job")
    expect(job_panel).to_be_visible()
    expect(page.locator("h1")).to_contain_text("Split by rule #")
    expect(job_panel).to_contain_text(f"{LEGAL} answers (filtered: risk category Legal)")
    bar = job_panel.get_by_role("progressbar")
    expect(bar).to_have_attribute("aria-valuemax", str(LEGAL))
    screenshot(page, "screens-split-rule-200-running.png", full_page=False)
    expect(job_panel).to_have_attribute("data-status", "done", timeout=180_000)
    expect(bar).to_have_attribute("aria-valuenow", str(LEGAL))
    expect(job_panel.locator("progress")).to_have_attribute("value", "100")
    expect(page.get_by_test_id("split-progress")).to_contain_text(
        f"{LEGAL} of {LEGAL} answers split; {2 * LEGAL} new claims."
    )
    expect(page.get_by_test_id("split-result")).to_contain_text(
        f"Split {LEGAL} answers into {2 * LEGAL} new claims"
    )
    screenshot(page, "screens-split-rule-200-done.png", full_page=False)

    job = SplitJob.objects.get()
    assert (job.method, job.judge) == ("rule", None)
    assert (job.total, job.done, job.failed, job.claims_created) == (LEGAL, LEGAL, 0, 2 * LEGAL)
    first = Claim.objects.filter(answer__external_id="L007").order_by("position")
    assert list(first.values_list("text", "origin")) == [
        ("Clause 7 applies to leases.", "rule"),
        ("Clause 7 ends after a year.", "rule"),
    ]
    assert Claim.objects.filter(answer__risk_category="legal").count() == 2 * LEGAL
    assert not Claim.objects.filter(answer__in=others).exists()  # not in the filtered set
