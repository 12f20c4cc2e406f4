"""Raw SQL lives here, each statement with the figure it bought (the rule: annotate/sql/).

The statement wraps a queryset's own compiled SQL (`query.sql_with_params()`): the ORM writes
the query, only the way its rows come back is hand-made. (The SQLite read of the same query
went back to the ORM's `values_list`: one query either way, no figure bought.)
"""

from django.db import connection


def rows_as_csv_text(sql: str, params, *, names: list[str], quoted) -> str | None:
    """PostgreSQL: the rows of `sql` folded by the server into one CSV text (one protocol
    message instead of a million); `quoted` columns (free text, JSON) are CSV-quoted so a
    comma cannot shift a column, the others are numbers or fixed choices. None for no rows.

    Why raw: a million rows in about a second (commit c025ec3); today "report snapshot: time
    in metrics.selectors reads 4.78 s at 1M claims" of "report snapshot total 9.25 s"
    (bench/RESULTS.md).
    """
    aliases = ", ".join(f"c{i}" for i in range(len(names)))
    fields = " || ',' || ".join(
        f"'\"' || replace(coalesce(c{i}::text, ''), '\"', '\"\"') || '\"'"
        if name in quoted
        else f"coalesce(c{i}::text, '')"
        for i, name in enumerate(names)
    )
    statement = f"SELECT string_agg({fields}, E'\\n') FROM ({sql}) AS rows ({aliases})"
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()[0]
