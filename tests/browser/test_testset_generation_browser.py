"""A lead in real Chromium uploads five documents to the knowledge base, reads the cost
estimate, starts the offline generator and reads the finished job's counts (tasks run
in-process here: no broker)."""

import pytest

from annotate.models import Role
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from testsets.models import Document, GenerationJob

pytestmark = pytest.mark.browser

DOCUMENTS = {
    "refunds.txt": "Refund requests must be submitted within 90 days of the cancellation date.",
    "fees.md": "# Fees\n\nA late fee of €40 applies to changes made less than 24 hours ahead.",
    "minors.txt": "Children under 12 must travel with an adult.",
    "security.html": "<html><head><title>Security</title></head><body><p>Passwords must never "
    "be shared with staff.</p><script>var x = 1;</script></body></html>",
    "interest.txt": "Interest of 3.5% is charged on balances unpaid after 30 days.",
}


def test_lead_uploads_five_documents_and_generates_a_baseline_test_set(browser_page, screenshot):
    project = ProjectFactory(name="Travel desk", slug="travel-desk")
    lead = UserFactory(username="lea")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    page = browser_page(lead)
    page.goto(f"{page.base_url}/p/{project.slug}/documents/")
    page.set_input_files(
        "#id_files",
        files=[
            {"name": name, "mimeType": "text/plain", "buffer": text.encode()}
            for name, text in DOCUMENTS.items()
        ],
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    page.get_by_text("5 documents added").wait_for()
    rows = page.get_by_test_id("documents").locator("tbody tr")
    assert rows.count() == 5
    assert Document.objects.filter(project=project).count() == 5
    screenshot(page, "testset_documents.png")

    page.get_by_role("link", name="Generate a test set").click()
    estimate = page.get_by_test_id("estimate")
    assert "5 documents, no LLM call" in " ".join(estimate.inner_text().split())
    assert "The offline generator is a baseline" in page.content()
    screenshot(page, "testset_generate.png")
    page.get_by_role("button", name="Start generation").click()

    job = page.locator("[data-testid=generation-job][data-status=done]")
    job.wait_for()
    assert "5 of 5 documents done." in job.inner_text()
    # One sentence a document, each with a marker: five kept, none dropped.
    kept = page.get_by_test_id("generation-counts").get_by_role("row", name="Kept (to review)")
    assert kept.inner_text().split()[-1] == "5"
    assert GenerationJob.objects.get(project=project).test_set.items.count() == 5
    screenshot(page, "testset_generation_job.png")
