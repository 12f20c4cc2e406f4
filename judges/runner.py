"""Running a judge over a run's items: the engine behind the `run_judge` Celery task.

Why it is safe to deliver the task twice, or to kill its worker at any moment:

- *Remaining work is read from the database*: an item (claim or canary) is handed out only if
  the run has neither a verdict nor a recorded failure for it. Verdicts are written per chunk
  with `bulk_create(ignore_conflicts=True)` under the unique (run, claim) constraint, so a
  claim gets one verdict per run whatever happens, and a finished claim is never sent to the
  endpoint again. Chunks are kept modest (4 × max_concurrency, 16–128 items), so a killed
  worker loses at most one chunk's calls plus those in flight: their claims have no verdict
  yet, so the resumed run calls the endpoint for them again. That repeat is accepted as the
  price of writing in batches instead of a transaction per verdict.
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
transaction that locks the run row (reading the lease under that lock), inserts the verdicts
and failures in bulk and updates the counters with F expressions. Endpoint calls run
`max_concurrency` at a time: on one asyncio event loop when the backend has `averify` (the
OpenAI-compatible one), else in a thread pool (the offline baseline).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from queue import Empty, SimpleQueue

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import Claim
from judges.backends import JudgeCallFailed, JudgeConfigError, VerifyResult, backend_for_spec
from judges.backends.registry import backend_kind
from judges.endpoint_share import endpoint_share, run_wish
from judges.models import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVerdictChoice
from judges.selectors import piles_for_items, run_items_remaining

logger = logging.getLogger(__name__)

LIVE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)


def run_spec(run: JudgeRun) -> dict:
    """The frozen instrument of a run, as `backend_for_spec` wants it."""
    return {
        **run.parameters,
        "backend": run.backend,
        "model": run.model,
        "verify_prompt": run.prompt_text,
    }


def lease_seconds() -> float:
    return float(os.environ.get("JUDGE_RUN_LEASE_SECONDS", "60"))


def _extra_columns(backend: str, extra: dict | None) -> dict:
    """The JudgeVerdict columns the backend declares (`extra_verdict_columns`), from its
    result's `extra`; anything else it sent is not stored."""
    if not extra:
        return {}
    return {k: extra[k] for k in backend_kind(backend).extra_verdict_columns if k in extra}


def chunk_size(max_concurrency: int, *, backend: str = "openai") -> int:
    """Items per chunk, as the backend declares (`Declared.chunk_size`: small for an endpoint,
    so a killed worker loses at most one chunk of paid calls; large for the offline baseline);
    JUDGE_CHUNK_SIZE in the environment overrides it."""
    configured = os.environ.get("JUDGE_CHUNK_SIZE")
    if configured:
        return max(1, int(configured))
    return backend_kind(backend).chunk_size(max_concurrency)


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


class _LoopCalls:
    """A backend's `averify` calls on an asyncio event loop in a thread of its own.

    All `max_concurrency` calls in flight share one thread and one connection pool (the
    backend's async client), instead of a thread and a client each: no GIL hand-offs between
    dozens of threads, and no pool lock to queue on. The Django side (reads, writes, the
    lease) stays on the calling thread; futures cross over with `run_coroutine_threadsafe`.
    """

    def __init__(self, backend, name: str):
        self.backend = backend
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, text: str, pile) -> Future:
        return asyncio.run_coroutine_threadsafe(self.backend.averify(text, pile), self.loop)

    def close(self) -> None:
        async def shut() -> None:
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            await self.backend.aclose()

        try:
            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=30)
            if not self.loop.is_running():
                self.loop.close()


class _ThreadCalls:
    """A backend's blocking `verify` calls in a pool of `concurrency` threads (the offline
    baseline, or a backend without `averify`)."""

    def __init__(self, backend, concurrency: int, name: str):
        self.backend = backend
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=name)

    def submit(self, text: str, pile) -> Future:
        return self.pool.submit(self.backend.verify, text, pile)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _calls_for(backend, concurrency: int, name: str):
    if hasattr(backend, "averify"):
        return _LoopCalls(backend, name)
    return _ThreadCalls(backend, concurrency, name)


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


class _Window:
    """The calls in flight: the next call starts from the completion of the last one, in the
    thread where that completion happens (the event loop, or a pool thread), not after a round
    trip through the run's thread. Under load every thread wake-up waits for a CPU, and that
    round trip put two more of them between each reply and the next call.

    The run's thread feeds items, drains `finished` and writes each `size` of them; a cancel
    or a lost lease is seen at that write. While a write is due or under way, fewer than
    `concurrency` further calls may start (`size + concurrency - 1` unwritten completions at
    most), so the endpoint's slots do not sit empty for the length of a database write, and a
    cancel still stops new calls within one write and fewer than `concurrency` calls (none
    with one call at a time: then a write comes strictly between chunks).
    """

    def __init__(self, calls, concurrency: int, size: int):
        self.calls = calls
        self.concurrency = concurrency
        self.size = size
        self.lock = threading.RLock()  # RLock: a future done at once runs its callback here
        self.pending: deque[tuple[int, str, list]] = deque()
        self.in_flight: dict[Future, int] = {}
        self.unwritten = 0  # completions the run's thread has not written yet
        self.stopped = False
        self.finished: SimpleQueue[tuple[int, Future]] = SimpleQueue()

    def feed(self, items) -> None:
        with self.lock:
            self.pending.extend(items)
            self._top_up()

    def written(self, count: int, concurrency: int | None = None) -> None:
        """`count` completions were written: that many more calls may start, up to
        `concurrency` in flight when it is given (the run's share of its endpoint now; calls
        above a lowered share finish, none starts until the window is under it)."""
        with self.lock:
            self.unwritten -= count
            if concurrency is not None:
                self.concurrency = concurrency
            self._top_up()

    def stop(self, *, cancel: bool) -> None:
        """Start no more calls; `cancel` also abandons those in flight (a fatal error)."""
        with self.lock:
            self.stopped = True
            self.pending.clear()
            if cancel:
                for future in list(self.in_flight):
                    future.cancel()

    def busy(self) -> bool:
        with self.lock:
            return bool(self.in_flight)

    def pending_count(self) -> int:
        with self.lock:
            return len(self.pending)

    def _top_up(self) -> None:
        while (
            not self.stopped
            and self.pending
            and len(self.in_flight) < self.concurrency
            and self.unwritten < self.size + self.concurrency - 1
        ):
            item_id, text, pile = self.pending.popleft()
            future = self.calls.submit(text, pile)
            self.in_flight[future] = item_id
            future.add_done_callback(self._done)

    def _done(self, future: Future) -> None:
        with self.lock:
            item_id = self.in_flight.pop(future, None)
            if item_id is None:
                return
            self.unwritten += 1
            self.finished.put((item_id, future))
            self._top_up()


def _judge_stream(run, owner, calls, concurrency: int, size: int, *, share) -> ChunkOutcome:
    """Keep up to `concurrency` calls in flight over the run's remaining items; write every
    `size`. `share()` is how many the run may keep now (its share of its endpoint's cap, at
    most `concurrency`), taken at the start and after each write: the calls follow it.

    A sliding window (`_Window`), not chunk barriers: a new call starts as soon as one
    finishes, so the endpoint never waits for a chunk's slowest call (measured: chunk barriers
    left the worker idle ~40% of a run). Results are written each time `size` of them have
    finished, and the lease is checked in that same transaction, so a cancel or a lost lease
    stops new calls within one write; calls already in flight then finish and are written too
    (they are paid for), except after a fatal error, when they are cancelled. A killed worker
    loses the calls in flight and the finished but unwritten ones (at most `size` +
    `concurrency`): their items have no verdict, so the resumed run calls the endpoint for
    them again. That repeat is the price of writing in batches; an item whose verdict was
    written is never called again.
    Returns the last outcome written (with `fatal` / `stopped` set if the run must end).
    """
    after = 0
    exhausted = False
    window = _Window(calls, share(), size)
    outcome = ChunkOutcome()
    sent: dict[int, str] = {}  # item id -> the text sent, until its result is written
    interval = max(0.2, lease_seconds() / 3)
    last_touch = time.monotonic()

    def refill() -> None:
        nonlocal after, exhausted
        items = run_items_remaining(run=run, after_id=after, limit=size)
        if not items:
            exhausted = True
            return
        after = items[-1][0]
        sent.update((item_id, text) for item_id, text, _ in items)
        piles = piles_for_items(run=run, items=items)
        window.feed([(item_id, text, piles.get(item_id, [])) for item_id, text, _ in items])

    def flush() -> bool:
        """Write what finished; False when the run must stop (cancelled, lost, or fatal)."""
        nonlocal outcome, last_touch
        owned = _write_chunk(run, owner, outcome, sent)
        finished = outcome
        outcome = ChunkOutcome()
        last_touch = time.monotonic()
        if finished.fatal:
            outcome.fatal = finished.fatal
            return False
        if not owned:
            outcome.stopped = True
            return False
        window.written(len(finished.results) + len(finished.failures), share())
        return True

    stopping = False
    while True:
        # Keep a window's worth of items waiting, so a finished call always has a next one.
        while not stopping and not exhausted and window.pending_count() < concurrency:
            refill()
        if not window.busy() and window.finished.empty():
            break
        done = []
        with contextlib.suppress(Empty):
            done.append(window.finished.get(timeout=interval))
            while True:
                done.append(window.finished.get_nowait())
        for item_id, future in done:
            _collect(future, item_id, run.pk, outcome)
        done_count = len(outcome.results) + len(outcome.failures)
        if outcome.fatal and not stopping:
            stopping = True
            window.stop(cancel=True)
        if done_count >= size and not stopping and not flush():
            stopping = True
            window.stop(cancel=bool(outcome.fatal))
        elif time.monotonic() - last_touch >= interval and not stopping:
            last_touch = time.monotonic()
            if not lease_touch(run.pk, owner):
                stopping = True
                outcome.stopped = True
                window.stop(cancel=False)
    fatal, stopped = outcome.fatal, outcome.stopped
    _write_chunk(run, owner, outcome, sent)
    outcome.results.clear()
    outcome.failures.clear()
    outcome.fatal, outcome.stopped = fatal, stopped
    return outcome


def _write_chunk(
    run: JudgeRun, owner: str, outcome: ChunkOutcome, sent: dict[int, str] | None = None
) -> bool:
    """Write the finished items of `outcome` and add them to the run's counters, in one
    transaction; True if `owner` still holds the run's lease (it is not cancelled, and no
    other execution took it over), read under the same row lock. An empty outcome writes
    nothing and reads nothing (True).

    `sent` maps item ids to the text the endpoint judged. A lead may edit a claim while its
    call is in flight: the claims are read under a row lock (an edit holds the same lock while
    it retires the verdicts on the old text), and a verdict whose claim's text changed is
    written stale, with the text it judged, so it counts nowhere; a verdict whose claim was
    deleted meanwhile is dropped."""
    item_field = "canary_id" if run.kind == JudgeRun.Kind.CANARY else "claim_id"
    ids = list(outcome.results) + list(outcome.failures)
    if not ids:
        return True
    with transaction.atomic():
        # The row lock serialises chunk writes of one run, so "already written" is exact.
        lease = (
            JudgeRun.objects.select_for_update()
            .filter(pk=run.pk)
            .values_list("lease_owner", "status")
            .first()
        )
        owned = lease == (owner, JudgeRun.Status.RUNNING)
        sent = {} if sent is None else sent
        judged_text = {item_id: sent.pop(item_id, None) for item_id in ids}
        current = None
        if item_field == "claim_id":
            current = dict(
                Claim.objects.select_for_update(no_key=True)
                .filter(pk__in=sorted(ids))
                .order_by("pk")
                .values_list("pk", "text")
            )
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
                **_extra_columns(run.backend, result.extra),
                **_staleness(item_id, judged_text, current),
                **{item_field: item_id},
            )
            for item_id, result in outcome.results.items()
            if item_id not in written and (current is None or item_id in current)
        ]
        failures = [
            JudgeFailure(run_id=run.pk, error=error, **{item_field: item_id})
            for item_id, error in outcome.failures.items()
            if item_id not in written and (current is None or item_id in current)
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
    return owned


def _staleness(item_id: int, judged_text: dict, current: dict | None) -> dict:
    """The stale fields of a claim's verdict: stale when the claim's text is no longer the
    text that was judged."""
    judged = judged_text.get(item_id)
    if current is None or judged is None or current[item_id] == judged:
        return {}
    return {"stale": True, "stale_claim_text": judged}


def run_finish(run_id: int, owner: str, status: str, error: str = "", **fields) -> None:
    """End a run (verify, canary, citation or pairwise) as `status`, only while `owner` still
    holds its lease and it is running (a lost lease finishes nothing); `fields` are further
    columns to write with it (the totals a verify run settles on)."""
    JudgeRun.objects.filter(pk=run_id, lease_owner=owner, status=JudgeRun.Status.RUNNING).update(
        status=status, finished_at=timezone.now(), lease_owner="", error=error, **fields
    )


def _finish(run: JudgeRun, owner: str, status: str, error: str = "") -> None:
    """End a verify, canary or citation run, settling its totals when it is done."""
    fresh = JudgeRun.objects.get(pk=run.pk)
    update = {}
    if status == JudgeRun.Status.DONE:
        # What was actually processed: claims deleted mid-run are not "missing".
        update["total"] = fresh.done + fresh.failed + fresh.unparseable
        if run.kind == JudgeRun.Kind.CANARY:
            # Over parsed verdicts: an UNPARSEABLE reply is never counted as any verdict (as
            # metrics' canary figure does).
            judged = fresh.done
            passed = run.verdicts.filter(verdict=JudgeVerdictChoice.NOT_IN_PILE).count()
            update["canary_pass_rate"] = passed / judged if judged else None
    run_finish(run.pk, owner, status, error, **update)


def _plain_finish(run: JudgeRun, owner: str, status: str, error: str = "") -> None:
    run_finish(run.pk, owner, status, error)


@dataclass
class RunWork:
    """What one kind of run does inside `run_drive`: `work(owner)` judges the remaining items
    and returns the outcome (`fatal` / `stopped` set if the run must end early); `close()`
    releases what the work held, after the run's end is written."""

    work: Callable[[str], ChunkOutcome]
    close: Callable[[], None] = lambda: None


def run_drive(
    run_id: int,
    *,
    owner: str,
    start: Callable[[JudgeRun], RunWork],
    finish: Callable[[JudgeRun, str, str, str], None] = _plain_finish,
    accepts: Callable[[JudgeRun], bool] = lambda run: True,
) -> str:
    """The one run loop of every kind of run: fetch the run, take its lease, `start` the
    per-kind work (a JudgeConfigError there fails the run), do it, and end the run through
    `finish` (`run_finish` underneath) as done, failed, or not at all when it was cancelled
    or its lease lost. An unexpected error fails the run and is raised again.

    Returns "done", "cancelled", "failed", "lost" (another execution took the lease), "busy"
    (a live execution holds it: try later), or "finished" (nothing to do, or a run `accepts`
    refuses).
    """
    run = JudgeRun.objects.select_related("judge").filter(pk=run_id).first()
    if run is None or run.status not in LIVE or not accepts(run):
        return "finished"
    if not lease_acquire(run_id, owner):
        run.refresh_from_db()
        return "busy" if run.status in LIVE else "finished"
    try:
        job = start(run)
    except JudgeConfigError as exc:
        finish(run, owner, JudgeRun.Status.FAILED, str(exc))
        return "failed"
    try:
        try:
            outcome = job.work(owner)
            if outcome.fatal:
                finish(run, owner, JudgeRun.Status.FAILED, outcome.fatal)
                return "failed"
            if outcome.stopped:
                run.refresh_from_db()
                return "cancelled" if run.status == JudgeRun.Status.CANCELLED else "lost"
        except Exception as exc:
            logger.exception("judge run %s failed", run_id)
            finish(run, owner, JudgeRun.Status.FAILED, f"{type(exc).__name__}: {exc}"[:500])
            raise
        finish(run, owner, JudgeRun.Status.DONE, "")
        return "done"
    finally:
        job.close()  # after the run's end is written: closing connections is not its work


def run_concurrency(run: JudgeRun, backend, *, shared: bool = True) -> int:
    """Calls in flight for `run`: what it (or its judge) asked for, capped by the operator's
    endpoint when the backend has one, and (`shared`) its share of that cap among the runs
    calling the endpoint now (judges/endpoint_share.py)."""
    endpoint = getattr(backend, "endpoint", None)
    if endpoint is None:
        return run_wish(run)
    if shared:
        return endpoint_share(run, endpoint, lease_seconds=lease_seconds())
    return run_wish(run, endpoint.max_concurrency)  # the operator's cap, whatever it asked for


def _verify_start(run: JudgeRun) -> RunWork:
    backend = backend_for_spec(run_spec(run))
    most = run_concurrency(run, backend, shared=False)  # the run's own wish: the pool's size
    size = chunk_size(most, backend=run.backend)
    calls = _calls_for(backend, most, name=f"judge-{run.pk}")

    def share() -> int:  # taken again at each chunk written: runs come and go
        return run_concurrency(run, backend)

    return RunWork(
        work=lambda owner: _judge_stream(run, owner, calls, most, size, share=share),
        close=calls.close,
    )


def run_execute(run_id: int, *, owner: str) -> str:
    """Work on a verify, canary or citation run until it is done, cancelled, failed, or its
    lease is lost; returns what happened (as `run_drive`)."""
    return run_drive(run_id, owner=owner, start=_verify_start, finish=_finish)
