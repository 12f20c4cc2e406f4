"""Uploaded files imported as jobs: the upload stores the file and queues a job, a worker runs
`answers_import` on it and writes the job's progress, then its result or its errors.

The file waits under MEDIA_ROOT/imports/ (web and workers share that directory). It is deleted
once the job is done (its answers are in the database) and kept when the job failed: a file
with errors stays for a look at what was wrong (the admin links it), and a job the queue or a
worker lost can be started again from it (`import_job_retry`). `import_files_prune` (the
`import_files_prune` command) deletes the files of jobs that failed long ago.

Without a broker (the demo, `make run`) the job runs in the uploading request and the page shows
it finished. With one, the page polls the job while a worker runs it.
"""

import io
import logging
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from celery import current_app
from django.core.files.uploadedfile import UploadedFile
from django.db import close_old_connections, connections, transaction
from django.db.models import Q
from django.http import Http404
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import ImportJob, Project
from interchange.importers.systems import system_from_option
from interchange.services.imports import ImportFailed, answers_import

logger = logging.getLogger(__name__)

# How often a running job's progress and heartbeat are written (seconds), and after how long
# without a heartbeat its worker counts as dead (its import rolled back with it).
PROGRESS_INTERVAL = 1.0
STALE_AFTER = timedelta(seconds=60)
RECENT_JOBS = 10

QUEUE_DOWN = (
    "The task queue (Redis) could not be reached, so the import did not start and nothing was "
    "imported. The file is kept: press Start again once the queue is back."
)
FILE_GONE = (
    "The uploaded file is no longer in the import directory (MEDIA_ROOT/imports/) where the "
    "worker looks for it; nothing was imported. Web and workers must share that directory. "
    "Upload the file again."
)
WORKER_LOST = (
    "The worker running this import stopped without finishing (no word from it since {since}). "
    "Nothing of the file was imported; the file is kept: press Start again."
)


class _ByteCounter(io.RawIOBase):
    """A binary file that remembers how far into it the import has read (for the progress)."""

    def __init__(self, inner: BinaryIO, name: str):
        super().__init__()
        self.inner = inner
        self.name = name
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.inner.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.inner.seek(offset, whence)

    def tell(self) -> int:
        return self.inner.tell()

    def readinto(self, buffer) -> int:
        data = self.inner.read(len(buffer))
        buffer[: len(data)] = data
        # The furthest point reached: the reader peeks at the head, then starts over.
        self.bytes_read = max(self.bytes_read, self.inner.tell())
        return len(data)


class _ProgressWriter:
    """Writes a running job's progress and heartbeat from a thread of its own.

    `answers_import` holds one transaction open until the whole file is in; whatever it wrote
    to the job on its own connection would stay invisible to the polling page until the end.
    This thread has its own connection (Django's are per thread) and writes in autocommit.
    """

    def __init__(self, *, job_id: int, owner: str, counter: _ByteCounter, total_bytes: int):
        self.job_id = job_id
        self.owner = owner
        self.counter = counter
        self.total_bytes = total_bytes
        self.answers = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"import-job-{job_id}-progress", daemon=True
        )

    def report(self, answers: int) -> None:
        """`answers_import`'s progress callback (in the importing thread)."""
        self.answers = answers

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop before the job's final write, which must not race with a progress write."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stopped.wait(PROGRESS_INTERVAL):
                self._write()
        finally:
            connections.close_all()  # this thread's connections only

    def _write(self) -> None:
        try:
            ImportJob.objects.filter(
                pk=self.job_id, status=ImportJob.Status.RUNNING, lease_owner=self.owner
            ).update(
                answers_checked=self.answers,
                bytes_read=min(self.counter.bytes_read, self.total_bytes),
                heartbeat_at=timezone.now(),
            )
        except Exception:
            # A missed progress write costs a stale bar for a second, not the import.
            logger.exception("could not write the progress of import job %s", self.job_id)
            close_old_connections()


def _in_process() -> bool:
    return bool(current_app.conf.task_always_eager)


def import_job_start(
    *,
    project: Project,
    user,
    file: UploadedFile,
    format: str = "auto",
    annotator_map: dict[str, str] | None = None,
    system: str = "",
) -> ImportJob:
    """Store the uploaded file, create its job and hand it to a worker (or, without a broker,
    run it now). The returned job is re-read: finished when it ran in this process.
    `annotator_map` (name → member's username) is checked when the job runs, too."""
    job = ImportJob.objects.create(
        project=project,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        file=file,
        file_name=(file.name or "upload")[:255],
        format=format,
        annotator_map=annotator_map or {},
        system=system,
        total_bytes=file.size or 0,
    )
    _enqueue(job.pk)
    job.refresh_from_db()
    return job


def _enqueue(job_id: int) -> None:
    if _in_process():
        # No other process needs to see the row first, and the page wants the finished job.
        _send_or_fail(job_id)
    else:
        # Inside a caller's transaction a worker could look for the row before it exists.
        transaction.on_commit(lambda: _send_or_fail(job_id))


def _send_or_fail(job_id: int) -> None:
    """Enqueue; with the broker down, fail the job with a clear message (the file is kept)
    instead of a 500 and a job queued forever."""
    try:
        # By name: interchange.tasks imports this module (InterchangeConfig.ready registers it).
        current_app.tasks["annotate.tasks.run_import"].delay(job_id)
    except BrokerUnreachable:
        logger.exception("could not enqueue import job %s", job_id)
        ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(
            status=ImportJob.Status.FAILED, error=QUEUE_DOWN, finished_at=timezone.now()
        )


def import_job_is_stale(job: ImportJob, now=None) -> bool:
    """No sign of life for longer than STALE_AFTER: running with no heartbeat (its worker
    died), or queued with no worker taking it (workers down or busy, or the message lost)."""
    if job.status not in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING):
        return False
    last = job.heartbeat_at or job.started_at or job.created_at
    return last < (now or timezone.now()) - STALE_AFTER


def import_job_can_retry(job: ImportJob) -> bool:
    """The file is still here and was never judged bad: the queue or a worker lost the job."""
    if not job.file or job.errors:
        return False
    if job.status == ImportJob.Status.FAILED:
        return True
    return import_job_is_stale(job)


def import_job_retry(*, job: ImportJob) -> bool:
    """Queue again a job the queue or a worker lost; False when it cannot be retried.

    Sending a job twice is harmless (`import_job_execute` runs it once), so a job still
    queued is simply sent again.
    """
    if not import_job_can_retry(job):
        return False
    now = timezone.now()
    updated = (
        ImportJob.objects.filter(pk=job.pk)
        .filter(
            Q(status=ImportJob.Status.FAILED, errors=[])
            | Q(status=ImportJob.Status.QUEUED)
            | Q(status=ImportJob.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER)
        )
        .update(
            status=ImportJob.Status.QUEUED,
            error="",
            lease_owner="",
            answers_checked=0,
            bytes_read=0,
            started_at=None,
            heartbeat_at=now,  # queued again now: stale only if no worker takes it
            finished_at=None,
        )
    )
    if updated:
        _enqueue(job.pk)
    job.refresh_from_db()
    return bool(updated)


def import_job_execute(*, job_id: int, owner: str | None = None) -> str:
    """Run job `job_id`: import its file, or nothing. Safe to deliver more than once: a job
    that is finished, or running with a live heartbeat, is left alone ("skipped"); one whose
    worker died (its import rolled back) is taken over.

    Returns the job's status after this execution, or "skipped".
    """
    owner = owner or uuid.uuid4().hex
    if not _job_claim(job_id=job_id, owner=owner):
        return "skipped"
    job = ImportJob.objects.select_related("project", "created_by").get(pk=job_id)
    mine = ImportJob.objects.filter(pk=job_id, lease_owner=owner)
    try:
        handle = job.file.open("rb")
    except (OSError, ValueError):
        logger.exception("import job %s: cannot open %s", job_id, job.file.name)
        mine.update(status=ImportJob.Status.FAILED, error=FILE_GONE, finished_at=timezone.now())
        return ImportJob.Status.FAILED
    counter = _ByteCounter(handle, job.file_name)
    writer = _ProgressWriter(
        job_id=job_id, owner=owner, counter=counter, total_bytes=job.total_bytes
    )
    if not _in_process():
        writer.start()
    try:
        _job_import(job=job, mine=mine, counter=counter, writer=writer)
    except ImportFailed as failed:
        writer.stop()
        mine.update(
            status=ImportJob.Status.FAILED,
            errors=[
                {"location": issue.location, "field": issue.field, "message": issue.message}
                for issue in failed.issues
            ],
            errors_truncated=failed.truncated,
            answers_checked=writer.answers,
            bytes_read=min(counter.bytes_read, job.total_bytes),
            finished_at=timezone.now(),
        )
        return ImportJob.Status.FAILED
    except _LeaseLost:
        return "skipped"
    except Exception as error:
        writer.stop()
        logger.exception("import job %s failed", job_id)
        mine.update(
            status=ImportJob.Status.FAILED,
            error=f"The import stopped on an unexpected error ({type(error).__name__}: {error}); "
            "nothing was imported. The file is kept: press Start again, or tell an admin.",
            finished_at=timezone.now(),
        )
        return ImportJob.Status.FAILED
    finally:
        writer.stop()
        handle.close()
    # The answers are in: the file has served its purpose (its row already says so).
    job.file.delete(save=False)
    return ImportJob.Status.DONE


def _job_claim(*, job_id: int, owner: str) -> bool:
    """Take the job for `owner` when it is queued, or running with a stale heartbeat (its
    worker died); False when another execution holds it or it is finished."""
    now = timezone.now()
    claimed = (
        ImportJob.objects.filter(pk=job_id)
        .filter(
            Q(status=ImportJob.Status.QUEUED)
            | Q(status=ImportJob.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER)
        )
        .update(
            status=ImportJob.Status.RUNNING,
            lease_owner=owner,
            started_at=now,
            heartbeat_at=now,
            answers_checked=0,
            bytes_read=0,
        )
    )
    return bool(claimed)


def _job_import(*, job: ImportJob, mine, counter: _ByteCounter, writer: _ProgressWriter) -> None:
    """Import the job's file and mark it done, in one transaction (ImportFailed, or
    _LeaseLost when another execution took the job over: everything rolled back)."""
    with transaction.atomic():
        result = answers_import(
            project=job.project,
            path_or_file=io.BufferedReader(counter, buffer_size=256 * 1024),
            format=job.format,
            user=job.created_by,
            progress=writer.report,
            annotator_map=job.annotator_map,
            system=system_from_option(job.system) if job.system else None,
        )
        writer.stop()
        # In the import's transaction: answers, "done" and the file's release are
        # committed together (whoever reads "done" sees no file; the bytes go just after).
        updated = mine.filter(status=ImportJob.Status.RUNNING).update(
            status=ImportJob.Status.DONE,
            file="",
            result=result.as_dict(),
            answers_checked=max(writer.answers, result.answers),
            bytes_read=job.total_bytes,
            finished_at=timezone.now(),
        )
        if not updated:
            raise _LeaseLost


class _LeaseLost(Exception):
    """Another execution took the job over (this one was presumed dead): roll back."""


def import_job_get_for_project(*, project: Project, job_id: int) -> ImportJob:
    """The project's job, or 404 (another project's job id included)."""
    job = ImportJob.objects.select_related("created_by").filter(project=project, pk=job_id).first()
    if job is None:
        raise Http404("No such import in this project.")
    return job


def import_jobs_recent(*, project: Project, limit: int = RECENT_JOBS) -> list[ImportJob]:
    return list(ImportJob.objects.filter(project=project).select_related("created_by")[:limit])


@dataclass
class PruneResult:
    jobs: int = 0  # failed jobs whose kept file was deleted (the job and its errors stay)
    orphans: int = 0  # files under MEDIA_ROOT/imports/ that no job refers to
    bytes: int = 0
    paths: list[str] = field(default_factory=list)


def import_files_prune(*, older_than: timedelta, dry_run: bool = False) -> PruneResult:
    """Delete the upload files nobody will import any more, older than `older_than`.

    A failed job keeps its file (for a look at what was wrong, or to start it again); this
    removes the files of jobs that failed longer ago than `older_than`, clearing the job's file
    field (its errors, counts and dates stay), and files under MEDIA_ROOT/imports/ that no job
    refers to (a crash between storing an upload and creating its job) whose modification time
    is older than that. Files of queued and running jobs are never touched. `dry_run` deletes
    nothing and reports what would go.
    """
    result = PruneResult()
    cutoff = timezone.now() - older_than
    storage = ImportJob._meta.get_field("file").storage
    expired = ImportJob.objects.filter(
        status=ImportJob.Status.FAILED, finished_at__lt=cutoff
    ).exclude(file="")
    for job in expired.iterator():
        size = storage.size(job.file.name) if storage.exists(job.file.name) else 0
        result.jobs += 1
        result.bytes += size
        result.paths.append(job.file.name)
        if not dry_run:
            job.file.delete(save=False)
            ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.FAILED).update(file="")
    referenced = set(ImportJob.objects.exclude(file="").values_list("file", flat=True))
    root = Path(storage.path("imports"))
    if root.is_dir():
        for path in sorted(root.rglob("*")):
            name = path.relative_to(storage.path("")).as_posix()
            if not path.is_file() or name in referenced:
                continue
            modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            if modified >= cutoff:
                continue
            result.orphans += 1
            result.bytes += path.stat().st_size
            result.paths.append(name)
            if not dry_run:
                path.unlink()
        if not dry_run:  # the per-upload directories left empty
            for directory in sorted(root.iterdir()):
                if directory.is_dir() and not any(directory.iterdir()):
                    directory.rmdir()
    return result
