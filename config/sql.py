"""Raw SQL lives here, each statement with the figure it bought (the rule: annotate/sql/).

config is the top floor; its one statement reads Django's own tables (sessions, users), so it
keeps it here rather than lending it to a lower app.
"""

from django.db import connection

from annotate.sql import model_rows, statement_rows


def row_by(model, column: str, value, *, extra: str = "", params=()):
    """The `model` instance whose `column` is `value` (and `extra`, an `AND ...` condition with
    `params`), built with the ORM's converters; None if there is none.

    Why raw: every page's first two reads (the session, its user). The ORM spends more time
    compiling each query than PostgreSQL answering it: 0.9 -> 0.5 ms of a request's Python
    (commit f4d8601, bench/profile_save_next.py), on the path of "save-and-next server time
    p50, 1 analyst: 6.86 ms at 100k claims" (bench/RESULTS.md). A prepared statement on
    PostgreSQL (`statement_rows`): planned once per connection, not per request.
    """
    rows = model_rows(model)
    found = statement_rows(
        f"SELECT {rows.columns('t')} FROM {model._meta.db_table} t"
        f" WHERE t.{connection.ops.quote_name(column)} = %s{extra}",
        [value, *params],
    )
    return rows.instance(found[0]) if found else None
