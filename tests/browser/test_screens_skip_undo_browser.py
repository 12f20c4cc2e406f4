"""Undo after a skip, in real Chromium: `u` brings the skipped claim back, the label saved
before the skip stays."""

import pytest

from annotate.models import ClaimSkip, Label, Verdict
from tests.browser.test_labelling_browser import (
    PASSAGE,
    QUOTE,
    SELECT_IN_PASSAGE,
    labelling_project,
)

pytestmark = pytest.mark.browser

SHOWN = "t => document.querySelector('[data-testid=claim-text]')?.innerText === t"


def test_u_after_a_skip_brings_the_skipped_claim_back_and_keeps_the_label(browser_page, screenshot):
    project, user, first, second = labelling_project()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.evaluate(SELECT_IN_PASSAGE, [PASSAGE, QUOTE])
    page.wait_for_function("q => document.getElementById('quote-text').value === q", arg=QUOTE)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function(SHOWN, arg=second.text)

    # The next claim shows at once from the prefetch while the save is posted behind it; the
    # form is swapped when the save answers. Open the skip form once that is over.
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    reason = page.get_by_label("Not checkable against a pile")
    for _ in range(3):
        if reason.is_visible():
            break
        page.get_by_test_id("skip-claim").locator("summary").click()
        page.wait_for_timeout(200)
    reason.check()
    page.get_by_role("button", name="Skip and take the next claim").click()
    page.wait_for_selector("text=Your queue is empty")
    assert ClaimSkip.objects.filter(claim=second, user=user).exists()

    page.keyboard.press("u")
    page.wait_for_function(SHOWN, arg=second.text)
    notice = page.locator(".label-notice").inner_text()
    assert "Skip of claim “Cash is not refunded.” undone" in notice
    assert not ClaimSkip.objects.exists()
    label = Label.objects.get(annotator=user)
    assert (label.claim, label.verdict, label.evidence_quote) == (first, Verdict.SUPPORTED, QUOTE)
    screenshot(page, "labelling-skip-undone.png")
