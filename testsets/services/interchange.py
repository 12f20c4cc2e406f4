"""Test sets in and out of files (issue 27, item 3).

Which items a file carries: the set's questions, i.e. its accepted items once it is
published (what a run asks), and every item not rejected while it is a draft (so a draft
under review can be passed on and brought back).

`jsonl` (re-importable), one item per line:

    {"id": "q1", "question": "...", "answer": "...", "risk_category": "financial",
     "language": "en", "document": "<document id>",
     "quotes": [{"document": "<document id>", "passage": 0, "start": 12, "end": 40,
                 "text": "..."}]}

`document` is the document's id in the knowledge base (its external id), `passage` the
passage's position in it (0 = first), `start`/`end` code points into the passage's text.

`ragas`: RAGAS's golden samples (SingleTurnSample, one JSON object a line, what
`EvaluationDataset.from_jsonl` reads): `user_input` (the question), `reference` (the ground
truth answer), `reference_contexts` (the texts of the passages the quotes come from).

`deepeval`: a JSON list of DeepEval goldens (what `EvaluationDataset.add_goldens_from_json_file`
reads): `input`, `expected_output`, `context` (the passages' texts) and `additional_metadata`
(the item's id, risk category, language and its verbatim quotes).

Import reads `jsonl` into a new draft of the project: every quote is re-verified against the
project's passage (`annotate.quotes.quote_verify`); any error, named by line and field, and
nothing is written.
"""

from __future__ import annotations

import json
from typing import TextIO

from django.db import transaction

from annotate.models import RiskCategory
from annotate.quotes import QuoteError, quote_verify
from testsets.models import Document, DocumentPassage, ItemQuote, TestItem, TestSet
from testsets.services.review import next_version

FORMATS = ("jsonl", "ragas", "deepeval")
CONTENT_TYPES = {
    "jsonl": "application/x-ndjson",
    "ragas": "application/x-ndjson",
    "deepeval": "application/json",
}
MAX_BYTES = 20 * 1024 * 1024
MAX_ITEMS = 20_000
MAX_ERRORS = 20
ITEM_FIELDS = {"id", "question", "answer", "risk_category", "language", "document", "quotes"}
QUOTE_FIELDS = {"document", "passage", "start", "end", "text"}


class SetImportError(ValueError):
    """The file cannot be imported; `errors` name each line and field."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def exported_items(test_set: TestSet):
    items = test_set.items.select_related("document").prefetch_related("quotes__passage__document")
    if test_set.status == TestSet.Status.PUBLISHED:
        return items.filter(status=TestItem.Status.ACCEPTED)
    return items.exclude(status=TestItem.Status.REJECTED)


def item_record(item: TestItem) -> dict:
    return {
        "id": item.external_id,
        "question": item.question,
        "answer": item.answer,
        "risk_category": item.risk_category,
        "language": item.language,
        "document": item.document.external_id if item.document else None,
        "quotes": [
            {
                "document": q.passage.document.external_id,
                "passage": q.passage.position,
                "start": q.start,
                "end": q.end,
                "text": q.text,
            }
            for q in item.quotes.all()
        ],
    }


def _contexts(item: TestItem) -> list[str]:
    seen, texts = set(), []
    for quote in item.quotes.all():
        if quote.passage_id not in seen:
            seen.add(quote.passage_id)
            texts.append(quote.passage.text)
    return texts


def set_export(*, test_set: TestSet, format: str, out: TextIO) -> int:
    """Write the set's items to `out` in `format`; returns how many."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use {', '.join(FORMATS)}")
    count = 0
    if format == "deepeval":
        out.write("[")
    for count, item in enumerate(exported_items(test_set), start=1):
        if format == "jsonl":
            out.write(json.dumps(item_record(item), ensure_ascii=False) + "\n")
        elif format == "ragas":
            sample = {
                "user_input": item.question,
                "reference": item.answer,
                "reference_contexts": _contexts(item),
            }
            out.write(json.dumps(sample, ensure_ascii=False) + "\n")
        else:
            record = item_record(item)
            golden = {
                "input": item.question,
                "expected_output": item.answer,
                "context": _contexts(item),
                "additional_metadata": {
                    "id": record["id"],
                    "risk_category": record["risk_category"],
                    "language": record["language"],
                    "quotes": record["quotes"],
                    "test_set": f"{test_set.name} v{test_set.version}",
                },
            }
            out.write(("," if count > 1 else "") + "\n" + json.dumps(golden, ensure_ascii=False))
    if format == "deepeval":
        out.write("\n]\n")
    return count


class _Line:
    """Reads one line's fields, collecting errors that name the line and the field."""

    def __init__(self, number: int, errors: list[str]):
        self.number, self.errors = number, errors

    def error(self, field: str, message: str) -> None:
        self.errors.append(f"line {self.number}, field {field}: {message}")

    def text(self, record: dict, field: str, name: str, *, required: bool = True):
        value = record.get(field)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.error(name, "must be a non-empty string" if required else "must be a string")
            return None
        return value

    def whole(self, record: dict, field: str, name: str):
        value = record.get(field)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.error(name, f"must be a whole number from 0, not {json.dumps(value)[:40]}")
            return None
        return value


def _passages(project_id: int) -> tuple[dict, dict]:
    documents = {d.external_id: d for d in Document.objects.filter(project_id=project_id)}
    passages = {
        (p.document.external_id, p.position): p
        for p in DocumentPassage.objects.filter(document__project_id=project_id).select_related(
            "document"
        )
    }
    return documents, passages


def _quote_parse(line: _Line, raw, name: str, passages: dict):
    if not isinstance(raw, dict):
        line.error(name, "must be an object {document, passage, start, end, text}")
        return None
    unknown = sorted(set(raw) - QUOTE_FIELDS)
    if unknown:
        line.error(f"{name}.{unknown[0]}", f"is not a field of a quote ({', '.join(QUOTE_FIELDS)})")
    document = line.text(raw, "document", f"{name}.document")
    position = line.whole(raw, "passage", f"{name}.passage")
    start, end = line.whole(raw, "start", f"{name}.start"), line.whole(raw, "end", f"{name}.end")
    text = line.text(raw, "text", f"{name}.text")
    if None in (document, position, start, end, text):
        return None
    passage = passages.get((document, position))
    if passage is None:
        line.error(f"{name}.passage", f"document {document!r} has no passage {position}")
        return None
    try:
        quote_verify(passage_text=passage.text, start=start, end=end, quote=text)
    except QuoteError as exc:
        line.error(f"{name}.text", str(exc))
        return None
    return ItemQuote(passage=passage, start=start, end=end, text=text)


def _item_parse(line: _Line, record, documents: dict, passages: dict):
    if not isinstance(record, dict):
        line.error("(line)", "must be a JSON object, one item a line")
        return None
    unknown = sorted(set(record) - ITEM_FIELDS)
    if unknown:
        line.error(unknown[0], f"is not a field of an item ({', '.join(sorted(ITEM_FIELDS))})")
    external_id = line.text(record, "id", "id")
    question = line.text(record, "question", "question")
    answer = line.text(record, "answer", "answer")
    risk = line.text(record, "risk_category", "risk_category", required=False)
    if risk and risk not in RiskCategory.values:
        line.error("risk_category", f"unknown {risk!r}: use {', '.join(RiskCategory.values)}")
    language = line.text(record, "language", "language", required=False)
    document_id = line.text(record, "document", "document", required=False)
    if document_id and document_id not in documents:
        line.error("document", f"no document {document_id!r} in this project's knowledge base")
    raw_quotes = record.get("quotes")
    if not isinstance(raw_quotes, list) or not raw_quotes:
        line.error("quotes", "must be a non-empty list: an item needs its supporting quotes")
        raw_quotes = []
    quotes = [_quote_parse(line, q, f"quotes[{i}]", passages) for i, q in enumerate(raw_quotes)]
    if None in (external_id, question, answer) or None in quotes:
        return None
    item = TestItem(
        external_id=external_id[:200],
        question=question.strip(),
        answer=answer.strip(),
        risk_category=risk or RiskCategory.NONE,
        language=(language or "")[:16],
        document=documents.get(document_id) if document_id else None,
    )
    return item, quotes


def set_import(*, project, name: str, data: bytes, file_name: str = "") -> TestSet:
    """A new draft `name` (next version) from a `jsonl` file; SetImportError, nothing
    written, when any line is wrong."""
    if len(data) > MAX_BYTES:
        raise SetImportError([f"the file is over {MAX_BYTES // (1024 * 1024)} MB"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SetImportError([f"the file is not UTF-8 (byte {exc.start})"]) from None
    documents, passages = _passages(project.pk)
    errors: list[str] = []
    parsed, seen = [], {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        line = _Line(number, errors)
        try:
            record = json.loads(raw)
        except ValueError as exc:
            line.error("(line)", f"is not JSON ({exc.msg} at column {exc.colno})")
            continue
        result = _item_parse(line, record, documents, passages)
        if result is not None:
            if result[0].external_id in seen:
                line.error(
                    "id",
                    f"{result[0].external_id!r} is already on line {seen[result[0].external_id]}",
                )
            seen.setdefault(result[0].external_id, number)
            parsed.append(result)
        if len(errors) >= MAX_ERRORS or len(parsed) > MAX_ITEMS:
            break
    if len(parsed) > MAX_ITEMS:
        errors.append(f"the file has over {MAX_ITEMS:,} items")
    if not errors and not parsed:
        errors.append("the file has no items")
    if errors:
        raise SetImportError(errors[:MAX_ERRORS])
    return _write(project, name, file_name, parsed)


@transaction.atomic
def _write(project, name: str, file_name: str, parsed: list) -> TestSet:
    test_set = TestSet.objects.create(
        project=project,
        name=name,
        version=next_version(project_id=project.pk, name=name),
        generator={"kind": "import", "file": file_name[:200]},
    )
    for position, (item, _quotes) in enumerate(parsed):
        item.test_set, item.position = test_set, position
    TestItem.objects.bulk_create([item for item, _ in parsed])
    rows = []
    for item, quotes in parsed:
        for quote in quotes:
            quote.item = item
            rows.append(quote)
    ItemQuote.objects.bulk_create(rows)
    return test_set
