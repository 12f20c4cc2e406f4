"""Raw SQL: several statements in one round trip (`StatementBatch`), and model instances from
their rows (`ModelRows`). Why each is raw: the package docstring (annotate/sql/__init__.py)."""

import functools

from django.db import connection
from psycopg import ClientCursor


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
