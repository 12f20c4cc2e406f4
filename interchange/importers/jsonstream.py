"""Read the records of a JSON file one at a time, without loading the file.

Handles a top-level list `[{...}, {...}]` and an object holding the list under "results"
(RAGChecker's `{"results": [...]}`). Each element is decoded with the standard library's
`JSONDecoder.raw_decode` from a sliding buffer, so memory is bounded by the largest single record,
not the file. No third-party streaming parser is needed for this shape.
"""

import json
from collections.abc import Iterator
from typing import Any, TextIO

from interchange.importers.jsondecode import NestingTooDeep, SafeDecoder, path_text

CHUNK_CHARS = 1 << 20
# One record larger than this is refused rather than held in memory.
MAX_RECORD_CHARS = 64 << 20
_WHITESPACE = " \t\n\r"


class JsonStreamError(ValueError):
    def __init__(self, line: int, message: str, record: int | None = None, field: str = ""):
        self.line = line
        self.record = record
        self.field = field
        super().__init__(message)


class JsonRecords:
    """Iterate `(record_number, line, value)` over the file's records (record_number from 1)."""

    def __init__(self, stream: TextIO, *, container_key: str = "results"):
        self.stream = stream
        self.container_key = container_key
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line of self.pos
        self.container = ""  # "list" or "object", once known
        # NaN, 1e999 and 5,000-digit integers come out as markers (`sources` names their
        # fields); `flagged` says whether the last value holds one.
        self.decoder = SafeDecoder()

    # -- buffer -------------------------------------------------------------------------------

    def _fill(self, at_least: int = CHUNK_CHARS) -> bool:
        """Read more; offsets into the buffer stay valid when this returns False."""
        if self.eof:
            return False
        chunk = self.stream.read(max(at_least, CHUNK_CHARS))
        if not chunk:
            self.eof = True
            return False
        if self.pos > CHUNK_CHARS:
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += chunk
        return True

    def _advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def _skip_ws(self) -> str:
        """The next non-space character without consuming it ('' at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                if self.buf[self.pos] == "\n":
                    self.line += 1
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def _expect(self, chars: str, what: str, record: int | None = None) -> str:
        char = self._skip_ws()
        if not char or char not in chars:
            found = repr(char) if char else "the end of the file"
            raise JsonStreamError(self.line, f"bad JSON: expected {what}, found {found}", record)
        self.pos += 1
        return char

    def _value(self, record: int | None = None) -> Any:
        self._skip_ws()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except NestingTooDeep as error:
                raise JsonStreamError(
                    self.line, str(error), record, field=path_text(error.path)
                ) from None
            except json.JSONDecodeError as error:
                maybe_cut = error.pos >= len(self.buf) - 32 or error.msg.startswith(
                    "Unterminated string"
                )
                if maybe_cut and not self.eof and len(self.buf) - self.pos < MAX_RECORD_CHARS:
                    self._fill(len(self.buf) - self.pos)
                    continue
                if maybe_cut and not self.eof:
                    raise JsonStreamError(
                        self.line, f"a record longer than {MAX_RECORD_CHARS} characters", record
                    ) from error
                line = self.line + self.buf.count("\n", self.pos, error.pos)
                column = error.pos - (self.buf.rfind("\n", 0, error.pos) + 1) + 1
                raise JsonStreamError(
                    line, f"bad JSON: {error.msg} (column {column})", record
                ) from error
            # A bare number near the end of the buffer may continue in the next chunk
            # ("-1.5" of "-1.5e-7"); objects, lists and strings end with their own delimiter.
            is_number = isinstance(value, int | float) and not isinstance(value, bool)
            is_number = is_number or (self.decoder.flagged and not isinstance(value, list | dict))
            if is_number and end >= len(self.buf) - 32 and not self.eof and self._fill():
                continue
            self._advance(end)
            return value

    # -- records ------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[tuple[int, int, Any]]:
        first = self._skip_ws()
        if first == "[":
            self.container = "list"
            self.pos += 1
            yield from self._elements()
        elif first == "{":
            self.container = "object"
            yield from self._object_with_list()
        elif not first:
            raise JsonStreamError(self.line, "the file is empty")
        else:
            raise JsonStreamError(
                self.line,
                f'bad JSON: expected a list of records or {{"{self.container_key}": [...]}}, '
                f"found {first!r}",
            )
        if self._skip_ws():
            raise JsonStreamError(
                self.line, "bad JSON: extra data after the end of the file's value"
            )

    def _elements(self) -> Iterator[tuple[int, int, Any]]:
        number = 0
        if self._skip_ws() == "]":
            self.pos += 1
            return
        while True:
            number += 1
            self._skip_ws()
            start_line = self.line
            value = self._value(record=number)
            yield number, start_line, value
            if self._expect(",]", "',' or ']' after a record", record=number) == "]":
                return

    def _object_with_list(self) -> Iterator[tuple[int, int, Any]]:
        self.pos += 1  # "{"
        found = False
        if self._skip_ws() == "}":
            self.pos += 1
        else:
            while True:
                key = self._value()
                if not isinstance(key, str):
                    raise JsonStreamError(self.line, "bad JSON: expected a key in double quotes")
                self._expect(":", "':' after a key")
                if key == self.container_key:
                    if self._skip_ws() != "[":
                        raise JsonStreamError(
                            self.line, f'field "{self.container_key}": expected a list of records'
                        )
                    self.pos += 1
                    found = True
                    yield from self._elements()
                else:
                    self._value()
                if self._expect(",}", "',' or '}'") == "}":
                    break
        if not found:
            raise JsonStreamError(
                1,
                f'expected a list of records or an object with a "{self.container_key}" list; '
                "for one answer per line use a .jsonl file",
            )
