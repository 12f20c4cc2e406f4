"""Running the system under test over a published test set (issue 27, item 4).

`sut_run_start` makes the run and one SutRunItem per item (unique per (run, item)), then hands
it to a worker (or, without a broker, runs it now). `sut_run_execute` answers the pending
items, up to the endpoint's `max_concurrency` calls at a time and its `min_interval_seconds`
apart: an item already answered or failed is never called again, and the answer
is written in the same transaction that moves its row from pending (re-read under
select_for_update), so a run killed mid-way and started again resumes where it stopped and
never writes an answer twice. Each response becomes an annotate Answer with its pile, in the
endpoint's order, under the run's system; failures are listed per item, never silent, and
their text names the field or the HTTP status, never a key or the endpoint's URL.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from types import SimpleNamespace

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.bulk_insert import RowsInserter
from annotate.models import Project, System
from annotate.services.answers import answer_next_position, answers_with_piles_insert
from annotate.services.projects import project_answers_recount
from testsets.models import SutRun, SutRunItem, TestItem, TestSet
from testsets.rag_endpoints import (
    REFERENCE,
    RagEndpoint,
    ResponseInvalid,
    native_response_parse,
    openai_response_parse,
    rag_endpoint_get,
)
from testsets.reference import reference_answer


class Retryable(Exception):
    """A 5xx, a timeout or a dropped connection: worth another try after a pause."""


def sut_run_start(
    *,
    project: Project,
    test_set: TestSet,
    endpoint_name: str,
    system_name: str,
    system_version: str = "",
) -> SutRun:
    """Create the run over the published set's accepted items (its questions; pending and
    rejected items stay out, as the set's card says) and start it."""
    if test_set.project_id != project.pk:
        raise ValueError("the test set is not in this project")
    if test_set.status != TestSet.Status.PUBLISHED:
        raise ValueError("only a published test set can be run: publish it first")
    if endpoint_name != REFERENCE:
        rag_endpoint_get(endpoint_name)  # EndpointNotDeclared names the choices
    if not system_name.strip():
        raise ValueError("give the system's name")
    items = list(
        test_set.items.filter(status=TestItem.Status.ACCEPTED).values_list("pk", flat=True)
    )
    if not items:
        raise ValueError("the test set has no accepted item: nothing to ask")
    with transaction.atomic():
        run = SutRun.objects.create(
            project=project,
            test_set=test_set,
            endpoint=endpoint_name,
            system_name=system_name.strip(),
            system_version=system_version.strip(),
            total=len(items),
        )
        SutRunItem.objects.bulk_create([SutRunItem(run=run, item_id=pk) for pk in items])
    _enqueue(run.pk)
    run.refresh_from_db()
    return run


def _enqueue(run_id: int) -> None:
    task = current_app.tasks["testsets.run_sut"]
    if current_app.conf.task_always_eager:
        task.delay(run_id)
    else:  # inside a caller's transaction a worker could look for the run before it exists
        transaction.on_commit(lambda: task.delay(run_id))


def sut_run_resume(*, run: SutRun) -> bool:
    """Hand a run that a dead worker left running (or interrupted) to a worker again; its
    answered and failed items are kept and never called again. False when it is done."""
    if run.status == SutRun.Status.DONE:
        return False
    SutRun.objects.filter(pk=run.pk).update(status=SutRun.Status.INTERRUPTED)
    _enqueue(run.pk)
    return True


def _post(url: str, payload: dict, key: str, timeout: float) -> object:
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Bearer {key}"} if key else {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - declared URL
            raw = response.read(8 * 1024 * 1024)
    except urllib.error.HTTPError as exc:
        if exc.code >= 500 or exc.code == 429:
            raise Retryable(f"HTTP {exc.code}") from None
        raise ResponseInvalid(f"HTTP {exc.code}") from None
    except TimeoutError:
        raise Retryable("timed out") from None
    except (urllib.error.URLError, ConnectionError, OSError) as exc:
        if isinstance(getattr(exc, "reason", None), TimeoutError):
            raise Retryable("timed out") from None
        raise Retryable(f"connection failed ({type(exc).__name__})") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise ResponseInvalid("the response is not JSON") from None


def _call_once(rag: RagEndpoint, item: TestItem, project_id: int) -> tuple[str, list[dict]]:
    if rag is None:
        return native_response_parse(
            reference_answer(project_id=project_id, question=item.question)
        )
    endpoint = rag.endpoint
    key = endpoint.api_key()
    if key is None:
        raise ResponseInvalid("the endpoint's key variable is not set in this worker")
    if rag.contract == "openai":
        payload = {
            "model": endpoint.models[0] if endpoint.models else "",
            "messages": [{"role": "user", "content": item.question}],
        }
        body = _post(
            f"{endpoint.base_url}/chat/completions", payload, key, endpoint.timeout_seconds
        )
        return openai_response_parse(body)
    payload = {"question": item.question, "history": [], "id": item.external_id}
    return native_response_parse(_post(endpoint.base_url, payload, key, endpoint.timeout_seconds))


class _Pacer:
    """The endpoint's rate cap across every thread of a run: calls start at least
    `min_interval_seconds` apart, whichever thread makes them."""

    def __init__(self, interval: float):
        self.interval = interval
        self.lock = threading.Lock()
        self.next_at = 0.0

    def wait(self) -> None:
        if self.interval <= 0:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_at)
            self.next_at = start + self.interval
        time.sleep(max(0.0, start - now))


def _call(rag, row: SutRunItem, project_id: int, pacer: _Pacer) -> tuple[str, list[dict]]:
    """Call with bounded retries and exponential backoff; the attempts are counted on the row."""
    retries = rag.endpoint.max_retries if rag else 0
    backoff = float(getattr(settings, "FAITHAUDIT_SUT_BACKOFF_SECONDS", 0.5))
    for attempt in range(retries + 1):
        pacer.wait()
        row.attempts += 1
        try:
            return _call_once(rag, row.item, project_id)
        except Retryable as exc:
            if attempt == retries:
                raise ResponseInvalid(f"{exc} after {row.attempts} attempts") from None
            time.sleep(min(backoff * 2**attempt, 30.0))
    raise AssertionError("unreachable")


def _system(run: SutRun) -> System:
    """The run's system, looked up once per execution (cached on the run object)."""
    if getattr(run, "_system", None) is None:
        run._system, _ = System.objects.get_or_create(
            project_id=run.project_id, name=run.system_name, version=run.system_version
        )
    return run._system


def _answer_of(run: SutRun, item: TestItem, text: str, pile: list[dict]) -> SimpleNamespace:
    """The answer a response becomes, in the shape annotate's answer-with-pile write takes."""
    return SimpleNamespace(
        external_id=f"sut{run.pk}-{item.external_id}"[:200],
        question=item.question,
        text=text,
        risk_category=item.risk_category,
        answerable=None,
        abstention=False,
        reference=item.answer,
        metadata={"sut_run": run.pk, "test_set": run.test_set_id},
        question_id=item.external_id,
        pile=[
            SimpleNamespace(source_id=p["id"][:300], title=p["title"][:500], text=p["text"])
            for p in pile
        ],
    )


def _settle(run: SutRun, settled: list[tuple[SutRunItem, object, str]]) -> None:
    """Write a batch of outcomes in one transaction: each row re-read under its lock, and only
    a row still pending is written (another execution may have settled it: nothing twice);
    the answers with their piles in one insert (annotate's answers_with_piles_insert)."""
    with transaction.atomic():
        locked = {
            row.pk: row
            for row in SutRunItem.objects.select_for_update().filter(
                pk__in=[row.pk for row, _, _ in settled], state=SutRunItem.State.PENDING
            )
        }
        fresh = [(row, result, error) for row, result, error in settled if row.pk in locked]
        answered = [(row, result) for row, result, _ in fresh if result is not None]
        answer_ids, _ = answers_with_piles_insert(
            RowsInserter(),
            project_id=run.project_id,
            answers=[_answer_of(run, row.item, *result) for row, result in answered],
            first_position=answer_next_position(project_id=run.project_id),
            system_ids=[_system(run).pk] * len(answered),
        )
        ids = dict(zip([row.pk for row, _ in answered], answer_ids, strict=True))
        updates = []
        for row, result, error in fresh:
            update = locked[row.pk]
            update.attempts = row.attempts
            if result is not None:
                update.answer_id, update.state = ids[row.pk], SutRunItem.State.ANSWERED
            else:
                update.state, update.error = SutRunItem.State.FAILED, error[:2000]
            updates.append(update)
        SutRunItem.objects.bulk_update(updates, ["attempts", "answer", "state", "error"])
        # These rows have just left pending under their locks: done grows by them, no count.
        SutRun.objects.filter(pk=run.pk).update(done=F("done") + len(updates))


def _outcome(rag, row: SutRunItem, project_id: int, pacer: _Pacer):
    """(answer text and pile, "") or (None, why it failed): what `_settle` writes."""
    try:
        return _call(rag, row, project_id, pacer), ""
    except ResponseInvalid as exc:
        return None, str(exc)


def _outcomes(rag, rows: list[SutRunItem], project_id: int):
    """Each row with its outcome, as the calls finish: up to the endpoint's `max_concurrency`
    calls in flight from a thread pool (the built-in reference answers from the database, one
    at a time). Only the calls run in the threads; every write stays on the caller's."""
    pacer = _Pacer(rag.min_interval_seconds if rag else 0.0)
    concurrency = max(1, rag.endpoint.max_concurrency) if rag else 1
    if concurrency == 1 or len(rows) <= 1:
        for row in rows:
            yield row, _outcome(rag, row, project_id, pacer)
        return
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sut") as pool:
        futures = {pool.submit(_outcome, rag, row, project_id, pacer): row for row in rows}
        for future in as_completed(futures):
            yield futures[future], future.result()


def sut_run_execute(*, run_id: int, limit: int | None = None) -> str:
    """Answer the run's pending items (at most `limit`, for tests of a killed run)."""
    run = SutRun.objects.get(pk=run_id)
    rag = None if run.endpoint == REFERENCE else rag_endpoint_get(run.endpoint)
    SutRun.objects.filter(pk=run.pk).update(status=SutRun.Status.RUNNING)
    pending = SutRunItem.objects.filter(run=run, state=SutRunItem.State.PENDING).select_related(
        "item"
    )
    rows = list(
        pending.order_by("id")[: limit + 1] if limit is not None else pending.order_by("id")
    )
    interrupted = limit is not None and len(rows) > limit
    batch: list = []
    size = max(1, rag.endpoint.max_concurrency) if rag else 1
    for row, (result, error) in _outcomes(
        rag, rows[:limit] if interrupted else rows, run.project_id
    ):
        batch.append((row, result, error))
        if len(batch) >= size:  # a killed worker loses at most one batch of calls
            _settle(run, batch)
            batch = []
    if batch:
        _settle(run, batch)
    if interrupted:
        SutRun.objects.filter(pk=run.pk).update(status=SutRun.Status.INTERRUPTED)
        return "interrupted"
    project_answers_recount(project_ids=[run.project_id])
    SutRun.objects.filter(pk=run.pk).update(status=SutRun.Status.DONE, finished_at=timezone.now())
    return "done"
