"""Quoting without a mouse, in real Chromium: q into the quote box, a verdict key, Enter saves;
p into the pile; o skips with the skip form's reasons; the keys listed under ?."""

import pytest

from annotate.models import ClaimSkip, Label, Verdict
from tests.browser.test_screens_pages_browser import axe_serious
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    UserFactory,
)

pytestmark = pytest.mark.browser

CARD = "Card refunds are paid within 14 days of the return. Store credit never expires."
CASH = "Cash refunds are not offered. Opened software cannot be returned."
SHOWN = "t => document.querySelector('[data-testid=claim-text]')?.innerText === t"


def three_claims():
    membership = MembershipFactory(user=UserFactory(username="kay"))
    project = membership.project
    answer = AnswerFactory(
        project=project,
        question="How are refunds paid?",
        text="Refunds take 14 days. Cash is refunded. Software can be returned.",
    )
    card = PassageFactory(answer=answer, rank=1, title="Card policy", text=CARD)
    cash = PassageFactory(answer=answer, rank=2, title="Cash policy", text=CASH)
    claims = [
        ClaimFactory(answer=answer, text=text, position=i, queue_key=i + 1)
        for i, text in enumerate(
            ["Refunds take 14 days.", "Cash is refunded.", "Software can be returned."]
        )
    ]
    return project, membership.user, claims, card, cash


def test_three_claims_are_labelled_with_the_keyboard_alone(browser_page, screenshot):
    project, user, claims, card, cash = three_claims()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.wait_for_function(SHOWN, arg=claims[0].text)
    wanted = [
        (claims[0], "Card refunds are paid within 14 days", "1", Verdict.SUPPORTED, card),
        (claims[1], "Cash refunds are not offered.", "2", Verdict.CONTRADICTED, cash),
        (claims[2], "Opened software cannot be returned.", "c", Verdict.CONTRADICTED, cash),
    ]
    for number, (claim, quote, key, _, _) in enumerate(wanted):
        page.wait_for_function(SHOWN, arg=claim.text)
        if number == 2:
            page.keyboard.press(key)  # the verdict first, then Enter from the quote box
        page.keyboard.press("q")
        assert page.evaluate("document.activeElement.id") == "quote-text"
        # The letters typed (q, p, o, s, u among them) go into the box, not to the keys.
        page.keyboard.type(quote)
        assert page.locator("#quote-text").input_value() == quote
        if number < 2:
            page.keyboard.press("Escape")
            page.keyboard.press(key)
        if number == 1:
            screenshot(page, "labelling-keyboard-quote.png")
        page.keyboard.press("Enter")
        if number < 2:
            page.wait_for_function(SHOWN, arg=wanted[number + 1][0].text)
    page.wait_for_selector("text=Your queue is empty")
    assert page.get_by_test_id("my-count").inner_text() == "3"
    for claim, quote, _, verdict, passage in wanted:
        label = Label.objects.get(claim=claim, annotator=user)
        assert (label.verdict, label.evidence_passage, label.evidence_quote) == (
            verdict,
            passage,
            quote,
        )
        assert passage.text[label.evidence_start : label.evidence_end] == quote


def test_p_goes_to_the_pile_o_skips_and_the_keys_are_listed(browser_page, screenshot):
    project, user, claims, _, _ = three_claims()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.wait_for_function(SHOWN, arg=claims[0].text)

    page.keyboard.press("?")
    help_text = page.locator("#key-help").inner_text()
    for line in ("q\nInto the quote box", "p\nInto the pile", "o\nSkip this claim"):
        assert line in help_text
    page.keyboard.press("Escape")

    page.keyboard.press("p")
    assert page.evaluate("document.activeElement.id") == "pile"
    # The caret waits at the start of the first passage (caret browsing selects from there).
    caret = "() => [getSelection().anchorNode.data, getSelection().anchorOffset]"
    assert page.evaluate(caret) == [CARD, 0]

    page.keyboard.press("o")
    assert page.locator(".skip-claim").get_attribute("open") is not None
    page.keyboard.press("ArrowDown")  # the second reason: not atomic
    screenshot(page, "labelling-keyboard-skip.png")
    page.keyboard.press("Enter")
    page.wait_for_function(SHOWN, arg=claims[1].text)
    assert "Skipped “Refunds take 14 days.”" in page.locator(".label-notice").inner_text()
    page.wait_for_selector(f'#screen[data-claim-id="{claims[1].pk}"][data-following-ready]')
    skip = ClaimSkip.objects.get(user=user)
    assert (skip.claim, skip.reason) == (claims[0], ClaimSkip.Reason.NOT_ATOMIC)


QUOTED = "() => document.getElementById('quote-text').value"


def test_three_claims_quoted_sentence_by_sentence_with_the_keys(browser_page, screenshot):
    """No mouse, no caret browsing, no typing: ] and [ walk the pile's sentences, } widens."""
    project, user, claims, card, cash = three_claims()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    wanted = [
        # claim, the keys pressed, the quote they select, the verdict's key
        (claims[0], ["p", "]"], "Card refunds are paid within 14 days of the return.", "1"),
        (claims[1], ["]", "]", "]"], "Cash refunds are not offered.", "2"),
        (claims[2], ["[", "[", "}"], CASH, "c"),
    ]
    for number, (claim, keys, quote, verdict_key) in enumerate(wanted):
        page.wait_for_function(SHOWN, arg=claim.text)
        # the previous save confirmed (its answer settles the screen shown ahead)
        page.wait_for_function(
            "n => document.querySelector('[data-testid=my-count]')?.innerText === n",
            arg=str(number),
        )
        for key in keys:
            page.keyboard.press(key)
        assert page.evaluate(QUOTED) == quote
        assert page.evaluate("() => getSelection().toString()") == quote
        if number == 2:
            status = page.locator("#quote-span-status").inner_text()
            assert status == "Sentence 1–2 of 2 in passage 2 selected."
            assert axe_serious(page) == []
            screenshot(page, "labelling-sentence-keys.png")
        page.keyboard.press(verdict_key)
        page.keyboard.press("Enter")
    page.wait_for_selector("text=Your queue is empty")
    got = [
        Label.objects.values_list("verdict", "evidence_passage", "evidence_quote").get(claim=c)
        for c in claims
    ]
    assert got == [
        (Verdict.SUPPORTED, card.pk, wanted[0][2]),
        (Verdict.CONTRADICTED, cash.pk, "Cash refunds are not offered."),
        (Verdict.CONTRADICTED, cash.pk, CASH),
    ]


def test_the_sentence_keys_stop_at_the_pile_edges_and_narrow_back(browser_page):
    project, user, claims, card, cash = three_claims()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.wait_for_function(SHOWN, arg=claims[0].text)
    page.keyboard.press("]")
    page.keyboard.press("[")  # before the first sentence: it stays, and says so
    assert page.evaluate(QUOTED) == "Card refunds are paid within 14 days of the return."
    assert "first sentence" in page.locator("#quote-span-status").inner_text()
    page.keyboard.press("}")
    assert page.evaluate(QUOTED) == CARD
    page.keyboard.press("}")  # a span stays in its passage
    assert page.evaluate(QUOTED) == CARD
    assert "stays in one passage" in page.locator("#quote-span-status").inner_text()
    page.keyboard.press("{")
    assert page.evaluate(QUOTED) == "Card refunds are paid within 14 days of the return."
    page.keyboard.press("?")
    assert "] / [\nQuote the next / previous sentence" in page.locator("#key-help").inner_text()


def test_at_800_px_the_pile_sits_beside_the_form(browser_page, screenshot):
    project, user, claims, card, _ = three_claims()
    page = browser_page(user, width=800, height=900)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.wait_for_function(SHOWN, arg=claims[0].text)
    form = page.locator("#label-form").bounding_box()
    pile = page.locator("#pile").bounding_box()
    assert pile["y"] < 300, "the pile starts on the first screen"
    assert pile["x"] >= form["x"] + form["width"], "beside the form, not under it"
    scroll = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert scroll[0] <= scroll[1], "no sideways scroll"
    screenshot(page, "labelling-800.png", full_page=False)
    narrow = browser_page(user, width=600, height=900)
    narrow.goto(f"{page.base_url}/p/{project.slug}/label/")
    style = narrow.evaluate(
        "(s => [s.position, s.maxHeight])(getComputedStyle(document.getElementById('pile')))"
    )
    assert style == ["static", "495px"], "stacked, the pile keeps a scroll area of 55% of 900 px"
