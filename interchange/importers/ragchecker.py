"""RAGChecker results: `{"results": [{query_id, query, gt_answer, response, retrieved_context,
response_claims?, retrieved2response?, answer2response?}]}`.

RAGChecker's checker output, as its own `metrics.py` reads it (`np.max(retrieved2response,
axis=1)` gives one value per claim):

- `response_claims`: the claims extracted from the response, each a string or a
  [subject, predicate, object] triplet (joined with spaces into the claim text);
- `retrieved2response`: one list per response claim, holding one label per retrieved passage,
  each "Entailment", "Neutral" or "Contradiction";
- `answer2response`: one label per response claim: does the ground-truth answer entail it?

Claims come in with origin `llm:ragchecker` (an LLM extracted them). The checker's labels become
the verdicts of an imported judge named `ragchecker`: Entailment by any passage → SUPPORTED, else
Contradiction by any → CONTRADICTED, else NOT_IN_PILE; the per-passage labels and the
answer2response label are kept in the verdict's raw response. answer2response is correctness
against the reference, not a human's correctness flag, so it is not written as a Label: the list is
stored on the answer as `metadata["answer2response"]` (one entry per claim, in claim order).
"""

import json
from typing import Any

from annotate.limits import Limits, limits_current
from annotate.models import Verdict
from interchange.importers.fields import FieldReader, csv_row_decode, join, shown
from interchange.importers.native import risk_category_parse
from interchange.importers.records import AnswerIn, ClaimIn, JudgeVerdictIn, PassageIn
from interchange.importers.sources import RawRecord

JUDGE_NAME = "ragchecker"
CLAIM_ORIGIN = "llm:ragchecker"
CHECKER_LABELS = ("Entailment", "Neutral", "Contradiction")
CSV_STRUCTURED = {
    "retrieved_context",
    "response_claims",
    "retrieved2response",
    "answer2response",
    "gt_answer_claims",
    "response2answer",
    "retrieved2answer",
    "metrics",
}


def checker_verdict(labels: list[str]) -> str:
    if "Entailment" in labels:
        return Verdict.SUPPORTED
    if "Contradiction" in labels:
        return Verdict.CONTRADICTED
    return Verdict.NOT_IN_PILE


def _label(reader: FieldReader, value: Any, path: str) -> str | None:
    if isinstance(value, str) and value in CHECKER_LABELS:
        return value
    reader.fail(path, f"unknown checker label {shown(value)}: use {', '.join(CHECKER_LABELS)}")
    return None


def _claim_text(reader: FieldReader, value: Any, path: str) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip() if reader.storable(value, path) else None
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        text = " ".join(part.strip() for part in value if part.strip())
        return text if reader.storable(text, path) else None
    reader.fail(path, f"expected a claim (a string or a list of strings), got {shown(value)}")
    return None


def ragchecker_parse(
    raw: RawRecord, *, quote_required: bool, limits: Limits | None = None
) -> tuple[AnswerIn | None, FieldReader]:
    """One RAGChecker result as an answer, or None with the reader's issues.

    Split by step (the answer's fields, its pile, its claims, the checker's labels, the
    answer built from them); the steps are a few calls per record, the loops over passages,
    claims and labels stay inside them."""
    limits = limits or limits_current()
    reader = FieldReader(raw.location)
    record = raw.value
    if raw.from_csv:
        record = csv_row_decode(record, structured=CSV_STRUCTURED, reader=reader)
        if reader.issues:
            return None, reader
    if not reader.check(record, "", "object"):
        return None, reader
    external_id, question, response, reference, risk = _answer_fields(reader, record, limits)
    contexts = reader.get(record, "retrieved_context", "", "list")
    if not reader.count_within(
        contexts, "retrieved_context", "passage", "passages_per_answer", limits
    ):
        return None, reader
    pile = _pile(reader, contexts, limits)
    if None in (external_id, question, response, reference, contexts) or reader.issues:
        return None, reader
    texts = _claim_texts(reader, record, limits)
    if texts is None:
        return None, reader
    per_claim, correctness = _checker_labels(reader, record, texts, pile)
    if reader.issues:
        return None, reader

    metadata: dict[str, Any] = {"source_format": "ragchecker"}
    if correctness is not None:
        metadata["answer2response"] = correctness
    if isinstance(record.get("metrics"), dict) and reader.storable(record["metrics"], "metrics"):
        metadata["ragchecker_metrics"] = record["metrics"]
    if reader.issues:
        return None, reader
    answer = AnswerIn(
        id_is_question=True,
        location=raw.location,
        external_id=external_id,
        question=question,
        text=response,
        pile=pile,
        reference=reference,
        risk_category=risk,
        metadata=metadata,
    )
    _claims_add(answer, texts, per_claim, correctness)
    return answer, reader


def _answer_fields(reader: FieldReader, record: dict, limits: Limits) -> tuple:
    """(query_id, query, response, gt_answer, risk category), each None when it failed."""
    external_id = reader.get(record, "query_id", "", "id", max_length=200)
    question = reader.get(record, "query", "", "string")
    reader.within(question, "query", "question_chars", limits)
    response = reader.get(record, "response", "", "string")
    reader.within(response, "response", "answer_chars", limits)
    reference = reader.get(record, "gt_answer", "", "string", required=False, default="")
    reader.within(reference, "gt_answer", "answer_chars", limits)
    return external_id, question, response, reference, risk_category_parse(reader, record)


def _pile(reader: FieldReader, contexts: list | None, limits: Limits) -> list[PassageIn]:
    """The retrieved_context passages that read cleanly (the others are issues)."""
    pile = []
    for index, item in enumerate(contexts or []):
        path = join("retrieved_context", index)
        if not reader.check(item, path, "object"):
            continue
        doc_id = reader.get(item, "doc_id", path, "id", required=False, default="", max_length=300)
        title = reader.get(
            item, "title", path, "string", required=False, default="", max_length=500
        )
        text = reader.get(item, "text", path, "string")
        if not reader.within(text, join(path, "text"), "passage_chars", limits):
            continue
        if text is not None and doc_id is not None and title is not None:
            pile.append(PassageIn(source_id=doc_id, title=title, text=text))
    return pile


def _claim_texts(reader: FieldReader, record: dict, limits: Limits) -> list[str | None] | None:
    """The response claims' texts; None when there are more than the limit allows."""
    claims_raw = reader.get(record, "response_claims", "", "list", required=False, default=[])
    if not reader.count_within(claims_raw, "response_claims", "claim", "claims_per_answer", limits):
        return None
    checked = record.get("retrieved2response") is not None
    if checked and "response_claims" not in record:
        reader.fail("response_claims", "missing (retrieved2response labels the response claims)")
    texts = [
        _claim_text(reader, value, join("response_claims", i))
        for i, value in enumerate(claims_raw or [])
    ]
    for i, text in enumerate(texts):
        reader.within(text, join("response_claims", i), "claim_chars", limits)
    return texts


def _checker_labels(
    reader: FieldReader, record: dict, texts: list, pile: list[PassageIn]
) -> tuple[list[list[str]] | None, list[str] | None]:
    """(retrieved2response: per claim one label per passage, answer2response: one label per
    claim), each None when the record has none; a count that does not fit is an issue."""
    per_claim = reader.get(record, "retrieved2response", "", "list", required=False, default=None)
    correctness = reader.get(record, "answer2response", "", "list", required=False, default=None)
    if per_claim is not None and len(per_claim) != len(texts):
        reader.fail(
            "retrieved2response",
            f"has {len(per_claim)} entries but there are {len(texts)} response claims "
            "(expected one list per claim, each with one label per retrieved passage)",
        )
        per_claim = None
    if correctness is not None and len(correctness) != len(texts):
        reader.fail(
            "answer2response",
            f"has {len(correctness)} labels but there are {len(texts)} response claims",
        )
        correctness = None
    claim_labels: list[list[str]] = []
    for i, labels in enumerate(per_claim or []):
        path = join("retrieved2response", i)
        if not reader.check(labels, path, "list"):
            continue
        if len(labels) != len(pile):
            reader.fail(
                path,
                f"has {len(labels)} labels but the pile has {len(pile)} passages "
                "(one label per retrieved passage)",
            )
            continue
        claim_labels.append(
            [_label(reader, value, join(path, j)) for j, value in enumerate(labels)]
        )
    correct_labels = [
        _label(reader, value, join("answer2response", i))
        for i, value in enumerate(correctness or [])
    ]
    return (
        None if per_claim is None else claim_labels,
        None if correctness is None else correct_labels,
    )


def _claims_add(
    answer: AnswerIn, texts: list[str], per_claim: list | None, correctness: list | None
) -> None:
    """The claims, each with the ragchecker judge's verdict when the record was checked."""
    for i, text in enumerate(texts):
        claim = ClaimIn(text=text, position=i, origin=CLAIM_ORIGIN)
        if per_claim is not None:
            raw_response = {"retrieved2response": per_claim[i]}
            if correctness is not None:
                raw_response["answer2response"] = correctness[i]
            claim.judges.append(
                JudgeVerdictIn(
                    name=JUDGE_NAME,
                    verdict=checker_verdict(per_claim[i]),
                    raw_response=json.dumps(raw_response),
                    field=join("retrieved2response", i),
                )
            )
        answer.claims.append(claim)
