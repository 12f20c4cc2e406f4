"""Issue 19, item 1, in real Chromium: a decision that needs two sentences gets two spans, one
dragged in each passage (the second with Ctrl held), both marked, both saved, both marked again
when the analyst comes back; each span is removed by keyboard or mouse without Enter ever
removing one."""

import pytest

from annotate.models import Label
from tests.browser.test_labelling_browser import SELECT_IN_PASSAGE
from tests.browser.test_screens_evidence_browser import (
    CHAR_CENTRE,
    FEES,
    HOURS,
    claim_shown,
    three_claim_project,
)
from tests.browser.test_screens_pages_browser import axe_serious

pytestmark = pytest.mark.browser

# Each highlight's text, by span number (1: "label-quote", n: "label-quote-n").
PAINTED_ALL = """() => {
  const out = {};
  for (const [name, n] of [['label-quote', 1], ['label-quote-2', 2], ['label-quote-3', 3]]) {
    const h = CSS.highlights.get(name);
    if (h && h.size === 1) out[n] = [...h][0].toString();
  }
  return out;
}"""


def drag(page, passage_text, first_char, last_char, *, modifier=None):
    """A real mouse drag from the centre of character `first_char` to that of `last_char`."""
    start = page.evaluate(CHAR_CENTRE, [passage_text, first_char])
    end = page.evaluate(CHAR_CENTRE, [passage_text, last_char])
    if modifier:
        page.keyboard.down(modifier)
    page.mouse.move(start["x"] - 2, start["y"])
    page.mouse.down()
    page.mouse.move(end["x"], end["y"], steps=8)
    page.mouse.up()
    if modifier:
        page.keyboard.up(modifier)


def test_two_spans_in_two_passages_are_dragged_marked_saved_and_marked_again(
    browser_page, screenshot
):
    project, user, claims = three_claim_project()
    page = browser_page(user, width=1280, height=720)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    claim_shown(page, claims[0].text)

    # Span 1: from inside "central" to inside "Monday", snapped to the whole words.
    drag(page, HOURS, HOURS.index("ntral"), HOURS.index("day to") - 1)
    first = "central library opening hours: Monday"
    page.wait_for_function("q => document.getElementById('quote-text').value === q", arg=first)

    # Span 2, in passage 2: Ctrl held, from inside "returns" to inside "cost" ("…co").
    drag(page, FEES, FEES.index("eturns"), FEES.index("cost") + 1, modifier="Control")
    second = "returns cost"
    page.wait_for_function("() => document.querySelectorAll('.quote-span').length === 1")
    assert page.evaluate(PAINTED_ALL) == {"1": first, "2": second}
    # Span 1 is unchanged by the second drag; span 2 is listed with its passage and text.
    assert page.locator("#quote-text").input_value() == first
    item = page.locator(".quote-span")
    assert item.inner_text().startswith("2")
    assert "passage #2" in item.inner_text()
    assert "“returns cost”" in item.inner_text()
    # Numbered badges in the passages, one per span.
    assert page.locator(".passage .span-marker").all_inner_texts() == ["1", "2"]

    # A click elsewhere: both stay marked.
    page.get_by_text("When is the library open?").click()
    assert page.evaluate(PAINTED_ALL) == {"1": first, "2": second}
    assert axe_serious(page) == []
    screenshot(page, "multispan-two-spans.png", full_page=False)
    screenshot(page, "multispan-two-spans-full.png")  # the list of spans under the quote

    page.keyboard.press("1")
    page.keyboard.press("Enter")
    claim_shown(page, claims[1].text)
    # The next claim is shown ahead of the save's answer: the label is stored once it comes.
    page.wait_for_selector(f'.last-saved[data-saved-claim="{claims[0].pk}"]')
    label = Label.objects.get(claim=claims[0], annotator=user)
    assert label.evidence_quote == first
    [extra] = label.more_spans.all()
    assert (extra.number, extra.passage.rank, extra.quote) == (2, 2, second)
    assert FEES[extra.start : extra.end] == second  # after no emoji: code points = units here

    page.keyboard.press("k")  # back to the saved claim
    claim_shown(page, claims[0].text)
    page.wait_for_function(
        f"() => JSON.stringify(({PAINTED_ALL})()) === JSON.stringify({{'1': {first!r}, "
        f"'2': {second!r}}})"
    )
    screenshot(page, "multispan-on-return.png", full_page=False)


def test_spans_are_added_with_the_a_key_and_removed_by_keyboard_and_mouse(browser_page, screenshot):
    project, user, claims = three_claim_project()
    page = browser_page(user, width=1280, height=720)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    claim_shown(page, claims[0].text)
    drag(page, HOURS, HOURS.index("Monday"), HOURS.index("Friday") + 5)
    page.wait_for_function("() => document.getElementById('quote-text').value")
    # "a", then a plain drag: span 2 (in the same passage); "a" again: span 3 after the emoji.
    page.keyboard.press("a")
    assert page.locator("#quote-span-status").inner_text() == "Select span 2 in the pile."
    drag(page, HOURS, HOURS.index("Closed"), HOURS.index("Sunday.") + 5)
    page.keyboard.press("a")
    drag(page, FEES, FEES.index("every"), FEES.index("book") + 3)
    page.wait_for_function("() => document.querySelectorAll('.quote-span').length === 2")
    assert page.evaluate(PAINTED_ALL) == {
        "1": "Monday to Friday",
        "2": "Closed Sunday",
        "3": "every book",
    }
    # Overlapping span 1 is refused in the browser already.
    page.keyboard.press("a")
    drag(page, HOURS, HOURS.index("to Friday"), HOURS.index("Friday") + 2)
    assert page.locator("#quote-span-status").inner_text() == (
        "That overlaps span 1: select another place."
    )
    assert page.locator(".quote-span").count() == 2

    # Keyboard: focus span 2 in the list; Enter would save, Delete removes it, and span 3
    # becomes span 2 (its badge and colour renumbered), focus on it.
    page.locator(".quote-span").first.focus()
    page.keyboard.press("Delete")
    assert page.locator(".quote-span").count() == 1
    assert page.evaluate("document.activeElement.dataset.number") == "2"
    assert page.evaluate(PAINTED_ALL) == {"1": "Monday to Friday", "2": "every book"}

    # Typing in the quote box and tabbing never lands on a remove button or the list's items.
    page.locator("#quote-text").focus()
    page.keyboard.press("End")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.className")
    assert "quote-span-remove" not in focused
    assert "quote-clear" not in focused

    # Mouse: the remove button of the last span.
    page.locator(".quote-span-remove").click()
    assert page.locator(".quote-span").count() == 0
    assert page.evaluate(PAINTED_ALL) == {"1": "Monday to Friday"}
    assert page.locator("#quote-spans-box").is_hidden()

    # A selection made without the mouse (caret browsing and Shift+arrows; set here by script,
    # which the page sees the same way) after "a" is a span too; "x" removes the last span;
    # then Enter (from the page) saves the one-span label. (The mouse removal put focus in the
    # quote box, where "a" is typed: leave it first.)
    assert page.evaluate("document.activeElement.id") == "quote-text"
    page.locator("#claim-heading").focus()
    page.keyboard.press("a")
    page.evaluate(SELECT_IN_PASSAGE, [FEES, "Late returns"])
    page.wait_for_function("() => document.querySelectorAll('.quote-span').length === 1")
    assert page.locator(".quote-span .span-quote").inner_text() == "Late returns"
    page.locator("#claim-heading").focus()
    page.keyboard.press("x")
    assert page.locator(".quote-span").count() == 0
    screenshot(page, "multispan-removed.png", full_page=False)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    claim_shown(page, claims[1].text)
    # The next claim is shown ahead of the save's answer: the label is stored once it comes.
    page.wait_for_selector(f'.last-saved[data-saved-claim="{claims[0].pk}"]')
    label = Label.objects.get(claim=claims[0], annotator=user)
    assert label.evidence_quote == "Monday to Friday"
    assert not label.more_spans.exists()


def test_a_second_span_from_another_page_of_the_pile(browser_page, screenshot, settings):
    from tests.browser.test_pile_paging_browser import long_pile_project

    settings.FAITHAUDIT_PILE_PAGE_SIZE = 20
    project, user, answer, claim = long_pile_project()
    page = browser_page(user, width=1280, height=720)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    first_text = "Section 3: the refund takes 3 days."
    # From inside "refund" to inside "takes": "refund takes".
    drag(page, first_text, first_text.index("fund"), first_text.index("takes") + 2)
    page.wait_for_function("() => document.getElementById('quote-text').value === 'refund takes'")
    page.keyboard.press("a")  # then page on: the next selection is still span 2
    page.locator(".label-pile .pile-pager").first.get_by_text("Next passages").click()
    page.wait_for_function(
        "() => document.querySelector('.label-pile .passage-text')?.textContent"
        ".startsWith('Section 21:')"
    )
    second_text = "Section 25: the refund takes 25 days."
    drag(page, second_text, second_text.index("25 d"), second_text.index("days") + 1)
    page.wait_for_function("() => document.querySelectorAll('.quote-span').length === 1")
    assert "passage #25" in page.locator(".quote-span").inner_text()
    # Span 1's passage is on the other page: only span 2 is marked here.
    assert page.evaluate(PAINTED_ALL) == {"2": "25 days"}
    screenshot(page, "multispan-other-page.png", full_page=False)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector(f'.last-saved[data-saved-claim="{claim.pk}"]')
    label = Label.objects.get(claim=claim, annotator=user)
    assert (label.evidence_passage.rank, label.evidence_quote) == (3, "refund takes")
    [extra] = label.more_spans.all()
    assert (extra.passage.rank, extra.quote) == (25, "25 days")
