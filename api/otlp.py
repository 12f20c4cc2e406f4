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
"""

import json
import re
from typing import Any

GENERATION_OPERATIONS = {"chat", "text_completion", "generate_content"}


class TraceError(ValueError):
    """A trace that cannot become an answer (the message says what is missing)."""


def any_value(value: dict | None) -> Any:
    """An OTLP JSON AnyValue as a Python value."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {
            kv.get("key"): any_value(kv.get("value"))
            for kv in (value["kvlistValue"] or {}).get("values", [])
        }
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(span: dict) -> dict[str, Any]:
    return {
        item.get("key"): any_value(item.get("value"))
        for item in span.get("attributes") or []
        if isinstance(item, dict)
    }


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _flattened(attrs: dict, prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened lists: `prefix.N.rest` → [{rest: value}] in N order."""
    pattern = re.compile(re.escape(prefix) + r"\.(\d+)\.(.+)$")
    items: dict[int, dict] = {}
    for key, value in attrs.items():
        match = pattern.match(key or "")
        if match:
            items.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [items[i] for i in sorted(items)]


def _parts_text(message: dict) -> str:
    if isinstance(message.get("content"), str):
        return message["content"]
    parts = message.get("parts") or []
    return "".join(
        part.get("content") or ""
        for part in parts
        if isinstance(part, dict) and part.get("type", "text") == "text"
    )


def _kind(attrs: dict) -> str | None:
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    operation = str(attrs.get("gen_ai.operation.name") or "").lower()
    if kind == "RETRIEVER" or operation == "retrieval" or "gen_ai.retrieval.documents" in attrs:
        return "retrieval"
    if kind == "LLM" or operation in GENERATION_OPERATIONS:
        return "generation"
    return None


def _documents(attrs: dict) -> list[dict]:
    documents = []
    structured = _json(attrs.get("gen_ai.retrieval.documents"))
    if isinstance(structured, list):
        for item in structured:
            if isinstance(item, dict):
                documents.append(
                    {
                        "id": str(item.get("id") or ""),
                        "text": item.get("content") or item.get("text") or "",
                    }
                )
    for item in _flattened(attrs, "retrieval.documents"):
        documents.append(
            {
                "id": str(item.get("document.id") or ""),
                "text": item.get("document.content") or "",
            }
        )
    return documents


def _messages(attrs: dict, *, output: bool) -> list[dict]:
    key = "gen_ai.output.messages" if output else "gen_ai.input.messages"
    structured = _json(attrs.get(key))
    if isinstance(structured, list):
        return [
            {"role": m.get("role", ""), "content": _parts_text(m)}
            for m in structured
            if isinstance(m, dict)
        ]
    prefix = "llm.output_messages" if output else "llm.input_messages"
    flat = _flattened(attrs, prefix)
    if flat:
        return [
            {"role": m.get("message.role", ""), "content": m.get("message.content") or ""}
            for m in flat
        ]
    legacy = _flattened(attrs, "gen_ai.completion" if output else "gen_ai.prompt")
    if legacy:
        return [{"role": m.get("role", ""), "content": m.get("content") or ""} for m in legacy]
    if output and isinstance(attrs.get("output.value"), str):
        return [{"role": "assistant", "content": attrs["output.value"]}]
    return []


def _start(span: dict) -> int:
    try:
        return int(span.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


def traces_to_records(payload: Any) -> tuple[list[dict], list[str]]:
    """The native answer records of the payload's traces, and why each other trace was left
    out ("trace <id>: no retrieval span with documents")."""
    if not isinstance(payload, dict) or not isinstance(payload.get("resourceSpans"), list):
        raise TraceError('expected an OTLP ExportTraceServiceRequest: {"resourceSpans": [...]}')
    traces: dict[str, list[dict]] = {}
    for resource in payload["resourceSpans"]:
        for scope in (resource or {}).get("scopeSpans") or []:
            for span in (scope or {}).get("spans") or []:
                if isinstance(span, dict) and span.get("traceId"):
                    traces.setdefault(str(span["traceId"]), []).append(span)
    records, skipped = [], []
    for trace_id, spans in traces.items():
        spans.sort(key=_start)
        retrievals, generations = [], []
        retrieval_ids = set()
        for span in spans:
            attrs = attributes(span)
            kind = _kind(attrs)
            if kind == "retrieval":
                retrievals.append(attrs)
                retrieval_ids.add(span.get("spanId"))
            elif kind == "generation":
                # A model call inside the retrieval (a query rewrite) is not the answer.
                if span.get("parentSpanId") in retrieval_ids:
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
                question = (
                    attrs.get("gen_ai.retrieval.query.text") or attrs.get("input.value") or ""
                )
                if question:
                    break
        records.append(
            {
                "id": trace_id,
                "question": str(question),
                "answer": outputs[-1]["content"],
                "pile": [{"id": d["id"], "title": "", "text": d["text"]} for d in pile],
                "metadata": {"source": "otlp", "trace_id": trace_id},
            }
        )
    return records, skipped
