"""Raw SQL lives here, each statement with the figure it bought (bench/RESULTS.md) or the
correctness reason beside it; anything that bought nothing measurable is ORM code. One module
per app (`annotate/sql.py`, `judges` has none, `metrics/sql.py`, `interchange/sql.py`,
`config/sql.py`); tests/test_sql_home.py fails on `cursor.execute`, `.raw(`, `RawSQL` or
`.extra(` anywhere else, and on SQL statement text (a string or f-string starting
SELECT/INSERT/UPDATE/DELETE/WITH) anywhere else.

What is here, and why:

- `StatementBatch`: several statements in one round trip to PostgreSQL, one after another
  elsewhere. The labelling screen's save-and-next is a dozen small statements; on loopback each
  costs a round trip (~0.2 ms) whatever it does. psycopg 3's client-side binding cursor
  (Django's default, `server_side_binding` off) accepts several `;`-separated statements in
  one `execute()` and hands back each one's result with `nextset()`, so a batch costs one
  round trip there. SQLite's driver runs one statement per call, so the same statements run
  one by one. Statements run in order inside the caller's transaction; the first that fails
  raises, and the caller's `transaction.atomic` rolls back all of them. Hand-written SQL only:
  callers keep every statement portable (PostgreSQL and SQLite), `%s` placeholders, no
  literal `%`. Bought: save-and-next in 6 statements instead of 18 (commit cd0b6ff), today
  "save-and-next server time p50, 1 analyst: 6.86 ms at 100k claims" (bench/RESULTS.md).
- `ModelRows`: instances from those statements' rows, built with the ORM's converters.
- `project_membership_get`: every project page's first read (the same save-and-next figure).
- `reservations_expired_delete`: correctness, `FOR UPDATE SKIP LOCKED` (no deadlock).
- the save's writes queued on a `StatementBatch` (`reservation_release`, `claim_label_count_add`,
  `membership_labels_saved_add`, `project_claims_complete_move`, `claim_review_clear`,
  `gold_delete`, `gold_unanimous_insert`, `gold_update`): in the save's round trips, the same
  save-and-next figure; the counters are atomic `col = col + n` updates under the claim's lock.
- the save-and-next's own statements, as builders returning `(sql, params)` for the caller's
  `StatementBatch` (the callers in services/labels.py and services/queue.py parse the rows):
  `claim_lock_statement` and `claim_locked_read_statement` (the lock, then a fresh-snapshot
  read, one round trip), `label_insert_statement`, `label_id_of_statement`,
  `label_update_statement`, `label_history_insert_statement`, `queue_candidates_statement`
  (SKIP LOCKED), `reservation_if_room_statement` (the conditional INSERT that re-checks the
  quota atomically), `screen_reads_statements`: "save-and-next server p50 6.9 ms, 1 analyst,
  100k claims; 16 analysts p95 13.8 ms" (bench/RESULTS.md).
- `sequence_ids_reserve`, `copy_rows`: PostgreSQL COPY for imports, "import native JSONL
  4,338 answers/s at 100k answers" (1,073 -> ~6,700 answers per CPU-second, commit 254a408).
"""

import functools
from contextlib import contextmanager

from django.db import connection


class StatementBatch:
    def __init__(self):
        self._statements: list[tuple[str, list]] = []

    def add(self, sql: str, params: list | tuple = ()) -> int:
        """Queue a statement; returns its index in `run()`'s results."""
        self._statements.append((sql.strip().rstrip(";"), list(params)))
        return len(self._statements) - 1

    def extend(self, other: "StatementBatch") -> None:
        """Move `other`'s queued statements to the end of this batch."""
        self._statements.extend(other._statements)
        other._statements = []

    def run_then(self, sql: str, params: list | tuple = ()) -> list[tuple]:
        """Run the queued statements and then `sql` (in the same round trip): `sql`'s rows."""
        index = self.add(sql, params)
        return self.run()[index] or []

    def __len__(self) -> int:
        return len(self._statements)

    def run(self) -> list[list[tuple] | None]:
        """Run the queued statements in order; each one's rows (None when it returns none)."""
        statements, self._statements = self._statements, []
        if not statements:
            return []
        results: list[list[tuple] | None] = []
        with connection.cursor() as cursor:
            if _one_round_trip(cursor) and len(statements) > 1:
                cursor.execute(
                    ";\n".join(sql for sql, _ in statements),
                    [param for _, params in statements for param in params],
                )
                for index in range(len(statements)):
                    if index:
                        cursor.nextset()
                    results.append(cursor.fetchall() if cursor.description else None)
            else:
                for sql, params in statements:
                    cursor.execute(sql, params)
                    results.append(cursor.fetchall() if cursor.description else None)
        return results


def _one_round_trip(cursor) -> bool:
    """Whether this cursor sends `;`-joined statements as one query (psycopg's ClientCursor)."""
    if connection.vendor != "postgresql":
        return False
    from psycopg import ClientCursor

    return isinstance(cursor.cursor, ClientCursor)


class ModelRows:
    """Model instances from a hand-written statement's rows, as the ORM would build them.

    `columns(alias)` is the select list of every concrete field (in model order); `instances`
    applies the backend's and the fields' converters (JSON text, SQLite's dates and booleans)
    and builds each instance with `Model.from_db`. What lets a batch read model rows without
    the ORM compiling a query for each: the reads the labelling screen needs after a save go
    in the save's last round trip.
    """

    def __init__(self, model):
        self.model = model
        fields = model._meta.concrete_fields
        self.attnames = [field.attname for field in fields]
        self._columns = [connection.ops.quote_name(field.column) for field in fields]
        self._converters = []
        for index, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            converters = connection.ops.get_db_converters(column) + column.get_db_converters(
                connection
            )
            if converters:
                self._converters.append((index, converters, column))

    def columns(self, alias: str) -> str:
        return ", ".join(f"{alias}.{column}" for column in self._columns)

    def __len__(self) -> int:
        return len(self.attnames)

    def instance(self, row):
        """One instance from the values of its columns (a row, or a slice of a joined row)."""
        values = list(row)
        for index, converters, column in self._converters:
            value = values[index]
            for converter in converters:
                value = converter(value, column, connection)
            values[index] = value
        return self.model.from_db(connection.alias, self.attnames, values)

    def instances(self, rows: list[tuple] | None) -> list:
        return [self.instance(row) for row in rows or ()]


@functools.cache
def model_rows(model) -> ModelRows:
    """The `ModelRows` of `model`, built once per process."""
    return ModelRows(model)


# -- reads and writes that run on their own cursor ----------------------------------------------


def project_membership_get(*, slug: str, user_id: int):
    """The `Membership` of `user_id` in the project with `slug`, its `project` filled in from
    the same row; None if there is none.

    Why raw: every project page starts here, save-and-next included; one hand-written
    statement instead of a compiled ORM query (commit cd0b6ff, save-and-next in 6 statements
    instead of 18; "save-and-next server time p50, 1 analyst: 6.86 ms at 100k claims").
    """
    from annotate.models import Membership, Project

    memberships, projects = model_rows(Membership), model_rows(Project)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {memberships.columns('m')}, {projects.columns('p')}"
            f" FROM {Membership._meta.db_table} m"
            f" INNER JOIN {Project._meta.db_table} p ON p.id = m.project_id"
            " WHERE p.slug = %s AND m.user_id = %s",
            [slug, user_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    membership = memberships.instance(row[: len(memberships)])
    membership.project = projects.instance(row[len(memberships) :])
    return membership


def reservations_expired_delete(*, project_id: int, user_id: int, now) -> None:
    """Delete the user's expired reservations in the project, skipping any another transaction
    is writing (PostgreSQL only: the caller checks `has_select_for_update_skip_locked`).

    Why raw: correctness. `FOR UPDATE OF r SKIP LOCKED` in the DELETE's subquery, which the
    ORM cannot write: this cleanup takes no claim lock, so waiting on a row a save-and-next is
    writing could close a cycle of waits (commit 0df29b6: one analyst in six tabs deadlocked,
    5 of 96 saves answered 500).
    """
    from annotate.models import Claim, Reservation

    reservations, claims = Reservation._meta.db_table, Claim._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {reservations} WHERE id IN (SELECT r.id FROM {reservations} r"
            f" INNER JOIN {claims} c ON c.id = r.claim_id WHERE r.user_id = %s"
            " AND c.project_id = %s AND r.expires_at <= %s FOR UPDATE OF r SKIP LOCKED)",
            [user_id, project_id, connection.ops.adapt_datetimefield_value(now)],
        )


def copy_statement(*, table: str, columns: list[str], quote) -> str:
    """`COPY table (columns) FROM STDIN`: see `copy_rows`."""
    return f"COPY {quote(table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"


@contextmanager
def copy_rows(db, sql: str):
    """PostgreSQL COPY ... FROM STDIN on `db`'s connection: yields psycopg's Copy (write_row).

    Why raw: the rows go through psycopg 3's `cursor.copy()` untouched, skipping the per-row
    `Model.__init__` and the per-field INSERT preparation of `bulk_create` (commit 254a408:
    1,073 -> ~6,700 answers per CPU-second; today "import native JSONL: answers per second
    4,338 answers/s at 100k answers", bench/RESULTS.md). The raw psycopg cursor: Django's
    wrapper has no copy(). Its errors still reach the caller as django.db errors
    (IntegrityError, ...), as bulk_create's would.
    """
    with db.wrap_database_errors, db.cursor() as wrapper, wrapper.cursor.copy(sql) as copy:
        yield copy


def sequence_ids_reserve(db, *, table: str, pk_column: str, n: int, sequences: dict) -> list:
    """`n` new ids from `table`'s primary-key sequence (`nextval` per row, so concurrent
    writers never get the same id); `sequences` caches the sequence's name by table.

    Why raw: PostgreSQL only, the ids the COPY rows (`copy_rows`) carry so later tables can
    point at them; the ORM has no way to reserve ids (same figure as `copy_rows`).
    """
    with db.cursor() as cursor:
        if table not in sequences:
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, pk_column])
            sequences[table] = cursor.fetchone()[0]
        cursor.execute(
            "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequences[table], n]
        )
        return [row[0] for row in cursor.fetchall()]


# -- the save's writes, queued on the caller's StatementBatch ------------------------------------
# Why raw, all of them: they ride in the save-and-next's round trips (commit cd0b6ff: 6
# statements instead of 18; "save-and-next server time p50, 1 analyst: 6.86 ms at 100k
# claims", bench/RESULTS.md); the ORM sends each as a round trip of its own.


def reservation_release(batch: StatementBatch, *, claim_id: int, user_id: int) -> None:
    """Queue the delete of the user's reservation of the claim."""
    from annotate.models import Reservation

    batch.add(
        f"DELETE FROM {Reservation._meta.db_table} WHERE claim_id = %s AND user_id = %s",
        [claim_id, user_id],
    )


def claim_label_count_add(batch: StatementBatch, *, claim_id: int, step: int) -> None:
    """Queue `label_count += step` on the claim (atomic: the database adds, no read-modify-write)."""
    from annotate.models import Claim

    batch.add(
        f"UPDATE {Claim._meta.db_table} SET label_count = label_count + %s WHERE id = %s",
        [step, claim_id],
    )


def membership_labels_saved_add(
    batch: StatementBatch, *, project_id: int, user_id: int, step: int
) -> None:
    """Queue `labels_saved += step` on the member's counter row (atomic, as above)."""
    from annotate.models import Membership

    batch.add(
        f"UPDATE {Membership._meta.db_table} SET labels_saved = labels_saved + %s"
        " WHERE project_id = %s AND user_id = %s",
        [step, project_id, user_id],
    )


def project_claims_complete_move(batch: StatementBatch, *, project_id: int, delta: int) -> None:
    """Queue the project's `claims_complete` moved by `delta` (+1, -1 never below 0, or 0)."""
    from annotate.models import Project

    table = Project._meta.db_table
    if delta > 0:
        batch.add(
            f"UPDATE {table} SET claims_complete = claims_complete + 1 WHERE id = %s",
            [project_id],
        )
    elif delta < 0:
        batch.add(
            f"UPDATE {table} SET claims_complete = claims_complete - 1"
            " WHERE id = %s AND claims_complete > 0",
            [project_id],
        )


def claim_review_clear(batch: StatementBatch, *, claim_id: int) -> None:
    """Queue `needs_review = false` on the claim."""
    from annotate.models import Claim

    batch.add(
        f"UPDATE {Claim._meta.db_table} SET needs_review = %s WHERE id = %s", [False, claim_id]
    )


def gold_delete(batch: StatementBatch, *, gold_id: int) -> None:
    """Queue the delete of gold row `gold_id`."""
    from annotate.models import Gold

    batch.add(f"DELETE FROM {Gold._meta.db_table} WHERE id = %s", [gold_id])


def gold_unanimous_insert(
    batch: StatementBatch, *, claim_id: int, verdict: str, reason: str, moment
) -> None:
    """Queue a new unanimous gold row for the claim (`moment`: a database-adapted datetime)."""
    from annotate.models import Gold

    batch.add(
        f"INSERT INTO {Gold._meta.db_table}"
        " (claim_id, verdict, source, decided_by_id, reason, decided_at)"
        " VALUES (%s, %s, %s, NULL, %s, %s)",
        [claim_id, verdict, Gold.Source.UNANIMOUS, reason, moment],
    )


def gold_update(batch: StatementBatch, *, gold_id: int, verdict: str, reason: str, moment) -> None:
    """Queue gold row `gold_id`'s new verdict, reason and decision time."""
    from annotate.models import Gold

    batch.add(
        f"UPDATE {Gold._meta.db_table} SET verdict = %s, reason = %s, decided_at = %s WHERE id = %s",
        [verdict, reason, moment, gold_id],
    )


# -- the save-and-next's lock-and-read, label writes, queue search and screen reads --------------
# Statement text only: each builder returns `(sql, params)` for the caller to queue on its
# StatementBatch; the caller parses the rows. Why raw, all of them: save-and-next in three round
# trips on PostgreSQL ("save-and-next server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts
# p95 13.8 ms", bench/RESULTS.md), plus each one's correctness reason below.


def claim_lock_statement(*, claim_id: int, project_id: int) -> tuple[str, list]:
    """The claim's row lock (`FOR UPDATE`; only where the backend has it), the first of
    `annotate.services.labels._claim_lock`'s two statements.

    Why raw: it rides in the same round trip as `claim_locked_read_statement` (one round trip
    for the lock and the read; "save-and-next server p50 6.9 ms, 1 analyst, 100k claims;
    16 analysts p95 13.8 ms"). The claim's lock serialises every writer of its labels and
    reservations, so the quota check is exact under concurrency.
    """
    from annotate.models import Claim

    return (
        f"SELECT id FROM {Claim._meta.db_table} WHERE id = %s AND project_id = %s FOR UPDATE",
        [claim_id, project_id],
    )


def claim_locked_read_statement(
    *, claim_id: int, project_id: int, user_id: int, now
) -> tuple[str, list]:
    """The claim's counters, labels and gold, the user's reservations (on it, and live ones on
    another claim of the project), other analysts' live reservations on it and the user's
    reveal verdict, read under the claim's lock: one row per label (at least one row when the
    claim is in the project).

    Why raw: one statement for what the ORM read in four (four query compilations), in the
    lock's round trip ("save-and-next server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts
    p95 13.8 ms"). Correctness: a statement of its own after the lock, so its fresh snapshot
    (READ COMMITTED) sees a label another analyst committed while the lock was awaited.
    """
    from annotate.models import Claim, Gold, Label, Reservation, Reveal

    claims, labels = Claim._meta.db_table, Label._meta.db_table
    golds, reservations = Gold._meta.db_table, Reservation._meta.db_table
    reveals = Reveal._meta.db_table
    statement = f"""
        SELECT c.id, c.project_id, c.answer_id, c.text, c.label_count, c.labels_required,
            c.needs_review,
            EXISTS (SELECT 1 FROM {reservations} r WHERE r.claim_id = c.id AND r.user_id = %s),
            EXISTS (
                SELECT 1 FROM {reservations} r INNER JOIN {claims} o ON o.id = r.claim_id
                WHERE r.user_id = %s AND o.project_id = c.project_id AND r.claim_id <> c.id
                AND r.expires_at > %s
            ),
            (SELECT v.verdict FROM {reveals} v WHERE v.claim_id = c.id AND v.user_id = %s),
            g.id, g.verdict, g.source, g.reason,
            l.id, l.annotator_id, l.verdict, l.needs_review, l.changed_after_reveal,
            c.inclusion_probability, c.active_stratum,
            EXISTS (
                SELECT 1 FROM {reservations} r
                WHERE r.claim_id = c.id AND r.user_id = %s AND r.ahead
            ),
            (
                SELECT COUNT(*) FROM {reservations} r
                WHERE r.claim_id = c.id AND r.user_id <> %s AND r.expires_at > %s
            )
        FROM {claims} c
        LEFT JOIN {golds} g ON g.claim_id = c.id
        LEFT JOIN {labels} l ON l.claim_id = c.id
        WHERE c.id = %s AND c.project_id = %s
    """
    params = [
        user_id,
        user_id,
        connection.ops.adapt_datetimefield_value(now),
        user_id,
        user_id,
        user_id,
        connection.ops.adapt_datetimefield_value(now),
        claim_id,
        project_id,
    ]
    return statement, params


def label_insert_statement(
    *,
    claim_id: int,
    annotator_id: int,
    columns: tuple[str, ...],
    values: list,
    stratum,
    changed: bool,
    guideline,
    moment,
    design: str = "",
    inclusion_probability: float | None = None,
) -> tuple[str, list]:
    """A new label: `columns` (the label's state, `LABEL_STATE_COLUMNS`) with `values`, the
    stratum (database-prepared), `changed_after_reveal`, the guideline version in force,
    `moment` (a database-adapted datetime) as created and updated time, and the queue design
    it was drawn under with its π.

    Why raw: in the save's round trip with the counters and gold ("save-and-next server p50
    6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms"); the ORM's save is a round trip
    of its own.
    """
    from annotate.models import Label

    return (
        f"INSERT INTO {Label._meta.db_table} (claim_id, annotator_id, {', '.join(columns)},"
        " stratum, needs_review, changed_after_reveal, guideline_version, created_at, updated_at,"
        " design, inclusion_probability)"
        f" VALUES (%s, %s, {', '.join(['%s'] * len(columns))}, %s, %s, %s, %s, %s, %s, %s, %s)",
        [
            claim_id,
            annotator_id,
            *values,
            stratum,
            False,
            changed,
            guideline,
            moment,
            moment,
            design,
            inclusion_probability,
        ],
    )


def label_id_of_statement(*, claim_id: int, annotator_id: int) -> tuple[str, list]:
    """A subquery for the id of the annotator's label on the claim (a label inserted earlier in
    the same batch, whose id the caller does not know): for `label_history_insert_statement`.

    Why raw: the history row goes in the insert's round trip (the save-and-next figure above).
    """
    from annotate.models import Label

    return (
        f"(SELECT id FROM {Label._meta.db_table} WHERE claim_id = %s AND annotator_id = %s)",
        [claim_id, annotator_id],
    )


def label_update_statement(
    *,
    label_id: int,
    columns: tuple[str, ...],
    values: list,
    stratum,
    changed: bool,
    guideline,
    moment,
    design: str = "",
    inclusion_probability: float | None = None,
) -> tuple[str, list]:
    """Label `label_id`'s new state, as `label_insert_statement` (`moment`: updated time).

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    from annotate.models import Label

    return (
        f"UPDATE {Label._meta.db_table} SET {', '.join(f'{column} = %s' for column in columns)},"
        " stratum = %s, needs_review = %s, changed_after_reveal = %s,"
        " guideline_version = %s, updated_at = %s, design = %s, inclusion_probability = %s"
        " WHERE id = %s",
        [
            *values,
            stratum,
            False,
            changed,
            guideline,
            moment,
            design,
            inclusion_probability,
            label_id,
        ],
    )


def label_history_insert_statement(
    *,
    label_id: tuple[str, list],
    claim_id: int,
    annotator_id: int,
    action: str,
    columns: tuple[str, ...],
    values: list,
    changed: bool,
    moment,
    more_spans=None,
) -> tuple[str, list]:
    """The history row of a save: the label's state after it. `label_id` is SQL with its
    params, `("%s", [id])` or `label_id_of_statement(...)`; `columns` are the history's names
    of the state (`HISTORY_STATE_COLUMNS`); `more_spans` its spans after the first
    (database-prepared JSON, or None).

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    from annotate.models import LabelHistory

    label_sql, label_params = label_id
    return (
        f"INSERT INTO {LabelHistory._meta.db_table} (label_id_at_time, claim_id, annotator_id,"
        f" action, {', '.join(columns)}, more_spans, changed_after_reveal, changed_at)"
        f" VALUES ({label_sql}, %s, %s, %s, {', '.join(['%s'] * len(columns))}, %s, %s, %s)",
        [*label_params, claim_id, annotator_id, action, *values, more_spans, changed, moment],
    )


def evidence_spans_delete_statement(*, label_id: int) -> tuple[str, list]:
    """Drop label `label_id`'s spans after the first (a save replaces them).

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    from annotate.models import EvidenceSpan

    return f"DELETE FROM {EvidenceSpan._meta.db_table} WHERE label_id = %s", [label_id]


def evidence_span_insert_statement(
    *, label_id: tuple[str, list], number: int, passage_id: int, start: int, end: int, quote: str
) -> tuple[str, list]:
    """One span after the first of a label (`number` 2, 3 …); `label_id` as for
    `label_history_insert_statement`.

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    from annotate.models import EvidenceSpan

    label_sql, label_params = label_id
    table = EvidenceSpan._meta.db_table
    quote_name = connection.ops.quote_name
    return (
        f"INSERT INTO {table} (label_id, number, passage_id, start, {quote_name('end')}, quote)"
        f" VALUES ({label_sql}, %s, %s, %s, %s, %s)",
        [*label_params, number, passage_id, start, end, quote],
    )


def queue_candidates_statement(
    *,
    project_id: int,
    user_id: int,
    now,
    active_stratum: str | None = None,
    routed_out: bool = False,
) -> tuple[str, list]:
    """The unrestricted queue's first open claim the user may take, in queue order (walks
    claim_open_queue_idx, or claim_open_stratum_idx within `active_stratum`, the stratified
    design's chosen stratum): its id. `routed_out`: claims routed to the judge are not served
    (selective judging on). Locked `FOR UPDATE OF c SKIP LOCKED` where the backend can (SQLite
    serialises writers instead).

    Why raw: the ORM spent a fifth of a save-and-next's CPU building and compiling these
    conditions, and the search rides in the label writes' round trip ("save-and-next server
    p50 6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms"). Correctness: SKIP LOCKED,
    so two analysts pressing "next" at once never wait on each other's candidate.
    """
    from annotate.models import Answer, Claim, ClaimSkip, Label, Reservation

    claims, answers = Claim._meta.db_table, Answer._meta.db_table
    labels, reservations = Label._meta.db_table, Reservation._meta.db_table
    skips = ClaimSkip._meta.db_table
    lock = ""
    if connection.features.has_select_for_update_skip_locked:
        lock = "FOR UPDATE OF c SKIP LOCKED"
    statement = f"""
        SELECT c.id FROM {claims} c INNER JOIN {answers} a ON a.id = c.answer_id
        WHERE c.project_id = %s AND c.label_count < c.labels_required AND NOT a.abstention
        {"AND c.active_stratum = %s" if active_stratum is not None else ""}
        {"AND NOT c.routed_to_judge" if routed_out else ""}
        AND NOT EXISTS (SELECT 1 FROM {labels} l WHERE l.claim_id = c.id AND l.annotator_id = %s)
        AND NOT EXISTS (SELECT 1 FROM {skips} k WHERE k.claim_id = c.id AND k.user_id = %s)
        AND (
            SELECT COUNT(*) FROM {reservations} r
            WHERE r.claim_id = c.id AND r.user_id <> %s AND r.expires_at > %s
        ) < c.labels_required - c.label_count
        ORDER BY c.queue_key, c.id
        LIMIT 1 {lock}
    """
    params = [
        project_id,
        *([active_stratum] if active_stratum is not None else []),
        user_id,
        user_id,
        user_id,
        connection.ops.adapt_datetimefield_value(now),
    ]
    return statement, params


def own_reservation_statement(
    *, project_id: int, user_id: int, now, routed_out: bool = False
) -> tuple[str, list]:
    """The claim of the project the user holds a live reservation on, still open and neither
    labelled nor skipped by them, first in queue order, locked (SKIP LOCKED: another tab of
    theirs may be saving it): its id. The unrestricted queue's first choice
    (`annotate.services.queue.claim_take_next`); walks the user's few reservations
    (reservation_user_idx).

    Why raw: a save-and-next whose analyst holds the claim rendered ahead (label.js asks for
    it on every screen) finds it here, so it rides in the label writes' round trip as the
    queue's search does; the ORM's query was a round trip and a compilation of its own, and
    its claim's screen reads two more ("save-and-next statements per POST, holding the claim
    ahead: 6, as without; the ORM's path took 11", tests/annotate/test_screens_prefetch.py).
    """
    from annotate.models import Claim, ClaimSkip, Label, Reservation

    claims, labels = Claim._meta.db_table, Label._meta.db_table
    reservations, skips = Reservation._meta.db_table, ClaimSkip._meta.db_table
    lock = ""
    if connection.features.has_select_for_update_skip_locked:
        lock = "FOR UPDATE OF c SKIP LOCKED"
    statement = f"""
        SELECT c.id FROM {reservations} r INNER JOIN {claims} c ON c.id = r.claim_id
        WHERE r.user_id = %s AND r.expires_at > %s AND c.project_id = %s
        AND c.label_count < c.labels_required
        {"AND NOT c.routed_to_judge" if routed_out else ""}
        AND NOT EXISTS (SELECT 1 FROM {labels} l WHERE l.claim_id = c.id AND l.annotator_id = %s)
        AND NOT EXISTS (SELECT 1 FROM {skips} k WHERE k.claim_id = c.id AND k.user_id = %s)
        ORDER BY c.queue_key, c.id
        LIMIT 1 {lock}
    """
    params = [
        user_id,
        connection.ops.adapt_datetimefield_value(now),
        project_id,
        user_id,
        user_id,
    ]
    return statement, params


def active_strata_statement(*, project_id: int) -> tuple[str, list]:
    """The project's strata of the stratified design with their counts (`ActiveStratum`):
    rows (name, claims, labelled, supported, prior_p, prior_weight), for the Neyman choice.

    Why raw: read on every save-and-next of a stratified project; a handful of rows.
    """
    from annotate.models import ActiveStratum

    return (
        f"SELECT name, claims, labelled, supported, prior_p, prior_weight"
        f" FROM {ActiveStratum._meta.db_table} WHERE project_id = %s ORDER BY name",
        [project_id],
    )


def active_stratum_move(
    batch: StatementBatch, *, project_id: int, name: str, labelled: int, supported: int
) -> None:
    """Queue `labelled += labelled, supported += supported` on the project's stratum `name`
    (atomic: the database adds). Queue it just before the project's completion counter (the
    lock order of `annotate.services.queue`).

    Why raw: rides in the save's last round trip (the save-and-next figure above).
    """
    from annotate.models import ActiveStratum

    batch.add(
        f"UPDATE {ActiveStratum._meta.db_table} SET labelled = labelled + %s,"
        " supported = supported + %s WHERE project_id = %s AND name = %s",
        [labelled, supported, project_id, name],
    )


def reservation_if_room_statement(
    *, claim_id: int, user_id: int, now, expires, ahead: bool = False
) -> tuple[str, list]:
    """Reserve claim `claim_id` for the user until `expires` if its labels and other analysts'
    live reservations (at `now`) still leave room and the user has not labelled it; RETURNING
    a row when it reserved. Run it holding the claim's row lock. `ahead`: taken for the screen
    rendered ahead (`Reservation.ahead`); a reservation the queue served stays served.

    Why raw: correctness. The conditional INSERT … SELECT … ON CONFLICT re-checks the quota
    atomically with the reservation's upsert: a new statement reads with a fresh snapshot (READ
    COMMITTED), which sees every reservation and label committed before the lock was granted;
    the ORM has no conditional INSERT. One statement in the screen reads' round trip
    ("save-and-next server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms").
    """
    from annotate.models import Claim, Label, Reservation

    reservation, label, claims = (
        Reservation._meta.db_table,
        Label._meta.db_table,
        Claim._meta.db_table,
    )
    adapt = connection.ops.adapt_datetimefield_value
    statement = f"""
        INSERT INTO {reservation} (claim_id, user_id, expires_at, ahead)
        SELECT %s, %s, %s, %s
        WHERE (
            SELECT COUNT(*) FROM {reservation}
            WHERE claim_id = %s AND user_id <> %s AND expires_at > %s
        ) < (SELECT labels_required - label_count FROM {claims} WHERE id = %s)
        AND NOT EXISTS (SELECT 1 FROM {label} WHERE claim_id = %s AND annotator_id = %s)
        ON CONFLICT (claim_id, user_id) DO UPDATE SET expires_at = excluded.expires_at,
            ahead = {reservation}.ahead AND excluded.ahead
        RETURNING claim_id
    """
    params = [
        claim_id,
        user_id,
        adapt(expires),
        ahead,
        claim_id,
        user_id,
        adapt(now),
        claim_id,
        claim_id,
        user_id,
    ]
    return statement, params


def screen_reads_statements(*, claim_id: int) -> dict[str, tuple[str, list]]:
    """The labelling screen's reads of claim `claim_id`: `"claims"`, the claims of its answer
    in reading order; `"answer"`, the answer; `"passages"`, its pile in rank order. Each
    selects every concrete field (`model_rows(...).columns`), for `ModelRows.instances`.

    Why raw: they ride in the reservation's round trip, the save-and-next's last ("save-and-next
    server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms"); the ORM sends each
    as a round trip of its own.
    """
    from annotate.models import Answer, Claim, Passage

    claims, answers, passages = (model_rows(model) for model in (Claim, Answer, Passage))
    claim_table, answer_table = Claim._meta.db_table, Answer._meta.db_table
    passage_table = Passage._meta.db_table
    answer_of = f"(SELECT answer_id FROM {claim_table} WHERE id = %s)"
    return {
        "claims": (
            f"SELECT {claims.columns('s')} FROM {claim_table} s WHERE s.answer_id = {answer_of}"
            " ORDER BY s.position, s.id",
            [claim_id],
        ),
        "answer": (
            f"SELECT {answers.columns('a')} FROM {answer_table} a WHERE a.id = {answer_of}",
            [claim_id],
        ),
        "passages": (
            f"SELECT {passages.columns('p')} FROM {passage_table} p"
            f" WHERE p.answer_id = {answer_of} ORDER BY p.rank",
            [claim_id],
        ),
    }
