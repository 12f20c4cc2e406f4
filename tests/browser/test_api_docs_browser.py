"""The API docs page renders in Chromium: Swagger UI lists the operations, with no console
error (it showed "Parser error: duplicated mapping key" and nothing else)."""

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_the_api_docs_page_lists_the_operations_without_a_console_error(browser_page, db):
    page = browser_page(UserFactory(username="docsreader"))
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{page.base_url}/api/v1/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    text = page.inner_text("body")
    assert "Parser error" not in text
    assert "/api/v1/projects/{slug}/claims.ndjson" in text
    assert page.locator(".opblock").count() >= 30
    assert errors == []
