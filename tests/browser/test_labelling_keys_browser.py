"""Quoting without a mouse, in real Chromium: q into the quote box, a verdict key, Enter saves;
p into the pile; o skips with the skip form's reasons; the keys listed under ?."""

import pytest

from annotate.models import ClaimSkip, Label, Verdict
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
