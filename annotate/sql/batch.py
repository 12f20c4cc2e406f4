"""Raw SQL: several statements in one round trip (`StatementBatch`), and model instances from
their rows (`ModelRows`). Why each is raw: the package docstring (annotate/sql/__init__.py)."""

import functools
from collections.abc import Callable
from types import SimpleNamespace

import psycopg
from django.conf import settings
from django.db import connection
from psycopg import ClientCursor
from psycopg.pq import ExecStatus


class StatementBatch:
    def __init__(self):
        self._statements: list[tuple[str, list]] = []
        self._checks: list[tuple[int, Callable[[list[tuple] | None], None]]] = []

    def add(
        self,
        sql: str,
        params: list | tuple = (),
        *,
        check: Callable[[list[tuple] | None], None] | None = None,
    ) -> int:
        """Queue a statement; returns its index in `run()`'s results. `check`, when given, is
        called with the statement's rows once the batch has run (whichever `run` or `run_then`
        runs it), before the results are handed back: it raises to refuse them (the caller's
        transaction then rolls back what the batch wrote)."""
        self._statements.append((sql.strip().rstrip(";"), list(params)))
        index = len(self._statements) - 1
        if check is not None:
            self._checks.append((index, check))
        return index

    def extend(self, other: "StatementBatch") -> None:
        """Move `other`'s queued statements (and their checks) to the end of this batch."""
        offset = len(self._statements)
        self._statements.extend(other._statements)
        self._checks.extend((index + offset, check) for index, check in other._checks)
        other._statements, other._checks = [], []

    def run_then(self, sql: str, params: list | tuple = ()) -> list[tuple]:
        """Run the queued statements and then `sql` (in the same round trip): `sql`'s rows."""
        index = self.add(sql, params)
        return self.run()[index] or []

    def __len__(self) -> int:
        return len(self._statements)

    def run(self) -> list[list[tuple] | None]:
        """Run the queued statements in order; each one's rows (None when it returns none)."""
        statements, self._statements = self._statements, []
        checks, self._checks = self._checks, []
        results = _results(statements)
        for index, check in checks:
            check(results[index])
        return results


def statement_rows(sql: str, params: list | tuple = ()) -> list[tuple]:
    """One hand-written statement's rows, on its own cursor: prepared on PostgreSQL (see
    `prepared_statements`). For the reads every page starts with (session, user, membership);
    not a `StatementBatch`, whose `run()` is the unit of a save's transaction."""
    return _results([(sql.strip().rstrip(";"), list(params))])[0] or []


def _results(statements: list[tuple[str, list]]) -> list[list[tuple] | None]:
    if not statements:
        return []
    results: list[list[tuple] | None] = []
    with _cursor(statements) as cursor:
        if _one_round_trip(cursor) and len(statements) > 1:
            cursor.execute(
                ";\n".join(sql for sql, _ in statements),
                [param for _, params in statements for param in params],
            )
            for index in range(len(statements)):
                if index:
                    cursor.nextset()
                results.append(cursor.fetchall() if _returns_rows(cursor) else None)
        else:
            for sql, params in statements:
                cursor.execute(sql, params)
                results.append(cursor.fetchall() if _returns_rows(cursor) else None)
    return results


_ROWS_STATUS = frozenset({ExecStatus.TUPLES_OK, ExecStatus.SINGLE_TUPLE, ExecStatus.TUPLES_CHUNK})


def _returns_rows(cursor) -> bool:
    """Whether the cursor's current result has rows to fetch (its `description` is not None),
    read off psycopg's result itself where there is one: psycopg's `description` builds a
    Column for every column at each access (~160 per save-and-next, bench/profile_save_next).
    The test is psycopg's own, from `description`."""
    raw = cursor.cursor
    if isinstance(raw, _Pipelined):
        raw = raw.current
    result = getattr(raw, "pgresult", None)
    if result is None:  # SQLite, or nothing run: what `description` says
        return cursor.description is not None
    return bool(result.nfields) or result.status in _ROWS_STATUS


def prepared_statements() -> bool:
    """Whether batches run as prepared statements: on PostgreSQL unless the
    FAITHAUDIT_PREPARED_STATEMENTS setting is off (behind a connection pooler in transaction
    mode that cannot keep them, such as PgBouncer before 1.21)."""
    return connection.vendor == "postgresql" and settings.FAITHAUDIT_PREPARED_STATEMENTS


def _cursor(statements):
    """A Django cursor for `statements`: Django's own (client-side binding) unless batches are
    prepared; then one whose `execute()` sends them as prepared statements in one pipeline.
    Either way Django's execute wrappers, query log and error translation see the batch."""
    if not prepared_statements():
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    pipelined = _Pipelined(connection.connection, statements)
    if connection.queries_logged:
        return connection.make_debug_cursor(pipelined)
    return connection.make_cursor(pipelined)


class _Pipelined:
    """The cursor under Django's CursorWrapper for a prepared batch. `execute(sql, params)`
    gets the `;`-joined text and its parameters (which Django logs and times as one query, as
    it does a client-side batch) and sends each statement of the batch instead, with
    server-side binding, as a prepared statement, all in one psycopg pipeline: one round trip,
    one Sync. `nextset()`, `description`, `fetchall()` then walk their results in order.

    Why by hand: PostgreSQL plans a statement each time it receives its text, and the
    save-and-next's are planned in longer than they run (EXPLAIN ANALYZE on the bench's 100k
    project, warm: the claim's lock and read 0.64 ms planning / 0.15 ms execution, the queue's
    search 0.71 / 0.14, the membership read 0.18 / 0.04). A prepared statement is planned
    once per connection (a generic plan after five custom ones when it costs no more), but
    psycopg's client-side binding, which lets `;`-joined statements go as one query, cannot
    prepare, and Django offers server-side binding only for every query of the project.
    psycopg's pipeline mode keeps the single round trip with server-side binding; nothing off
    the shelf pairs the two under a Django cursor. The connection's `prepare_threshold`
    (settings: DATABASES OPTIONS) is set too high for anything to be prepared but what asks
    (`prepare=True` here): ORM queries keep client-side binding and are never prepared.
    """

    def __init__(self, raw, statements):
        self._raw = raw
        self._statements = statements
        self._cursors: list[psycopg.Cursor] = []
        self._at = 0
        self._sent: tuple[str, list] | None = None

    def execute(self, sql, params=None):
        self._sent = (sql, params)
        cursors = []
        with self._raw.pipeline():
            for sql, params in self._statements:
                cursor = psycopg.Cursor(self._raw)
                cursors.append(cursor)
                cursor.execute(sql, params, prepare=True)
        self._cursors, self._at = cursors, 0

    def nextset(self):
        if self._at + 1 >= len(self._cursors):
            return None
        self._at += 1
        return True

    @property
    def current(self) -> psycopg.Cursor | None:
        """The psycopg cursor of the statement whose result is being walked."""
        return self._cursors[self._at] if self._cursors else None

    @property
    def description(self):
        return self._cursors[self._at].description if self._cursors else None

    @property
    def rowcount(self):
        return self._cursors[self._at].rowcount if self._cursors else -1

    def fetchall(self):
        return self._cursors[self._at].fetchall()

    def fetchone(self):
        return self._cursors[self._at].fetchone()

    @property
    def _query(self):
        """What Django's query log reads (`last_executed_query`, only when queries are logged):
        the batch's text with its parameters, as a client-side batch would have sent it."""
        if self._sent is None:
            return None
        sql, params = self._sent
        return SimpleNamespace(query=ClientCursor(self._raw).mogrify(sql, params).encode())

    def close(self):
        for cursor in self._cursors:
            cursor.close()


def _one_round_trip(cursor) -> bool:
    """Whether this cursor sends `;`-joined statements as one query (psycopg's ClientCursor,
    or a prepared batch's pipeline)."""
    if connection.vendor != "postgresql":
        return False

    return isinstance(cursor.cursor, ClientCursor | _Pipelined)


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
