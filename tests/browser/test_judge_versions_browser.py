"""A lead improves a judge in real Chromium (issue 28): splits the gold, reviews development
disagreements, makes a version with three of them as few-shot examples, runs it on a loopback
endpoint, and compares the two versions on held-out gold."""

import numpy as np
import pytest

from annotate.models import Gold, Role
from annotate.vocabulary import Verdict
from judges import versions
from judges.models import Judge, JudgeRun
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
)
from tests.llm_server import start_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WORD = {Verdict.SUPPORTED: "SUPPORTED", Verdict.NOT_IN_PILE: "NOT_MENTIONED"}


def _world(rng):
    project = ProjectFactory()
    claims = []
    for i in range(30):
        answer = AnswerFactory(project=project)
        PassageFactory(answer=answer, rank=1, text=f"Passage {i}: refunds take 14 days.")
        for k in range(3):
            claim = ClaimFactory(answer=answer, text=f"Statement {i}.{k} about refunds")
            verdict = Verdict.SUPPORTED if k < 2 else Verdict.NOT_IN_PILE
            GoldFactory(claim=claim, verdict=verdict, source=Gold.Source.UNANIMOUS)
            claims.append((claim, verdict))
    base = JudgeFactory(
        project=project,
        name="base",
        backend="openai",
        model="loopback",
        endpoint="loopback",
        max_concurrency=2,
        timeout_seconds=5,
        verify_prompt="",
    )
    run = JudgeRunFactory(judge=base, kind=JudgeRun.Kind.VERIFY, prompt_version=base.prompt_version)
    for claim, gold in claims:
        wrong = Verdict.NOT_IN_PILE if gold == Verdict.SUPPORTED else Verdict.SUPPORTED
        verdict = gold if rng.random() < 0.6 else wrong
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict, raw_response=verdict)
    return project, base, claims


def test_lead_makes_a_version_from_disagreements_runs_it_and_compares(
    llm_endpoints, browser_page, screenshot
):
    from playwright.sync_api import expect

    rng = np.random.default_rng(28)
    project, base, claims = _world(rng)
    gold_word = {claim.text: WORD[gold] for claim, gold in claims}
    base_url, _ = start_server(script=lambda claim, context: gold_word.get(claim))
    llm_endpoints(loopback=base_url)
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    page = browser_page(lead)
    page.goto(f"{page.base_url}/p/{project.slug}/judges/{base.pk}/")
    page.get_by_test_id("judge-versions-link").click()
    page.fill("#id_heldout_share", "0.5")
    page.fill("#id_seed", "3")
    page.get_by_role("button", name="Split the gold").click()
    expect(page.get_by_test_id("gold-split")).to_contain_text("50% of answers are held out")
    rows = page.get_by_test_id("disagreements").locator("tbody tr")
    expect(rows.first).to_be_visible()
    split = versions.gold_split_get(project=project)
    for text in rows.locator("label").all_inner_texts():
        claim = next(c for c, _ in claims if c.text == text.strip())
        assert not split.is_heldout(claim.answer_id)  # development gold only
    for i in range(3):
        rows.nth(i).locator("input[type=checkbox]").check()
    page.fill("#id_name", "base v2")
    page.get_by_role("button", name="New version with the checked claims").click()
    expect(page.get_by_role("heading", name="base v2")).to_be_visible()
    expect(page.get_by_test_id("judge-versions-link")).to_be_visible()
    version = Judge.objects.get(project=project, name="base v2")
    assert len(version.few_shot) == 3
    page.get_by_role("button", name="Start run").click()
    expect(page.locator("#run-progress")).to_contain_text("Done", timeout=120_000)
    page.goto(f"{page.base_url}/p/{project.slug}/judges/{version.pk}/versions/")
    page.get_by_test_id("compare-parent").click()
    expect(page.get_by_test_id("recommendation")).to_contain_text("Use base v2")
    # The version answered every held-out claim as gold (the loopback's script): its
    # sensitivity and specificity are both 100%.
    expect(page.get_by_test_id("versions-table").locator("tbody tr").nth(1)).to_contain_text("100%")
    expect(page.get_by_test_id("differences")).to_contain_text("sensitivity")
    expect(page.get_by_test_id("versions-table")).to_contain_text("3 few-shot examples")
    screenshot(page, "judge_compare.png")
