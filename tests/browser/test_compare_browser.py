"""A lead opens the comparison of the demo's two systems in real Chromium: the difference with
its interval, and the worst-regressed question's two answers side by side."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_reads_the_demo_comparison(browser_page, screenshot):
    from playwright.sync_api import expect

    call_command("demo_load", stdout=io.StringIO())
    page = browser_page(get_user_model().objects.get(username="lead"))
    page.goto(f"{page.base_url}/p/demo/")
    page.get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Compare systems")).to_be_visible()

    difference = page.locator(".headline-difference")
    expect(difference).to_contain_text("B − A faithfulness:")
    assert re.search(r"[+-]\d+\.\d points", difference.locator(".difference").inner_text())
    assert re.fullmatch(
        r"\[[+-]\d+\.\d, [+-]\d+\.\d\]", difference.locator(".interval").inner_text()
    )
    expect(page.locator(".finding")).to_contain_text("on 9 shared questions; paired")

    worst = page.locator("article.regressed.worst")
    expect(worst).to_contain_text("What does it cost to withdraw cash abroad")
    side_a, side_b = worst.locator(".side-a"), worst.locator(".side-b")
    expect(side_a).to_contain_text("The minimum fee is €2.50.")
    expect(side_b).to_contain_text("The minimum fee is €5.")
    expect(side_b.locator(".verdict-contradicted").first).to_be_visible()
    box_a, box_b = side_a.bounding_box(), side_b.bounding_box()
    assert box_a
    assert box_b
    # Side by side: same row, B to the right of A.
    assert abs(box_a["y"] - box_b["y"]) < 5
    assert box_b["x"] > box_a["x"] + box_a["width"] - 5
    # The trend across the two versions: a chart (inline SVG, under the CSP) and its table.
    expect(page.locator("svg.trend-chart circle.trend-point")).to_have_count(2)
    expect(page.locator(".trend-table tbody tr")).to_have_count(2)
    screenshot(page, "compare.png")
