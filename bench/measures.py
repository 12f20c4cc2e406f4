"""The measurements that run inside a child process (`bench.child`), each once per call.

Each function calls the product's own code path (the service a view, command or task calls)
and returns plain numbers; peak memory is read by the parent from the child's rusage.
"""

from __future__ import annotations

import functools
import json
import os
import time
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection

from annotate.models import Membership, Project, Role


def _owner(project: Project):
    membership = (
        Membership.objects.select_related("user").filter(project=project, role=Role.OWNER).first()
    )
    return membership.user


# --- 2. import ---------------------------------------------------------------------------------


def measure_import(*, path: str, slug: str, rollup_state: bool = False) -> dict:
    """`answers_import` of a native JSON Lines file into a new, empty project; timed whole
    (reading, checking, writing, and the COMMIT with its deferred foreign-key checks).
    `rollup_state`: the project's rollup state built first (untimed), so every answer and claim
    written fires the rollup triggers (migration metrics 0005) that mark it for a refresh."""
    from bench.datagen import project_delete, tables_vacuum
    from interchange.services.imports import answers_import

    project_delete(slug=slug)
    tables_vacuum()  # the previous run's deleted rows, untimed
    user = get_user_model().objects.get_or_create(username="bench-importer")[0]
    project = Project.objects.create(slug=slug, name=f"Benchmark import {slug}")
    Membership.objects.create(project=project, user=user, role=Role.OWNER)
    if rollup_state:
        from metrics.services.rollups import rollups_read

        rollups_read(project=project)
    size = os.path.getsize(path)
    started, cpu = time.perf_counter(), time.process_time()
    result = answers_import(project=project, path_or_file=path, format="native", user=user)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    out = {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "answers": result.answers,
        "claims": result.claims,
        "passages": result.passages,
        "bytes": size,
        "answers_per_s": result.answers / seconds,
        "mb_per_s": size / 1e6 / seconds,
    }
    if rollup_state:
        from metrics.models import RollupMark, RollupState

        state = RollupState.objects.get(project=project, run_id=None, system_id=None)
        out["marks"] = RollupMark.objects.filter(state_id=state.pk).count()
    project_delete(slug=slug)  # vacuumed by the next run's start
    return out


# --- 5. export ---------------------------------------------------------------------------------


class _Stopped(Exception):
    pass


class _CountingFile:
    """A text file that counts the lines written and stops the export at a deadline."""

    def __init__(self, handle, deadline: float):
        self.handle = handle
        self.deadline = deadline
        self.lines = 0

    def write(self, chunk: str) -> int:
        self.lines += chunk.count("\n")
        written = self.handle.write(chunk)
        if time.perf_counter() > self.deadline:
            raise _Stopped
        return written


def measure_export(*, slug: str, path: str, limit_s: float = 600.0) -> dict:
    """`claims_export(format="csv")` of a whole project into a file, as the command does.

    Stopped after `limit_s` seconds (the bench's time budget); `complete` then says so and
    `lines` how far it got.
    """
    from annotate.models import Claim
    from interchange.services.exports import claims_export

    project = Project.objects.get(slug=slug)
    claims = Claim.objects.filter(project=project).count()
    started, cpu = time.perf_counter(), time.process_time()
    complete = True
    with open(path, "w", encoding="utf-8", newline="") as handle:
        out = _CountingFile(handle, started + limit_s)
        try:
            claims_export(project=project, format="csv", out=out)
        except _Stopped:
            complete = False
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    size = Path(path).stat().st_size
    Path(path).unlink()
    rows = max(out.lines - 1, 0)  # less the header (cells hold no newlines here)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "bytes": size,
        "rows": rows,
        "claims": claims,
        "complete": complete,
        "rows_per_s": rows / seconds,
    }


# --- 3. report ---------------------------------------------------------------------------------


class _Timer:
    """Wraps a module's public functions to add up the time spent in them (outermost calls)."""

    def __init__(self, module, skip=()):
        self.seconds = 0.0
        self.calls = 0
        self._depth = 0
        for name in dir(module):
            value = getattr(module, name)
            if (
                name.startswith("_")
                or name in skip
                or not callable(value)
                or isinstance(value, type)
            ):
                continue
            if getattr(value, "__module__", "") and not value.__module__.startswith(
                module.__name__
            ):
                continue
            setattr(module, name, self._wrap(value))

    def _wrap(self, function):
        @functools.wraps(function)
        def timed(*args, **kwargs):
            if self._depth:
                return function(*args, **kwargs)
            self._depth += 1
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1
                self._depth -= 1

        return timed


def measure_report(*, slug: str) -> dict:
    """The snapshot task's body (`snapshot_compute`) on a project, with its default judge.

    `stats_seconds` is the time inside `metrics.stats` functions, `reads_seconds` inside
    `metrics.selectors` column reads (both measured by wrapping the module functions the
    report calls); the rest is assembly in pandas/numpy and saving the snapshot row.
    """
    from judges.models import Judge
    from metrics import selectors, stats
    from metrics.models import ReportSnapshot
    from metrics.services import snapshot_compute, snapshot_create

    project = Project.objects.get(slug=slug)
    judge = Judge.objects.filter(project=project).order_by("id").first()
    stats_timer = _Timer(stats)
    reads_timer = _Timer(selectors)
    snapshot = snapshot_create(project=project, judge=judge)
    started, cpu = time.perf_counter(), time.process_time()
    snapshot_compute(snapshot_id=snapshot.pk)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    snapshot.refresh_from_db()
    if snapshot.status != ReportSnapshot.Status.DONE:
        raise RuntimeError(f"the snapshot did not finish: {snapshot.status} {snapshot.error}")
    claims = snapshot.data.get("claims", {}).get("in_project")
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "stats_seconds": stats_timer.seconds,
        "stats_calls": stats_timer.calls,
        "reads_seconds": reads_timer.seconds,
        "claims": claims,
        "snapshot_id": snapshot.pk,
    }


# --- 6. dashboard and project page -------------------------------------------------------------


def _snapshot_ensure(project, judge) -> bool:
    """A finished snapshot for the dashboard to read; computed here (untimed) if missing."""
    from metrics.models import ReportSnapshot
    from metrics.services import snapshot_compute, snapshot_create

    done = ReportSnapshot.objects.filter(
        project=project, judge=judge, status=ReportSnapshot.Status.DONE
    ).exists()
    if not done:
        snapshot = snapshot_create(project=project, judge=judge)
        snapshot_compute(snapshot_id=snapshot.pk)
    return not done


def measure_pages(*, slug: str, requests: int = 30, warmup: int = 3, limit_s: float = 60) -> dict:
    """Server time of the dashboard and the project page: the Django test Client in-process
    against PostgreSQL (the whole middleware stack, view, queries and template; no network)."""
    from django.test import Client
    from django.urls import reverse

    from judges.models import Judge

    project = Project.objects.get(slug=slug)
    judge = Judge.objects.filter(project=project).order_by("id").first()
    computed = _snapshot_ensure(project, judge)
    client = Client()
    client.force_login(_owner(project))
    urls = {
        "dashboard": reverse("metrics:dashboard", args=[slug]),
        "project": reverse("annotate:project-detail", args=[slug]),
    }
    times: dict[str, list[float]] = {}
    queries: dict[str, int] = {}
    for name, url in urls.items():
        for _ in range(warmup if name == "dashboard" else 1):
            response = client.get(url)
            if response.status_code != 200:
                raise RuntimeError(f"GET {url} answered {response.status_code}")
        if name == "dashboard" and b"Rogan" not in response.content:
            raise RuntimeError("the dashboard shows no report: the snapshot was not read")
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        queries[name] = len(captured.captured_queries)
        times[name] = []
        deadline = time.perf_counter() + limit_s
        # `requests` requests, fewer (but at least 3) if they take longer than `limit_s`.
        while len(times[name]) < requests and (
            len(times[name]) < 3 or time.perf_counter() < deadline
        ):
            started = time.perf_counter()
            response = client.get(url)
            times[name].append(time.perf_counter() - started)
        times[name + "_bytes"] = len(response.content)
    return {"times": times, "queries": queries, "snapshot_computed_first": computed}


# --- 4. judge throughput -----------------------------------------------------------------------


def measure_judge(
    *, slug: str, base_url: str, concurrency: int, latency_s: float, backend: str = "openai"
) -> dict:
    """A verify run of an OpenAI-compatible judge over every claim of `slug`, started with
    `judge_run_start` and executed by the `run_judge` task body (eagerly, in this process:
    the parent runs this child without a broker). Throughput is claims / (finished_at −
    started_at) as the run records it. `backend="bits"`: a grounding-bits judge on the same
    endpoint (two /completions calls per claim, so its limit is C/(2L))."""
    from django.conf import settings

    from judges.models import JudgeRun
    from judges.services import judge_create, judge_run_start
    from judges.tasks import backends_preload, run_judge

    # As a worker is when a run reaches it: its tasks bound (celery finalises the app at
    # start) and the OpenAI client warmed up (judges.tasks' worker_init hook).
    run_judge.app.finalize(auto=True)
    backends_preload()
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        raise RuntimeError("measure_judge runs the task eagerly: start it without a broker")
    project = Project.objects.get(slug=slug)
    # The benchmark is this child process's operator: it declares its loopback server as the
    # one endpoint judges may call (judges/endpoints.py), with caps that let it run flat out.
    settings.FAITHAUDIT_LLM_ENDPOINTS = json.dumps(
        [
            {
                "name": "bench-loopback",
                "base_url": base_url,
                "models": ["loopback"],
                "timeout_seconds": 30.0,
                "max_retries": 5,
                "max_concurrency": max(1, concurrency),
            }
        ]
    )
    judge = judge_create(
        project=project,
        name=f"loopback {backend} C{concurrency} {uuid.uuid4().hex[:6]}",
        backend=backend,
        model="loopback",
        endpoint="bench-loopback",
        max_concurrency=concurrency,
        timeout_seconds=30.0,
        max_retries=5,
    )
    started, mono_start, cpu = time.perf_counter(), time.monotonic(), time.process_time()
    run = judge_run_start(judge=judge)
    wall, mono_end, cpu = time.perf_counter() - started, time.monotonic(), time.process_time() - cpu
    run = JudgeRun.objects.get(pk=run.pk)
    if run.status != JudgeRun.Status.DONE:
        raise RuntimeError(f"the judge run ended {run.status}: {run.error}")
    seconds = (run.finished_at - run.started_at).total_seconds()
    verdicts = run.verdicts.values_list("verdict", flat=True)
    tally: dict[str, int] = {}
    for verdict in verdicts:
        tally[verdict] = tally.get(verdict, 0) + 1
    return {
        "claims": run.total,
        "done": run.done,
        "failed": run.failed,
        "unparseable": run.unparseable,
        "seconds": seconds,
        "wall_seconds": wall,
        "cpu_seconds": cpu,  # this process, all threads, from the start to the end of the run
        # CLOCK_MONOTONIC is system-wide on Linux: comparable with the server's arrival times.
        "mono_start": mono_start,
        "mono_end": mono_end,
        "claims_per_s": run.done / seconds,
        "limit_per_s": concurrency / latency_s / (2 if backend == "bits" else 1),
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "verdicts": tally,
        "run_id": run.pk,
    }


# --- 3b. the headline from rollups (issue 30) --------------------------------------------------


def measure_report_rollups(*, slug: str, workers: int | None = None, mode: str = "fresh") -> dict:
    """`metrics.services.rollups`: read the rollups of the project's judge run and compute the
    headline (faithfulness pooled and by stratum, design PPI++); `workers` sets PostgreSQL's
    max_parallel_workers_per_gather for the session (None: the server's). `mode`:

    - "fresh": one statement aggregating every claim (`incremental=False`);
    - "label": the incremental read after one new gold label (the state built first if it is
      not, that build timed apart as `build_seconds`); the label is removed afterwards and the
      state refreshed again, so every run starts from the same data. Then, timed apart as
      `calibration_seconds`, what the "Headline at scale" page adds: the confidence counts
      from the state (`rollups_confidences`) and the calibration and CRC from them.
    """
    from annotate.models import Claim, Gold
    from judges.models import JudgeRun
    from metrics.models import RollupState
    from metrics.services.rollups import (
        calibration_from_rollups,
        headline_from_rollups,
        rollups_confidences,
        rollups_read,
    )

    project = Project.objects.get(slug=slug)
    run = JudgeRun.objects.filter(project=project).order_by("id").first()
    if workers is not None:
        with connection.cursor() as cursor:
            cursor.execute(f"SET max_parallel_workers_per_gather = {int(workers)}")
    out: dict = {"build_seconds": None}
    gold = None
    if mode == "label":
        if not RollupState.objects.filter(project=project, run_id=run.pk, built_at__isnull=False):
            started = time.perf_counter()
            rollups_read(project=project, run=run)
            out["build_seconds"] = time.perf_counter() - started
        claim = Claim.objects.filter(project=project, gold__isnull=True).order_by("-id").first()
        gold = Gold.objects.create(claim=claim, verdict="SUPPORTED", source="adjudicated")
    started, cpu = time.perf_counter(), time.process_time()
    rollups = rollups_read(project=project, run=run, incremental=mode == "label")
    read = time.perf_counter() - started
    head = headline_from_rollups(rollups)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    if mode == "label":
        started = time.perf_counter()
        confidences = rollups_confidences(project=project, run=run)
        calibration_from_rollups(rollups, confidences)
        out["calibration_seconds"] = time.perf_counter() - started
        out["confidence_rows"] = int(confidences[0].size)
    if gold is not None:
        gold.delete()
        rollups_read(project=project, run=run)
        if mode == "label":
            rollups_confidences(project=project, run=run)
    return {
        **out,
        "seconds": seconds,
        "read_seconds": read,
        "cpu_seconds": cpu,
        "rows_read": rollups.rows_read,
        "answers_refreshed": rollups.answers_refreshed,
        "faithfulness": head["faithfulness"]["pooled"]["value"],
        "ppi": head["ppi_faithfulness"]["value"],
        "ppi_ci": list(head["ppi_faithfulness"]["ci"]),
    }
