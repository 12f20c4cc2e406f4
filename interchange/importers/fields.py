"""Typed reads from one parsed record, each failure recorded with its field path.

A `FieldReader` belongs to one record: parsers call `reader.get(obj, "text", "pile[2]", "string")`
and get the value or None, the problem (missing, wrong type) noted as
`line 7, field pile[2].text: expected a string, got 12`. A record with any problem is not written.
"""

import ast
import json
import math
from typing import Any

from annotate.limits import Limits, chars_message, count_message
from annotate.models import Verdict
from interchange.importers.issues import ImportIssue
from interchange.importers.jsondecode import (
    MAX_DEPTH,
    NestingTooDeep,
    SafeDecoder,
    depth_exceeds,
    nesting_message,
    path_text,
    refused_in,
    run_start,
)

_KINDS = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "id": (lambda v: isinstance(v, str | int) and not isinstance(v, bool), "a string or number"),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
    # Positions and offsets are stored in 32-bit columns: larger ones are refused here, by field.
    "number": (
        # A comparison, not math.isfinite: that overflows on a huge integer (10**400).
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and -1e308 <= v <= 1e308,
        "a number",
    ),
    "boolean": (lambda v: isinstance(v, bool), "true or false"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "object": (lambda v: isinstance(v, dict), "an object"),
}


_ABSENT = object()
MAX_INTEGER = 2**31 - 1


def text_storable(text: str) -> bool:
    """`FieldReader.storable` for a string, without noting anything: the common case, fast
    (`isascii` is a flag lookup, so only non-ASCII text is encoded to look for surrogates)."""
    if "\x00" in text or "\\u0000" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(value: Any, limit: int = 60) -> str:
    """A value as the file spelled it (JSON), shortened for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value) if not isinstance(value, list | dict) else type(value).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def join(prefix: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


class FieldReader:
    def __init__(self, location: str):
        self.location = location
        self.issues: list[ImportIssue] = []
        # Not problems: fields the format does not know, ignored but named so none is dropped
        # in silence.
        self.warnings: list[ImportIssue] = []

    def unknown(self, obj: Any, known: frozenset[str], prefix: str) -> None:
        """Name each field of `obj` that is not in `known` as a warning (the field is ignored)."""
        if not isinstance(obj, dict) or obj.keys() <= known:
            return
        for key in obj:
            if key not in known:
                self.warnings.append(
                    ImportIssue(self.location, join(prefix, str(key)), "unknown field, ignored")
                )

    def fail(self, path: str, message: str) -> None:
        self.issues.append(ImportIssue(self.location, path, message))

    def check(self, value: Any, path: str, kind: str) -> bool:
        test, described = _KINDS[kind]
        if test(value):
            return not isinstance(value, str) or text_storable(value) or self.storable(value, path)
        self.fail(path, f"expected {described}, got {shown(value)}")
        return False

    def get(
        self,
        obj: dict,
        key: str,
        prefix: str,
        kind: str,
        *,
        required: bool = True,
        default: Any = None,
        max_length: int | None = None,
    ) -> Any:
        """obj[key] checked as `kind`; None (and a noted problem) when missing or wrong.

        An optional field that is absent or null gives `default`.
        """
        # Called for every field of every record: the field path is only built for a problem.
        value = obj.get(key, _ABSENT)
        if value is _ABSENT or (value is None and not required):
            if required:
                self.fail(join(prefix, key), "missing (this field is required)")
            return default
        test, described = _KINDS[kind]
        if not test(value):
            self.fail(join(prefix, key), f"expected {described}, got {shown(value)}")
            return default if not required else None
        if isinstance(value, str) and not text_storable(value):
            self.storable(value, join(prefix, key))
            return default if not required else None
        if kind == "integer" and not -MAX_INTEGER <= value <= MAX_INTEGER:
            self.fail(join(prefix, key), f"{shown(value)} is too large (at most {MAX_INTEGER})")
            return None
        if kind == "id":
            value = str(value)
            if required and not value.strip():
                self.fail(join(prefix, key), "must not be empty")
                return None
        if max_length is not None and isinstance(value, str) and len(value) > max_length:
            self.fail(
                join(prefix, key), f"is {len(value)} characters long; at most {max_length} fit"
            )
            return None
        return value

    def storable(self, value: Any, path: str) -> bool:
        """Text the database can store: no NUL character, no unpaired surrogate half; stored
        JSON (metadata) no deeper than MAX_DEPTH."""
        if not isinstance(value, str):
            deep = depth_exceeds(value)
            if deep is not None:
                self.fail(path_text(run_start(deep), path), nesting_message(MAX_DEPTH))
                return False
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "\x00" in text or "\\u0000" in text:
            self.fail(path, "contains a NUL character (\\u0000), which cannot be stored")
            return False
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            self.fail(path, "contains an unpaired surrogate (a broken \\uD800–\\uDFFF escape)")
            return False
        return True

    def within(self, text: str | None, path: str, limit: str, limits: Limits) -> bool:
        """`text` (None: already refused) no longer than the operator's limit `limit`."""
        most = getattr(limits, limit)
        if text is None or len(text) <= most:
            return True
        self.fail(path, chars_message(len(text), most, limit))
        return False

    def count_within(self, items: list | None, path: str, noun: str, limit: str, limits) -> bool:
        """`items` (None: already refused) no more than the operator's limit `limit`; checked
        before the items are read, so a million passages cost no more than one too many."""
        most = getattr(limits, limit)
        if items is None or len(items) <= most:
            return True
        self.fail(path, count_message(len(items), most, noun, limit))
        return False

    def verdict(self, obj: dict, key: str, prefix: str, allowed: list[str]) -> str | None:
        raw = self.get(obj, key, prefix, "string")
        if raw is None:
            return None
        normal = raw.strip().upper().replace(" ", "_").replace("-", "_")
        if normal in allowed:
            return normal
        self.fail(join(prefix, key), f"unknown verdict {shown(raw)}: use {', '.join(allowed)}")
        return None


def verdict_values() -> list[str]:
    return list(Verdict.values)


class CellRefused(ValueError):
    """A CSV cell whose JSON holds values we refuse: `problems` are (path in the cell, why)."""

    def __init__(self, problems: list[tuple[list, str]]):
        self.problems = problems
        super().__init__(problems[0][1])


def cell_decode(value: str) -> Any:
    """A list or object written into one CSV cell: JSON first, then a Python literal.

    Spreadsheets and pandas' `to_csv` write Python reprs (`['a', 'b']`), other tools JSON.
    Raises ValueError when it is neither, CellRefused for NaN, 1e999, a 5,000-digit number or
    nesting too deep.
    """
    decoder = SafeDecoder()
    try:
        decoded = decoder.loads(value)
    except NestingTooDeep as error:
        raise CellRefused([(error.path, str(error))]) from None
    except ValueError:
        pass
    else:
        if decoder.flagged:
            raise CellRefused(refused_in(decoded))
        return decoded
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
        raise ValueError(str(error)) from error


_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f"}


def csv_row_decode(
    row: dict[str, str],
    *,
    structured: set[str],
    booleans: set[str] = frozenset(),
    numbers: set[str] = frozenset(),
    reader: FieldReader,
) -> dict[str, Any]:
    """A CSV row's cells as the JSON a record would hold: empty cells are absent fields."""
    record: dict[str, Any] = {}
    for key, cell in row.items():
        if cell is None or cell.strip() == "":
            continue
        if key in structured:
            try:
                record[key] = cell_decode(cell)
            except CellRefused as refused:
                for path, message in refused.problems:
                    reader.fail(path_text(path, key), message)
            except ValueError:
                reader.fail(key, f"expected a JSON-encoded list or object, got {shown(cell)}")
        elif key in booleans:
            lowered = cell.strip().lower()
            if lowered in _TRUE:
                record[key] = True
            elif lowered in _FALSE:
                record[key] = False
            else:
                reader.fail(key, f"expected true or false, got {shown(cell)}")
        elif key in numbers:
            try:
                record[key] = float(cell)
            except ValueError:
                reader.fail(key, f"expected a number, got {shown(cell)}")
                continue
            if not math.isfinite(record[key]):
                del record[key]
                reader.fail(key, f"expected a finite number, got {shown(cell)}")
        else:
            record[key] = cell
    return record
