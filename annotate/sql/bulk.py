"""Raw SQL: PostgreSQL COPY and sequence id reservation for imports. Why each is raw: the
package docstring (annotate/sql/__init__.py)."""

from contextlib import contextmanager


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
