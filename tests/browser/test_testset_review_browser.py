"""The test-set review screen in real Chromium, keyboard alone: a accepts and the next item
is swapped in without a reload, e opens the edit form (a quote not verbatim is refused on
Enter, the verbatim one saved), r and Enter reject with a reason; no CSP violation."""

import pytest

from tests.testsets.review_world import review_world_build
from testsets.models import TestItem

pytestmark = pytest.mark.browser
SHOWN = "t => document.querySelector('[data-testid=item-question]')?.innerText === t"


def test_three_items_are_reviewed_with_the_keyboard_alone(browser_page, screenshot):
    world = review_world_build()
    first, second, third = world.items
    page = browser_page(world.analyst)
    page.goto(f"{page.base_url}/p/kb/testsets/{world.test_set.pk}/review/")
    page.wait_for_function(SHOWN, arg=first.question)
    page.evaluate("window.__sameDocument = true")  # gone if the page reloads
    screenshot(page, "testset-review.png")

    page.keyboard.press("a")
    page.wait_for_function(SHOWN, arg=second.question)
    assert page.evaluate("document.activeElement.id") == "item-heading"

    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.id") == "edit-question"
    quote = page.locator("textarea[name=quote_text]").first
    quote.fill("Applicants must be at least 21 years old.")
    quote.press("Enter")
    page.wait_for_selector("[data-testid=review-error]")
    assert "is not found verbatim" in page.inner_text("[data-testid=review-error]")
    second.refresh_from_db()
    assert (second.status, second.edited) == (TestItem.Status.PENDING, False)
    screenshot(page, "testset-review-refused.png")
    quote = page.locator("textarea[name=quote_text]").first
    quote.fill("A guardian may sign for a minor.")
    quote.press("Enter")
    page.wait_for_function(SHOWN, arg=third.question)

    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.id") == "reject-reason"
    page.keyboard.type("The dose depends on age.")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Nothing left to review")
    assert page.evaluate("window.__sameDocument") is True

    second.refresh_from_db()
    third.refresh_from_db()
    first.refresh_from_db()
    assert first.status == TestItem.Status.ACCEPTED
    assert (second.status, second.edited) == (TestItem.Status.ACCEPTED, True)
    assert second.quotes.get().text == "A guardian may sign for a minor."
    assert (third.status, third.reject_reason) == ("rejected", "The dose depends on age.")
