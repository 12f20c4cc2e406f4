"""Executing a pairwise run: every shared question of two systems, asked in both orders.

A pair is one question key (an answer's `question_id`, else its question text) that both
systems answered; when a system answered a question twice, its first answer (lowest id) is
the one shown. Each pair is asked twice, A's answer first ("a_first") and B's first
("b_first"), through the judge's OpenAI-compatible backend (`OpenAIBackend.pairwise`: the same
endpoint, caps, retries and key handling as a verify run). A verdict is written as it comes;
a rerun or a resumed run asks only for the (question, order) items with no stored verdict, and
an item whose call failed is asked again by the next execution (a failure is never a verdict).

The run holds the same lease as a verify run (judges/runner.py); a 401/403/404 fails the
whole run at once with the backend's scrubbed message.
"""

from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

from django.db.models import F

from annotate.models import Answer, Passage
from annotate.pairwise import question_key as annotate_question_key
from judges.backends import JudgeCallFailed, JudgeConfigError, backend_for_spec
from judges.models import JudgeRun, PairwiseVerdict
from judges.runner import ChunkOutcome, RunWork, lease_touch, run_concurrency, run_drive

logger = logging.getLogger(__name__)

ORDERS = (PairwiseVerdict.Order.A_FIRST, PairwiseVerdict.Order.B_FIRST)
RAW_KEPT = 500  # characters of a reply kept
TOUCH_EVERY = 16  # items between lease renewals


@dataclass(frozen=True)
class Side:
    answer_id: int
    question: str
    text: str


def question_key(answer: dict) -> str:
    """The question key that pairs two systems' answers: the analysts' pairwise queue's rule
    (`annotate.pairwise.question_key`), so a judge's verdicts and a human's preference on a
    question are about the same two answers."""
    return annotate_question_key(answer["question_id"], answer["question"])


def shared_pairs(*, system_a_id: int, system_b_id: int) -> dict[str, tuple[Side, Side]]:
    """{question key: (A's answer, B's answer)} for every question both systems answered."""
    sides: dict[int, dict[str, Side]] = {system_a_id: {}, system_b_id: {}}
    rows = (
        Answer.objects.filter(system_id__in=[system_a_id, system_b_id])
        .order_by("id")
        .values("id", "system_id", "question_id", "question", "text")
    )
    for row in rows:
        sides[row["system_id"]].setdefault(
            question_key(row), Side(row["id"], row["question"], row["text"])
        )
    a, b = sides[system_a_id], sides[system_b_id]
    return {key: (a[key], b[key]) for key in sorted(a.keys() & b.keys())}


def _piles(answer_ids: list[int]) -> dict[int, list[Passage]]:
    piles: dict[int, list[Passage]] = {}
    for passage in Passage.objects.filter(answer_id__in=answer_ids).order_by("answer_id", "rank"):
        piles.setdefault(passage.answer_id, []).append(passage)
    return piles


def pending_items(run: JudgeRun, pairs: dict) -> list[tuple[str, str]]:
    """(question key, order) items of `pairs` with no stored verdict in `run`."""
    stored = set(PairwiseVerdict.objects.filter(run=run).values_list("question_id", "order"))
    return [(key, order) for key in pairs for order in ORDERS if (key, order) not in stored]


def _ask(backend, pairs, piles, key: str, order: str):
    """The backend's verdict on one question's two answers, shown in `order`."""
    a, b = pairs[key]
    first, second = (a, b) if order == PairwiseVerdict.Order.A_FIRST else (b, a)
    return backend.pairwise(
        question=a.question,
        answer_1=first.text,
        pile_1=piles.get(first.answer_id, []),
        answer_2=second.text,
        pile_2=piles.get(second.answer_id, []),
    )


def _pairwise_backend(run: JudgeRun):
    """The run's backend; JudgeConfigError when it cannot judge pairs."""
    backend = backend_for_spec({**run.parameters, "backend": run.backend, "model": run.model})
    if not hasattr(backend, "pairwise"):
        raise JudgeConfigError(
            f"backend {run.backend!r} cannot judge pairs: use an OpenAI-compatible endpoint"
        )
    return backend


def _counts_reset(run: JudgeRun, total: int) -> None:
    """The run's counters from the verdicts already stored (a resumed run keeps them)."""
    stored = PairwiseVerdict.objects.filter(run=run)
    JudgeRun.objects.filter(pk=run.pk).update(
        total=total,
        done=stored.exclude(verdict=PairwiseVerdict.Choice.UNPARSEABLE).count(),
        unparseable=stored.filter(verdict=PairwiseVerdict.Choice.UNPARSEABLE).count(),
        failed=0,
    )


def _verdict_store(run: JudgeRun, key: str, order: str, result, a_id: int, b_id: int) -> None:
    """Store one order's verdict on one question (once) and count it on the run."""
    _, created = PairwiseVerdict.objects.get_or_create(
        run=run,
        question_id=key,
        order=order,
        defaults={
            "judge_id": run.judge_id,
            "system_a_id": a_id,
            "system_b_id": b_id,
            "verdict": result.verdict,
            "reason": result.reason[:200],
            "raw_response": result.raw[:RAW_KEPT],
            "latency_ms": result.latency_ms,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
        },
    )
    if created:
        counter = "unparseable" if result.verdict == PairwiseVerdict.Choice.UNPARSEABLE else "done"
        JudgeRun.objects.filter(pk=run.pk).update(
            **{counter: F(counter) + 1},
            prompt_tokens=F("prompt_tokens") + result.prompt_tokens,
            completion_tokens=F("completion_tokens") + result.completion_tokens,
            latency_ms_total=F("latency_ms_total") + result.latency_ms,
        )


def _pairwise_stream(
    run: JudgeRun, owner: str, backend, pairs, items, concurrency: int
) -> ChunkOutcome:
    """Ask every item of `items` (pending (question, order) pairs of `pairs`), `2 × concurrency` calls in flight, storing each verdict
    as it comes and renewing the lease every TOUCH_EVERY verdicts; a fatal error or a lost
    lease cancels the calls not started and ends the outcome early."""
    a_id, b_id = int(run.parameters["system_a"]), int(run.parameters["system_b"])
    piles = _piles([side.answer_id for pair in pairs.values() for side in pair])
    outcome = ChunkOutcome()
    written = 0
    with ThreadPoolExecutor(concurrency, thread_name_prefix=f"pairwise-{run.pk}") as pool:
        queue = iter(items)
        flying = {}

        def top_up() -> None:
            while len(flying) < 2 * concurrency:
                item = next(queue, None)
                if item is None:
                    return
                flying[pool.submit(_ask, backend, pairs, piles, *item)] = item

        top_up()
        while flying:
            finished, _ = wait(flying, return_when=FIRST_COMPLETED)
            for future in finished:
                key, order = flying.pop(future)
                try:
                    result = future.result()
                except JudgeConfigError as exc:
                    outcome.fatal = str(exc)
                    continue
                except JudgeCallFailed as exc:
                    logger.info("pairwise run %s: %s %s failed: %s", run.pk, key, order, exc)
                    JudgeRun.objects.filter(pk=run.pk).update(failed=F("failed") + 1)
                    continue
                _verdict_store(run, key, order, result, a_id, b_id)
                written += 1
                if written % TOUCH_EVERY == 0 and not lease_touch(run.pk, owner):
                    outcome.stopped = True
            if outcome.fatal or outcome.stopped:
                for future in flying:
                    future.cancel()
                flying.clear()
                break
            top_up()
    return outcome


def _pairwise_start(run: JudgeRun) -> RunWork:
    """The pairwise work of `run`: its backend, its shared pairs, its counters reset from the
    verdicts already stored."""
    backend = _pairwise_backend(run)
    a_id, b_id = int(run.parameters["system_a"]), int(run.parameters["system_b"])
    pairs = shared_pairs(system_a_id=a_id, system_b_id=b_id)
    items = pending_items(run, pairs)
    _counts_reset(run, 2 * len(pairs))
    concurrency = run_concurrency(run, backend)
    return RunWork(
        work=lambda owner: _pairwise_stream(run, owner, backend, pairs, items, concurrency)
    )


def pairwise_execute(run_id: int, *, owner: str) -> str:
    """Work on pairwise run `run_id` until every item has a verdict or a failure. Returns
    "done", "failed", "cancelled", "lost", "busy" or "finished" (as `runner.run_drive`)."""
    return run_drive(
        run_id,
        owner=owner,
        start=_pairwise_start,
        accepts=lambda run: run.kind == JudgeRun.Kind.PAIRWISE,
    )
