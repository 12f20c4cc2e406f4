"""Exporting a project's claims with their labels, gold and judge verdicts, streamed.

Two formats:

- `jsonl`: one answer per line in the native import schema (pile, claims, labels with quotes,
  gold, judges), so exporting a project and importing the file into a fresh one gives the same
  claims, labels, quotes, gold and judge verdicts. Extra keys (`claim_id`, `method`, a judge's
  `backend`) are informative and ignored on import.
- `csv`: one row per claim (with its answer's `system`, NAME@VERSION or NAME, empty for an
  answer of no system, and `question_id`, the question key systems' answers are paired on);
  one group of columns per analyst (`label:<username>:verdict`, ...;
  an imported annotator is `label:<name> (imported):verdict`)
  and per judge instrument (`judge:<name>@<prompt version>:verdict` / `:confidence`).

Every row carries a `method` so a figure built from the file says how its verdicts were made.

Memory is constant in the project's size, and no model instance is built per claim (at 1M
claims, instances with `prefetch_related` cost ~0.9 ms of CPU per claim, nearly all of it
making Python objects): a server-side cursor walks the project's answers in order, and for each
batch of them a few plain SQL statements, the same on PostgreSQL and SQLite, read the claims,
gold, labels, judge verdicts, citations (and, for jsonl, the piles) as tuples, which are joined
in dicts and written out a batch at a time.

The reads are in `export_reads`, a jsonl record is built by `export_jsonl`, a csv row by
`export_csv`; this module walks the batches.
"""

import json
from collections.abc import Iterator
from functools import partial
from typing import TextIO

from django.db import connection
from django.db.models import QuerySet

# The formula-neutral CSV rule lives on the lowest floor; its names stay importable from here.
from annotate.csv_safe import NeutralCsvWriter as NeutralCsvWriter
from annotate.csv_safe import csv_neutral as csv_neutral
from annotate.models import Answer, Project
from interchange.services.export_csv import (
    CsvLayout,
    csv_cell,
    csv_columns,
    passage_refs_elsewhere,
)
from interchange.services.export_csv import csv_header as csv_header
from interchange.services.export_jsonl import answer_record
from interchange.services.export_reads import LABEL_METHOD as LABEL_METHOD
from interchange.services.export_reads import (
    Batch,
    Lookups,
    answers_rows_read,
    batches,
    claims_rows_read,
    project_annotators,
    project_runs,
    read_ahead,
)
from interchange.services.export_reads import judge_method as judge_method
from interchange.sql import batch_sql
from interchange.sql import csv_sql as csv_sql

FORMATS = ("csv", "jsonl")
# Answers per batch of reads (about 4 claims each). In jsonl they carry their whole pile, so
# that format takes fewer per batch to keep memory flat.
CSV_ANSWER_BATCH = 2000
JSONL_ANSWER_BATCH = 250
# Ids per IN list when a batch's ids are scattered (SQLite takes at most 999 parameters).
IN_LIST_MAX = 500


def _batch_read(answers: list[tuple], *, jsonl: bool) -> Batch:
    """Claims, gold, labels, judge verdicts (neither canaries' nor stale ones) and citations
    of `answers` (rows led by the answer's id), and the passages of their piles.

    Claims come by (position, id) within an answer, labels by id, verdicts by run,
    citations and passages by rank: the orders both formats write. For csv the database
    writes the cells it can as csv text (see `CsvLayout.lines` for what each row holds);
    for jsonl the rows are the raw values. Split by step, each a few statements for the
    whole batch (not per row): what the export's hot path costs is unchanged.
    """
    sql = batch_sql(jsonl=jsonl)
    with connection.cursor() as cursor:
        batch, claims = answers_rows_read(
            cursor, sql, [answer[0] for answer in answers], jsonl=jsonl, in_list_max=IN_LIST_MAX
        )
        if not claims:
            return batch
        claim_ids = sorted(claim[1] for claim in claims)
        claims_rows_read(cursor, sql, batch, claim_ids, in_list_max=IN_LIST_MAX)
    if not jsonl:
        passage_refs_elsewhere(batch)
    return batch


def _answers_of(project: Project, among) -> QuerySet:
    """The project's answers, or those of them in `among` (answer ids: the answers list's
    filtered set)."""
    answers = Answer.objects.filter(project=project)
    return answers if among is None else answers.filter(pk__in=among)


def _jsonl(project: Project, among=None) -> Iterator[str]:
    lookups = Lookups(project_runs(project), dict(project_annotators(project)))
    answers = (
        _answers_of(project, among)
        .order_by("position", "id")
        .values_list(
            "id",
            "external_id",
            "question",
            "text",
            "reference",
            "risk_category",
            "answerable",
            "abstention",
            "metadata",
            "system__name",
            "system__version",
            "system__metadata",
            "question_id",
        )
    )
    encode = json.JSONEncoder(ensure_ascii=False).encode
    for answer_batch, batch in read_ahead(
        batches(answers.iterator(JSONL_ANSWER_BATCH), JSONL_ANSWER_BATCH),
        partial(_batch_read, jsonl=True),
    ):
        yield "".join(
            [encode(answer_record(answer, batch, lookups)) + "\n" for answer in answer_batch]
        )


def _csv(project: Project, among=None) -> Iterator[str]:
    columns = csv_columns(project)
    layout = CsvLayout(columns, Lookups(columns.runs, dict(columns.annotators)))
    yield ",".join(map(csv_cell, columns.header)) + "\r\n"
    answers = (
        _answers_of(project, among)
        .order_by("position", "id")
        .values_list(
            "id",
            "external_id",
            "risk_category",
            "abstention",
            "system__name",
            "system__version",
            "question_id",
        )
    )
    for answer_batch, batch in read_ahead(
        batches(answers.iterator(CSV_ANSWER_BATCH), CSV_ANSWER_BATCH),
        partial(_batch_read, jsonl=False),
    ):
        if batch.claims:
            yield "\r\n".join(layout.lines(answer_batch, batch))


def claims_export_chunks(*, project: Project, format: str, among=None) -> Iterator[str]:
    """The export as successive text chunks (for a StreamingHttpResponse or a file); `among`
    (answer ids) keeps the claims of those answers only."""
    if format == "jsonl":
        return _jsonl(project, among)
    if format == "csv":
        return _csv(project, among)
    raise ValueError(f"Unknown export format {format!r}: use csv or jsonl.")


def claims_export(*, project: Project, format: str, out: TextIO) -> None:
    """Write every claim of `project` to `out` as csv or jsonl, in constant memory."""
    for chunk in claims_export_chunks(project=project, format=format):
        out.write(chunk)
