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


def test_a_lead_publishes_and_runs_the_reference_system_from_the_pages(browser_page, screenshot):
    from testsets.models import SutRun, TestSet
    from testsets.services.review import item_accept

    world = review_world_build()
    for item in world.items[:2]:
        item_accept(item=item, user=world.analyst)
    page = browser_page(world.lead)
    page.goto(f"{page.base_url}/p/kb/testsets/{world.test_set.pk}/")
    assert page.inner_text("[data-count=accepted]") == "2"
    assert page.inner_text("[data-count=generated]") == "7"  # 3 items + 4 drops, by hand
    page.click("text=Publish (freeze v1)")
    page.wait_for_selector("text=Published critical v1: it is frozen.")
    assert TestSet.objects.get(pk=world.test_set.pk).status == "published"
    screenshot(page, "testset-card.png")
    page.goto(f"{page.base_url}/p/kb/testsets/")
    form = page.locator("form[aria-label='Run a system over critical v1']")
    form.locator("select[name=endpoint]").select_option("reference")
    form.locator("input[name=system_name]").fill("bm25")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("[data-testid=run-answers]")
    run = SutRun.objects.get()
    assert (run.status, run.done, run.total) == ("done", 2, 2)
    assert page.inner_text("[data-testid=run-done]") == "2 of 2"
    screenshot(page, "testset-run.png")
    page.click("[data-testid=run-answers]")
    page.wait_for_selector("text=How long do refunds take?")
