"""An analyst labels with the keyboard alone in real Chromium: quote, verdict, save, undo."""

import pytest

from annotate.models import Label, LabelHistory, Verdict
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    UserFactory,
)

pytestmark = pytest.mark.browser

PASSAGE = "Card refunds 💳 are paid within 14 days of the return. Cash refunds are not offered."
QUOTE = "are paid within 14 days"


def labelling_project():
    membership = MembershipFactory(user=UserFactory(username="ana"))
    project = membership.project
    answer = AnswerFactory(
        project=project,
        question="How are refunds paid?",
        text="Refunds go to the card within 14 days. Cash is not refunded.",
    )
    PassageFactory(answer=answer, rank=1, title="Card policy", text=PASSAGE)
    PassageFactory(answer=answer, rank=2, title="Cash policy", text="No cash back, ever.")
    first = ClaimFactory(
        answer=answer,
        text="Refunds go to the card within 14 days.",
        position=0,
        span_start=0,
        span_end=38,
        queue_key=5,
    )
    second = ClaimFactory(answer=answer, text="Cash is not refunded.", position=1, queue_key=9)
    return project, membership.user, first, second


SELECT_IN_PASSAGE = """
([passageText, quote]) => {
  const el = [...document.querySelectorAll('.passage-text')].find(p => p.textContent === passageText);
  const node = el.firstChild;
  const start = node.data.indexOf(quote);  // a UTF-16 index, as the browser counts
  const range = document.createRange();
  range.setStart(node, start);
  range.setEnd(node, start + quote.length);
  const selection = document.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return start;
}
"""


def test_analyst_labels_a_claim_with_the_keyboard_alone_and_undoes_it(browser_page, screenshot):
    project, user, first, second = labelling_project()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    # A 1366-px laptop: still side by side, and nothing wider than the window.
    pile, answer = (
        page.locator(".label-pile").bounding_box(),
        page.locator(".label-answer").bounding_box(),
    )
    assert pile["x"] > answer["x"] + answer["width"] - 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    claim_text = page.get_by_test_id("claim-text")
    assert claim_text.inner_text() == first.text

    utf16_start = page.evaluate(SELECT_IN_PASSAGE, [PASSAGE, QUOTE])
    assert utf16_start == PASSAGE.index(QUOTE) + 1  # the emoji is two UTF-16 units
    page.wait_for_function("q => document.getElementById('quote-text').value === q", arg=QUOTE)
    page.keyboard.press("1")
    assert page.locator("input[name=verdict][value=SUPPORTED]").is_checked()
    screenshot(page, "labelling.png")

    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=second.text
    )
    assert "Saved" in page.locator(".last-saved").inner_text()
    assert page.get_by_test_id("my-count").inner_text() == "1"
    label = Label.objects.get(claim=first, annotator=user)
    assert label.verdict == Verdict.SUPPORTED
    assert label.evidence_quote == QUOTE
    assert PASSAGE[label.evidence_start : label.evidence_end] == QUOTE
    assert label.evidence_start == PASSAGE.index(QUOTE)

    page.keyboard.press("u")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=first.text
    )
    assert "Label undone: your SUPPORTED label" in page.locator(".label-notice").inner_text()
    assert not Label.objects.filter(annotator=user).exists()
    assert list(LabelHistory.objects.values_list("action", flat=True)) == ["created", "undone"]
    screenshot(page, "labelling-after-undo.png")


def test_keys_do_not_fire_while_typing_and_help_and_answer_navigation_work(
    browser_page, screenshot
):
    project, user, first, second = labelling_project()
    page = browser_page(user, width=1920, height=1080)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    # Wide screen: the pile sits beside the answer, not below it.
    pile, answer = (
        page.locator(".label-pile").bounding_box(),
        page.locator(".label-answer").bounding_box(),
    )
    assert pile["x"] > answer["x"] + answer["width"] - 1
    screenshot(page, "labelling-wide.png")
    page.get_by_label("Note").click()
    page.keyboard.type("s1 c2 n3 u j k")
    assert page.get_by_label("Note").input_value() == "s1 c2 n3 u j k"
    assert page.locator("input[name=verdict]:checked").count() == 0
    assert page.get_by_test_id("claim-text").inner_text() == first.text

    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("?")
    assert page.locator("#key-help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#key-help").is_visible()

    page.keyboard.press("j")  # next, as in Gmail and vim
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=second.text
    )
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_selector(".last-saved")
    assert Label.objects.get(claim=second, annotator=user).stratum == {"outside_queue": True}
    page.keyboard.press("k")  # back to the first claim
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=first.text
    )


def test_supported_without_a_quote_shows_the_servers_message_and_keeps_the_choice(browser_page):
    project, user, first, _ = labelling_project()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    page.keyboard.press("s")
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "needs a quote" in alert.inner_text()
    assert page.locator("input[name=verdict][value=SUPPORTED]").is_checked()
    assert not Label.objects.exists()
