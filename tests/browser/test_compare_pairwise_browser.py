"""A lead opens the comparison of two systems a pairwise judge has judged in both orders (the
loopback endpoint plants a 70% first-position preference): the pairwise section states the
position bias and the order-averaged preference, in real Chromium."""

import re

import pytest

from judges.services import pairwise_run_start
from tests.factories import JudgeFactory, MembershipFactory, ProjectFactory
from tests.judges.test_pairwise import Planted, _systems
from tests.llm_server import start_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_reads_the_pairwise_position_bias(browser_page, screenshot, llm_endpoints):
    from playwright.sync_api import expect

    base_url, ctl = start_server()
    llm_endpoints(loopback=base_url)
    try:
        project = ProjectFactory(name="Pairwise demo")
        lead = MembershipFactory(project=project, role="lead").user
        a, b = _systems(project, n=60)
        judge = JudgeFactory(
            project=project,
            name="pairwise-judge",
            backend="openai",
            model="loopback",
            endpoint="loopback",
            max_concurrency=4,
            timeout_seconds=5,
            max_retries=1,
            verify_prompt="",
        )
        ctl.script = Planted(pf=0.4, c=0.5)
        run = pairwise_run_start(judge=judge, a=a, b=b)  # autocommit: runs in-process now
        run.refresh_from_db()
        assert run.status == "done"
    finally:
        ctl.stop()

    page = browser_page(lead)
    page.goto(f"{page.base_url}/p/{project.slug}/compare/?a={a.pk}&b={b.pk}")
    section = page.locator("section.compare-pairwise")
    expect(section.get_by_role("heading", name="Pairwise judge, both orders")).to_be_visible()
    finding = section.locator(".pairwise-finding").inner_text()
    assert re.search(
        r"prefers whichever answer comes first in \d+% \[\d+, \d+\] of pairs; averaged over "
        r"both orders, rag@2 \(B\) is preferred to rag@1 \(A\) in \d+% \[\d+, \d+\]",
        finding,
    )
    expect(section.locator(".compare-pairwise-table tbody tr")).to_have_count(4)
    expect(section).to_contain_text("60 pairs judged in both orders")
    screenshot(page, "compare_pairwise.png")
