"""Quoting without a mouse (issue 32 item 3), in real Chromium: from page load two Tabs reach
the screen's "Skip to the quote box" link and Enter puts the caret in the quote box (it took 14
Tabs through the top bar, the guidelines and the claim's links); one Tab more is "Skip to the
pile"; the screen passes axe-core with both links."""

import pytest

from annotate.models import Label
from tests.browser.test_labelling_keys_browser import CARD, SHOWN, three_claims
from tests.browser.test_screens_pages_browser import axe_serious

pytestmark = pytest.mark.browser

ACTIVE = "() => document.activeElement.id || document.activeElement.textContent.trim()"


def _tabs_until(page, wanted: str, limit: int = 20) -> int:
    for count in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate(ACTIVE) == wanted:
            return count
    raise AssertionError(f"{wanted!r} not reached in {limit} Tabs")


def test_two_tabs_and_enter_reach_the_quote_box_and_three_the_pile(browser_page, screenshot):
    project, user, claims, card, _ = three_claims()
    page = browser_page(user)
    url = f"{page.base_url}/p/{project.slug}/label/"
    page.goto(url)
    page.wait_for_function(SHOWN, arg=claims[0].text)

    assert _tabs_until(page, "Skip to the quote box (q)") == 2
    screenshot(page, "labelling-skip-to-quote.png")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "quote-text"
    page.keyboard.type("Card refunds are paid within 14 days")
    page.keyboard.press("Escape")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function(SHOWN, arg=claims[1].text)
    page.wait_for_selector(f'#screen[data-claim-id="{claims[1].pk}"][data-following-ready]')
    label = Label.objects.get(claim=claims[0])
    assert (label.evidence_passage, label.evidence_quote) == (
        card,
        "Card refunds are paid within 14 days",
    )

    page.goto(url)  # page load again, on the second claim
    page.wait_for_function(SHOWN, arg=claims[1].text)
    assert _tabs_until(page, "Skip to the pile (p)") == 3
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "pile"
    caret = "() => [getSelection().anchorNode.data, getSelection().anchorOffset]"
    assert page.evaluate(caret) == [CARD, 0]
    assert axe_serious(page) == []
