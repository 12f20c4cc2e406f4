"""The streaming JSON reader: the same records as json.load, whatever the chunk boundaries."""

import io
import json

import pytest

from interchange.importers import jsonstream
from interchange.importers.jsonstream import JsonRecords, JsonStreamError

RECORDS = [
    {"id": 1, "n": 12345678901234567890, "f": -1.5e-7, "t": True, "z": None},
    {"id": "b", "text": 'quote \\" and emoji 🧾 and עברית', "nested": {"a": [1, [2, {"b": []}]]}},
    {"id": "c", "astral": "é😀", "empty": ""},
    [],
    "a bare string",
    0,
    -1.5e-7,
    12345678901234567890,
]


def read(text: str) -> list:
    return list(JsonRecords(io.StringIO(text)))


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("ascii", [True, False], ids=["escaped", "raw"])
def test_json_records_match_json_load_at_any_chunk_size(monkeypatch, chunk, indent, ascii):
    # ensure_ascii writes the emoji as a surrogate pair of \u escapes, split by small chunks.
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", chunk)
    as_list = json.dumps(RECORDS, indent=indent, ensure_ascii=ascii)
    assert [value for _, _, value in read(as_list)] == json.loads(as_list)
    wrapped = json.dumps(
        {"meta": {"v": [1, 2]}, "results": RECORDS, "after": "ignored"},
        indent=indent,
        ensure_ascii=ascii,
    )
    assert [value for _, _, value in read(wrapped)] == RECORDS


def test_json_records_number_and_line_of_each_record(monkeypatch):
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 5)
    text = '[\n  {"a": 1},\n\n  {"b":\n 2},\n  3\n]\n'
    assert read(text) == [(1, 2, {"a": 1}), (2, 4, {"b": 2}), (3, 6, 3)]


def test_json_records_empty_list_and_object_without_results():
    assert read("[ ]") == []
    with pytest.raises(JsonStreamError, match='an object with a "results" list'):
        read('{"data": [1]}')


@pytest.mark.parametrize(
    ("text", "record", "line", "message"),
    [
        ('[{"a": 1},\n {"a": }]', 2, 2, "bad JSON: Expecting value"),
        ('[{"a": 1}\n {"a": 2}]', 1, 2, "bad JSON: expected ',' or ']' after a record"),
        ('[{"a": 1},\n {"a": "unterminated', 2, 2, "bad JSON: Unterminated string"),
        ("[1, 2", 2, 1, "bad JSON: expected ',' or ']' after a record, found the end of the file"),
        ("", None, 1, "the file is empty"),
        ("[1] [2]", None, 1, "extra data"),
    ],
)
def test_json_records_errors_name_record_and_line(monkeypatch, text, record, line, message):
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 4)
    with pytest.raises(JsonStreamError) as error:
        read(text)
    assert error.value.record == record
    assert error.value.line == line
    assert message in str(error.value)
