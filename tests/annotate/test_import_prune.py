"""import_files_prune: old failed uploads and orphaned files go; nothing still useful does."""

import os
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from annotate.models import ImportJob
from tests.annotate.test_import_job import job_with_file, stored_files
from tests.factories import ProjectFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_root")]


@pytest.fixture
def owner():
    return ProjectFactory(), get_user_model().objects.create(username="lea")


def _failed(owner, days_ago: float) -> ImportJob:
    project, user = owner
    return job_with_file(
        project,
        user,
        status=ImportJob.Status.FAILED,
        errors=[{"location": "line 2", "field": "pile[0].text", "message": "not a string"}],
        finished_at=timezone.now() - timedelta(days=days_ago),
    )


def _orphan(media_root, days_ago: float):
    path = media_root / "imports" / "0123abcd" / "lost.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"id": "a1"}\n')
    stamp = time.time() - days_ago * 86400
    os.utime(path, (stamp, stamp))
    return path


def _prune(*args) -> str:
    out = StringIO()
    call_command("import_files_prune", *args, stdout=out)
    return out.getvalue()


def test_an_old_failed_job_loses_its_file_but_keeps_its_errors(owner, media_root):
    old = _failed(owner, days_ago=40)
    recent = _failed(owner, days_ago=2)
    old_file = media_root / old.file.name
    output = _prune("--days", "30")
    assert not old_file.exists()
    assert (media_root / recent.file.name).exists()
    old.refresh_from_db()
    assert not old.file
    assert old.errors[0]["field"] == "pile[0].text"
    assert old.status == ImportJob.Status.FAILED
    assert "1 failed job file and 0 files no job refers to" in output


def test_files_of_waiting_and_running_jobs_are_never_touched(owner, media_root):
    project, user = owner
    long_ago = timezone.now() - timedelta(days=400)
    waiting = job_with_file(project, user, status=ImportJob.Status.QUEUED)
    running = job_with_file(project, user, status=ImportJob.Status.RUNNING, started_at=long_ago)
    for job in (waiting, running):
        stamp = time.time() - 400 * 86400
        os.utime(media_root / job.file.name, (stamp, stamp))
    _prune("--days", "1")
    assert len(stored_files(media_root)) == 2


def test_an_old_orphaned_file_goes_and_a_fresh_one_stays(media_root):
    old = _orphan(media_root, days_ago=31)
    output = _prune()
    assert not old.exists()
    assert not old.parent.exists()  # its now empty upload directory too
    assert "0 failed job files and 1 file no job refers to" in output
    fresh = _orphan(media_root, days_ago=0)
    _prune()
    assert fresh.exists()  # may be an upload whose job is being created right now


def test_dry_run_lists_and_deletes_nothing(owner, media_root):
    old = _failed(owner, days_ago=40)
    orphan = _orphan(media_root, days_ago=40)
    output = _prune("--dry-run")
    assert f"would delete {old.file.name}" in output
    assert "would delete imports/0123abcd/lost.jsonl" in output
    assert orphan.exists()
    assert (media_root / old.file.name).exists()
    old.refresh_from_db()
    assert old.file
