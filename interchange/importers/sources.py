"""From a path or an uploaded file to raw records with their place in the file.

The container (JSON Lines, JSON, CSV) is told from the first bytes, not trusted from the name
alone: a `[` starts a JSON list, a `{` a JSON Lines file when its first line is a whole object
(else a JSON object such as RAGChecker's `{"results": [...]}`), anything else is CSV.
"""

import codecs
import contextlib
import csv
import io
import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from interchange.importers.issues import IssueLog
from interchange.importers.jsondecode import NestingTooDeep, SafeDecoder, path_text, refused_in
from interchange.importers.jsonstream import JsonRecords, JsonStreamError

HEAD_BYTES = 64 * 1024
# Passages can be long; the csv module's default cap (128 KiB per cell) is too small.
CSV_FIELD_LIMIT = 256 * 1024 * 1024

CONTAINERS = ("jsonl", "json", "csv")


@dataclass
class RawRecord:
    location: str
    value: Any
    from_csv: bool = False


@contextlib.contextmanager
def binary_source(path_or_file) -> Iterator[tuple[BinaryIO, str]]:
    """A seekable binary stream and a display name, from a path, an UploadedFile or a file."""
    if isinstance(path_or_file, str | os.PathLike):
        with open(path_or_file, "rb") as handle:
            yield handle, Path(path_or_file).name
        return
    name = getattr(path_or_file, "name", "") or ""
    handle = getattr(path_or_file, "file", path_or_file)  # Django's UploadedFile wraps a file
    if isinstance(handle, io.TextIOBase):
        handle = io.BytesIO(handle.read().encode("utf-8"))
    handle.seek(0)
    yield handle, Path(name).name


def container_detect(head: bytes, name: str) -> str:
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    suffix = Path(name).suffix.lower()
    if text.startswith("["):
        return "json"
    if text.startswith("{"):
        first, newline, _ = text.partition("\n")
        if not newline:
            # One line, or a first line longer than the peek: trust the name.
            return "jsonl" if suffix in (".jsonl", ".ndjson") else "json"
        try:
            value = json.loads(first)
        except (ValueError, RecursionError):
            return "jsonl" if suffix in (".jsonl", ".ndjson") else "json"
        if isinstance(value, dict) and isinstance(value.get("results"), list):
            return "json"
        return "jsonl"
    return "csv"


def _text(handle: BinaryIO) -> TextIO:
    # newline="" keeps quoted newlines inside CSV cells intact; utf-8-sig drops a BOM.
    return io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")


def _refused(issues: IssueLog, location: str, value: Any) -> bool:
    """Note the numbers the decoder refused in `value` (NaN, 1e999, 5,000 digits), by field."""
    found = refused_in(value)
    for path, message in found:
        issues.add(location, path_text(path), message)
    return bool(found)


def _jsonl(stream: TextIO, issues: IssueLog) -> Iterator[RawRecord]:
    decoder = SafeDecoder()
    for number, line in enumerate(stream, 1):
        if not line.strip():
            continue
        location = f"line {number}"
        try:
            value = decoder.loads(line.rstrip("\r\n"))
        except json.JSONDecodeError as error:
            issues.add(location, "", f"bad JSON: {error.msg} (column {error.colno})")
            continue
        except NestingTooDeep as error:
            issues.add(location, path_text(error.path), str(error))
            continue
        if decoder.flagged and _refused(issues, location, value):
            continue
        yield RawRecord(location, value)


def _json(stream: TextIO, issues: IssueLog) -> Iterator[RawRecord]:
    records = JsonRecords(stream)
    try:
        for number, line, value in records:
            location = f"record {number} (line {line})"
            if records.decoder.flagged and _refused(issues, location, value):
                continue
            yield RawRecord(location, value)
    except JsonStreamError as error:
        where = (
            f"record {error.record} (line {error.line})" if error.record else f"line {error.line}"
        )
        issues.add(where, error.field, str(error))


def _csv(stream: TextIO, issues: IssueLog) -> Iterator[RawRecord]:
    csv.field_size_limit(CSV_FIELD_LIMIT)
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        return
    header = [cell.strip() for cell in header]
    twice = sorted(name for name, n in Counter(header).items() if n > 1)
    if twice:
        issues.add("line 1", "", f"the header names a column twice: {', '.join(twice)}")
        return
    previous_end = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            issues.add(f"line {previous_end + 1}", "", f"bad CSV: {error}")
            return
        location = f"line {previous_end + 1}"
        previous_end = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            issues.add(
                location, "", f"has {len(row)} cells but the header names {len(header)} columns"
            )
            continue
        yield RawRecord(
            location, dict(zip(header, row + [""] * (len(header) - len(row)), strict=True)), True
        )


def raw_records(handle: BinaryIO, container: str, issues: IssueLog) -> Iterator[RawRecord]:
    """The file's records in order; unreadable parts are noted in `issues` (and skipped)."""
    stream = _text(handle)
    reading = {"jsonl": _jsonl, "json": _json, "csv": _csv}[container](stream, issues)
    try:
        yield from reading
    except UnicodeDecodeError as error:
        issues.add(
            _undecodable_line(handle),
            "",
            f"is not UTF-8 text (byte {error.object[error.start]:#04x} cannot be read)",
        )
    finally:
        with contextlib.suppress(ValueError):
            stream.detach()  # leave the caller's file open


def _undecodable_line(handle: BinaryIO) -> str:
    """`line N` of the first line that is not UTF-8, read again line by line in binary."""
    with contextlib.suppress(OSError, ValueError):
        handle.seek(0)
        decoder = codecs.getincrementaldecoder("utf-8")()
        for number, line in enumerate(handle, start=1):
            try:
                decoder.decode(line)
            except UnicodeDecodeError:
                return f"line {number}"
    return "the file"


def head_read(handle: BinaryIO) -> bytes:
    head = handle.read(HEAD_BYTES)
    handle.seek(0)
    # Do not cut a multi-byte character in two when sniffing.
    return codecs.getincrementaldecoder("utf-8")(errors="ignore").decode(head).encode()
