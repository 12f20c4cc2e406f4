"""Upload imports as jobs (in-process, as `make run` has no broker): the job, its page, the
list of recent imports, the kept or removed file, and a dead broker."""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, ImportJob, Membership, Role
from interchange.services.import_jobs import (
    QUEUE_DOWN,
    STALE_AFTER,
    import_job_execute,
    import_job_retry,
)
from tests.factories import ProjectFactory
from tests.reliability.test_broker_down import dead_broker  # noqa: F401 (a fixture)

DATA = Path(__file__).parent / "data"
HTMX = {"HTTP_HX_REQUEST": "true"}
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_root")]


@pytest.fixture
def project():
    return ProjectFactory(slug="refunds")


@pytest.fixture
def lead_user(project):
    user = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    return user


@pytest.fixture
def lead(lead_user):
    client = Client()
    client.force_login(lead_user)
    return client


def upload(name="native.jsonl", content=None, format="auto"):
    content = (DATA / name).read_bytes() if content is None else content
    return {"file": SimpleUploadedFile(name, content), "format": format}


BAD = b"\n".join(
    json.dumps(record).encode()
    for record in [
        {"id": "a1", "question": "q", "answer": "a", "pile": []},
        {"id": "a2", "question": "q", "answer": "a", "pile": [{"id": "d", "text": 12}]},
    ]
)


def job_with_file(project, user, **fields) -> ImportJob:
    """A job whose file waits in MEDIA_ROOT/imports/, as an upload leaves it."""
    content = (DATA / "native.jsonl").read_bytes()
    return ImportJob.objects.create(
        project=project,
        created_by=user,
        file=SimpleUploadedFile("native.jsonl", content),
        file_name="native.jsonl",
        total_bytes=len(content),
        **fields,
    )


def stored_files(media_root: Path) -> list[Path]:
    return [p for p in (media_root / "imports").rglob("*") if p.is_file()]


def test_import_job_upload_runs_in_process_and_shows_the_finished_job(lead, lead_user, project):
    size = (DATA / "native.jsonl").stat().st_size
    response = lead.post(reverse("annotate:import", args=[project.slug]), upload())
    assert response.status_code == 200
    job = ImportJob.objects.get(project=project)
    assert job.status == ImportJob.Status.DONE
    assert job.created_by == lead_user
    assert job.file_name == "native.jsonl"
    assert (job.total_bytes, job.bytes_read, job.percent) == (size, size, 100)
    assert job.answers_checked == 3
    assert job.result["answers"] == 3
    assert job.result["claims"] == 3
    assert job.errors == []
    assert job.started_at <= job.finished_at
    page = response.content.decode()
    assert "Imported 3 answers" in page
    assert 'aria-valuenow="100"' in page
    assert "3 answers checked" in page
    assert 'hx-trigger="every 1s"' not in page  # nothing left to poll
    assert Answer.objects.filter(project=project).count() == 3


def test_import_job_removes_the_file_after_success(lead, project, media_root):
    lead.post(reverse("annotate:import", args=[project.slug]), upload())
    job = ImportJob.objects.get(project=project)
    assert job.file.name == ""
    assert stored_files(media_root) == []


def test_import_job_with_errors_keeps_the_file_and_lists_line_and_field(lead, project, media_root):
    response = lead.post(reverse("annotate:import", args=[project.slug]), upload("bad.jsonl", BAD))
    assert response.status_code == 400
    job = ImportJob.objects.get(project=project)
    assert job.status == ImportJob.Status.FAILED
    assert {
        "location": "line 2",
        "field": "pile[0].text",
        "message": "expected a string, got 12",
    } in (job.errors)
    assert job.error == ""
    # Kept for a look at what was wrong with it, byte for byte.
    [kept] = stored_files(media_root)
    assert kept.name == "bad.jsonl"
    assert kept.read_bytes() == BAD
    page = response.content.decode()
    assert "Nothing was imported." in page
    assert "<strong>line 2</strong>, field <code>pile[0].text</code>: expected a string" in page
    assert "Start again" not in page  # the same file would fail the same way
    assert Answer.objects.count() == 0


def test_import_job_with_htmx_returns_the_result_region_with_the_job(lead, project):
    response = lead.post(
        reverse("annotate:import", args=[project.slug]), upload("ragas.csv"), **HTMX
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert page.strip().startswith('<section id="import-result"')
    assert 'id="import-job"' in page
    assert 'data-status="done"' in page
    assert "Imported 2 answers</strong> (ragas, csv)" in page
    # The recent imports below the form are swapped in too (out of band), with this job.
    listing = page[page.index('<section id="import-list" hx-swap-oob="true">') :]
    assert "<code>ragas.csv</code>" in listing


def test_import_job_page_and_polling(lead, project):
    lead.post(reverse("annotate:import", args=[project.slug]), upload())
    job = ImportJob.objects.get(project=project)
    url = reverse("annotate:import-job", args=[project.slug, job.pk])

    page = lead.get(url)
    assert page.status_code == 200
    assert "<html" in page.content.decode()
    assert "Imported 3 answers" in page.content.decode()

    # htmx: the region alone; a finished job tells htmx to stop polling (286).
    poll = lead.get(url, **HTMX)
    assert poll.status_code == 286
    body = poll.content.decode()
    assert body.strip().startswith('<section id="import-job"')
    assert "Imported 3 answers" in body


def test_import_job_page_polls_while_the_job_waits(lead, lead_user, project):
    job = ImportJob.objects.create(
        project=project, created_by=lead_user, file_name="late.jsonl", total_bytes=400
    )
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJob.Status.RUNNING, bytes_read=100, answers_checked=1000
    )
    url = reverse("annotate:import-job", args=[project.slug, job.pk])
    poll = lead.get(url, **HTMX)
    assert poll.status_code == 200
    body = poll.content.decode()
    assert 'hx-trigger="every 1s"' in body
    assert 'aria-valuenow="25"' in body
    assert "1000 answers checked; 100\xa0bytes of 400\xa0bytes read (25%)" in body
    assert "Start again" not in body  # its worker is alive, as far as anyone knows


def test_import_page_lists_recent_imports(lead, project):
    lead.post(reverse("annotate:import", args=[project.slug]), upload())
    lead.post(reverse("annotate:import", args=[project.slug]), upload("bad.jsonl", BAD))
    other = ProjectFactory(slug="elsewhere")
    ImportJob.objects.create(project=other, file_name="not-mine.jsonl")
    page = lead.get(reverse("annotate:import", args=[project.slug])).content.decode()
    listing = page[page.index('data-testid="import-list"') :]
    assert "native.jsonl" in listing
    assert "bad.jsonl" in listing
    assert "(1 problem)" in listing
    assert "not-mine.jsonl" not in page
    # Newest first.
    assert listing.index("bad.jsonl") < listing.index("native.jsonl")


def test_import_job_of_another_project_is_404(lead, project):
    other = ProjectFactory(slug="elsewhere")
    job = ImportJob.objects.create(project=other, file_name="theirs.jsonl")
    assert lead.get(reverse("annotate:import-job", args=[project.slug, job.pk])).status_code == 404
    retry = reverse("annotate:import-job-retry", args=[project.slug, job.pk])
    assert lead.post(retry).status_code == 404


def test_import_job_is_not_for_analysts(project, lead):
    lead.post(reverse("annotate:import", args=[project.slug]), upload())
    job = ImportJob.objects.get(project=project)
    analyst = get_user_model().objects.create(username="ana-lyst")
    Membership.objects.create(project=project, user=analyst, role=Role.ANALYST)
    client = Client()
    client.force_login(analyst)
    assert (
        client.get(reverse("annotate:import-job", args=[project.slug, job.pk])).status_code == 404
    )
    assert (
        client.post(reverse("annotate:import-job-retry", args=[project.slug, job.pk])).status_code
        == 404
    )


def test_import_job_delivered_twice_imports_once(lead, project):
    lead.post(reverse("annotate:import", args=[project.slug]), upload())
    job = ImportJob.objects.get(project=project)
    assert import_job_execute(job_id=job.pk) == "skipped"
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE
    assert Answer.objects.filter(project=project).count() == 3


@pytest.mark.usefixtures("dead_broker")
def test_import_job_with_the_broker_down_fails_clearly_and_keeps_the_file(
    transactional_db, lead, project, media_root
):
    # Real commits (no wrapping test transaction), so the job is sent as it would be in service.
    lead.raise_request_exception = False
    response = lead.post(reverse("annotate:import", args=[project.slug]), upload())
    assert response.status_code == 503
    page = response.content.decode()
    assert "task queue (Redis) could not be reached" in page
    assert "Start again" in page
    job = ImportJob.objects.get(project=project)
    assert job.status == ImportJob.Status.FAILED
    assert job.finished_at is not None
    [kept] = stored_files(media_root)
    assert kept.read_bytes() == (DATA / "native.jsonl").read_bytes()
    assert Answer.objects.count() == 0


def test_import_job_started_again_once_the_broker_is_back(lead, lead_user, project, media_root):
    # What the broker-down test above leaves: a failed job with its file kept.
    job = job_with_file(
        project,
        lead_user,
        status=ImportJob.Status.FAILED,
        error=QUEUE_DOWN,
    )
    page = lead.get(reverse("annotate:import-job", args=[project.slug, job.pk])).content.decode()
    assert "Start again" in page
    # The queue is back (in process here): Start again runs it from the kept file.
    response = lead.post(reverse("annotate:import-job-retry", args=[project.slug, job.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("annotate:import-job", args=[project.slug, job.pk])
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE
    assert job.error == ""
    assert Answer.objects.filter(project=project).count() == 3
    assert stored_files(media_root) == []


def test_import_job_with_errors_cannot_be_started_again(lead, project):
    lead.post(reverse("annotate:import", args=[project.slug]), upload("bad.jsonl", BAD))
    job = ImportJob.objects.get(project=project)
    assert import_job_retry(job=job) is False
    response = lead.post(
        reverse("annotate:import-job-retry", args=[project.slug, job.pk]), follow=True
    )
    assert "cannot be started again" in response.content.decode()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED


def test_import_job_whose_worker_died_is_taken_over(lead_user, project, media_root):
    from django.utils import timezone

    job = job_with_file(project, lead_user)
    # A live worker holds it: a second delivery leaves it alone.
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJob.Status.RUNNING, lease_owner="a", heartbeat_at=timezone.now()
    )
    assert import_job_execute(job_id=job.pk) == "skipped"
    # Its heartbeat went stale (the worker died; its import rolled back): the page offers to
    # start again, and a redelivery takes it over.
    ImportJob.objects.filter(pk=job.pk).update(
        heartbeat_at=timezone.now() - STALE_AFTER - STALE_AFTER
    )
    client = Client()
    client.force_login(lead_user)
    page = client.get(reverse("annotate:import-job", args=[project.slug, job.pk])).content.decode()
    assert "No word from the worker" in page
    assert "Start again" in page
    assert import_job_execute(job_id=job.pk) == ImportJob.Status.DONE
    assert Answer.objects.filter(project=project).count() == 3


def test_import_job_whose_file_is_gone_fails_clearly(lead_user, project, media_root):
    job = job_with_file(project, lead_user)
    for path in stored_files(media_root):
        path.unlink()
    assert import_job_execute(job_id=job.pk) == ImportJob.Status.FAILED
    job.refresh_from_db()
    assert "no longer in the import directory" in job.error
    assert Answer.objects.count() == 0


def test_import_job_no_worker_took_can_be_sent_again(lead, lead_user, project):
    from django.utils import timezone

    job = job_with_file(project, lead_user)  # queued, as an upload leaves it for a worker
    url = reverse("annotate:import-job", args=[project.slug, job.pk])
    assert "Start again" not in lead.get(url).content.decode()  # just queued: give it time
    ImportJob.objects.filter(pk=job.pk).update(
        created_at=timezone.now() - STALE_AFTER - STALE_AFTER
    )
    page = lead.get(url).content.decode()
    assert "No worker has taken this import" in page
    assert "Start again" in page
    lead.post(reverse("annotate:import-job-retry", args=[project.slug, job.pk]))
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE
    # The first message arriving late finds the job done and imports nothing more.
    assert import_job_execute(job_id=job.pk) == "skipped"
    assert Answer.objects.filter(project=project).count() == 3
