"""The whole test-set loop in real Chromium (issue 27, "Must show" 1): a lead uploads five
documents, generates questions with the offline generator, reviews three (accept, edit a
quote, reject), publishes, runs the built-in reference system, splits its answers by rule and
judges them with the offline baseline, checks them against the ground truth and reads
faithfulness, hallucination and self-knowledge by risk class on the dashboard. Tasks run
in-process (no broker); screenshots go to tests/artifacts/.

What the figures must be, by hand: each document is one passage of two sentences, the first
carrying a critical marker (the offline generator's question, quote and answer), the second
plain. The reference system answers with the sentence of its top passage sharing most words
with the question (the generated question restates that sentence), so each answer is one
claim, the very sentence of the ground truth and of its pile: the judge finds it SUPPORTED
and the check CORRECT. Faithfulness 100%, correctness 100%, no hallucination, no
self-knowledge, in each risk class the two accepted items fall in."""

import pytest

from annotate.models import Claim, Role
from judges.models import JudgeVerdict
from tests.factories import JudgeFactory, MembershipFactory, ProjectFactory, UserFactory
from testsets.models import SutRun, TestItem, TruthCheck

pytestmark = pytest.mark.browser
PLAIN = " Ask at the front desk for help."
DOCUMENTS = {
    "refunds.txt": "Refund requests must be submitted within 90 days of the cancellation date.",
    "fees.md": "A late fee of €40 applies to changes made less than 24 hours ahead.",
    "minors.txt": "Children under 12 must travel with an adult.",
    "security.txt": "Passwords must never be shared with staff.",
    "interest.txt": "Interest of 3.5% is charged on balances unpaid after 30 days.",
}
SHOWN = "document.querySelector('[data-testid=item-question]')?.innerText"
MOVED_ON = f"q => {SHOWN} !== undefined && {SHOWN} !== q"


def _upload_and_generate(page, project, screenshot):
    page.goto(f"{page.base_url}/p/{project.slug}/documents/")
    page.set_input_files(
        "#id_files",
        files=[
            {"name": name, "mimeType": "text/plain", "buffer": (text + PLAIN).encode()}
            for name, text in DOCUMENTS.items()
        ],
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    page.get_by_text("5 documents added").wait_for()
    page.get_by_role("link", name="Generate a test set").click()
    page.get_by_role("button", name="Start generation").click()
    page.locator("[data-testid=generation-job][data-status=done]").wait_for()
    screenshot(page, "loop-generated.png")


def _shown_item(page) -> TestItem:
    return TestItem.objects.get(question=page.evaluate(SHOWN))


def _review_three(page, test_set, screenshot):
    page.goto(f"{page.base_url}/p/{test_set.project.slug}/testsets/{test_set.pk}/review/")
    page.wait_for_function(f"!!{SHOWN}")
    accepted = _shown_item(page)
    page.keyboard.press("a")
    page.wait_for_function(MOVED_ON, arg=accepted.question)
    edited = _shown_item(page)
    passage_text = edited.quotes.get().passage.text  # both sentences: verbatim, and more
    page.keyboard.press("e")
    quote = page.locator("textarea[name=quote_text]").first
    quote.fill(passage_text)
    quote.press("Enter")
    page.wait_for_function(MOVED_ON, arg=edited.question)
    rejected = _shown_item(page)
    page.keyboard.press("r")
    page.keyboard.type("Not a question a traveller asks.")
    page.keyboard.press("Enter")
    page.wait_for_function(MOVED_ON, arg=rejected.question)
    screenshot(page, "loop-reviewed.png")
    for item in (accepted, edited, rejected):
        item.refresh_from_db()
    assert (accepted.status, edited.status, rejected.status) == ("accepted", "accepted", "rejected")
    assert edited.edited
    assert edited.quotes.get().text == passage_text
    return accepted, edited


def _split_and_judge(page, project, system_pk, judge, screenshot):
    from playwright.sync_api import expect

    page.goto(f"{page.base_url}/p/{project.slug}/?system={system_pk}")
    page.get_by_role("link", name="Split into claims…").click()
    page.get_by_role("button", name="Split 2 answers").click()
    expect(page.get_by_test_id("split-job")).to_have_attribute("data-status", "done")
    page.goto(f"{page.base_url}/p/{project.slug}/?system={system_pk}")
    page.get_by_role("link", name="Run a judge…").click()
    page.select_option("#run-judge", str(judge.pk))
    page.get_by_role("button", name="Run the judge").click()
    expect(page.locator("#run-progress")).to_contain_text("2 of 2 claims processed")
    screenshot(page, "loop-judged.png")


def test_a_lead_runs_the_whole_test_set_loop_and_reads_the_partition(
    llm_endpoints, browser_page, screenshot
):
    from playwright.sync_api import expect

    project = ProjectFactory(name="Travel desk", slug="travel-loop")
    lead = UserFactory(username="lea")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    judge = JudgeFactory(project=project, name="baseline")  # the demo's offline judge
    page = browser_page(lead)
    _upload_and_generate(page, project, screenshot)
    test_set = project.test_sets.get()
    assert test_set.items.count() == 5
    accepted, edited = _review_three(page, test_set, screenshot)

    page.goto(f"{page.base_url}/p/{project.slug}/testsets/{test_set.pk}/")
    page.get_by_role("button", name="Publish (freeze v1)").click()
    page.get_by_text("it is frozen").wait_for()
    page.goto(f"{page.base_url}/p/{project.slug}/testsets/")
    form = page.locator("form[aria-label^='Run a system over']")
    form.locator("select[name=endpoint]").select_option("reference")
    form.locator("input[name=system_name]").fill("bm25")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("[data-testid=run-answers]")
    run = SutRun.objects.get()
    assert (run.status, run.done, run.total) == ("done", 2, 2)
    run_url = page.url

    system_pk = run.items.first().answer.system_id
    _split_and_judge(page, project, system_pk, judge, screenshot)
    claims = Claim.objects.filter(answer__system_id=system_pk)
    assert claims.count() == 2  # one sentence an answer
    assert set(JudgeVerdict.objects.values_list("verdict", flat=True)) == {"SUPPORTED"}

    page.goto(run_url)
    page.get_by_role("button", name="Check answers against the ground truth").click()
    expect(page.get_by_test_id("run-truth-counts")).to_have_text(
        "2 claims checked: 2 correct, 0 incorrect, 0 not addressed."
    )
    assert set(TruthCheck.objects.values_list("verdict", flat=True)) == {"CORRECT"}
    screenshot(page, "loop-truth-checked.png")

    page.goto(f"{page.base_url}/p/{project.slug}/dashboard/?judge={judge.pk}")
    page.get_by_role("button", name="Recompute").click()
    panel = page.get_by_test_id("ground-truth-panel")
    page.locator("details#sec-ground-truth summary").click()
    expect(panel).to_contain_text("2 automatic checks")
    expect(page.get_by_test_id("ground-truth-no-gold")).to_contain_text("not audited ones")
    table = page.get_by_test_id("ground-truth-judge")
    risks = sorted({accepted.risk_category, edited.risk_category})
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(1 + len(risks))
    for risk in ["all", *risks]:
        row = table.locator(f"tr[data-risk='{risk}']")
        expect(row.locator("[data-figure=faithfulness]")).to_contain_text("100%")
        expect(row.locator("[data-figure=correctness]")).to_contain_text("100%")
        expect(row.locator("[data-figure=hallucination]")).to_contain_text("0%")
        expect(row.locator("[data-figure=self_knowledge]")).to_contain_text("0%")
    screenshot(page, "loop-dashboard-ground-truth.png")
