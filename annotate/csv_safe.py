"""CSV that is safe to open in a spreadsheet (formula-injection neutralisation, OWASP's rule).

The lowest floor, so every app's pages and commands write their CSV with it without reaching
upward: the claims export (interchange, which also re-exports these names), the review page's
contradictions (annotate), the report's audit card (metrics).
"""

import csv

# A spreadsheet reads a cell starting with one of these as a formula (OWASP, "CSV Injection").
FORMULA_TRIGGERS = frozenset("=+-@\t\r")


def csv_neutral(value):
    """`value` safe to open in a spreadsheet: a text starting with = + - @ tab or carriage
    return gets a leading single quote (OWASP's rule), so it shows as text and never runs.

    The rule of every CSV FaithAudit writes (claims export, contradictions, audit card; in SQL
    as `csv_sql`). Only texts: a number the product writes from a numeric column (a quote's
    offset, a confidence, an interval's bound, -0.5 included) stays a number; the same figure
    inside a text ("-0.05 – 0.30") is neutralised like any text.
    """
    if value.__class__ is str and value[:1] in FORMULA_TRIGGERS:
        return "'" + value
    return value


class NeutralCsvWriter:
    """`csv.writer(out)` whose rows go through `csv_neutral` first: the writer of every CSV
    the product builds row by row (contradictions, audit card)."""

    def __init__(self, out, **kwargs):
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row):
        return self._writer.writerow([csv_neutral(value) for value in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)
