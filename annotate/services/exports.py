"""Exporting a project's claims with their labels, gold and judge verdicts, streamed.

Two formats:

- `jsonl`: one answer per line in the native import schema (pile, claims, labels with quotes,
  gold, judges), so exporting a project and importing the file into a fresh one gives the same
  claims, labels, quotes, gold and judge verdicts. Extra keys (`claim_id`, `method`, a judge's
  `backend`) are informative and ignored on import.
- `csv`: one row per claim; one group of columns per analyst (`label:<username>:verdict`, ...)
  and per judge instrument (`judge:<name>@<prompt version>:verdict` / `:confidence`).

Every row carries a `method` so a figure built from the file says how its verdicts were made.
Memory is constant in the project's size: rows come from `.iterator(chunk_size=...)` with the
related rows prefetched per chunk, and the output is produced a few rows at a time.
"""

import csv
import io
import json
from collections.abc import Iterator
from typing import TextIO

from django.contrib.auth import get_user_model
from django.db.models import Prefetch

from annotate.models import Answer, Claim, Label, Passage, Project
from judges.models import JudgeRun, JudgeVerdict

FORMATS = ("csv", "jsonl")
CLAIM_CHUNK = 2000
# Answers carry their whole pile, so fewer per chunk keeps memory flat.
ANSWER_CHUNK = 200
ROWS_PER_WRITE = 200

LABEL_METHOD = "manual labels by analysts, claim level, against the retrieved pile"


def judge_method(run: JudgeRun) -> str:
    model = f", model {run.model}" if run.model else ""
    return (
        f"judge {run.judge.name} ({run.backend}{model}), prompt version "
        f"{run.prompt_version or 'unversioned'}, {run.kind} run {run.pk}"
    )


def _gold(claim: Claim):
    try:
        return claim.gold
    except Claim.gold.RelatedObjectDoesNotExist:
        return None


def _verdicts(claim: Claim) -> list[JudgeVerdict]:
    return [verdict for verdict in claim.judge_verdicts.all() if verdict.canary_id is None]


# -- JSON Lines ---------------------------------------------------------------------------------


def _pile_refs(passages: list[Passage]) -> dict[int, str | int]:
    """How a quote or citation names each passage: its source id when that is unique, else rank."""
    counts: dict[str, int] = {}
    for passage in passages:
        counts[passage.source_id] = counts.get(passage.source_id, 0) + 1
    return {
        passage.pk: passage.source_id
        if passage.source_id and counts[passage.source_id] == 1
        else passage.rank
        for passage in passages
    }


def _answer_record(answer: Answer) -> dict:
    passages = list(answer.passages.all())
    refs = _pile_refs(passages)
    claims = []
    for claim in answer.claims.all():
        labels = []
        for label in claim.labels.all():
            entry: dict = {"annotator": label.annotator.get_username(), "verdict": label.verdict}
            if label.evidence_passage_id is not None:
                entry["quote"] = {
                    "passage": refs[label.evidence_passage_id],
                    "start": label.evidence_start,
                    "end": label.evidence_end,
                    "text": label.evidence_quote,
                }
            if label.note:
                entry["note"] = label.note
            if label.correct:
                entry["correct"] = label.correct
            labels.append(entry)
        record: dict = {
            "claim_id": claim.pk,
            "position": claim.position,
            "text": claim.text,
            "origin": claim.origin,
            "tags": claim.tags,
            "citations": [refs[passage.pk] for passage in claim.cited_passages.all()],
            "labels": labels,
            "method": LABEL_METHOD,
        }
        if claim.span_start is not None:
            record["span"] = {"start": claim.span_start, "end": claim.span_end}
        gold = _gold(claim)
        if gold is not None:
            record["gold"] = {"verdict": gold.verdict, "source": gold.source}
            if gold.reason:
                record["gold"]["reason"] = gold.reason
            if gold.decided_by is not None:
                record["gold"]["decided_by"] = gold.decided_by.get_username()
        record["judges"] = [
            {
                "name": verdict.run.judge.name,
                "verdict": verdict.verdict,
                "confidence": verdict.confidence,
                "prompt_version": verdict.run.prompt_version,
                "model": verdict.run.model,
                "backend": verdict.run.backend,
                "kind": verdict.run.kind,
                "run": verdict.run_id,
                "method": judge_method(verdict.run),
            }
            for verdict in _verdicts(claim)
        ]
        claims.append(record)
    return {
        "id": answer.external_id,
        "question": answer.question,
        "answer": answer.text,
        "pile": [
            {"id": passage.source_id, "title": passage.title, "text": passage.text}
            for passage in passages
        ],
        "reference": answer.reference,
        "risk_category": answer.risk_category,
        "answerable": answer.answerable,
        "abstention": answer.abstention,
        "metadata": answer.metadata,
        "claims": claims,
    }


def _jsonl(project: Project) -> Iterator[str]:
    claims = (
        Claim.objects.order_by("position", "id")
        .select_related("gold__decided_by")
        .prefetch_related(
            Prefetch("labels", queryset=Label.objects.select_related("annotator").order_by("id")),
            Prefetch("cited_passages", queryset=Passage.objects.only("id").order_by("rank")),
            Prefetch(
                "judge_verdicts",
                queryset=JudgeVerdict.objects.select_related("run__judge").order_by("run_id"),
            ),
        )
    )
    answers = (
        Answer.objects.filter(project=project)
        .order_by("position", "id")
        .prefetch_related(
            Prefetch("passages", queryset=Passage.objects.order_by("rank")),
            Prefetch("claims", queryset=claims),
        )
    )
    lines = []
    for answer in answers.iterator(chunk_size=ANSWER_CHUNK):
        lines.append(json.dumps(_answer_record(answer), ensure_ascii=False) + "\n")
        if len(lines) >= ROWS_PER_WRITE:
            yield "".join(lines)
            lines = []
    if lines:
        yield "".join(lines)


# -- CSV ----------------------------------------------------------------------------------------

LABEL_FIELDS = (
    "verdict",
    "quote_passage",
    "quote_start",
    "quote_end",
    "quote_text",
    "note",
    "correct",
)


def _instrument(run: JudgeRun) -> str:
    suffix = "" if run.kind == JudgeRun.Kind.VERIFY else f" ({run.kind})"
    return f"{run.judge.name}@{run.prompt_version or 'unversioned'}{suffix}"


def csv_header(project: Project) -> tuple[list[str], list[str], list[str]]:
    """The header, the analysts (usernames) and the judge instruments it has columns for."""
    User = get_user_model()
    annotators = list(
        User.objects.filter(labels__claim__project=project)
        .distinct()
        .order_by(User.USERNAME_FIELD)
        .values_list(User.USERNAME_FIELD, flat=True)
    )
    instruments = list(
        dict.fromkeys(
            _instrument(run)
            for run in JudgeRun.objects.filter(project=project)
            .select_related("judge")
            .order_by("judge__name", "prompt_version", "kind", "id")
        )
    )
    header = [
        "answer_id",
        "claim_id",
        "position",
        "text",
        "origin",
        "tags",
        "citations",
        "risk_category",
        "abstention",
        "gold_verdict",
        "gold_source",
        "gold_reason",
    ]
    for username in annotators:
        header += [f"label:{username}:{name}" for name in LABEL_FIELDS]
    for instrument in instruments:
        header += [f"judge:{instrument}:verdict", f"judge:{instrument}:confidence"]
    header.append("method")
    return header, annotators, instruments


def _passage_ref(passage: Passage) -> str:
    return passage.source_id or f"#{passage.rank}"


def _csv_row(claim: Claim, header: list[str]) -> list:
    gold = _gold(claim)
    row = {
        "answer_id": claim.answer.external_id,
        "claim_id": claim.pk,
        "position": claim.position,
        "text": claim.text,
        "origin": claim.origin,
        "tags": "; ".join(claim.tags),
        "citations": "; ".join(_passage_ref(p) for p in claim.cited_passages.all()),
        "risk_category": claim.answer.risk_category,
        "abstention": "true" if claim.answer.abstention else "false",
        "gold_verdict": gold.verdict if gold else "",
        "gold_source": gold.source if gold else "",
        "gold_reason": gold.reason if gold else "",
    }
    for label in claim.labels.all():
        prefix = f"label:{label.annotator.get_username()}:"
        passage = label.evidence_passage
        row[prefix + "verdict"] = label.verdict
        row[prefix + "quote_passage"] = _passage_ref(passage) if passage else ""
        row[prefix + "quote_start"] = label.evidence_start if passage else ""
        row[prefix + "quote_end"] = label.evidence_end if passage else ""
        row[prefix + "quote_text"] = label.evidence_quote
        row[prefix + "note"] = label.note
        row[prefix + "correct"] = label.correct
    methods = [LABEL_METHOD]
    # Latest run last, so two runs of one instrument show the newer verdict.
    for verdict in sorted(_verdicts(claim), key=lambda v: v.run_id):
        prefix = f"judge:{_instrument(verdict.run)}:"
        row[prefix + "verdict"] = verdict.verdict
        row[prefix + "confidence"] = "" if verdict.confidence is None else verdict.confidence
        methods.append(judge_method(verdict.run))
    row["method"] = "; ".join(dict.fromkeys(methods))
    return [row.get(column, "") for column in header]


def _csv(project: Project) -> Iterator[str]:
    header, _, _ = csv_header(project)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    claims = (
        Claim.objects.filter(project=project)
        .order_by("answer__position", "answer_id", "position", "id")
        .select_related("answer", "gold")
        .defer("answer__question", "answer__text", "answer__reference", "answer__metadata")
        .prefetch_related(
            Prefetch(
                "labels",
                queryset=Label.objects.select_related("annotator", "evidence_passage").defer(
                    "evidence_passage__text"
                ),
            ),
            Prefetch("cited_passages", queryset=Passage.objects.defer("text").order_by("rank")),
            Prefetch(
                "judge_verdicts",
                queryset=JudgeVerdict.objects.select_related("run__judge").defer(
                    "raw_response", "run__prompt_text", "run__judge__verify_prompt"
                ),
            ),
        )
    )
    for count, claim in enumerate(claims.iterator(chunk_size=CLAIM_CHUNK), 1):
        writer.writerow(_csv_row(claim, header))
        if count % ROWS_PER_WRITE == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.getvalue():
        yield buffer.getvalue()


def claims_export_chunks(*, project: Project, format: str) -> Iterator[str]:
    """The export as successive text chunks (for a StreamingHttpResponse or a file)."""
    if format == "jsonl":
        return _jsonl(project)
    if format == "csv":
        return _csv(project)
    raise ValueError(f"Unknown export format {format!r}: use csv or jsonl.")


def claims_export(*, project: Project, format: str, out: TextIO) -> None:
    """Write every claim of `project` to `out` as csv or jsonl, in constant memory."""
    for chunk in claims_export_chunks(project=project, format=format):
        out.write(chunk)
