import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.services import REASONS, require

ROOT = Path(__file__).resolve().parent.parent


def pytest_runtest_setup(item):
    for marker in REASONS:
        if item.get_closest_marker(marker):
            require(marker)


@pytest.fixture(autouse=True)
def _celery_in_process_by_default():
    """Tests run tasks in-process unless they ask for a real worker (`celery_worker`)."""
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _import_files_in_a_temporary_directory(settings, tmp_path_factory, monkeypatch):
    """Uploaded import files (MEDIA_ROOT) go to this run's temporary directory, never the
    checkout's media/; worker processes started by `celery_worker` inherit it."""
    root = tmp_path_factory.getbasetemp() / "media"
    settings.MEDIA_ROOT = root
    monkeypatch.setenv("MEDIA_ROOT", str(root))


@pytest.fixture
def celery_worker(transactional_db, settings):
    """A real Celery worker process on Redis, against this test run's database.

    Yields a handle with `.kill()` (SIGKILL, as a crashed machine would) and `.restart()`.
    The test must use `transactional_db` (data committed) so the worker can see it.
    """
    require("worker")
    from django.db import connection

    from config.celery import app

    app.conf.task_always_eager = False
    test_db = connection.settings_dict["NAME"]
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    env = {**os.environ, "DATABASE_URL": f"{base}/{test_db}", "DATABASE_CONN_MAX_AGE": "0"}
    app.control.purge()

    class Worker:
        process: subprocess.Popen | None = None

        def start(self) -> None:
            log = open(ROOT / "tests" / ".worker.log", "ab")  # noqa: SIM115
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "--pool=threads",
                    "--concurrency=4",
                    "--loglevel=INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-n",
                    f"test-{os.getpid()}-{time.time_ns()}@%h",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                replies = app.control.ping(timeout=0.5) or []
                if replies:
                    return
                if self.process.poll() is not None:
                    raise RuntimeError("the Celery worker exited at start: see tests/.worker.log")
            raise RuntimeError("the Celery worker did not answer a ping within 30 s")

        def kill(self) -> None:
            if self.process and self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)

        def stop(self) -> None:
            if self.process and self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGTERM)
                try:
                    self.process.wait(15)
                except subprocess.TimeoutExpired:
                    self.kill()

        def restart(self) -> None:
            self.kill()
            self.start()

    worker = Worker()
    worker.start()
    yield worker
    worker.stop()
    app.control.purge()
    app.conf.task_always_eager = True


@pytest.fixture
def llm_endpoints(settings, monkeypatch, tmp_path):
    """Declare the operator's LLM endpoints for this test: `llm_endpoints(name=base_url, ...)`
    or `llm_endpoints({"name": ..., "base_url": ..., ...}, ...)` (judges/endpoints.py).

    Written to a file named by FAITHAUDIT_LLM_ENDPOINTS_FILE, in the settings (this process)
    and the environment: a worker process started by `celery_worker` reads the same file, so
    a test may declare its loopback server after the worker started (list this fixture
    before `celery_worker`). Each declaration replaces the file (a new inode), so it is read
    again at the next call.
    """
    import json

    path = tmp_path / "llm_endpoints.json"
    path.write_text("[]", encoding="utf-8")
    settings.FAITHAUDIT_LLM_ENDPOINTS = ""
    settings.FAITHAUDIT_LLM_ENDPOINTS_FILE = str(path)
    monkeypatch.delenv("FAITHAUDIT_LLM_ENDPOINTS", raising=False)
    monkeypatch.setenv("FAITHAUDIT_LLM_ENDPOINTS_FILE", str(path))

    def declare(*entries: dict, **urls: str) -> str:
        declared = [*entries, *({"name": n, "base_url": u} for n, u in urls.items())]
        raw = json.dumps(declared)
        fresh = path.with_suffix(".tmp")
        fresh.write_text(raw, encoding="utf-8")
        os.replace(fresh, path)
        return raw

    return declare


@pytest.fixture(autouse=True, scope="session")
def _infinite_population_by_default():
    """Tests see intervals as if the project's claims were an infinite population (no
    finite-population correction, issue 33) unless they ask for `finite_population`: their
    expected figures are the textbook infinite-population ones, or their planted value is the
    generating world's mean rather than the project's realised rate. Session-scoped so that
    module-scoped simulation fixtures see it too; the Celery worker the integration tests start
    gets it through the environment (tests/services.py). The product's default is the
    correction on (config/settings.py); tests/metrics/test_finite_population.py pins it
    against brute-force enumeration and on a half-audited project's report."""
    from django.conf import settings as django_settings

    before = django_settings.FAITHAUDIT_FINITE_POPULATION_CORRECTION
    django_settings.FAITHAUDIT_FINITE_POPULATION_CORRECTION = False
    os.environ["FAITHAUDIT_FINITE_POPULATION_CORRECTION"] = "0"
    yield
    django_settings.FAITHAUDIT_FINITE_POPULATION_CORRECTION = before


@pytest.fixture
def finite_population(settings):
    """The product's default: intervals finite-population corrected where the audit holds 5% of
    the claims or more."""
    settings.FAITHAUDIT_FINITE_POPULATION_CORRECTION = True


@pytest.fixture
def demo_project(django_capture_on_commit_callbacks):
    """The demo (`manage.py demo_load`, its report snapshots computed in-process): the project."""
    import io

    from django.core.management import call_command

    from annotate.models import Project

    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_load", stdout=io.StringIO())
    return Project.objects.get(slug="demo")
