"""A lead uploads RAGChecker's human-study file on the comparison page, in real Chromium: the
page says what was imported and shows the people's preference, the B share of the decided
marks with its sign test, and the analysts' agreement with one another (figures derived by
hand in tests/compare/test_preferences_import.py)."""

import json

import pytest

from annotate.models import PairwisePreference, System
from tests.browser.test_screens_pages_browser import axe_serious
from tests.compare.builders import answer_record, import_records
from tests.compare.test_preferences_import import GRADES, KAPPA, A, B, ragchecker_records
from tests.factories import MembershipFactory, ProjectFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_imports_preferences_and_reads_them(browser_page, screenshot, tmp_path):
    from playwright.sync_api import expect

    project = ProjectFactory(slug="prefs-browser", name="Prefs")
    lead = MembershipFactory(project=project, role="lead").user
    import_records(
        project,
        [answer_record(q, system, [("SUPPORTED", None)]) for q in GRADES for system in (A, B)],
    )
    a = System.objects.get(project=project, name=A)
    b = System.objects.get(project=project, name=B)
    path = tmp_path / "human_labeled_data.json"
    path.write_text(json.dumps(ragchecker_records(), indent=2))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(
            {
                "question_id": "q1",
                "system_a": "nope",
                "system_b": B,
                "annotator": "x",
                "preference": "B",
            }
        )
        + "\n"
    )

    page = browser_page(lead)
    page.goto(f"{page.base_url}/p/{project.slug}/compare/?a={a.pk}&b={b.pk}")
    section = page.locator("section.compare-pairwise-human")
    expect(section).to_contain_text("No analyst has marked pairs of these two systems yet")
    form = section.get_by_test_id("preferences-import-form")
    expect(form).to_be_visible()  # open while nothing is marked

    form.locator("input[type=file]").set_input_files(str(bad))
    form.get_by_role("button", name="Import").click()
    expect(page.locator(".messages")).to_contain_text("Nothing was imported: 1 problem(s)")
    expect(page.locator(".messages")).to_contain_text("line 1, field system_a: no system")
    assert PairwisePreference.objects.count() == 0

    expect(form).to_be_visible()  # still open: nothing was imported
    form.locator("input[type=file]").set_input_files(str(path))
    form.get_by_role("button", name="Import").click()
    expect(page.locator(".messages")).to_contain_text(
        "Imported 20 preferences (ragchecker, json) on 10 pairs by 2 annotators: 20 new"
    )
    assert page.url.endswith(f"/compare/?a={a.pk}&b={b.pk}")
    # B won 10 of the 16 decided marks, 62.5%: a whole percent rounded half up reads 63%
    # (metrics/format.py; Python's own rounding gave 62%).
    expect(section.locator(".pairwise-human-decided")).to_have_text("63%")
    expect(section.locator(".pairwise-human-sign")).to_have_text("p = 0.727")
    expect(section.locator(".pairwise-human-raw-agreement")).to_have_text("70%")
    expect(section.locator(".pairwise-human-opposite")).to_have_text("10%")
    expect(section.locator(".pairwise-human-analysts-kappa")).to_have_text(f"{KAPPA:.2f}")
    expect(section.locator(".pairwise-human-strength")).to_have_text("0.35")
    expect(page.locator(".compare-finding .finding")).to_contain_text(
        f"People prefer {B} (B) on 63%"
    )
    expect(section).to_contain_text("0 on the blind screen, 20 from files")
    assert axe_serious(page) == []
    screenshot(page, "compare_preferences.png")
