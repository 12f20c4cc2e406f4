"""10. Test-set verification throughput (issue 27): generated items verified per second.

10,000 synthetic items over 1,000 documents of three ~1,000-character passages (sentences of
fees, deadlines, ages and obligations with seeded figures); each item quotes one sentence of
one passage, and one in ten has a quote altered by one word (it must be found missing). Two
figures, each the median of `--runs` runs:

- quote verification: `testsets.services.verify.quotes_verify` on every item (each quote
  located verbatim in the passage it names by annotate/quotes.py, with its code-point offsets;
  the check every generated or edited item goes through). Target ≥ 10,000 items/s (issue 27).
- the whole item check: `ItemChecker.check` (shape, quotes, language, the offline baseline's
  entailment of the answer by its quotes, rapidfuzz near-duplicates against every kept
  question, quota); no target, shown so the cost of the entailment and dedupe is known. The
  questions carry no digit, so every kept one is compared (the dedupe's worst case);
  the offline baseline's sentence splitter (pysbd) is most of this figure's time.

No database: the checks are pure functions over the items' text.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # bench.runner imports this module: Row is imported where it is used
    from bench.runner.common import Context

NUMBER = 10
ITEMS = 10_000
DOCUMENTS = 1_000
VOCABULARY = [
    "refund",
    "fee",
    "deadline",
    "account",
    "guardian",
    "interest",
    "balance",
    "password",
    "staff",
    "member",
    "rate",
    "warranty",
    "defect",
    "delivery",
    "helmet",
    "site",
    "zone",
    "change",
    "departure",
    "cancellation",
    "card",
    "adult",
    "child",
    "claim",
    "notice",
    "payment",
    "transfer",
    "limit",
    "access",
    "record",
    "consent",
    "contract",
    "penalty",
    "insurance",
]
SENTENCES = (
    "A late fee of €{a} applies to changes made less than {b} hours before departure.",
    "Refund requests must be submitted within {a} days of the cancellation date.",
    "Customers under {a} may not open an account without a guardian.",
    "Interest of {a}.{b}% is charged on balances unpaid after {c} days.",
    "Passwords must be changed every {a} days and never shared with staff.",
    "Members aged {a} or over qualify for the reduced rate of €{b} a month.",
    "The warranty covers defects for {a} months from the date of delivery.",
    "Helmets must be worn on site at all times, including zone {a}.",
)


def _letters(number: int) -> str:
    word = ""
    while True:
        number, digit = divmod(number, 26)
        word += "abcdefghijklmnopqrstuvwxyz"[digit]
        if not number:
            return word


def _corpus(seed: int = 27):
    """(passages per document, items): each item quotes one sentence of one passage."""
    from testsets.services.verify import PassageView

    rng = random.Random(seed)
    documents, items, next_id = [], [], 1
    for _ in range(DOCUMENTS):
        passages = []
        for position in range(3):
            sentences = [
                rng.choice(SENTENCES).format(
                    a=rng.randint(2, 99), b=rng.randint(1, 48), c=rng.randint(10, 90)
                )
                for _ in range(9)
            ]
            passages.append((PassageView(next_id, position, " ".join(sentences)), sentences))
            next_id += 1
        documents.append(passages)
    for number in range(ITEMS):
        passages = documents[number % DOCUMENTS]
        passage, sentences = passages[rng.randrange(3)]
        quote = rng.choice(sentences)
        if number % 10 == 9:
            quote = quote.replace("must", "should", 1).replace("of", "at", 1)
        # No digit in a question, so every kept one is a candidate twin (the dedupe's worst
        # case); seeded words make them distinct, as a real test set's questions are.
        words = " ".join(rng.choice(VOCABULARY) for _ in range(7))
        question = f"What does the policy {_letters(number)} say on {words}?"
        item = {
            "question": question,
            "answer": quote,
            "quotes": [{"passage": passage.position, "text": quote}],
            "risk": "financial",
        }
        items.append((number % DOCUMENTS, [p for p, _ in passages], item))
    return items


def _rate(items, check) -> tuple[float, int]:
    started = time.perf_counter()
    failed = sum(check(document, passages, item) for document, passages, item in items)
    return len(items) / (time.perf_counter() - started), failed


def bench_testset(ctx: Context) -> list:
    from bench.runner.common import Row
    from judges.backends.baseline import BaselineBackend
    from testsets.services.verify import Dropped, ItemChecker, quotes_verify

    items = _corpus()
    quote_rates, item_rates, missing, dropped = [], [], 0, 0
    for run in range(ctx.runs):

        def quote_check(_document, passages, item):
            return isinstance(quotes_verify(item["quotes"], passages), Dropped)

        rate, missing = _rate(items, quote_check)
        quote_rates.append(rate)
        checker = ItemChecker(entailment=BaselineBackend(), quota=10**6, threshold=90.0)

        def item_check(document, passages, item, checker=checker):
            outcome = checker.check(
                item, document_key=document, document_language="en", passages=passages
            )
            return isinstance(outcome, Dropped)

        rate, dropped = _rate(items, item_check)
        item_rates.append(rate)
        ctx.say(f"testset run {run + 1}: {quote_rates[-1]:,.0f} quotes/s, {rate:,.0f} items/s")
    note = (
        f"{ITEMS:,} items over {DOCUMENTS:,} documents; {missing:,} altered quotes found "
        f"missing; the whole check dropped {dropped:,}"
    )
    return [
        Row(
            NUMBER,
            "test-set quote verification (items/s)",
            f"{ITEMS // 1000}k items",
            "items/s",
            quote_rates,
            "≥ 10,000",
            lambda v: v >= 10_000,
            note=note,
        ),
        Row(
            NUMBER,
            "test-set whole item check, with entailment and dedupe (items/s)",
            f"{ITEMS // 1000}k items",
            "items/s",
            item_rates,
            note=note,
        ),
    ]


# --------------------------------------------------------------------------------------------
# The system-under-test calls against the endpoint's C/L bound (issue 27).

SUT_QUESTIONS = 200
SUT_CONCURRENCY = 8
SUT_LATENCY_S = 0.1


def _rag_server(latency_s: float):
    """A native-contract RAG endpoint on loopback in a thread of this process: every answer
    after `latency_s`, three passages each. Returns (base_url, stop)."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(latency_s)
            question = body["question"]
            passages = [
                {"id": f"p{rank}", "title": f"Doc {rank}", "text": f"Passage {rank}: {question}"}
                for rank in (1, 2, 3)
            ]
            data = json.dumps({"answer": f"Answer to {question}", "passages": passages}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop():
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def _sut_once(base_url: str, run: int) -> float:
    """One run of SUT_QUESTIONS questions through `sut_run_execute`: questions per second."""
    import json
    import os
    from unittest import mock

    from django.conf import settings

    from annotate.models import Project
    from testsets.models import SutRun, TestItem, TestSet
    from testsets.services.sut import sut_run_execute, sut_run_start

    os.environ["FAITHAUDIT_BENCH_RAG_KEY"] = "bench-key"
    settings.FAITHAUDIT_RAG_ENDPOINTS = json.dumps(
        [
            {
                "name": "bench-rag",
                "base_url": base_url,
                "api_key_env": "FAITHAUDIT_BENCH_RAG_KEY",
                "max_concurrency": SUT_CONCURRENCY,
                "timeout_seconds": 10,
            }
        ]
    )
    project, _ = Project.objects.get_or_create(slug="bench-sut", defaults={"name": "bench sut"})
    test_set = TestSet.objects.create(
        project=project, name=f"bench-{run}-{time.time_ns()}", status=TestSet.Status.PUBLISHED
    )
    TestItem.objects.bulk_create(
        TestItem(
            test_set=test_set,
            external_id=f"q{i}",
            position=i,
            question=f"What is the fee for case {i}?",
            answer="truth",
            status=TestItem.Status.ACCEPTED,
        )
        for i in range(SUT_QUESTIONS)
    )
    started = time.perf_counter()
    with mock.patch("testsets.services.sut._enqueue"):  # run here, not by a worker
        made = sut_run_start(
            project=project, test_set=test_set, endpoint_name="bench-rag", system_name="bench"
        )
    sut_run_execute(run_id=made.pk)
    elapsed = time.perf_counter() - started
    done = SutRun.objects.get(pk=made.pk)
    if done.done != SUT_QUESTIONS:
        raise RuntimeError(f"the SUT run answered {done.done} of {SUT_QUESTIONS}")
    return SUT_QUESTIONS / elapsed


def bench_sut(ctx: Context) -> list:
    """System-under-test calls per second as a share of C/L (C = the endpoint's
    max_concurrency, L its latency): the thread pool of `sut_run_execute` with every answer
    and its pile written, against a loopback endpoint answering after L."""
    from bench.runner.common import Row

    bound = SUT_CONCURRENCY / SUT_LATENCY_S
    base_url, stop = _rag_server(SUT_LATENCY_S)
    shares = []
    try:
        for run in range(ctx.runs):
            rate = _sut_once(base_url, run)
            shares.append(100 * rate / bound)
            ctx.say(f"sut run {run + 1}: {rate:.1f} questions/s ({shares[-1]:.0f}% of C/L)")
    finally:
        stop()
    return [
        Row(
            NUMBER,
            f"system under test: questions/s as share of C/L ({bound:.0f}/s)",
            f"{SUT_QUESTIONS} questions, C = {SUT_CONCURRENCY}, L = {SUT_LATENCY_S:g} s",
            "%",
            shares,
            "≥ 80%",
            lambda v: v >= 80,
        )
    ]


GEN_DOCUMENTS = 1_000
GEN_CONCURRENCY = 8
GEN_LATENCY_S = 0.1


def _generation_once(base_url: str, run: int) -> tuple[float, int]:
    """One LLM generation over GEN_DOCUMENTS documents: (documents per second, calls)."""
    import json
    from unittest import mock

    from django.conf import settings
    from django.contrib.auth import get_user_model

    from annotate.models import Project
    from testsets.models import Document, DocumentPassage, GenerationJob
    from testsets.services.generate import generation_execute, generation_start

    settings.FAITHAUDIT_LLM_ENDPOINTS = json.dumps(
        [
            {
                "name": "bench-gen",
                "base_url": base_url,
                "max_concurrency": GEN_CONCURRENCY,
                "timeout_seconds": 10,
                "models": ["m"],
            }
        ]
    )
    settings.FAITHAUDIT_LLM_ENDPOINTS_FILE = ""
    project, created = Project.objects.get_or_create(
        slug="bench-generation", defaults={"name": "bench generation"}
    )
    if created or not Document.objects.filter(project=project).exists():
        text = "A refund must be claimed within 30 days. The fee is 5 EUR."
        documents = Document.objects.bulk_create(
            Document(project=project, external_id=f"d{i}", title=f"D{i}", text=text, sha256=f"{i}")
            for i in range(GEN_DOCUMENTS)
        )
        DocumentPassage.objects.bulk_create(
            DocumentPassage(document=d, position=0, start=0, end=len(text), text=text)
            for d in documents
        )
    user, _ = get_user_model().objects.get_or_create(username="bench-generation")
    with mock.patch("testsets.services.generate._enqueue"):  # run here, not by a worker
        job = generation_start(
            project=project,
            user=user,
            name=f"gen-{run}-{time.time_ns()}"[:80],
            kind=GenerationJob.Kind.LLM,
            endpoint_name="bench-gen",
            model="m",
        )
    started = time.perf_counter()
    generation_execute(job_id=job.pk)
    elapsed = time.perf_counter() - started
    job.refresh_from_db()
    if job.done != GEN_DOCUMENTS:
        raise RuntimeError(f"generation did {job.done} of {GEN_DOCUMENTS} documents: {job.error}")
    return GEN_DOCUMENTS / elapsed, int(job.usage.get("calls", 0))


def bench_generation(ctx: Context) -> list:
    """LLM generation: documents per second as a share of C/L, every reply verified and its
    outcome written (the loopback endpoint's replies are not the JSON asked for, so each
    document's one candidate is dropped as malformed: the calls and writes still happen)."""
    from bench.runner.common import Row
    from tests.llm_server import start_server

    bound = GEN_CONCURRENCY / GEN_LATENCY_S
    base_url, ctl = start_server(GEN_LATENCY_S, transport="asyncio")
    shares = []
    try:
        for run in range(ctx.runs):
            rate, calls = _generation_once(base_url, run)
            shares.append(100 * rate / bound)
            ctx.say(
                f"generation run {run + 1}: {rate:.1f} documents/s ({shares[-1]:.0f}% of C/L), "
                f"{calls} calls"
            )
    finally:
        ctl.stop() if hasattr(ctl, "stop") else None
    return [
        Row(
            NUMBER,
            f"test-set generation (LLM): documents/s as share of C/L ({bound:.0f}/s)",
            f"{GEN_DOCUMENTS:,} documents, C = {GEN_CONCURRENCY}, L = {GEN_LATENCY_S:g} s",
            "%",
            shares,
            "≥ 80%",
            lambda v: v >= 80,
        )
    ]
