"""Raw SQL lives here, each statement with the figure it bought (the rule: annotate/sql/).

The export's batch reads (`rows_for_ids` and the `export_*_statement` texts it runs) and the
import's ANALYZE; the import's COPY is annotate's
(`annotate.sql.copy_rows`, used through `annotate.bulk_insert.RowsInserter`).
"""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connection

from annotate.csv_safe import FORMULA_TRIGGERS
from annotate.models import (
    Claim,
    EvidenceSpan,
    Gold,
    ImportedAnnotator,
    Label,
    Passage,
    imported_name,
)
from judges.models import JudgeVerdict


def rows_for_ids(cursor, sql: str, column: str, ids: list[int], *, in_list_max: int) -> list[tuple]:
    """The rows of `sql` whose `column`, also their first value, is one of `ids`.

    `sql` has a `{where}` slot for the condition. Ids of rows written together (an import)
    are dense: one range condition reads them, with the few rows of other ids in the range
    dropped here, where an IN list of thousands of ids costs PostgreSQL milliseconds to plan
    and lures it into hashing a whole table. Scattered ids go in IN lists of in_list_max; a
    statement's ORDER BY then holds within each id, which is all the callers need.

    Why raw: the export's reads per batch of answers, plain rows instead of model instances
    with prefetch_related (commit 5cf48d2: CSV 1,625 -> ~55,000 claims per CPU-second); today
    "export CSV (claims_export) 14.3 s at 1M labelled claims", "70,057 claims/s"
    (bench/RESULTS.md). The statements are `interchange.services.exports`' `_batch_read`'s.
    """
    low, high = min(ids), max(ids)
    if high - low < 2 * len(ids) + 100:
        cursor.execute(sql.format(where=f"{column} BETWEEN %s AND %s"), [low, high])
        if high - low + 1 == len(ids):  # all of the range (ids are distinct)
            return cursor.fetchall()
        wanted = set(ids)
        return [row for row in cursor.fetchall() if row[0] in wanted]
    rows = []
    for start in range(0, len(ids), in_list_max):
        part = ids[start : start + in_list_max]
        cursor.execute(sql.format(where=f"{column} IN ({', '.join(['%s'] * len(part))})"), part)
        rows += cursor.fetchall()
    return rows


def statistics_refresh(*models) -> None:
    """ANALYZE the tables this import filled, inside its transaction (our own new rows are
    sampled too), so what follows is planned for the rows that are there.

    Until then the planner sees the tables as before the import: autovacuum looks again only
    after 10% of a table changed, and only once this transaction has committed. Planned for
    an empty `annotate_answer` (analysed after its rows were deleted: reltuples 0), the
    foreign-key checks at COMMIT looked each answer id up through `answer_project_order`
    (project, position, id), whose cost then ties with the primary key's, reading the whole
    index per passage and claim: 320 s of PostgreSQL for a 5k-answer import instead of 0.4 s.
    Planned for a few labels, `gold_unanimous_bulk` joined every label with every claim
    (159 s for 20k labelled claims; about a second after ANALYZE). The labelling queue,
    likewise, sorts all of a new project's claims instead of walking its index
    (bench/RESULTS.md, save-and-next). Without the table owner's rights PostgreSQL skips a
    table with a warning, not an error.

    Why raw: PostgreSQL's ANALYZE has no ORM form; it bought the import's 5k-answer run 42.6 ->
    5 s of PostgreSQL CPU (commit 35ca37b), part of "import native JSONL: 4,338 answers/s at
    100k answers" (bench/RESULTS.md).
    """
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(quote(model._meta.db_table) for model in models))


def project_import_lock(*, project_id: int) -> None:
    """Make idempotent imports into one project take turns until this transaction ends, so
    the rows another one committed meanwhile are seen by this one's existing-id checks.

    Why raw: PostgreSQL's transaction-level advisory lock has no ORM form (a row lock on the
    project would block every other writer of the project row, such as the answer counter).
    It is what makes "the same 1,000-answer batch sent by 8 clients at once creates each
    answer once" hold (tests/api/test_pipeline.py): without it two requests both find no
    existing id and the second fails on answer_external_id_unique with a 500.
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        # Key space 0x46410001 ("FA", 1): answer imports, one lock per project.
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [0x46410001, project_id])


# -- the export's batch reads: statement text for `rows_for_ids` ------------------------------
# Each returns a statement with a `{where}` slot (the ids' condition `rows_for_ids` writes) and
# the select list the caller builds per format (`batch_sql`).
# Why raw, all of them: the figure of `rows_for_ids` ("export CSV (claims_export) 14.3 s at 1M
# labelled claims", "70,057 claims/s", bench/RESULTS.md): a few plain-row statements per batch
# of answers, the csv cells written by the database.


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def export_claims_statement(select: str) -> str:
    """The answers' claims (`{where}` on `c.answer_id`), by (position, id) within an answer."""
    return (
        f"SELECT c.answer_id, c.id, {select}"
        f" FROM {_table(Claim)} c WHERE {{where}} ORDER BY c.position, c.id"
    )


def export_passages_statement(select: str) -> str:
    """The answers' piles (`{where}` on `p.answer_id`), by rank."""
    return f"SELECT p.answer_id, {select} FROM {_table(Passage)} p WHERE {{where}} ORDER BY p.rank"


def export_gold_statement(select: str, join: str) -> str:
    """The claims' gold (`{where}` on `g.claim_id`), with the format's joins (`join`)."""
    return f"SELECT g.claim_id, {select} FROM {_table(Gold)} g{join} WHERE {{where}}"


def export_labels_statement(select: str) -> str:
    """The claims' labels (`{where}` on `l.claim_id`), by id."""
    return f"SELECT l.claim_id, {select} FROM {_table(Label)} l WHERE {{where}} ORDER BY l.id"


def export_more_spans_statement() -> str:
    """The spans after the first of the claims' labels (`{where}` on `l.claim_id`): claim id,
    annotator key (as the labels'), passage id, passage name (`PASSAGE_REF`), start, end,
    quote; by label, then span number."""
    end = connection.ops.quote_name("end")
    return (
        f"SELECT l.claim_id, {ANNOTATOR_KEY}, s.passage_id, {PASSAGE_REF}, s.start, s.{end},"
        f" s.quote FROM {_table(EvidenceSpan)} s JOIN {_table(Label)} l ON l.id = s.label_id"
        f" JOIN {_table(Passage)} p ON p.id = s.passage_id"
        " WHERE {where} ORDER BY l.id, s.number"
    )


def export_verdicts_statement() -> str:
    """The claims' judge verdicts (`{where}` on `v.claim_id`), neither canaries' nor stale
    ones, by run."""
    return (
        f"SELECT v.claim_id, v.run_id, v.verdict, v.confidence FROM {_table(JudgeVerdict)} v"
        f" WHERE {{where}} AND v.canary_id IS NULL AND NOT v.stale ORDER BY v.run_id"
    )


def export_citations_statement(select: str) -> str:
    """The claims' cited passages (`{where}` on `t.claim_id`), by rank then id."""
    return (
        f"SELECT t.claim_id, {select}"
        f" FROM {_table(Claim.cited_passages.through)} t"
        f" JOIN {_table(Passage)} p ON p.id = t.passage_id"
        f" WHERE {{where}} ORDER BY p.rank, p.id"
    )


# -- the select lists of those statements, per format ------------------------------------------

# A label's annotator as one number: the user's id, or minus the imported annotator's id.
ANNOTATOR_KEY = "COALESCE(l.annotator_id, -l.imported_annotator_id)"


def csv_sql(expr: str) -> str:
    """SQL giving the text `expr` as csv_cell() writes it, the same on PostgreSQL and SQLite:
    neutralised (`csv_neutral`) and quoted.

    The database writes most of a csv row's text this way: at 1M claims, quoting every cell
    in Python was a quarter of the export's CPU, and the database does it on its own core.
    (LIKE, not a search function: PostgreSQL's strpos is SQLite's instr. The single quote a
    neutralised text starts with needs no quoting itself, so it goes in front of the rest.)
    """
    triggers = ", ".join(f"'{char}'" for char in sorted(FORMULA_TRIGGERS))
    lead = f"CASE WHEN SUBSTR({expr}, 1, 1) IN ({triggers}) THEN '''' ELSE '' END"
    return (
        f"CASE WHEN {expr} LIKE '%%\"%%'"
        f" THEN '\"' || {lead} || REPLACE({expr}, '\"', '\"\"') || '\"'"
        f" WHEN {expr} LIKE '%%,%%' OR {expr} LIKE '%%\n%%' OR {expr} LIKE '%%\r%%'"
        f" THEN '\"' || {lead} || {expr} || '\"' ELSE {lead} || {expr} END"
    )


def _as_text(expr: str) -> str:
    return f"COALESCE(CAST({expr} AS TEXT), '')"


# How csv names a passage: its source id, else its rank after '#'.
PASSAGE_REF = "COALESCE(NULLIF(p.source_id, ''), '#' || CAST(p.rank AS TEXT))"


@dataclass(frozen=True)
class BatchSql:
    """The select lists (and gold's joins) `_batch_read` reads with, per format."""

    claim: str
    passage: str
    gold: str
    gold_join: str
    label: str
    citation: str


def batch_sql(*, jsonl: bool) -> BatchSql:
    """For jsonl the raw values; for csv the cells the database can write as csv text.

    Why raw: the export's batch reads (`rows_for_ids`' figure: "export CSV (claims_export)
    14.3 s at 1M labelled claims", "70,057 claims/s"); the csv cells written by the database.
    """
    if jsonl:
        User = get_user_model()
        username = connection.ops.quote_name(User._meta.get_field(User.USERNAME_FIELD).column)
        return BatchSql(
            claim="c.position, c.text, c.origin, c.tags, c.span_start, c.span_end, c.stratum",
            passage="p.id, p.rank, p.source_id, p.title, p.text",
            gold=(
                f"g.verdict, g.source, g.reason,"
                f" COALESCE(u.{username}, ia.name || '{imported_name('')}')"
            ),
            gold_join=(
                f" LEFT JOIN {_table(User)} u ON u.id = g.decided_by_id"
                f" LEFT JOIN {_table(ImportedAnnotator)} ia ON ia.id = g.imported_decided_by_id"
            ),
            label=(
                f"{ANNOTATOR_KEY}, l.verdict, l.evidence_passage_id, l.evidence_start,"
                " l.evidence_end, l.evidence_quote, l.note, l.correct, l.changed_after_reveal"
            ),
            citation="p.id",
        )
    return BatchSql(
        claim=(
            f"c.tags, CAST(c.id AS TEXT) || ',' || CAST(c.position AS TEXT) || ','"
            f" || {csv_sql('c.text')} || ',' || {csv_sql('c.origin')}"
        ),
        passage=f"p.id, {csv_sql(PASSAGE_REF)}",
        gold=f"g.verdict || ',' || g.source || ',' || {csv_sql('g.reason')}",
        gold_join="",
        # Verdict and correct are from fixed choices (CHECK constraints): never quoted.
        label=(
            f"{ANNOTATOR_KEY}, l.verdict, l.evidence_passage_id,"
            f" {_as_text('l.evidence_start')} || ',' || {_as_text('l.evidence_end')} || ','"
            f" || {csv_sql('l.evidence_quote')} || ',' || {csv_sql('l.note')}"
            f" || ',' || l.correct"
            " || ',' || CASE WHEN l.changed_after_reveal THEN 'true' ELSE '' END"
        ),
        citation=PASSAGE_REF,
    )
