"""RAGAS evaluation samples: `user_input`, `response`, `retrieved_contexts`, `reference`?.

The legacy names (`question`, `answer`, `contexts`, `ground_truth`) are read too. Contexts become
the pile, ranked 1..n with source ids `ctx-1`, `ctx-2`, ... (RAGAS keeps no document ids). RAGAS
samples carry no id; an `id`, `sample_id` or `query_id` column is used when present, otherwise
the id is `ragas-` and a hash of question, response and contexts, so importing the same sample
twice is caught as a duplicate. Other scalar columns (e.g. RAGAS metric scores) are kept in the
answer's metadata under their own names.
"""

import hashlib
import json

from annotate.limits import Limits, limits_current
from interchange.importers.fields import FieldReader, csv_row_decode, join
from interchange.importers.native import risk_category_parse
from interchange.importers.records import AnswerIn, PassageIn
from interchange.importers.sources import RawRecord

ALIASES = {
    "question": ("user_input", "question"),
    "answer": ("response", "answer"),
    "contexts": ("retrieved_contexts", "contexts"),
    "reference": ("reference", "ground_truth"),
}
ID_KEYS = ("id", "sample_id", "query_id")
KNOWN = {name for names in ALIASES.values() for name in names} | set(ID_KEYS) | {"risk_category"}
CSV_STRUCTURED = {"retrieved_contexts", "contexts", "reference_contexts"}


def _alias(record: dict, canonical: str) -> str:
    """The key this record uses for `canonical` (the current RAGAS name when neither is there)."""
    for key in ALIASES[canonical]:
        if key in record:
            return key
    return ALIASES[canonical][0]


def ragas_id(question: str, answer: str, contexts: list[str]) -> str:
    digest = hashlib.sha256(
        json.dumps([question, answer, contexts], ensure_ascii=False).encode()
    ).hexdigest()
    return f"ragas-{digest[:16]}"


def ragas_parse(
    raw: RawRecord, *, quote_required: bool, limits: Limits | None = None
) -> tuple[AnswerIn | None, FieldReader]:
    limits = limits or limits_current()
    reader = FieldReader(raw.location)
    record = raw.value
    if raw.from_csv:
        record = csv_row_decode(record, structured=CSV_STRUCTURED, reader=reader)
        if reader.issues:
            return None, reader
    if not reader.check(record, "", "object"):
        return None, reader
    question_key, answer_key = _alias(record, "question"), _alias(record, "answer")
    question = reader.get(record, question_key, "", "string")
    reader.within(question, question_key, "question_chars", limits)
    answer = reader.get(record, answer_key, "", "string")
    reader.within(answer, answer_key, "answer_chars", limits)
    contexts_key = _alias(record, "contexts")
    contexts = reader.get(record, contexts_key, "", "list")
    if not reader.count_within(contexts, contexts_key, "passage", "passages_per_answer", limits):
        contexts = None
    if contexts is not None and not all(
        reader.check(text, join(contexts_key, i), "string")
        and reader.within(text, join(contexts_key, i), "passage_chars", limits)
        for i, text in enumerate(contexts)
    ):
        contexts = None
    reference_key = _alias(record, "reference")
    reference = record.get(reference_key)
    if isinstance(reference, list) and all(isinstance(item, str) for item in reference):
        reference = "\n".join(reference)  # very old RAGAS: ground_truths as a list
        record = {**record, reference_key: reference}
    reference = reader.get(record, reference_key, "", "string", required=False, default="")
    reader.within(reference, reference_key, "answer_chars", limits)
    external_id = None
    for key in ID_KEYS:
        if record.get(key) is not None:
            external_id = reader.get(record, key, "", "id", max_length=200)
            break
    risk = risk_category_parse(reader, record)
    if None in (question, answer, contexts, reference) or reader.issues:
        return None, reader
    id_is_question = external_id is not None
    if external_id is None:
        external_id = ragas_id(question, answer, contexts)
    metadata = {
        key: value
        for key, value in record.items()
        if key not in KNOWN and (value is None or isinstance(value, str | int | float | bool))
    }
    if not reader.storable(metadata, ""):
        return None, reader
    metadata["source_format"] = "ragas"
    return (
        AnswerIn(
            location=raw.location,
            external_id=external_id,
            question=question,
            text=answer,
            pile=[
                PassageIn(source_id=f"ctx-{rank}", title="", text=text)
                for rank, text in enumerate(contexts, 1)
            ],
            reference=reference,
            risk_category=risk,
            metadata=metadata,
            id_is_question=id_is_question,
        ),
        reader,
    )
