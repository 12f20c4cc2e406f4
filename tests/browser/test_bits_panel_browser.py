"""A lead reads the grounding-bits panel in real Chromium: the histogram by gold verdict with
its zero line, its table, the figures; no CSP violation (the fixture fails the test on one)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from metrics.services import snapshot_compute, snapshot_create
from tests.metrics.factories_bits import build_bits_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_bits_panel_histogram_zero_line_and_table(browser_page, screenshot):
    from playwright.sync_api import expect

    from tests.factories import JudgeFactory, JudgeRunFactory, JudgeVerdictFactory

    built = build_bits_project()
    # A prompted judge too: the panel shows where the two instruments disagree on gold.
    other = JudgeFactory(project=built.project, name="prompted", backend="openai", model="m")
    run = JudgeRunFactory(judge=other, prompt_version="p1")
    for i, claim in enumerate(built.claims):
        verdict = (
            "SUPPORTED" if (claim.gold.verdict == "SUPPORTED") != (i % 5 == 0) else "NOT_IN_PILE"
        )
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict, confidence=None)
    snapshot = snapshot_create(project=built.project, judge=built.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    page = browser_page(built.lead)
    page.goto(f"{page.base_url}/p/{built.project.slug}/dashboard/?judge={built.judge.pk}&open=all")
    panel = page.get_by_test_id("bits-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_role("heading", name="Grounding bits: grounding bits")).to_be_visible()

    chart = panel.locator("svg.bits-histogram")
    box = chart.bounding_box()
    assert box is not None
    assert box["width"] > 300
    assert box["height"] > 150
    expect(chart.locator("line.bits-zero")).to_have_count(1)
    # Every gold claim is one bar segment's worth of count: the table's rows add up to 40.
    rows = panel.locator(".bits-histogram-table tbody tr")
    total = 0
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td.num")
        total += sum(int(cells.nth(j).inner_text()) for j in range(3))
    assert total == 40
    assert chart.locator("rect.bits-SUPPORTED").count() >= 1
    assert chart.locator("rect.bits-NOT_IN_PILE").count() >= 1

    # The share of unsupported claims at or below zero, as counted here.
    golds = [c.gold.verdict for c in built.claims]
    values = np.array([built.bits[c.pk] for c in built.claims])
    unsupported = np.array([g != "SUPPORTED" for g in golds])
    k, m = int((values[unsupported] <= 0).sum()), int(unsupported.sum())
    # A whole percent, halves up (metrics/format.py), worked on the exact fraction.
    shown = math.floor(Fraction(100 * k, m) + Fraction(1, 2))
    expect(panel.locator("[data-figure=bits-nonpositive]")).to_have_text(f"{shown}%")
    expect(panel.get_by_role("heading", name="With the prompted judge prompted")).to_be_visible()
    expect(panel.locator(".bits-disagreements tbody tr")).to_have_count(3)
    chart.scroll_into_view_if_needed()
    screenshot(page, "bits_panel.png")
