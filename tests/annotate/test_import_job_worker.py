"""Upload imports on a real Celery worker (PostgreSQL, Redis): the page sees the job's progress
while the import's own transaction is still open, then the result, and polling stops.

To catch the job mid-way without racing the worker, the test holds a lock on the project's row
(FOR NO KEY UPDATE: rows that merely reference the project still go in). The import reads and
writes the whole file, then waits on that row to update the project's counters, inside its one
transaction: the job is running, with every byte read, and nothing of the file is visible yet.
"""

import contextlib
import json
import time

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, ImportJob, Membership, Role
from tests.factories import ProjectFactory

HTMX = {"HTTP_HX_REQUEST": "true"}
ANSWERS = 400


def answers_file(n: int = ANSWERS) -> bytes:
    """n answers with a pile, a claim and an analyst's label each, as JSON Lines."""
    pile = [{"id": "p1", "title": "Policy", "text": "Refunds are issued within 14 days."}]
    return "".join(
        json.dumps(
            {
                "id": f"a{i}",
                "question": f"How fast is refund {i}? 💸",
                "answer": "Refunds take 14 days.",
                "pile": pile,
                "claims": [
                    {
                        "text": "Refunds take 14 days.",
                        "labels": [{"annotator": "ana", "verdict": "NOT_IN_PILE"}],
                    }
                ],
            },
            ensure_ascii=False,
        )
        + "\n"
        for i in range(n)
    ).encode()


@contextlib.contextmanager
def project_row_held(project):
    """Hold the project's row (FOR NO KEY UPDATE) on a connection of its own until exit."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params) as holder:
        holder.execute(
            "SELECT id FROM annotate_project WHERE id = %s FOR NO KEY UPDATE", [project.pk]
        )
        try:
            yield
        finally:
            holder.rollback()


def wait_for(predicate, *, timeout: float = 90.0, what: str = "the job"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.worker
def test_import_job_on_a_worker_shows_progress_then_the_result(celery_worker, settings):
    project = ProjectFactory(slug="worker-import")
    lead = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    client = Client()
    client.force_login(lead)
    content = answers_file()

    with project_row_held(project):
        response = client.post(
            reverse("annotate:import", args=[project.slug]),
            {"file": SimpleUploadedFile("refunds.jsonl", content), "format": "auto"},
        )
        assert response.status_code == 202  # accepted: a worker has it
        job = ImportJob.objects.get(project=project)
        assert 'hx-trigger="every 1s"' in response.content.decode()

        def whole_file_read():
            job.refresh_from_db()
            assert not job.finished, (job.status, job.error, job.errors[:3])
            return job.status == "running" and job.bytes_read == len(content)

        wait_for(whole_file_read, what="the worker to read the whole file")
        first_beat = job.heartbeat_at
        url = reverse("annotate:import-job", args=[project.slug, job.pk])
        poll = client.get(url, **HTMX)
        assert poll.status_code == 200  # still polling
        body = poll.content.decode()
        assert 'data-status="running"' in body
        assert 'aria-valuenow="100"' in body
        assert 'hx-trigger="every 1s"' in body
        # All in one transaction: nothing of the file is visible while it runs...
        assert Answer.objects.filter(project=project).count() == 0
        # ...and the worker says it is alive.
        wait_for(
            lambda: ImportJob.objects.get(pk=job.pk).heartbeat_at > first_beat,
            what="a heartbeat",
        )

    job = wait_for(
        lambda: ImportJob.objects.filter(pk=job.pk, status__in=["done", "failed"]).first(),
        what="the job to finish",
    )
    assert job.status == "done", (job.error, job.errors[:3])
    assert job.answers_checked == ANSWERS
    assert job.result["answers"] == ANSWERS
    assert job.result["labels"] == ANSWERS
    assert Answer.objects.filter(project=project).count() == ANSWERS
    assert job.file.name == ""  # removed once the answers are in

    poll = client.get(url, **HTMX)
    assert poll.status_code == 286  # htmx stops polling
    assert f"Imported {ANSWERS} answers" in poll.content.decode()


@pytest.mark.worker
def test_import_job_with_errors_on_a_worker(celery_worker):
    project = ProjectFactory(slug="worker-import-bad")
    lead = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    client = Client()
    client.force_login(lead)
    content = answers_file(3) + b'{"id": "a9", "question": "q", "answer": "a", "pile": 7}\n'
    client.post(
        reverse("annotate:import", args=[project.slug]),
        {"file": SimpleUploadedFile("refunds.jsonl", content), "format": "auto"},
    )
    job = wait_for(
        lambda: ImportJob.objects.filter(project=project, status__in=["done", "failed"]).first(),
        what="the job to finish",
    )
    assert job.status == "failed"
    assert [(e["location"], e["field"]) for e in job.errors] == [("line 4", "pile")]
    assert job.file.storage.exists(job.file.name)  # kept for a look
    assert Answer.objects.filter(project=project).count() == 0
    page = client.get(reverse("annotate:import-job", args=[project.slug, job.pk])).content
    assert b"<strong>line 4</strong>, field <code>pile</code>" in page
