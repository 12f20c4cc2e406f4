"""Generating a test set from the project's documents (issue 27, item 2), as a Celery job.

`generation_estimate` is what the start page shows before anything is spent: documents ×
prompts (one call per document) and the tokens that takes, priced where the endpoint declares
prices. `generation_start` makes a draft TestSet (the next version of its name) and its
GenerationJob and hands the job to a worker by the task's registered name
(`testsets.generate_testset`). `generation_execute` takes the documents in id order; for each,
the generator's candidates (offline rules, or the LLM's JSON) are verified one by one
(testsets/services/verify.py) and the kept items, their quotes, the drops (with reason and
detail), the counts and `done` are written in one transaction, so a job taken up again after
a worker died carries on from the first document not done, with nothing twice.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.db import transaction
from django.db.models import Max, Sum
from django.db.models.functions import Length
from django.shortcuts import get_object_or_404
from django.utils import timezone

from annotate.models import Project
from judges.backends import backend_for_spec
from judges.backends.base import JudgeCallFailed, JudgeConfigError
from judges.backends.baseline import VERSION as BASELINE_VERSION
from judges.backends.baseline import BaselineBackend
from judges.endpoints import endpoint_get
from judges.services import judge_spec
from testsets.limits import generation_limits
from testsets.models import (
    Document,
    DocumentPassage,
    GenerationDrop,
    GenerationJob,
    ItemQuote,
    TestItem,
    TestSet,
)
from testsets.services import llm_generator, offline_generator
from testsets.services.verify import REASONS, Dropped, ItemChecker, PassageView, question_key

logger = logging.getLogger(__name__)
TASK = "testsets.generate_testset"


class GenerationRefused(ValueError):
    """The generation cannot start as asked; the message says why (never a URL or a key)."""


def _endpoint_and_model(endpoint_name: str, model: str):
    try:
        endpoint = endpoint_get(endpoint_name)
    except LookupError as exc:
        raise GenerationRefused(str(exc)) from None
    model = model.strip() or (endpoint.models[0] if endpoint.models else "")
    if not model:
        raise GenerationRefused(
            f"endpoint {endpoint.name!r} declares no models: give the model to ask for"
        )
    if endpoint.models and model not in endpoint.models:
        raise GenerationRefused(
            f"model {model!r} is not offered by endpoint {endpoint.name!r} "
            f"(models: {', '.join(endpoint.models)})"
        )
    return endpoint, model


def generation_estimate(
    *, project: Project, kind: str, endpoint_name: str = "", model: str = "", per_document: int
) -> dict:
    """What the job will cost, before it starts: calls, tokens, and a price when declared."""
    documents = Document.objects.filter(project=project)
    count = documents.count()
    estimate = {"documents": count, "prompts_per_document": 0, "calls": 0, "tokens_in": 0}
    estimate |= {"tokens_out": 0, "price": None, "currency": ""}
    if kind == GenerationJob.Kind.OFFLINE:
        return estimate
    endpoint, _model = _endpoint_and_model(endpoint_name, model)
    max_chars = generation_limits().document_prompt_chars
    sizes = documents.annotate(n=Length("text")).values_list("n", flat=True)
    tokens_in = sum(llm_generator.prompt_tokens_estimate(n, max_chars) for n in sizes)
    tokens_out = count * per_document * llm_generator.TOKENS_PER_ITEM
    estimate |= {"prompts_per_document": 1, "calls": count}
    estimate |= {"tokens_in": tokens_in, "tokens_out": tokens_out}
    price_in = getattr(endpoint, "price_per_million_input_tokens", None)
    price_out = getattr(endpoint, "price_per_million_output_tokens", None)
    if price_in is not None or price_out is not None:
        estimate["price"] = round(
            (tokens_in * (price_in or 0) + tokens_out * (price_out or 0)) / 1_000_000, 4
        )
        estimate["currency"] = getattr(endpoint, "price_currency", "") or ""
    return estimate


def _entailment_record(judge) -> dict:
    if judge is None:
        return {"entailment": BASELINE_VERSION}
    return {"entailment": f"judge {judge.name}", "entailment_judge_id": judge.pk}


def _generator_record(kind, endpoint_name, model, per_document, judge) -> dict:
    limits = generation_limits()
    record = {
        "kind": kind,
        "per_document": per_document,
        "duplicate_threshold": limits.duplicate_threshold,
        **_entailment_record(judge),
    }
    if kind == GenerationJob.Kind.OFFLINE:
        return record | {"version": offline_generator.VERSION, "baseline": True}
    return record | {
        "endpoint": endpoint_name,
        "model": model,
        "prompt_version": llm_generator.PROMPT_VERSION,
        "prompt_hash": llm_generator.PROMPT_HASH,
        "prompt": llm_generator.GENERATION_PROMPT,
    }


def generation_start(
    *,
    project: Project,
    user,
    name: str,
    kind: str,
    endpoint_name: str = "",
    model: str = "",
    per_document: int | None = None,
    judge=None,
) -> GenerationJob:
    """A draft test set and its job, handed to a worker (or run now without a broker).
    `judge` (one of the project's) checks each answer against its quotes instead of the
    offline baseline."""
    per_document = per_document or generation_limits().per_document
    if judge is not None and judge.project_id != project.pk:
        raise GenerationRefused("the judge is not one of this project's")
    if kind not in GenerationJob.Kind.values:
        raise GenerationRefused(f"unknown generator {kind!r}: offline or llm")
    if per_document < 1:
        raise GenerationRefused("give at least one item per document")
    if kind == GenerationJob.Kind.LLM:
        endpoint, model = _endpoint_and_model(endpoint_name, model)
        endpoint_name = endpoint.name
    else:
        endpoint_name, model = "", ""
    estimate = generation_estimate(
        project=project,
        kind=kind,
        endpoint_name=endpoint_name,
        model=model,
        per_document=per_document,
    )
    if not estimate["documents"]:
        raise GenerationRefused("the knowledge base has no documents: upload some first")
    with transaction.atomic():
        latest = TestSet.objects.filter(project=project, name=name).aggregate(v=Max("version"))
        test_set = TestSet.objects.create(
            project=project,
            name=name,
            version=(latest["v"] or 0) + 1,
            generator=_generator_record(kind, endpoint_name, model, per_document, judge),
        )
        job = GenerationJob.objects.create(
            project=project,
            test_set=test_set,
            kind=kind,
            endpoint=endpoint_name,
            model=model,
            per_document=per_document,
            judge=judge,
            total=estimate["documents"],
            estimate=estimate,
            counts=_counts_empty(),
            created_by=user,
        )
    _enqueue(job.pk)
    job.refresh_from_db()
    return job


def _enqueue(job_id: int) -> None:
    task = current_app.tasks[TASK]
    if current_app.conf.task_always_eager:
        task.delay(job_id)
    else:  # a worker must not look for the job before the transaction that made it commits
        transaction.on_commit(lambda: task.delay(job_id))


def generation_resume(*, job: GenerationJob) -> bool:
    """Hand a failed job to a worker again; its done documents are kept (a worker taking up a
    job another still runs writes nothing twice: see `_documents_write`)."""
    if job.status != GenerationJob.Status.FAILED:
        return False
    GenerationJob.objects.filter(pk=job.pk).update(status=GenerationJob.Status.QUEUED, error="")
    _enqueue(job.pk)
    return True


def _counts_empty() -> dict:
    return {"generated": 0, "kept": 0, "dropped": dict.fromkeys(REASONS, 0)}


def _checker(job: GenerationJob) -> ItemChecker:
    """The checker of this test set, primed with what earlier runs of the job kept."""
    limits = generation_limits()
    entailment = BaselineBackend()
    if job.judge is not None:  # JudgeConfigError when its endpoint or key is missing
        entailment = backend_for_spec(judge_spec(job.judge))
    checker = ItemChecker(
        entailment=entailment, quota=job.per_document, threshold=limits.duplicate_threshold
    )
    for question, document_id in job.test_set.items.values_list("question", "document_id"):
        checker.remember(question_key(question), document_id)
    return checker


def _generator(job: GenerationJob):
    if job.kind == GenerationJob.Kind.OFFLINE:
        return None
    endpoint, model = _endpoint_and_model(job.endpoint, job.model)
    spec = llm_generator.GeneratorSpec(
        endpoint=endpoint, model=model, per_document=job.per_document
    )
    return llm_generator.LlmGenerator(spec, generation_limits().document_prompt_chars)


def _candidates(generator, document: Document, passages: list[PassageView]):
    """(candidates, tokens in, tokens out) of one document, or the JudgeCallFailed /
    JudgeConfigError that stopped it (returned, so a thread hands it back in order)."""
    title = document.title or document.external_id
    if generator is None:
        items = offline_generator.offline_candidates(
            title=title, language=document.language, passages=passages
        )
        return items, 0, 0
    try:
        return generator.candidates(title=title, language=document.language, passages=passages)
    except (JudgeCallFailed, JudgeConfigError) as exc:
        return exc


def _passages_by_document(project: Project) -> dict[int, list[PassageView]]:
    """Every passage of the project's documents in one query, by document, in position order."""
    out: dict[int, list[PassageView]] = {}
    rows = DocumentPassage.objects.filter(document__project=project).order_by(
        "document_id", "position"
    )
    for pk, document_id, position, text in rows.values_list(
        "pk", "document_id", "position", "text"
    ):
        out.setdefault(document_id, []).append(PassageView(pk, position, text))
    return out


def _generated(generator, documents: list, passages: dict):
    """Each document with its candidates, in document order: an LLM generator's calls run up
    to its endpoint's `max_concurrency` at a time (the offline one runs here, one by one);
    every write stays with the caller."""
    if generator is None or len(documents) <= 1:
        for document in documents:
            yield document, _candidates(generator, document, passages.get(document.pk, []))
        return
    concurrency = max(1, generator.spec.endpoint.max_concurrency)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="generate") as pool:
        futures = [
            pool.submit(_candidates, generator, document, passages.get(document.pk, []))
            for document in documents
        ]
        try:
            for document, future in zip(documents, futures, strict=True):
                yield document, future.result()
        finally:
            for future in futures:  # a stopped job calls no further document
                future.cancel()


def generation_execute(*, job_id: int, limit: int | None = None) -> str:
    """Generate and verify, document by document, from the first one not done; `limit`
    stops after that many documents (a test's way to kill a job midway). Returns the status."""
    job = GenerationJob.objects.select_related("test_set", "project", "judge").get(pk=job_id)
    if job.status == GenerationJob.Status.DONE:
        return job.status
    GenerationJob.objects.filter(pk=job.pk).update(status=GenerationJob.Status.RUNNING)
    try:
        generator = _generator(job)
        checker = _checker(job)
    except (GenerationRefused, JudgeConfigError) as exc:
        return _fail(job, str(exc))
    documents = list(Document.objects.filter(project=job.project).order_by("pk"))[job.done :]
    stopped = limit is not None and len(documents) > limit
    documents = documents[:limit] if stopped else documents
    passages = _passages_by_document(job.project)
    usage = dict(job.usage)
    size = max(1, generator.spec.endpoint.max_concurrency) if generator is not None else 1
    batch: list = []
    for document, outcome in _generated(generator, documents, passages):
        if isinstance(outcome, Exception):
            if batch and not _documents_write(job, batch, usage):
                return GenerationJob.Status.RUNNING
            return _fail(job, f"document {document.external_id!r}: {outcome}")
        candidates, tokens_in, tokens_out = outcome
        if generator is not None:
            usage["calls"] = usage.get("calls", 0) + 1
            usage["tokens_in"] = usage.get("tokens_in", 0) + tokens_in
            usage["tokens_out"] = usage.get("tokens_out", 0) + tokens_out
        try:  # a judge as the entailment check may fail here
            kept, dropped = _document_verify(
                document, passages.get(document.pk, []), candidates, checker
            )
        except (JudgeCallFailed, JudgeConfigError) as exc:
            if batch and not _documents_write(job, batch, usage):
                return GenerationJob.Status.RUNNING
            return _fail(job, f"document {document.external_id!r}: {exc}")
        batch.append((document, kept, dropped))
        if len(batch) >= size:
            if not _documents_write(job, batch, usage):
                return GenerationJob.Status.RUNNING  # another worker has moved the job on
            batch = []
    if batch and not _documents_write(job, batch, usage):
        return GenerationJob.Status.RUNNING
    if stopped:
        return GenerationJob.Status.RUNNING
    return _finish(job)


def _document_verify(document, passages, candidates, checker) -> tuple[list, list]:
    """(kept items, (drop, raw) pairs) of one document's candidates, every one checked."""
    drops, kept = [], []
    if isinstance(candidates, Exception):  # the whole reply was not the JSON asked for
        drops.append((Dropped("malformed", str(candidates)), {}))
        candidates = []
    for raw in candidates:
        outcome = checker.check(
            raw, document_key=document.pk, document_language=document.language, passages=passages
        )
        if isinstance(outcome, Dropped):
            drops.append((outcome, raw))
        else:
            kept.append(outcome)
    return kept, drops


def _documents_write(job, verified: list, usage: dict) -> bool:
    """Write a batch of documents' outcomes (document, kept, drops) in one transaction, in
    document order; False (nothing written) when another worker moved the job on first. A
    killed worker loses at most one batch of calls, asked again on resume."""
    counts = json.loads(json.dumps(job.counts or _counts_empty()))
    with transaction.atomic():
        done = GenerationJob.objects.select_for_update().values_list("done", flat=True)
        if done.get(pk=job.pk) != job.done:
            return False
        position = job.test_set.items.count()
        rows, quotes, drops = [], [], []
        for document, kept, dropped in verified:
            counts["generated"] += len(kept) + len(dropped)
            counts["kept"] += len(kept)
            for number, item in enumerate(kept):
                rows.append(
                    TestItem(
                        test_set=job.test_set,
                        external_id=f"{document.external_id}-{position + number + 1}",
                        position=position + number,
                        question=item.question,
                        answer=item.answer,
                        risk_category=item.risk,
                        language=item.language,
                        document=document,
                    )
                )
                quotes.append(item.quotes)
            position += len(kept)
            for drop, raw in dropped:
                counts["dropped"][drop.reason] = counts["dropped"].get(drop.reason, 0) + 1
                drops.append(
                    GenerationDrop(
                        test_set=job.test_set,
                        reason=drop.reason,
                        document=document,
                        detail=drop.detail[:2000],
                        raw=raw if isinstance(raw, dict) else {"value": raw},
                    )
                )
        TestItem.objects.bulk_create(rows)
        ItemQuote.objects.bulk_create(
            ItemQuote(item=row, passage_id=q.passage_id, start=q.start, end=q.end, text=q.text)
            for row, item_quotes in zip(rows, quotes, strict=True)
            for q in item_quotes
        )
        GenerationDrop.objects.bulk_create(drops)
        job.done += len(verified)
        job.counts, job.usage = counts, usage
        job.save(update_fields=["done", "counts", "usage"])
    return True


def _fail(job: GenerationJob, error: str) -> str:
    logger.warning("generation job %s failed: %s", job.pk, error)
    GenerationJob.objects.filter(pk=job.pk).update(
        status=GenerationJob.Status.FAILED, error=error[:2000], finished_at=timezone.now()
    )
    return GenerationJob.Status.FAILED


def _finish(job: GenerationJob) -> str:
    with transaction.atomic():
        test_set = TestSet.objects.select_for_update().get(pk=job.test_set_id)
        test_set.generator = {**test_set.generator, "counts": job.counts, "usage": job.usage}
        test_set.save(update_fields=["generator"])
        GenerationJob.objects.filter(pk=job.pk).update(
            status=GenerationJob.Status.DONE, finished_at=timezone.now(), error=""
        )
    return GenerationJob.Status.DONE


def generation_job_get_for_project(*, project: Project, job_id: int) -> GenerationJob:
    return get_object_or_404(
        GenerationJob.objects.select_related("test_set"), project=project, pk=job_id
    )


def knowledge_base_summary(*, project: Project) -> dict:
    documents = Document.objects.filter(project=project)
    return {
        "documents": documents.count(),
        "characters": documents.aggregate(n=Sum(Length("text")))["n"] or 0,
    }
