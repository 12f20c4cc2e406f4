"""How a column read becomes a DataFrame: ONE query, fetched straight from the cursor as CSV
text into pandas (`metrics.sql.rows_as_csv_text`), and the column types fixed after.
"""

import io

import pandas as pd
from django.db import connection
from django.db.models import QuerySet

from metrics.sql import rows_as_csv_text


def _frame(queryset: QuerySet, columns: dict[str, str], quoted: tuple = ()) -> pd.DataFrame:
    """Run `queryset.values_list(*columns)` as one SQL query, rows straight into a DataFrame.

    `columns` maps ORM field paths to DataFrame column names. On PostgreSQL the rows come out
    as one CSV text into `pandas.read_csv` (a million rows in about a second); elsewhere
    (SQLite, the demo) through the ORM's values_list. Booleans come back as True/False,
    NULL as NaN/None, and text columns never NaN ("" for empty). Callers sort where order
    matters.
    """
    names = list(columns.values())
    if connection.vendor == "postgresql":
        sql, params = queryset.values_list(*columns).query.sql_with_params()
        text = rows_as_csv_text(sql, params, names=names, quoted=quoted)
        if not text:
            return pd.DataFrame({name: pd.Series(dtype=object) for name in names})
        return pd.read_csv(
            io.StringIO(text), names=names, header=None, keep_default_na=False, na_values=[""]
        )
    # Elsewhere the ORM's own one query (it was a cursor over the same SQL; no figure bought).
    rows = list(queryset.values_list(*columns))
    return pd.DataFrame.from_records(rows, columns=names, nrows=len(rows))


def _boolean(series: pd.Series) -> pd.Series:
    """PostgreSQL CSV 't'/'f', SQLite 1/0, or Python bools → True/False/None (object)."""

    def convert(value):
        if value is None or value != value:  # NULL, NaN
            return None
        if isinstance(value, str):
            return value in ("t", "true", "True", "1")
        return bool(value)

    return series.map(convert).astype(object)


def _text(frame: pd.DataFrame, *names: str) -> pd.DataFrame:
    for name in names:
        # To object first: a text column read all-NULL comes as float64, which "" cannot fill.
        column = frame[name].astype(object)
        frame[name] = column.fillna("").astype(str) if len(frame) else column
    return frame
