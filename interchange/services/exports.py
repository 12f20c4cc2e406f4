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
"""

import json
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import TextIO

from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.db.models import QuerySet

# The formula-neutral CSV rule lives on the lowest floor; its names stay importable from here.
from annotate.csv_safe import FORMULA_TRIGGERS
from annotate.csv_safe import NeutralCsvWriter as NeutralCsvWriter
from annotate.csv_safe import csv_neutral as csv_neutral
from annotate.models import (
    Answer,
    ImportedAnnotator,
    Passage,
    Project,
    imported_name,
)
from interchange import sql as statements
from interchange.sql import BatchSql, batch_sql, rows_for_ids
from interchange.sql import csv_sql as csv_sql
from judges.models import JudgeRun

FORMATS = ("csv", "jsonl")
# Answers per batch of reads (about 4 claims each). In jsonl they carry their whole pile, so
# that format takes fewer per batch to keep memory flat.
CSV_ANSWER_BATCH = 2000
JSONL_ANSWER_BATCH = 250
# Ids per IN list when a batch's ids are scattered (SQLite takes at most 999 parameters).
IN_LIST_MAX = 500

LABEL_METHOD = "manual labels by analysts, claim level, against the retrieved pile"


def judge_method(run: JudgeRun) -> str:
    model = f", model {run.model}" if run.model else ""
    return (
        f"judge {run.judge.name} ({run.backend}{model}), prompt version "
        f"{run.prompt_version or 'unversioned'}, {run.kind} run {run.pk}"
    )


def _instrument(run: JudgeRun) -> str:
    suffix = "" if run.kind == JudgeRun.Kind.VERIFY else f" ({run.kind})"
    return f"{run.judge.name}@{run.prompt_version or 'unversioned'}{suffix}"


# -- Reading: plain rows per batch of answers ---------------------------------------------------


@dataclass(frozen=True)
class _Run:
    """What the export says of a judge run, worked out once per run, not once per verdict."""

    pk: int
    name: str
    prompt_version: str
    model: str
    backend: str
    kind: str
    instrument: str
    method: str


def _run_entry(run: JudgeRun) -> _Run:
    return _Run(
        pk=run.pk,
        name=run.judge.name,
        prompt_version=run.prompt_version,
        model=run.model,
        backend=run.backend,
        kind=run.kind,
        instrument=_instrument(run),
        method=judge_method(run),
    )


class _Lookups:
    """Judge runs and usernames by id: the project's read up front; one written while the
    export streams (a new run, a new analyst's label) is fetched when first met."""

    def __init__(self, runs: Iterable[JudgeRun], usernames: dict[int, str]):
        self.runs = {run.pk: _run_entry(run) for run in runs}
        self.usernames = usernames

    def run(self, pk: int) -> _Run:
        found = self.runs.get(pk)
        if found is None:
            found = self.runs[pk] = _run_entry(JudgeRun.objects.select_related("judge").get(pk=pk))
        return found

    def username(self, pk: int) -> str:
        """The name of annotator key `pk` (see `interchange.sql.ANNOTATOR_KEY`)."""
        found = self.usernames.get(pk)
        if found is None:
            if pk < 0:
                found = str(ImportedAnnotator.objects.get(pk=-pk))
            else:
                found = get_user_model().objects.get(pk=pk).get_username()
            self.usernames[pk] = found
        return found


def _project_runs(project: Project) -> list[JudgeRun]:
    return list(
        JudgeRun.objects.filter(project=project)
        .select_related("judge")
        .only(
            "pk",
            "kind",
            "backend",
            "model",
            "prompt_version",
            "judge__name",
        )
        .order_by("judge__name", "prompt_version", "kind", "id")
    )


def _project_annotators(project: Project) -> list[tuple[int, str]]:
    """(annotator key, name) of everyone with a label in the project, by name: users by
    username, imported annotators as "alice (imported)" (key: minus their id)."""
    User = get_user_model()
    # Not EXISTS per user: that reads all of a user's labels in other projects (6 s for a 5k
    # claims project beside a 1M one); this reads the project's own labels once.
    users = list(
        User.objects.filter(labels__claim__project=project)
        .distinct()
        .order_by(User.USERNAME_FIELD)
        .values_list("pk", User.USERNAME_FIELD)
    )
    imported = [
        (-pk, imported_name(name))
        for pk, name in ImportedAnnotator.objects.filter(project=project, labels__isnull=False)
        .distinct()
        .values_list("pk", "name")
    ]
    return sorted(users + imported, key=lambda row: (row[1], row[0]))


def _batches(rows: Iterable, size: int) -> Iterator[list]:
    rows = iter(rows)
    while batch := list(islice(rows, size)):
        yield batch


def _read_ahead(
    batches: Iterator[list], read: Callable[[list], "_Batch"]
) -> Iterator[tuple[list, "_Batch"]]:
    """Each batch of answers with `read(batch)`, the next batch being read meanwhile by a
    thread on a connection of its own, so PostgreSQL's work on it overlaps Python's on this one
    (at 1M claims, per claim, about 15 µs of Python and 9.5 µs of PostgreSQL CPU).

    On SQLite, and inside a transaction (whose rows another connection cannot see), the
    batches are read in turn on this connection.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        for batch in batches:
            yield batch, read(batch)
        return
    reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="export-read")
    try:
        batch = next(batches, None)
        pending = reader.submit(read, batch) if batch is not None else None
        while pending is not None:
            rows = pending.result()
            current, batch = batch, next(batches, None)
            pending = reader.submit(read, batch) if batch is not None else None
            yield current, rows
    finally:
        # The reader's connection is its thread's: close it there, after any read in flight.
        reader.submit(connections.close_all)
        reader.shutdown(wait=True)


def _select(cursor, sql: str, column: str, ids: list[int]) -> list[tuple]:
    """The rows of `sql` whose `column`, also their first value, is one of `ids`
    (`interchange.sql.rows_for_ids`, in IN lists of at most IN_LIST_MAX)."""
    return rows_for_ids(cursor, sql, column, ids, in_list_max=IN_LIST_MAX)


def _grouped(rows: Iterable[tuple]) -> dict[int, list[tuple]]:
    """Rows keyed by their first value (an answer or claim id), in the order read."""
    groups: dict[int, list[tuple]] = {}
    for row in rows:
        group = groups.get(row[0])
        if group is None:
            groups[row[0]] = [row]
        else:
            group.append(row)
    return groups


@dataclass
class _Batch:
    """The rows of one batch of answers. Each row's first value is the id it is keyed by:
    claims and passages by answer, the rest by claim."""

    claims: dict[int, list[tuple]]
    gold: dict[int, tuple]
    labels: dict[int, list[tuple]]
    verdicts: dict[int, list[tuple]]
    citations: dict[int, list[tuple]]
    passages: dict[int, list[tuple]]
    # csv: how a quote names each passage (source id, else #rank), by passage id.
    passage_refs: dict[int, str]
    # labels' spans after the first, by (claim id, annotator key): (passage id, passage name,
    # start, end, quote) each
    more_spans: dict[tuple[int, int], list[tuple]] = field(default_factory=dict)


def _batch_read(answers: list[tuple], *, jsonl: bool) -> _Batch:
    """Claims, gold, labels, judge verdicts (neither canaries' nor stale ones) and citations
    of `answers` (rows led by the answer's id), and the passages of their piles.

    Claims come by (position, id) within an answer, labels by id, verdicts by run,
    citations and passages by rank: the orders both formats write. For csv the database
    writes the cells it can as csv text (see `_CsvLayout.lines` for what each row holds);
    for jsonl the rows are the raw values. Split by step, each a few statements for the
    whole batch (not per row): what the export's hot path costs is unchanged.
    """
    sql = batch_sql(jsonl=jsonl)
    with connection.cursor() as cursor:
        batch, claims = _answers_rows_read(
            cursor, sql, [answer[0] for answer in answers], jsonl=jsonl
        )
        if not claims:
            return batch
        _claims_rows_read(cursor, sql, batch, sorted(claim[1] for claim in claims))
    if not jsonl:
        _passage_refs_elsewhere(batch)
    return batch


def _answers_rows_read(
    cursor, sql: BatchSql, answer_ids: list[int], *, jsonl: bool
) -> tuple[_Batch, list[tuple]]:
    """(A batch with the answers' claims and, for jsonl their piles, for csv how quotes name
    their passage: reading a batch's passages by answer costs less than looking each quote's
    passage up by id; the claim rows as read)."""
    claims = _select(
        cursor,
        statements.export_claims_statement(sql.claim),
        "c.answer_id",
        answer_ids,
    )
    passages = _select(
        cursor,
        statements.export_passages_statement(sql.passage),
        "p.answer_id",
        answer_ids,
    )
    batch = _Batch(_grouped(claims), {}, {}, {}, {}, {}, {})
    if jsonl:
        batch.passages = _grouped(passages)
    else:
        batch.passage_refs = {row[1]: row[2] for row in passages}
    return batch, claims


def _claims_rows_read(cursor, sql: BatchSql, batch: _Batch, claim_ids: list[int]) -> None:
    """Fill in the gold, labels, verdicts and citations of the batch's claims (`claim_ids`,
    sorted)."""
    gold = _select(
        cursor,
        statements.export_gold_statement(sql.gold, sql.gold_join),
        "g.claim_id",
        claim_ids,
    )
    batch.gold = {row[0]: row for row in gold}
    batch.labels = _grouped(
        _select(
            cursor,
            statements.export_labels_statement(sql.label),
            "l.claim_id",
            claim_ids,
        )
    )
    for claim_id, annotator, *span in _select(
        cursor, statements.export_more_spans_statement(), "l.claim_id", claim_ids
    ):
        batch.more_spans.setdefault((claim_id, annotator), []).append(tuple(span))
    batch.verdicts = _grouped(
        _select(
            cursor,
            statements.export_verdicts_statement(),
            "v.claim_id",
            claim_ids,
        )
    )
    batch.citations = _grouped(
        _select(
            cursor,
            statements.export_citations_statement(sql.citation),
            "t.claim_id",
            claim_ids,
        )
    )


def _passage_refs_elsewhere(batch: _Batch) -> None:
    """csv: name the passages quoted from another answer's pile too. label_save never makes
    such a quote, but one in the database is written as is."""
    quoted = {
        label[3] for labels in batch.labels.values() for label in labels if label[3] is not None
    }
    if elsewhere := sorted(quoted.difference(batch.passage_refs)):
        for pk, source_id, rank in Passage.objects.filter(pk__in=elsewhere).values_list(
            "pk", "source_id", "rank"
        ):
            batch.passage_refs[pk] = csv_cell(source_id or f"#{rank}")


# -- JSON Lines ---------------------------------------------------------------------------------


def _pile_refs(passages: list[tuple]) -> dict[int, str | int]:
    """How a quote or citation names each passage: its source id when that is unique, else rank.

    `passages` are one answer's (answer_id, id, rank, source_id, title, text) rows.
    """
    counts: dict[str, int] = {}
    for passage in passages:
        counts[passage[3]] = counts.get(passage[3], 0) + 1
    return {
        pk: source_id if source_id and counts[source_id] == 1 else rank
        for _answer, pk, rank, source_id, _title, _text in passages
    }


def _label_entry(label: tuple, refs: dict, lookups: _Lookups, more_spans: dict) -> dict:
    claim, annotator, verdict, passage, start, end, quote, note, correct, changed = label
    entry: dict = {"annotator": lookups.username(annotator), "verdict": verdict}
    if passage is not None:
        entry["quote"] = {"passage": refs[passage], "start": start, "end": end, "text": quote}
    if more := more_spans.get((claim, annotator)):
        entry["more_quotes"] = [
            {"passage": refs[pk], "start": s, "end": e, "text": text}
            for pk, _name, s, e, text in more
        ]
    if note:
        entry["note"] = note
    if correct:
        entry["correct"] = correct
    if changed:
        # Changed after the analyst saw the judge's or a colleague's verdict (for leads).
        entry["changed_after_reveal"] = True
    return entry


def _judge_entry(verdict: tuple, lookups: _Lookups) -> dict:
    _claim, run_id, value, confidence = verdict
    run = lookups.run(run_id)
    return {
        "name": run.name,
        "verdict": value,
        "confidence": confidence,
        "prompt_version": run.prompt_version,
        "model": run.model,
        "backend": run.backend,
        "kind": run.kind,
        "run": run_id,
        "method": run.method,
    }


def _claim_record(claim: tuple, batch: _Batch, refs: dict, lookups: _Lookups) -> dict:
    _answer, pk, position, text, origin, tags, span_start, span_end, stratum = claim
    record: dict = {
        "claim_id": pk,
        "position": position,
        "text": text,
        "origin": origin,
        "tags": json.loads(tags),
        "citations": [refs[cited[1]] for cited in batch.citations.get(pk, ())],
        "labels": [
            _label_entry(label, refs, lookups, batch.more_spans)
            for label in batch.labels.get(pk, ())
        ],
        "method": LABEL_METHOD,
    }
    if span_start is not None:
        record["span"] = {"start": span_start, "end": span_end}
    if stratum:
        # Only when set, so exports of projects without a recorded design are unchanged.
        record["stratum"] = stratum
    gold = batch.gold.get(pk)
    if gold is not None:
        _claim, verdict, source, reason, decided_by = gold
        record["gold"] = {"verdict": verdict, "source": source}
        if reason:
            record["gold"]["reason"] = reason
        if decided_by is not None:
            record["gold"]["decided_by"] = decided_by
    record["judges"] = [_judge_entry(verdict, lookups) for verdict in batch.verdicts.get(pk, ())]
    return record


def _answer_record(answer: tuple, batch: _Batch, lookups: _Lookups) -> dict:
    pk, external_id, question, text, reference, risk, answerable, abstention, metadata = answer[:9]
    passages = batch.passages.get(pk, [])
    refs = _pile_refs(passages)
    record = {
        "id": external_id,
        "question": question,
        "answer": text,
        "pile": [
            {"id": source_id, "title": title, "text": body}
            for _answer, _pk, _rank, source_id, title, body in passages
        ],
        "reference": reference,
        "risk_category": risk,
        "answerable": answerable,
        "abstention": abstention,
        "metadata": metadata,
        "claims": [
            _claim_record(claim, batch, refs, lookups) for claim in batch.claims.get(pk, ())
        ],
    }
    system_name, system_version, system_metadata, question_id = answer[9:]
    # Only when set, so a project without systems exports as it always did.
    if system_name is not None:
        record["system"] = {
            "name": system_name,
            **({"version": system_version} if system_version else {}),
            **({"metadata": system_metadata} if system_metadata else {}),
        }
    if question_id:
        record["question_id"] = question_id
    return record


def _answers_of(project: Project, among) -> QuerySet:
    """The project's answers, or those of them in `among` (answer ids: the answers list's
    filtered set)."""
    answers = Answer.objects.filter(project=project)
    return answers if among is None else answers.filter(pk__in=among)


def _jsonl(project: Project, among=None) -> Iterator[str]:
    lookups = _Lookups(_project_runs(project), dict(_project_annotators(project)))
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
    for answer_batch, batch in _read_ahead(
        _batches(answers.iterator(JSONL_ANSWER_BATCH), JSONL_ANSWER_BATCH),
        partial(_batch_read, jsonl=True),
    ):
        yield "".join(
            [encode(_answer_record(answer, batch, lookups)) + "\n" for answer in answer_batch]
        )


# -- CSV ----------------------------------------------------------------------------------------

LABEL_FIELDS = (
    "verdict",
    "quote_passage",
    "quote_start",
    "quote_end",
    "quote_text",
    "note",
    "correct",
    "changed_after_reveal",  # "true" when changed after a reveal of the judge's or colleagues'
    # The spans after the first, when the label has several: JSON, as the jsonl's
    # `more_quotes` ([{"passage", "start", "end", "text"}], the passage named as quote_passage)
    "more_quotes",
)
FIXED_COLUMNS = (
    "answer_id",
    "claim_id",
    "position",
    "text",
    "origin",
    "tags",
    "citations",
    "risk_category",
    "abstention",
    "system",
    "question_id",
    "gold_verdict",
    "gold_source",
    "gold_reason",
)


def csv_cell(value) -> str:
    """One value as `csv.writer` (excel dialect, QUOTE_MINIMAL) writes `csv_neutral(value)`:
    None empty, a text quoted when it holds a comma, quote or line break, with its quotes
    doubled.

    Written by hand because most of a row's cells are empty analyst and judge columns (16
    analysts make 112 of them): csv.writer spends ~30 µs on such a row, a third of the
    export's CPU, where joining the filled cells to pre-made runs of commas takes ~2 µs.
    tests/annotate/test_export_expected.py checks it against csv.writer.
    """
    if value is None:
        return ""
    if value.__class__ is not str:
        return str(value)
    if value[:1] in FORMULA_TRIGGERS:
        value = "'" + value
    if '"' in value:
        return '"' + value.replace('"', '""') + '"'
    if "," in value or "\n" in value or "\r" in value:
        return '"' + value + '"'
    return value


@dataclass
class _Columns:
    header: list[str]
    annotators: list[tuple[int, str]]
    instruments: list[str]
    runs: list[JudgeRun]


def _csv_columns(project: Project) -> _Columns:
    annotators = _project_annotators(project)
    runs = _project_runs(project)
    instruments = list(dict.fromkeys(_instrument(run) for run in runs))
    header = list(FIXED_COLUMNS)
    for _pk, username in annotators:
        header += [f"label:{username}:{name}" for name in LABEL_FIELDS]
    for instrument in instruments:
        header += [f"judge:{instrument}:verdict", f"judge:{instrument}:confidence"]
    header.append("method")
    return _Columns(header, annotators, instruments, runs)


def csv_header(project: Project) -> tuple[list[str], list[str], list[str]]:
    """The header, the analysts (usernames) and the judge instruments it has columns for."""
    columns = _csv_columns(project)
    return columns.header, [name for _pk, name in columns.annotators], columns.instruments


class _CsvLayout:
    """A row as its groups of cells, each group already CSV text: the claim's fixed cells, one
    group per analyst (7 cells), one per judge instrument (2 cells) and the method. A row
    starts from the empty groups (runs of commas) and fills the few its claim has."""

    def __init__(self, columns: _Columns, lookups: _Lookups):
        self.lookups = lookups
        analysts = len(columns.annotators)
        self.label_group = {pk: i for i, (pk, _name) in enumerate(columns.annotators)}
        group_of_instrument = {
            instrument: analysts + i for i, instrument in enumerate(columns.instruments)
        }
        self.verdict_group = {run.pk: group_of_instrument[_instrument(run)] for run in columns.runs}
        # Seven empty cells are six commas, two are one.
        self.empty = ["," * (len(LABEL_FIELDS) - 1)] * analysts + [","] * len(columns.instruments)
        self.methods: dict[tuple[int, ...], str] = {(): csv_cell(LABEL_METHOD)}

    def method(self, run_ids: tuple[int, ...]) -> str:
        """The method cell of a claim judged by these runs (in run order): few distinct sets."""
        cell = self.methods.get(run_ids)
        if cell is None:
            methods = [LABEL_METHOD, *(self.lookups.run(pk).method for pk in run_ids)]
            cell = self.methods[run_ids] = csv_cell("; ".join(dict.fromkeys(methods)))
        return cell

    def lines(self, answers: list[tuple], batch: _Batch) -> list[str]:
        """CSV lines of the claims of `answers` (id, external_id, risk_category, abstention,
        system name, system version, question_id).

        From the database, already csv text: each claim's id, position, text and origin,
        its gold's three cells, each quoted passage's name, and each label's cells from its
        start to its `correct`. Tags, citations and confidences are written here.
        """
        lines = []
        cell = csv_cell
        empty, label_group, verdict_group = self.empty, self.label_group, self.verdict_group
        gold_of, labels_of, verdicts_of = batch.gold, batch.labels, batch.verdicts
        citations_of, refs, more_of = batch.citations, batch.passage_refs, batch.more_spans
        for answer_id, external_id, risk, abstention, system, version, question in answers:
            answer_id_cell = cell(external_id)
            system_cell = cell(f"{system}@{version}" if version else system)
            answer_cells = (
                f"{cell(risk)},{'true' if abstention else 'false'},{system_cell},{cell(question)}"
            )
            for _answer, pk, tags, claim_cells in batch.claims.get(answer_id, ()):
                citations = citations_of.get(pk)
                gold = gold_of.get(pk)
                groups = empty.copy()
                for _claim, annotator, verdict, passage, cells in labels_of.get(pk, ()):
                    group = label_group.get(annotator)
                    if group is not None:  # else labelled after the header was read
                        ref = "" if passage is None else refs[passage]
                        more = more_of.get((pk, annotator))
                        more = _more_quotes_cell(more) if more else ""
                        groups[group] = f"{verdict},{ref},{cells},{more}"
                verdicts = verdicts_of.get(pk, ())
                # By run id: of two runs of one instrument, the newer verdict stays.
                for _claim, run_id, verdict, confidence in verdicts:
                    group = verdict_group.get(run_id)
                    if group is not None:
                        groups[group] = f"{verdict},{cell(confidence)}"
                lines.append(
                    ",".join(
                        [
                            answer_id_cell,
                            claim_cells,
                            "" if tags == "[]" else cell("; ".join(json.loads(tags))),
                            cell("; ".join(c[1] for c in citations)) if citations else "",
                            answer_cells,
                            ",," if gold is None else gold[1],
                            *groups,
                            self.method(tuple(v[1] for v in verdicts)),
                        ]
                    )
                )
        lines.append("")  # the last line's terminator
        return lines


def _more_quotes_cell(spans: list[tuple]) -> str:
    """The csv cell of a label's spans after the first: `more_quotes` as JSON."""
    return csv_cell(
        json.dumps(
            [
                {"passage": name, "start": start, "end": end, "text": text}
                for _pk, name, start, end, text in spans
            ],
            ensure_ascii=False,
        )
    )


def _csv(project: Project, among=None) -> Iterator[str]:
    columns = _csv_columns(project)
    layout = _CsvLayout(columns, _Lookups(columns.runs, dict(columns.annotators)))
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
    for answer_batch, batch in _read_ahead(
        _batches(answers.iterator(CSV_ANSWER_BATCH), CSV_ANSWER_BATCH),
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
