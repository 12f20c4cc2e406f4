"""A lead in real Chromium uploads a file and watches the import job: on a worker the progress bar
polls until the job is done and then stops; without a broker the page shows the finished job."""

import time

import pytest

from annotate.models import Answer, ImportJob, Role
from tests.annotate.test_import_job_worker import answers_file, project_row_held, wait_for
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.browser


def _upload(page, project, name: str, content: bytes) -> None:
    page.goto(f"{page.base_url}/p/{project.slug}/import/")
    page.set_input_files(
        "#id_file", files=[{"name": name, "mimeType": "application/x-ndjson", "buffer": content}]
    )
    page.get_by_role("button", name="Import", exact=True).click()


def _lead(project):
    lead = UserFactory(username="lena")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    return lead


@pytest.mark.worker
def test_lead_watches_an_import_job_finish_on_a_worker(browser_page, celery_worker, screenshot):
    from playwright.sync_api import expect

    project = ProjectFactory(name="Refund bot audit", slug="refund-bot")
    page = browser_page(_lead(project))
    polls: list[str] = []
    page.on("request", lambda request: "/import/" in request.url and polls.append(request.url))
    content = answers_file(300)

    with project_row_held(project):  # the worker reads the file, then waits on this row
        _upload(page, project, "refunds.jsonl", content)
        job = page.get_by_test_id("import-job")
        job.wait_for()
        wait_for(
            lambda: ImportJob.objects.filter(
                project=project, status="running", bytes_read=len(content)
            ).exists(),
            what="the worker to read the file",
        )
        page.locator(
            '[data-testid=import-job][data-status=running] [aria-valuenow="100"]'
        ).wait_for()
        # The bytes read and the answers checked are written in two progress steps: the poll
        # may show the first before the second (seen on a loaded CI machine), so wait for it.
        expect(page.get_by_test_id("import-progress")).to_contain_text(
            "300 answers checked", timeout=30_000
        )
        screenshot(page, "import_job_running.png")

    page.locator("[data-testid=import-job][data-status=done]").wait_for(timeout=90_000)
    result = page.get_by_test_id("import-result").inner_text()
    assert "Imported 300 answers" in result
    assert Answer.objects.filter(project=project).count() == 300
    screenshot(page, "import_job_done.png")

    # Polling stopped with the job: no more requests for its region.
    seen = len(polls)
    time.sleep(2.5)
    assert len(polls) == seen, polls[seen:]

    # The recent imports list got it with the upload (out of band), and keeps it.
    assert "refunds.jsonl" in page.get_by_test_id("import-list").inner_text()
    page.reload()
    assert "Done" in page.get_by_test_id("import-list").inner_text()


def test_lead_uploads_without_a_broker_and_sees_the_finished_job(browser_page, screenshot):
    project = ProjectFactory(name="Refund bot audit", slug="refund-bot")
    page = browser_page(_lead(project))
    bad = answers_file(2) + b'{"id": "a9", "question": "q", "answer": "a", "pile": 7}\n'
    _upload(page, project, "bad.jsonl", bad)
    page.locator("[data-testid=import-job][data-status=failed]").wait_for()
    errors = page.get_by_test_id("import-errors").inner_text()
    assert "Nothing was imported." in errors
    assert "line 3, field pile" in errors

    _upload(page, project, "refunds.jsonl", answers_file(5))
    page.locator("[data-testid=import-job][data-status=done]").wait_for()
    assert "Imported 5 answers" in page.get_by_test_id("import-result").inner_text()
    page.reload()
    listing = page.get_by_test_id("import-list").inner_text()
    assert "refunds.jsonl" in listing
    assert "bad.jsonl" in listing
    screenshot(page, "import_job_list.png")
