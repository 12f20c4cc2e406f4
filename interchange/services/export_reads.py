"""The export's reads: a project's judge runs and annotators up front, then per batch of
answers a few plain SQL statements (`interchange.sql`) whose rows are grouped by the answer or
claim they belong to, the next batch read ahead on a thread of its own on PostgreSQL."""

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import islice

from django.contrib.auth import get_user_model
from django.db import connection, connections

from annotate.models import ImportedAnnotator, Project, imported_name
from interchange import sql as statements
from interchange.sql import BatchSql, rows_for_ids
from judges.models import JudgeRun

LABEL_METHOD = "manual labels by analysts, claim level, against the retrieved pile"


def judge_method(run: JudgeRun) -> str:
    model = f", model {run.model}" if run.model else ""
    return (
        f"judge {run.judge.name} ({run.backend}{model}), prompt version "
        f"{run.prompt_version or 'unversioned'}, {run.kind} run {run.pk}"
    )


def instrument_name(run: JudgeRun) -> str:
    suffix = "" if run.kind == JudgeRun.Kind.VERIFY else f" ({run.kind})"
    return f"{run.judge.name}@{run.prompt_version or 'unversioned'}{suffix}"


@dataclass(frozen=True)
class Run:
    """What the export says of a judge run, worked out once per run, not once per verdict."""

    pk: int
    name: str
    prompt_version: str
    model: str
    backend: str
    kind: str
    instrument: str
    method: str


def run_entry(run: JudgeRun) -> Run:
    return Run(
        pk=run.pk,
        name=run.judge.name,
        prompt_version=run.prompt_version,
        model=run.model,
        backend=run.backend,
        kind=run.kind,
        instrument=instrument_name(run),
        method=judge_method(run),
    )


class Lookups:
    """Judge runs and usernames by id: the project's read up front; one written while the
    export streams (a new run, a new analyst's label) is fetched when first met."""

    def __init__(self, runs: Iterable[JudgeRun], usernames: dict[int, str]):
        self.runs = {run.pk: run_entry(run) for run in runs}
        self.usernames = usernames

    def run(self, pk: int) -> Run:
        found = self.runs.get(pk)
        if found is None:
            found = self.runs[pk] = run_entry(JudgeRun.objects.select_related("judge").get(pk=pk))
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


def project_runs(project: Project) -> list[JudgeRun]:
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


def project_annotators(project: Project) -> list[tuple[int, str]]:
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


def batches(rows: Iterable, size: int) -> Iterator[list]:
    rows = iter(rows)
    while batch := list(islice(rows, size)):
        yield batch


def read_ahead(
    batches: Iterator[list], read: Callable[[list], "Batch"]
) -> Iterator[tuple[list, "Batch"]]:
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


def _select(cursor, sql: str, column: str, ids: list[int], *, in_list_max: int) -> list[tuple]:
    """The rows of `sql` whose `column`, also their first value, is one of `ids`
    (`interchange.sql.rows_for_ids`, in IN lists of at most `in_list_max`)."""
    return rows_for_ids(cursor, sql, column, ids, in_list_max=in_list_max)


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
class Batch:
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


def answers_rows_read(
    cursor, sql: BatchSql, answer_ids: list[int], *, jsonl: bool, in_list_max: int
) -> tuple[Batch, list[tuple]]:
    """(A batch with the answers' claims and, for jsonl their piles, for csv how quotes name
    their passage: reading a batch's passages by answer costs less than looking each quote's
    passage up by id; the claim rows as read)."""
    select = partial(_select, in_list_max=in_list_max)
    claims = select(
        cursor,
        statements.export_claims_statement(sql.claim),
        "c.answer_id",
        answer_ids,
    )
    passages = select(
        cursor,
        statements.export_passages_statement(sql.passage),
        "p.answer_id",
        answer_ids,
    )
    batch = Batch(_grouped(claims), {}, {}, {}, {}, {}, {})
    if jsonl:
        batch.passages = _grouped(passages)
    else:
        batch.passage_refs = {row[1]: row[2] for row in passages}
    return batch, claims


def claims_rows_read(
    cursor, sql: BatchSql, batch: Batch, claim_ids: list[int], *, in_list_max: int
) -> None:
    """Fill in the gold, labels, verdicts and citations of the batch's claims (`claim_ids`,
    sorted)."""
    select = partial(_select, in_list_max=in_list_max)
    gold = select(
        cursor,
        statements.export_gold_statement(sql.gold, sql.gold_join),
        "g.claim_id",
        claim_ids,
    )
    batch.gold = {row[0]: row for row in gold}
    batch.labels = _grouped(
        select(
            cursor,
            statements.export_labels_statement(sql.label),
            "l.claim_id",
            claim_ids,
        )
    )
    for claim_id, annotator, *span in select(
        cursor, statements.export_more_spans_statement(), "l.claim_id", claim_ids
    ):
        batch.more_spans.setdefault((claim_id, annotator), []).append(tuple(span))
    batch.verdicts = _grouped(
        select(
            cursor,
            statements.export_verdicts_statement(),
            "v.claim_id",
            claim_ids,
        )
    )
    batch.citations = _grouped(
        select(
            cursor,
            statements.export_citations_statement(sql.citation),
            "t.claim_id",
            claim_ids,
        )
    )
