"""Time per label and a claim's comment thread, in real Chromium (issue 32): the screen times
each claim while it is in view and the save carries it; the lead reads each analyst's pace on
the dashboard; an analyst posts a comment, a colleague sees it only after her own label, and
the lead reads the thread on adjudication. Pages pass axe."""

import re

import pytest

from annotate.models import ClaimComment, LabelTime, Role
from metrics.services import snapshot_compute, snapshot_create
from tests.browser.test_labelling_browser import (
    PASSAGE,
    QUOTE,
    SELECT_IN_PASSAGE,
    labelling_project,
)
from tests.browser.test_screens_pages_browser import axe_serious
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.browser

SHOWN = "t => document.querySelector('[data-testid=claim-text]')?.innerText === t"


def test_the_screen_times_each_label_and_the_lead_reads_the_pace(browser_page, screenshot):
    project, user, first, second = labelling_project()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.wait_for_timeout(1500)  # reading the pile
    page.evaluate(SELECT_IN_PASSAGE, [PASSAGE, QUOTE])
    page.wait_for_function("q => document.getElementById('quote-text').value === q", arg=QUOTE)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function(SHOWN, arg=second.text)
    page.wait_for_timeout(700)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Your queue is empty")
    times = dict(LabelTime.objects.values_list("claim_id", "seconds"))
    assert set(times) == {first.pk, second.pk}
    assert 1.5 <= times[first.pk] < 30  # the 1.5 s spent on it, not the page's lifetime
    assert 0.7 <= times[second.pk] < times[first.pk]

    lead = UserFactory(username="lead-pace")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    snapshot_compute(snapshot_id=snapshot_create(project=project).pk)
    dash = browser_page(lead, width=1280, height=720)
    dash.goto(f"{dash.base_url}/p/{project.slug}/dashboard/?open=all")
    table = dash.get_by_test_id("analyst-pace")
    row = table.get_by_role("row", name=re.compile(r"^ana \d"))
    assert row.is_visible()
    assert " s" in row.inner_text()
    assert axe_serious(dash) == []
    table.scroll_into_view_if_needed()
    screenshot(dash, "dashboard-analyst-pace.png")


def test_a_comment_thread_blind_until_the_colleagues_label(browser_page, screenshot):
    project, ana, first, _ = labelling_project()
    first.labels_required = 2
    first.save(update_fields=["labels_required"])
    project.analysts_per_claim = 2
    project.save(update_fields=["analysts_per_claim"])
    bea = UserFactory(username="bea")
    MembershipFactory(project=project, user=bea)
    lead = UserFactory(username="lead-thread")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    url = f"/p/{project.slug}/label/{first.pk}/"

    page = browser_page(ana)
    page.goto(page.base_url + url)
    page.get_by_label("Add a comment").fill("Does the card include gift cards?")
    page.get_by_role("button", name="Post comment").click()
    page.get_by_test_id("comment").first.wait_for()
    assert "Does the card include gift cards?" in page.get_by_test_id("comments").inner_text()
    assert ClaimComment.objects.count() == 1
    assert axe_serious(page) == []
    screenshot(page, "comment-posted.png")

    other = browser_page(bea)
    other.goto(other.base_url + url)
    thread = other.get_by_test_id("comments")
    assert "gift cards" not in thread.inner_text()
    assert "1 comment by colleagues show once your own label" in thread.inner_text()
    other.evaluate(SELECT_IN_PASSAGE, [PASSAGE, QUOTE])
    other.wait_for_function("q => document.getElementById('quote-text').value === q", arg=QUOTE)
    other.keyboard.press("1")
    other.keyboard.press("Enter")
    # saved: the screen moves on (to the queue's next claim, or its end)
    other.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText !== t", arg=first.text
    )
    other.wait_for_load_state("networkidle")
    other.goto(other.base_url + url)
    assert "Does the card include gift cards?" in other.get_by_test_id("comments").inner_text()

    board = browser_page(lead, width=1280, height=720)
    board.goto(f"{board.base_url}/p/{project.slug}/adjudicate/{first.pk}/")
    assert "Does the card include gift cards?" in board.get_by_test_id("comments").inner_text()
    assert axe_serious(board) == []
    screenshot(board, "comment-on-adjudication.png")
