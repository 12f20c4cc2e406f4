"""Moved to `annotate.sql` (raw SQL lives there, each statement with the figure it bought);
these names stay importable from here for code written before the move."""

from annotate.sql import ModelRows, StatementBatch, model_rows

__all__ = ["ModelRows", "StatementBatch", "model_rows"]
