"""A lead uploads files through the import form in real Chromium: htmx swaps in the counts or
the error list without a page load."""

import json
import urllib.request
from pathlib import Path

import pytest

from annotate.models import Answer, Membership, Role
from tests.browser.conftest import (  # noqa: F401
    browser_page,
    chromium,
    fast_passwords,
    screenshot,
)
from tests.factories import ProjectFactory, UserFactory

DATA = Path(__file__).parent / "data"
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_uploads_a_file_and_then_a_bad_one(browser_page, live_server, tmp_path, screenshot):  # noqa: F811
    from playwright.sync_api import expect

    # The live server's first request loads the whole app; on a busy machine that alone can
    # outlast the browser's navigation timeout, so take it outside the browser.
    urllib.request.urlopen(f"{live_server.url}/login/", timeout=120).close()
    project = ProjectFactory(slug="refunds")
    lead = UserFactory(username="lea")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    page = browser_page(lead)
    page.goto(f"{page.base_url}/p/refunds/")
    page.get_by_role("link", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="Import answers")).to_be_visible()
    page.evaluate("window.samePage = true")  # survives only if htmx swaps instead of loading

    page.set_input_files("input[type=file]", str(DATA / "native.jsonl"))
    page.get_by_role("button", name="Import").click()
    result = page.get_by_test_id("import-result")
    expect(result).to_contain_text("Imported 3 answers")
    expect(result).to_contain_text("5 labels, by 3 new analysts")
    assert page.evaluate("window.samePage") is True
    assert Answer.objects.filter(project=project).count() == 3
    screenshot(page, "import-result.png")

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"id": "x1", "question": "q", "answer": "a", "pile": [{"text": "🙂 hi"}]})
        + "\n"
        + json.dumps({"id": "refund-1", "question": "q", "answer": "a", "pile": []})
        + "\n",
        encoding="utf-8",
    )
    page.set_input_files("input[type=file]", str(bad))
    page.get_by_role("button", name="Import").click()
    errors = page.get_by_test_id("import-errors")
    expect(errors).to_contain_text("Nothing was imported.")
    expect(errors).to_contain_text(
        "line 2, field id: duplicate id: answer id 'refund-1' already exists in this project"
    )
    assert page.evaluate("window.samePage") is True
    assert Answer.objects.filter(project=project).count() == 3
    screenshot(page, "import-errors.png")
