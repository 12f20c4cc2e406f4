"""Writing many rows at once: PostgreSQL's COPY there, `bulk_create` on any other database.

Callers hand over plain tuples of column values named by attname (`"answer_id"`, not
`"answer"`), never model instances: on PostgreSQL the rows go through psycopg 3's
`cursor.copy()` untouched, which skips the per-row `Model.__init__` and the per-field SQL
preparation of an INSERT that dominated imports. Ids a later table needs as foreign keys are
reserved from the table's sequence first (`nextval` per row, so concurrent writers never get
the same id) and written with the rows. Columns the caller leaves out get the model field's
default, as `Model()` would give them (`auto_now`/`auto_now_add` fields: `now`).

On SQLite (`make run`'s default) the same tuples become model instances and `bulk_create`
writes them, returning their ids.

The COPY and the id reservation are raw SQL, in `annotate.sql` with the figure they bought.

Everything runs on the caller's connection, inside the caller's transaction: an error after
some COPYs rolls them back with the rest.
"""

import json
from collections.abc import Sequence

from django.db import connections, models
from django.db.models.fields import NOT_PROVIDED
from django.utils import timezone

from annotate.sql import copy_rows, copy_statement, sequence_ids_reserve

__all__ = ["RowsInserter"]


class RowsInserter:
    def __init__(self, *, using: str = "default"):
        self.connection = connections[using]
        self.copy = self.connection.vendor == "postgresql"
        self.now = timezone.now()
        self._sequences: dict[str, str] = {}
        self._plans: dict[tuple, tuple[str, list, list]] = {}

    def insert(
        self,
        model: type[models.Model],
        attnames: Sequence[str],
        rows: Sequence[tuple],
        *,
        ids: bool = False,
    ) -> list[int]:
        """Write `rows` (tuples of `attnames`' values) into `model`'s table; with `ids`, return
        the new rows' primary keys in row order (else an empty list)."""
        if not rows:
            return []
        if not self.copy:
            objects = [model(**dict(zip(attnames, row, strict=True))) for row in rows]
            model._default_manager.bulk_create(objects)
            return [obj.pk for obj in objects] if ids else []
        sql, json_columns, tail = self._plan(model, tuple(attnames), ids)
        new_ids = self._reserve(model, len(rows)) if ids else []
        with copy_rows(self.connection, sql) as copy:  # annotate.sql: why COPY
            write = copy.write_row
            if json_columns:
                rows = [self._json(row, json_columns) for row in rows]
            if ids:
                for pk, row in zip(new_ids, rows, strict=True):
                    write((pk, *row, *tail))
            elif tail:
                for row in rows:
                    write((*row, *tail))
            else:
                for row in rows:
                    write(row)
        return new_ids

    # -- PostgreSQL ---------------------------------------------------------------------------

    def _plan(self, model: type[models.Model], attnames: tuple, ids: bool) -> tuple:
        """The COPY statement, which given columns hold JSON, and the default cells appended."""
        key = (model, attnames, ids)
        if key not in self._plans:
            meta = model._meta
            by_attname = {field.attname: field for field in meta.concrete_fields}
            given = [by_attname[name] for name in attnames]
            columns = ([meta.pk.column] if ids else []) + [field.column for field in given]
            json_columns = [
                (index, field.encoder)
                for index, field in enumerate(given)
                if isinstance(field, models.JSONField)
            ]
            tail = []
            for field in meta.concrete_fields:
                if field.primary_key or field.attname in attnames:
                    continue
                if field.db_default is not NOT_PROVIDED:
                    continue  # the database fills it
                if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
                    value = self.now
                else:
                    value = field.get_default()
                if isinstance(field, models.JSONField):
                    value = json.dumps(value, cls=field.encoder)
                columns.append(field.column)
                tail.append(value)
            quote = self.connection.ops.quote_name
            sql = copy_statement(table=meta.db_table, columns=columns, quote=quote)
            self._plans[key] = (sql, json_columns, tail)
        return self._plans[key]

    @staticmethod
    def _json(row: tuple, json_columns: list) -> tuple:
        cells = list(row)
        for index, encoder in json_columns:
            value = cells[index]
            # Most tags and metadata are empty: no encoder call for those.
            cells[index] = (
                "[]" if value == [] else "{}" if value == {} else json.dumps(value, cls=encoder)
            )
        return tuple(cells)

    def _reserve(self, model: type[models.Model], n: int) -> list[int]:
        return sequence_ids_reserve(
            self.connection,
            table=model._meta.db_table,
            pk_column=model._meta.pk.column,
            n=n,
            sequences=self._sequences,
        )
