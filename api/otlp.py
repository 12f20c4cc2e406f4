"""OTLP/HTTP JSON traces → native answer records (one per trace), for the answers import.

A trace becomes one answer: the retrieval span's documents are its pile, in the order the
retriever returned them (that order is the rank), and the generation span's completion is the
answer; the question is the generation's last user message (else the retrieval query). Two
attribute vocabularies are read:

- OpenTelemetry GenAI semantic conventions: a span with `gen_ai.operation.name` `retrieval`
  carries `gen_ai.retrieval.documents` (a JSON array of {id, score, content}, or structured)
  and `gen_ai.retrieval.query.text`; a `chat` / `text_completion` / `generate_content` span
  carries `gen_ai.input.messages` and `gen_ai.output.messages` (JSON arrays of
  {role, parts: [{type: "text", content}]}), or the older `gen_ai.prompt.N.content` /
  `gen_ai.completion.N.content` attributes.
- OpenInference (Phoenix): `openinference.span.kind` RETRIEVER with flattened
  `retrieval.documents.N.document.{id,content,score,metadata}` and `input.value`; LLM with
  `llm.input_messages.N.message.{role,content}` and `llm.output_messages.N.message.content`
  (or `output.value`).

The answer's id is the trace id, so a trace sent twice is one answer (the import is idempotent).

Bad input is refused as the importers refuse it, by field: the body is decoded by
`api.strict_json` (nesting, NaN, huge numbers), and every part read here is type-checked, so a
span that is not an object, an `intValue` of "abc" or of 5,000 digits, a `doubleValue` of "zz"
or an attribute key that is a number is a `TraceError` naming the field
(`resourceSpans[0].scopeSpans[0].spans[2].attributes[1].value.intValue`), never a 500. The
proto3 JSON spellings of a non-finite double ("NaN", "Infinity", "-Infinity") are valid OTLP and
read as no value: no figure is drawn from an attribute's number.
"""

import re
from typing import Any

from interchange.importers.fields import shown
from interchange.importers.jsondecode import (
    MAX_DEPTH,
    NestingTooDeep,
    SafeDecoder,
    depth_exceeds,
    nesting_message,
    path_text,
    refused_in,
)

GENERATION_OPERATIONS = {"chat", "text_completion", "generate_content"}
# Problems named per request: enough to fix a payload in one pass, as for an import file.
MAX_PROBLEMS = 50
# AnyValues inside each other (arrays, kvlists); the body's own nesting is bounded too.
MAX_VALUE_DEPTH = 16
_INT64 = re.compile(r"-?[0-9]{1,20}")
_DOUBLE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4})?")
# proto3 JSON writes a non-finite double as one of these strings.
_NON_FINITE = {"NaN", "Infinity", "-Infinity"}


class TraceError(ValueError):
    """A request that cannot become answers: `problems` are (field path, what is wrong)."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        first = "; ".join(
            f"{field}: {detail}" if field else detail for field, detail in problems[:3]
        )
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(first + more)


class _Reader:
    """Typed reads from one request, each problem noted with its field path."""

    def __init__(self):
        self.problems: list[tuple[str, str]] = []

    def fail(self, path: str, detail: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append((path, detail))

    def objects(self, value: Any, path: str) -> list[tuple[dict, str]]:
        """A repeated message field: its objects with their paths (absent or null: none)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, f"expected a list, got {shown(value)}")
            return []
        found = []
        for i, item in enumerate(value):
            if isinstance(item, dict):
                found.append((item, f"{path}[{i}]"))
            else:
                self.fail(f"{path}[{i}]", f"expected an object, got {shown(item)}")
        return found

    def object(self, value: Any, path: str) -> dict:
        if value is None or isinstance(value, dict):
            return value or {}
        self.fail(path, f"expected an object, got {shown(value)}")
        return {}

    def string(self, value: Any, path: str) -> str:
        """A string field ('' when absent or null)."""
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        self.fail(path, f"expected a string, got {shown(value)}")
        return ""

    def identifier(self, value: Any, path: str) -> str:
        """A document's id: a string or a whole number."""
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return self.string(value, path)

    def int64(self, value: Any, path: str) -> int | None:
        """An OTLP int64: a JSON string of digits (or a number) in the 64-bit range."""
        if isinstance(value, str) and _INT64.fullmatch(value.strip()):
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool):
            if -(2**63) <= value < 2**64:  # int64, or a uint64 time
                return value
            self.fail(path, f"{shown(value)} is outside the 64-bit integer range")
            return None
        digits = value.strip().lstrip("-") if isinstance(value, str) else ""
        if digits.isascii() and digits.isdigit():
            self.fail(path, f"a number of {len(digits):,} digits is outside the 64-bit range")
        else:
            self.fail(path, f"expected a whole number (int64, in a string), got {shown(value)}")
        return None

    def double(self, value: Any, path: str) -> float | None:
        if isinstance(value, str) and value.strip() in _NON_FINITE:
            return None
        if isinstance(value, str) and _DOUBLE.fullmatch(value.strip()):
            value = float(value.strip())
            if value in (float("inf"), float("-inf")):
                self.fail(path, "is too large a number (it reads as infinite)")
                return None
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        self.fail(path, f"expected a number, got {shown(value)}")
        return None

    def boolean(self, value: Any, path: str) -> bool | None:
        if isinstance(value, bool):
            return value
        self.fail(path, f"expected true or false, got {shown(value)}")
        return None

    def embedded_json(self, value: Any, path: str) -> Any:
        """A string attribute holding JSON (a document list, messages), decoded with the
        importers' guards; None when it is not JSON (the attribute is then not read as such)."""
        if not isinstance(value, str):
            return value
        decoder = SafeDecoder()
        try:
            decoded = decoder.loads(value)
        except NestingTooDeep as error:
            self.fail(path_text(error.path, path), str(error))
            return None
        except ValueError:
            return None
        if decoder.flagged:
            for where, message in refused_in(decoded):
                self.fail(path_text(where, path), message)
            return None
        deep = depth_exceeds(decoded)
        if deep is not None:
            self.fail(path_text(deep[:12], path), nesting_message(MAX_DEPTH))
            return None
        return decoded


def any_value(value: Any, path: str, read: _Reader, depth: int = 0) -> Any:
    """An OTLP JSON AnyValue as a Python value (None: unset, or refused and noted)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        read.fail(path, f"expected an AnyValue object, got {shown(value)}")
        return None
    if depth >= MAX_VALUE_DEPTH:
        read.fail(path, f"is nested more than {MAX_VALUE_DEPTH} values deep (arrays or kvlists)")
        return None
    if "stringValue" in value:
        return read.string(value["stringValue"], f"{path}.stringValue")
    if "intValue" in value:
        return read.int64(value["intValue"], f"{path}.intValue")
    if "doubleValue" in value:
        return read.double(value["doubleValue"], f"{path}.doubleValue")
    if "boolValue" in value:
        return read.boolean(value["boolValue"], f"{path}.boolValue")
    if "arrayValue" in value:
        array = read.object(value["arrayValue"], f"{path}.arrayValue")
        values = array.get("values")
        if values is not None and not isinstance(values, list):
            read.fail(f"{path}.arrayValue.values", f"expected a list, got {shown(values)}")
            return []
        return [
            any_value(item, f"{path}.arrayValue.values[{i}]", read, depth + 1)
            for i, item in enumerate(values or [])
        ]
    if "kvlistValue" in value:
        kvlist = read.object(value["kvlistValue"], f"{path}.kvlistValue")
        return {
            read.string(kv.get("key"), f"{where}.key"): any_value(
                kv.get("value"), f"{where}.value", read, depth + 1
            )
            for kv, where in read.objects(kvlist.get("values"), f"{path}.kvlistValue.values")
        }
    if "bytesValue" in value:
        return read.string(value["bytesValue"], f"{path}.bytesValue")
    return None


class _Attributes:
    """A span's attributes by key, each read through the request's reader with its path."""

    def __init__(self, span: dict, path: str, read: _Reader):
        self.read = read
        self.values: dict[str, Any] = {}
        self.paths: dict[str, str] = {}
        for item, where in read.objects(span.get("attributes"), f"{path}.attributes"):
            key = read.string(item.get("key"), f"{where}.key")
            self.values[key] = any_value(item.get("value"), f"{where}.value", read)
            self.paths[key] = f"{where}.value"

    def get(self, key: str) -> Any:
        return self.values.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def text(self, key: str | None) -> str:
        """The attribute as text ('' when absent; a problem when it is not a string)."""
        if key is None:
            return ""
        return self.read.string(self.values.get(key), self.paths.get(key, key))

    def identifier(self, key: str | None) -> str:
        if key is None:
            return ""
        return self.read.identifier(self.values.get(key), self.paths.get(key, key))

    def embedded(self, key: str) -> Any:
        return self.read.embedded_json(
            self.values.get(key), f"{self.paths.get(key, key)}.stringValue"
        )

    def flattened(self, prefix: str) -> list[dict[str, str]]:
        """OpenInference's flattened lists: `prefix.N.rest` → [{rest: the attribute's key}] in
        N order."""
        pattern = re.compile(re.escape(prefix) + r"\.([0-9]{1,9})\.(.+)$")
        items: dict[int, dict] = {}
        for key in self.values:
            match = pattern.match(key)
            if match:
                items.setdefault(int(match.group(1)), {})[match.group(2)] = key
        return [items[i] for i in sorted(items)]


def _parts_text(message: dict, path: str, read: _Reader) -> str:
    if isinstance(message.get("content"), str):
        return message["content"]
    parts = message.get("parts")
    return "".join(
        read.string(part.get("content"), f"{where}.content")
        for part, where in read.objects(parts, f"{path}.parts")
        if part.get("type", "text") == "text"
    )


def _kind(attrs: dict) -> str | None:
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    operation = str(attrs.get("gen_ai.operation.name") or "").lower()
    if kind == "RETRIEVER" or operation == "retrieval" or "gen_ai.retrieval.documents" in attrs:
        return "retrieval"
    if kind == "LLM" or operation in GENERATION_OPERATIONS:
        return "generation"
    return None


def _documents(attrs: _Attributes) -> list[dict]:
    read = attrs.read
    documents = []
    key = "gen_ai.retrieval.documents"
    structured = attrs.embedded(key)
    if isinstance(structured, list):
        where = f"{attrs.paths.get(key, key)}.stringValue"
        for i, item in enumerate(structured):
            if isinstance(item, dict):
                field = "content" if item.get("content") is not None else "text"
                documents.append(
                    {
                        "id": read.identifier(item.get("id"), f"{where}[{i}].id"),
                        "text": read.string(item.get(field), f"{where}[{i}].{field}"),
                    }
                )
    for item in attrs.flattened("retrieval.documents"):
        documents.append(
            {
                "id": attrs.identifier(item.get("document.id")),
                "text": attrs.text(item.get("document.content")),
            }
        )
    return documents


def _messages(attrs: _Attributes, *, output: bool) -> list[dict]:
    read = attrs.read
    key = "gen_ai.output.messages" if output else "gen_ai.input.messages"
    structured = attrs.embedded(key)
    if isinstance(structured, list):
        where = f"{attrs.paths.get(key, key)}.stringValue"
        return [
            {
                "role": read.string(m.get("role"), f"{where}[{i}].role"),
                "content": _parts_text(m, f"{where}[{i}]", read),
            }
            for i, m in enumerate(structured)
            if isinstance(m, dict)
        ]
    prefix = "llm.output_messages" if output else "llm.input_messages"
    flat = attrs.flattened(prefix)
    if flat:
        return [
            {
                "role": attrs.text(m.get("message.role")),
                "content": attrs.text(m.get("message.content")),
            }
            for m in flat
        ]
    legacy = attrs.flattened("gen_ai.completion" if output else "gen_ai.prompt")
    if legacy:
        return [
            {"role": attrs.text(m.get("role")), "content": attrs.text(m.get("content"))}
            for m in legacy
        ]
    if output and isinstance(attrs.get("output.value"), str):
        return [{"role": "assistant", "content": attrs.get("output.value")}]
    return []


_SPAN_IDS = ("spanId", "parentSpanId")


def _spans(payload: Any, read: _Reader) -> dict[str, list[tuple]]:
    """The request's spans by trace id: (span, path, start time, span id, parent span id)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("resourceSpans"), list):
        raise TraceError(
            [
                (
                    "resourceSpans",
                    'expected an OTLP ExportTraceServiceRequest: {"resourceSpans": [...]}',
                )
            ]
        )
    traces: dict[str, list[tuple]] = {}
    for resource, at in read.objects(payload["resourceSpans"], "resourceSpans"):
        for scope, where in read.objects(resource.get("scopeSpans"), f"{at}.scopeSpans"):
            for span, path in read.objects(scope.get("spans"), f"{where}.spans"):
                trace_id = read.string(span.get("traceId"), f"{path}.traceId")
                start = span.get("startTimeUnixNano")
                start = 0 if start is None else read.int64(start, f"{path}.startTimeUnixNano")
                ids = [read.string(span.get(name), f"{path}.{name}") for name in _SPAN_IDS]
                if trace_id:
                    traces.setdefault(trace_id, []).append((span, path, start or 0, *ids))
    return traces


def traces_to_records(payload: Any) -> tuple[list[dict], list[str]]:
    """The native answer records of the payload's traces, and why each other trace was left
    out ("trace <id>: no retrieval span with documents"). TraceError naming every field (up to
    MAX_PROBLEMS) that is not what OTLP says it is: nothing of such a request is read."""
    read = _Reader()
    traces = _spans(payload, read)
    records, skipped = [], []
    for trace_id, spans in traces.items():
        spans.sort(key=lambda entry: entry[2])
        retrievals, generations = [], []
        retrieval_ids = set()
        for span, path, _start, span_id, parent_id in spans:
            attrs = _Attributes(span, path, read)
            kind = _kind(attrs)
            if kind == "retrieval":
                retrievals.append(attrs)
                retrieval_ids.add(span_id)
            elif kind == "generation":
                # A model call inside the retrieval (a query rewrite) is not the answer.
                if parent_id in retrieval_ids:
                    continue
                generations.append(attrs)
        pile = [d for attrs in retrievals for d in _documents(attrs)]
        if not pile:
            skipped.append(f"trace {trace_id}: no retrieval span with documents")
            continue
        if not generations:
            skipped.append(f"trace {trace_id}: no generation span")
            continue
        generation = generations[-1]
        outputs = [m for m in _messages(generation, output=True) if m["content"]]
        if not outputs:
            skipped.append(f"trace {trace_id}: the generation span carries no completion")
            continue
        inputs = _messages(generation, output=False)
        users = [m["content"] for m in inputs if m["role"] == "user" and m["content"]]
        question = users[-1] if users else ""
        if not question:
            for attrs in retrievals:
                question = attrs.text("gen_ai.retrieval.query.text") or attrs.text("input.value")
                if question:
                    break
        records.append(
            {
                "id": trace_id,
                "question": question,
                "answer": outputs[-1]["content"],
                "pile": [{"id": d["id"], "title": "", "text": d["text"]} for d in pile],
                "metadata": {"source": "otlp", "trace_id": trace_id},
            }
        )
    if read.problems:
        raise TraceError(read.problems)
    return records, skipped
