"""A long pile in real Chromium: page through it with htmx, quote from a later page, save."""

import pytest

from annotate.models import Label, Verdict
from tests.browser.test_labelling_browser import SELECT_IN_PASSAGE
from tests.factories import AnswerFactory, ClaimFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.browser


def long_pile_project(n: int = 45):
    from annotate.models import Passage

    membership = MembershipFactory(user=UserFactory(username="ana"))
    project = membership.project
    answer = AnswerFactory(project=project, text="Passage 25 says the refund takes 25 days.")
    Passage.objects.bulk_create(
        Passage(
            answer=answer,
            rank=rank,
            title=f"Section {rank}",
            text=f"Section {rank}: the refund takes {rank} days.",
        )
        for rank in range(1, n + 1)
    )
    claim = ClaimFactory(answer=answer, text="The refund takes 25 days.", queue_key=1)
    return project, membership.user, answer, claim


def test_quote_from_the_second_page_of_the_pile_after_paging_with_htmx(
    browser_page, screenshot, settings
):
    settings.FAITHAUDIT_PILE_PAGE_SIZE = 20
    project, user, answer, claim = long_pile_project()
    page = browser_page(user)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    assert page.locator(".label-pile .passage-text").count() == 20
    page.get_by_label("Note").fill("typed before paging")
    page.keyboard.press("Escape")
    page.locator("input[name=verdict][value=SUPPORTED]").check()

    page.locator(".label-pile .pile-pager").first.get_by_text("Next passages").click()
    page.wait_for_function(
        "() => document.querySelector('.label-pile .passage-text')?.textContent.startsWith('Section 21:')"
    )
    assert page.locator(".label-pile .passage-text").count() == 20
    # The form was not swapped: what the analyst typed and chose is still there.
    assert page.get_by_label("Note").input_value() == "typed before paging"
    assert page.locator("input[name=verdict][value=SUPPORTED]").is_checked()

    text = "Section 25: the refund takes 25 days."
    page.evaluate(SELECT_IN_PASSAGE, [text, "the refund takes 25 days"])
    page.wait_for_function(
        "q => document.getElementById('quote-text').value === q", arg="the refund takes 25 days"
    )
    passage = answer.passages.get(rank=25)
    assert page.locator("#quote-passage").input_value() == str(passage.pk)
    screenshot(page, "labelling-pile-page-2.png")
    page.get_by_role("button", name="Save and next").click()
    page.wait_for_selector(".last-saved")
    label = Label.objects.get(claim=claim, annotator=user)
    assert label.verdict == Verdict.SUPPORTED
    assert label.evidence_passage_id == passage.pk
    assert label.evidence_quote == "the refund takes 25 days"
    assert label.note == "typed before paging"
