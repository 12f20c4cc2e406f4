"""Raw SQL lives here, each statement with the figure it bought (bench/RESULTS.md) or the
correctness reason beside it; anything that bought nothing measurable is ORM code. One module
per app (`annotate/sql.py`, `judges` has none, `metrics/sql.py`, `interchange/sql.py`,
`config/sql.py`); tests/test_sql_home.py fails on `cursor.execute`, `.raw(`, `RawSQL` or
`.extra(` anywhere else.

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
  (The lock-and-read, label-write, queue-search and screen-read statements are still built
  beside their logic in services/labels.py and services/queue.py, and run only through
  `StatementBatch`.)
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
