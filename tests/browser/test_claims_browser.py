"""A lead in real Chromium splits an answer, merges and re-splits claims, and adjudicates a
disagreement; an analyst marks a fact by selecting text after an emoji."""

import pytest

from annotate.models import Gold, Role, Verdict
from annotate.services.labels import label_save
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.browser

ANSWER = "Refunds 💳 take 14 days and are issued to the original card. Shipping is free."
PASSAGE = "Card refunds 💳 are paid within 14 days of the return. Shipping costs £4."


def _claim_texts(page) -> list[str]:
    return page.locator("[data-claim-text]").evaluate_all("els => els.map(e => e.value)")


def test_lead_splits_merges_and_splits_at_the_cursor(browser_page, screenshot):
    project = ProjectFactory(name="Refund bot audit")
    lead = UserFactory(username="lena")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    answer = AnswerFactory(
        project=project, external_id="q-17", question="How do refunds work?", text=ANSWER
    )
    PassageFactory(answer=answer, rank=1, title="Card policy", text=PASSAGE)
    page = browser_page(lead)
    page.goto(f"{page.base_url}/p/{project.slug}/answers/{answer.pk}/claims/")

    page.get_by_role("button", name="Split into claims").click()
    page.get_by_test_id("claims-notice").get_by_text("Split into 3 new claims.").wait_for()
    assert _claim_texts(page) == [
        "Refunds 💳 take 14 days.",
        "Refunds 💳 are issued to the original card.",
        "Shipping is free.",
    ]
    # The answer shows where each claim comes from.
    assert page.locator("mark.claim-span").count() == 3

    page.get_by_role("button", name="Merge with claim 2").click()
    page.get_by_test_id("claims-notice").get_by_text("Merged into claim 1.").wait_for()
    assert _claim_texts(page)[0] == (
        "Refunds 💳 take 14 days. Refunds 💳 are issued to the original card."
    )
    assert page.get_by_test_id("claim-item").count() == 2

    # Split claim 1 again at the cursor, placed after the emoji (UTF-16 offsets in the browser).
    area = page.locator("[data-claim-text]").first
    area.evaluate(
        "el => { const i = el.value.indexOf(' Refunds'); el.focus(); el.setSelectionRange(i, i); }"
    )
    page.get_by_role("button", name="Split here").first.click()
    page.get_by_test_id("claims-notice").get_by_text("Split into claims 1 and 2.").wait_for()
    assert _claim_texts(page) == [
        "Refunds 💳 take 14 days.",
        "Refunds 💳 are issued to the original card.",
        "Shipping is free.",
    ]
    assert list(answer.claims.order_by("position").values_list("origin", flat=True)) == [
        "manual",
        "manual",
        "rule",
    ]
    screenshot(page, "claims_edit.png")


def test_lead_adjudicates_a_disagreement_side_by_side(browser_page, screenshot):
    project = ProjectFactory(name="Refund bot audit")
    lead = UserFactory(username="lena")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    answer = AnswerFactory(
        project=project, external_id="q-17", text="Refunds take 30 days. Shipping is free."
    )
    passage = PassageFactory(answer=answer, rank=1, title="Card policy", text=PASSAGE)
    claim = ClaimFactory(
        answer=answer, text="Refunds take 30 days.", span_start=0, span_end=21, labels_required=2
    )
    ana, bo = UserFactory(username="ana"), UserFactory(username="bo")
    for analyst in (ana, bo):
        MembershipFactory(project=project, user=analyst, role=Role.ANALYST)
    start = PASSAGE.index("within 14 days")
    label_save(
        claim=claim,
        annotator=ana,
        verdict=Verdict.CONTRADICTED,
        passage=passage,
        start=start,
        end=start + 14,
        quote="within 14 days",
        note="Policy says 14 days.",
    )
    label_save(claim=claim, annotator=bo, verdict=Verdict.NOT_IN_PILE, note="No duration found.")

    page = browser_page(lead, width=1440, height=900)
    page.goto(f"{page.base_url}/p/{project.slug}/")
    page.get_by_role("link", name="Adjudicate").click()
    card = page.get_by_test_id("adjudication-card")
    card.wait_for()
    verdicts = card.get_by_test_id("analyst-verdict")
    assert verdicts.count() == 2
    assert "within 14 days" in card.locator("mark.quote").first.inner_text()
    assert "Contradicted" in verdicts.nth(0).inner_text()
    assert "Not in pile" in verdicts.nth(1).inner_text()

    # A reason is required: the browser will not send the form without one.
    card.get_by_label("Contradicted").check()
    card.get_by_role("button", name="Save gold verdict").click()
    assert not Gold.objects.filter(claim=claim).exists()
    card.get_by_label("Reason").fill("The policy says 14 days; the answer says 30.")
    screenshot(page, "adjudication.png")
    card.get_by_role("button", name="Save gold verdict").click()
    page.get_by_test_id("gold-decided").wait_for()

    gold = Gold.objects.get(claim=claim)
    assert (gold.verdict, gold.source, gold.decided_by_id) == (
        Verdict.CONTRADICTED,
        Gold.Source.ADJUDICATED,
        lead.pk,
    )
    # The contradiction now shows on the contradictions page, both sentences side by side.
    page.get_by_role("link", name="Contradictions").click()
    row = page.get_by_test_id("contradiction-row")
    assert row.count() == 1
    assert "Refunds take 30 days." in row.locator("td.said").inner_text()
    assert "within 14 days" in row.locator("td.pile mark.quote").inner_text()
    screenshot(page, "contradictions.png")


def test_analyst_marks_a_fact_by_selecting_text_after_an_emoji(browser_page, screenshot):
    project = ProjectFactory()
    analyst = UserFactory(username="ana")
    MembershipFactory(project=project, user=analyst, role=Role.ANALYST)
    answer = AnswerFactory(project=project)
    passage = PassageFactory(answer=answer, rank=1, title="Card policy", text=PASSAGE)
    page = browser_page(analyst)
    page.goto(f"{page.base_url}/p/{project.slug}/answers/{answer.pk}/facts/")
    page.locator(".fact-source").first.evaluate(
        """(el) => {
          const node = el.firstChild;
          const start = node.data.indexOf('are paid within 14 days');
          const range = document.createRange();
          range.setStart(node, start);
          range.setEnd(node, start + 'are paid within 14 days'.length);
          document.getSelection().removeAllRanges();
          document.getSelection().addRange(range);
        }"""
    )
    page.wait_for_function("document.querySelector('#fact-quote').value.length > 0")
    page.get_by_role("button", name="Mark as fact").click()
    page.get_by_test_id("facts-notice").wait_for()
    fact = passage.facts.get()
    assert fact.text == "are paid within 14 days"
    assert fact.start == PASSAGE.index("are paid")  # code points: the emoji counts once
    assert page.locator("mark.fact").inner_text() == "are paid within 14 days"
    screenshot(page, "facts.png")
