"""Running a judge over a run's items: the engine behind the `run_judge` Celery task.

Why it is safe to deliver the task twice, or to kill its worker at any moment:

- *Remaining work is read from the database*: an item (claim or canary) is handed out only if
  the run has neither a verdict nor a recorded failure for it. Verdicts are written per chunk
  with `bulk_create(ignore_conflicts=True)` under the unique (run, claim) constraint, so a
  claim gets one verdict per run whatever happens, and a finished claim is never sent to the
  endpoint again. Chunks are kept modest (4 × max_concurrency, 16–128 items), so a killed
  worker loses at most one chunk's calls.
- *A lease on the run row*: an execution takes the run by writing its own random token in
  `lease_owner` and touches `heartbeat_at` every lease/3 seconds while it works. A second
  delivery of the task (Redis redelivers an unacknowledged task after the broker's
  visibility timeout, even while the first is still alive) finds a live lease and leaves the
  run to its owner. When the owner dies its heartbeat goes stale after
  JUDGE_RUN_LEASE_SECONDS (default 60) and the next delivery takes over where it stopped.
- *How a dead worker's run comes back*: a per-run watchdog task and a sweep when a worker
  starts re-enqueue runs whose heartbeat is stale (judges/tasks.py); `python manage.py
  resume_runs` and the run page's Resume button do the same by hand.

Per chunk the database sees: one query for the next items, one for their passages, one
transaction that locks the run row, inserts the verdicts and failures in bulk and updates the
counters with F expressions. Endpoint calls run `max_concurrency` at a time in a thread pool.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from judges.backends import JudgeCallFailed, JudgeConfigError, VerifyResult, backend_for_spec
from judges.models import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVerdictChoice

logger = logging.getLogger(__name__)

LIVE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)


def lease_seconds() -> float:
    return float(os.environ.get("JUDGE_RUN_LEASE_SECONDS", "60"))


def chunk_size(max_concurrency: int, *, backend: str = "openai") -> int:
    """Items per chunk: small for an endpoint (a killed worker loses at most one chunk of
    paid calls), large for the offline baseline (nothing to lose, fewer round trips)."""
    configured = os.environ.get("JUDGE_CHUNK_SIZE")
    if configured:
        return max(1, int(configured))
    if backend == "baseline":
        return 512
    return max(16, min(128, 4 * max_concurrency))


def lease_acquire(run_id: int, owner: str) -> bool:
    now = timezone.now()
    stale = now - timedelta(seconds=lease_seconds())
    return bool(
        JudgeRun.objects.filter(pk=run_id, status__in=LIVE)
        .filter(
            Q(lease_owner="")
            | Q(lease_owner=owner)
            | Q(heartbeat_at__isnull=True)
            | Q(heartbeat_at__lt=stale)
        )
        .update(
            lease_owner=owner,
            heartbeat_at=now,
            status=JudgeRun.Status.RUNNING,
            started_at=Coalesce(F("started_at"), now),
        )
    )


def lease_touch(run_id: int, owner: str) -> bool:
    """Renew the lease; False if the run was cancelled or another execution took it over."""
    return bool(
        JudgeRun.objects.filter(
            pk=run_id, lease_owner=owner, status=JudgeRun.Status.RUNNING
        ).update(heartbeat_at=timezone.now())
    )


@dataclass
class ChunkOutcome:
    results: dict[int, VerifyResult] = field(default_factory=dict)
    failures: dict[int, str] = field(default_factory=dict)
    fatal: str = ""
    stopped: bool = False


def _collect(future, item_id: int, run_id: int, outcome: ChunkOutcome) -> None:
    if future.cancelled():
        return
    try:
        outcome.results[item_id] = future.result()
    except JudgeCallFailed as exc:
        outcome.failures[item_id] = str(exc)
    except JudgeConfigError as exc:
        outcome.fatal = outcome.fatal or str(exc)
    except Exception as exc:  # a bug in a backend must not lose the whole chunk
        logger.exception("judge backend raised on item %s of run %s", item_id, run_id)
        outcome.failures[item_id] = f"{type(exc).__name__}: {exc}"[:300]


def _judge_stream(run, owner, backend, executor, concurrency: int, size: int) -> ChunkOutcome:
    """Keep `concurrency` calls in flight over the run's remaining items; write every `size`.

    A sliding window, not chunk barriers: a new call starts as soon as one finishes, so the
    endpoint never waits for a chunk's slowest call or for the database write (measured: chunk
    barriers left the worker idle ~40% of a run). Results are written each time `size` of them
    have finished, and the lease is checked then, so a cancel or a lost lease stops new calls
    within one write; a killed worker loses at most the calls in flight and one unwritten batch.
    Returns the last outcome written (with `fatal` / `stopped` set if the run must end).
    """
    from judges.selectors import piles_for_items, run_items_remaining

    after = 0
    queue: list[tuple[int, str, int]] = []
    piles: dict = {}
    exhausted = False
    in_flight: dict = {}
    outcome = ChunkOutcome()
    interval = max(0.2, lease_seconds() / 3)
    last_touch = time.monotonic()

    def refill() -> None:
        nonlocal after, exhausted
        items = run_items_remaining(run=run, after_id=after, limit=size)
        if not items:
            exhausted = True
            return
        after = items[-1][0]
        piles.update(piles_for_items(run=run, items=items))
        queue.extend(items)

    def flush() -> bool:
        """Write what finished; False when the run must stop (cancelled, lost, or fatal)."""
        nonlocal outcome, last_touch
        _write_chunk(run, owner, outcome)
        finished = outcome
        outcome = ChunkOutcome()
        for item_id in list(finished.results) + list(finished.failures):
            piles.pop(item_id, None)
        last_touch = time.monotonic()
        if finished.fatal:
            outcome.fatal = finished.fatal
            return False
        if not lease_touch(run.pk, owner):
            outcome.stopped = True
            return False
        return True

    stopping = False
    while True:
        while not stopping and len(in_flight) < concurrency:
            if not queue and not exhausted:
                refill()
            if not queue:
                break
            item_id, text, _ = queue.pop(0)
            future = executor.submit(backend.verify, text, piles.get(item_id, []))
            in_flight[future] = item_id
        if not in_flight:
            break
        finished, _ = wait(set(in_flight), timeout=interval, return_when=FIRST_COMPLETED)
        for future in finished:
            _collect(future, in_flight.pop(future), run.pk, outcome)
        done_count = len(outcome.results) + len(outcome.failures)
        if outcome.fatal and not stopping:
            stopping = True
            for future in in_flight:
                future.cancel()
        if done_count >= size and not stopping and not flush():
            stopping = True
            for future in in_flight:
                future.cancel()
        elif time.monotonic() - last_touch >= interval and not stopping:
            last_touch = time.monotonic()
            if not lease_touch(run.pk, owner):
                stopping = True
                outcome.stopped = True
                for future in in_flight:
                    future.cancel()
    fatal, stopped = outcome.fatal, outcome.stopped
    _write_chunk(run, owner, outcome)
    outcome.results.clear()
    outcome.failures.clear()
    outcome.fatal, outcome.stopped = fatal, stopped
    return outcome


def _write_chunk(run: JudgeRun, owner: str, outcome: ChunkOutcome) -> None:
    item_field = "canary_id" if run.kind == JudgeRun.Kind.CANARY else "claim_id"
    ids = list(outcome.results) + list(outcome.failures)
    if not ids:
        return
    with transaction.atomic():
        # The row lock serialises chunk writes of one run, so "already written" is exact.
        JudgeRun.objects.select_for_update().filter(pk=run.pk).first()
        written = set(
            JudgeVerdict.objects.filter(run_id=run.pk, **{f"{item_field}__in": ids}).values_list(
                item_field, flat=True
            )
        ) | set(
            JudgeFailure.objects.filter(run_id=run.pk, **{f"{item_field}__in": ids}).values_list(
                item_field, flat=True
            )
        )
        verdicts = [
            JudgeVerdict(
                run_id=run.pk,
                verdict=result.verdict,
                confidence=result.confidence,
                raw_response=result.raw,
                latency_ms=result.latency_ms,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                **{item_field: item_id},
            )
            for item_id, result in outcome.results.items()
            if item_id not in written
        ]
        failures = [
            JudgeFailure(run_id=run.pk, error=error, **{item_field: item_id})
            for item_id, error in outcome.failures.items()
            if item_id not in written
        ]
        JudgeVerdict.objects.bulk_create(verdicts, ignore_conflicts=True)
        JudgeFailure.objects.bulk_create(failures, ignore_conflicts=True)
        unparseable = sum(v.verdict == JudgeVerdictChoice.UNPARSEABLE for v in verdicts)
        JudgeRun.objects.filter(pk=run.pk).update(
            done=F("done") + len(verdicts) - unparseable,
            unparseable=F("unparseable") + unparseable,
            failed=F("failed") + len(failures),
            prompt_tokens=F("prompt_tokens") + sum(v.prompt_tokens for v in verdicts),
            completion_tokens=F("completion_tokens") + sum(v.completion_tokens for v in verdicts),
            latency_ms_total=F("latency_ms_total") + sum(v.latency_ms or 0.0 for v in verdicts),
            heartbeat_at=timezone.now(),
        )


def _finish(run: JudgeRun, owner: str, status: str, error: str = "") -> None:
    fresh = JudgeRun.objects.get(pk=run.pk)
    update = {"status": status, "finished_at": timezone.now(), "lease_owner": "", "error": error}
    if status == JudgeRun.Status.DONE:
        # What was actually processed: claims deleted mid-run are not "missing".
        update["total"] = fresh.done + fresh.failed + fresh.unparseable
        if run.kind == JudgeRun.Kind.CANARY:
            # Over parsed verdicts: an UNPARSEABLE reply is never counted as any verdict (as
            # metrics' canary figure does).
            judged = fresh.done
            passed = run.verdicts.filter(verdict=JudgeVerdictChoice.NOT_IN_PILE).count()
            update["canary_pass_rate"] = passed / judged if judged else None
    JudgeRun.objects.filter(pk=run.pk, lease_owner=owner, status=JudgeRun.Status.RUNNING).update(
        **update
    )


def run_execute(run_id: int, *, owner: str) -> str:
    """Work on a run until it is done, cancelled, failed, or its lease is lost.

    Returns what happened: "done", "cancelled", "failed", "lost" (another execution took the
    lease), "busy" (a live execution holds it: try later), or "finished" (nothing to do).
    """
    run = JudgeRun.objects.select_related("judge").filter(pk=run_id).first()
    if run is None or run.status not in LIVE:
        return "finished"
    if not lease_acquire(run_id, owner):
        run.refresh_from_db()
        return "busy" if run.status in LIVE else "finished"
    from judges.services import run_spec

    try:
        backend = backend_for_spec(run_spec(run))
    except JudgeConfigError as exc:
        _finish(run, owner, JudgeRun.Status.FAILED, str(exc))
        return "failed"
    concurrency = max(1, int(run.parameters.get("max_concurrency") or run.judge.max_concurrency))
    size = chunk_size(concurrency, backend=run.backend)
    try:
        with ThreadPoolExecutor(
            max_workers=concurrency, thread_name_prefix=f"judge-{run_id}"
        ) as pool:
            outcome = _judge_stream(run, owner, backend, pool, concurrency, size)
        if outcome.fatal:
            _finish(run, owner, JudgeRun.Status.FAILED, outcome.fatal)
            return "failed"
        if outcome.stopped:
            run.refresh_from_db()
            return "cancelled" if run.status == JudgeRun.Status.CANCELLED else "lost"
    except Exception as exc:
        logger.exception("judge run %s failed", run_id)
        _finish(run, owner, JudgeRun.Status.FAILED, f"{type(exc).__name__}: {exc}"[:500])
        raise
    _finish(run, owner, JudgeRun.Status.DONE)
    return "done"
