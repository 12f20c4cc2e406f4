"""An analyst of the demo marks three pairs of the two systems' answers with the keyboard alone
(a, b, =; u undoes), blind to which system wrote which; a lead then reads, on the compare
page, the analysts' preference and its agreement with the pairwise judge — in real Chromium,
at 1280×720 and at 800 px wide without a page-wide horizontal scroll."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import PairwisePreference, System
from judges.models import JudgeRun, PairwiseVerdict
from tests.browser.test_screens_pages_browser import axe_serious
from tests.factories import JudgeFactory, JudgeRunFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HIDDEN = ["assistant", "2024-06", "2024-07", "bm25", "llama"]


def _no_horizontal_scroll(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def test_analyst_marks_three_pairs_by_keyboard_and_lead_sees_agreement(browser_page, screenshot):
    from playwright.sync_api import expect

    call_command("demo_load", stdout=io.StringIO())
    users = get_user_model().objects
    a, b = System.objects.filter(project__slug="demo").order_by("version")
    # The pairwise judge's verdicts (the edge of the world: its replies, stored as a run
    # stores them): B's answer preferred in both orders on every shared question.
    judge = JudgeFactory(project=a.project, name="pairwise-judge")
    run = JudgeRunFactory(
        judge=judge,
        kind=JudgeRun.Kind.PAIRWISE,
        parameters={"system_a": a.pk, "system_b": b.pk},
    )
    keys = sorted(set(a.answers.values_list("question_id", flat=True)))
    for key in keys:
        for order, verdict in (("b_first", "first"), ("a_first", "second")):
            PairwiseVerdict.objects.create(
                run=run,
                judge=judge,
                question_id=key,
                system_a=a,
                system_b=b,
                order=order,
                verdict=verdict,
            )

    page = browser_page(users.get(username="ana"), width=1280, height=720)
    page.goto(f"{page.base_url}/p/demo/")
    page.get_by_role("link", name="Mark answers in pairs").click()
    page.get_by_role("link", name="Start").click()
    progress = page.get_by_test_id("pairwise-progress")
    expect(progress).to_contain_text(f"0 of {len(keys)} pairs")
    expect(page.get_by_test_id("pairwise-left")).to_contain_text("Its pile")
    expect(page.get_by_test_id("pairwise-right")).to_contain_text("Its pile")
    html = page.content()
    for word in HIDDEN:
        assert word not in html, word
    assert _no_horizontal_scroll(page)
    left, right = page.get_by_test_id("pairwise-left"), page.get_by_test_id("pairwise-right")
    box_l, box_r = left.bounding_box(), right.bounding_box()
    assert box_l
    assert box_r
    assert abs(box_l["y"] - box_r["y"]) < 5
    assert box_r["x"] > box_l["x"]
    screenshot(page, "pairwise_marking.png")
    # where the two answers differ, word by word, or that they read the same (issue 32 item 9)
    said = page.locator('[data-testid="pairwise-diff-legend"], [data-testid="pairwise-identical"]')
    expect(said).to_have_count(1)
    if page.get_by_test_id("pairwise-diff-legend").count():
        assert left.locator("mark.diff").count() + right.locator("mark.diff").count() >= 1
    assert axe_serious(page) == []

    page.keyboard.press("a")
    expect(progress).to_contain_text(f"1 of {len(keys)} pairs")
    page.keyboard.press("b")
    expect(progress).to_contain_text(f"2 of {len(keys)} pairs")
    page.keyboard.press("u")  # undo the b: that pair comes back
    expect(page.locator(".label-notice")).to_contain_text("Undone")
    expect(progress).to_contain_text(f"1 of {len(keys)} pairs")
    page.keyboard.press("b")
    expect(progress).to_contain_text(f"2 of {len(keys)} pairs")
    page.keyboard.press("=")
    expect(progress).to_contain_text(f"3 of {len(keys)} pairs")
    page.keyboard.press("?")
    dialog = page.locator("#key-help")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("A tie: save and go to the next pair")
    page.keyboard.press("Escape")

    marks = list(PairwisePreference.objects.order_by("id"))
    assert [m.choice for m in marks] == ["left", "right", "tie"]
    # Each choice is resolved to the system that was shown on that side.
    assert marks[0].preferred_system_id == marks[0].left_system_id
    assert marks[1].preferred_system_id not in (None, marks[1].left_system_id)
    assert marks[2].preferred_system_id is None

    narrow = browser_page(users.get(username="ben"), width=800, height=900)
    narrow.goto(page.url)
    expect(narrow.get_by_test_id("pairwise-progress")).to_contain_text(f"0 of {len(keys)}")
    assert _no_horizontal_scroll(narrow)
    screenshot(narrow, "pairwise_marking_800.png")

    # The lead's page: the judge said B on every pair, so a mark agrees when it preferred B.
    agree = sum(m.preferred_system_id == b.pk for m in marks)
    lead = browser_page(users.get(username="lead"))
    lead.goto(f"{lead.base_url}/p/demo/compare/?a={a.pk}&b={b.pk}&judge={judge.pk}")
    section = lead.locator("section.compare-pairwise-human")
    expect(section.get_by_role("heading", name="Pairwise, analysts")).to_be_visible()
    finding = section.locator(".pairwise-human-finding").inner_text()
    assert re.search(r"of 3 pairs \(3 marks by 1 analyst; ties count half\)", finding), finding
    assert f"matches the analyst's on {round(100 * agree / 3)}% [" in finding, finding
    expect(section.locator(".pairwise-human-agreement")).to_have_text(f"{round(100 * agree / 3)}%")
    lead.locator("section.compare-pairwise-human").scroll_into_view_if_needed()
    screenshot(lead, "compare_pairwise_human.png")
