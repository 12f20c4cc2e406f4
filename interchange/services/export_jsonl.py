"""The export's JSON Lines records: one answer per line in the native import schema (pile,
claims, labels with quotes, gold, judges), built from a batch's rows."""

import json

from interchange.services.export_reads import LABEL_METHOD, Batch, Lookups


def _pile_refs(passages: list[tuple]) -> dict[int, str | int]:
    """How a quote or citation names each passage: its source id when that is unique, else rank.

    `passages` are one answer's (answer_id, id, rank, source_id, title, text) rows.
    """
    counts: dict[str, int] = {}
    for passage in passages:
        counts[passage[3]] = counts.get(passage[3], 0) + 1
    return {
        pk: source_id if source_id and counts[source_id] == 1 else rank
        for _answer, pk, rank, source_id, _title, _text in passages
    }


def _label_entry(label: tuple, refs: dict, lookups: Lookups, more_spans: dict) -> dict:
    claim, annotator, verdict, passage, start, end, quote, note, correct, changed = label
    entry: dict = {"annotator": lookups.username(annotator), "verdict": verdict}
    if passage is not None:
        entry["quote"] = {"passage": refs[passage], "start": start, "end": end, "text": quote}
    if more := more_spans.get((claim, annotator)):
        entry["more_quotes"] = [
            {"passage": refs[pk], "start": s, "end": e, "text": text}
            for pk, _name, s, e, text in more
        ]
    if note:
        entry["note"] = note
    if correct:
        entry["correct"] = correct
    if changed:
        # Changed after the analyst saw the judge's or a colleague's verdict (for leads).
        entry["changed_after_reveal"] = True
    return entry


def _judge_entry(verdict: tuple, lookups: Lookups) -> dict:
    _claim, run_id, value, confidence = verdict
    run = lookups.run(run_id)
    return {
        "name": run.name,
        "verdict": value,
        "confidence": confidence,
        "prompt_version": run.prompt_version,
        "model": run.model,
        "backend": run.backend,
        "kind": run.kind,
        "run": run_id,
        "method": run.method,
    }


def _claim_record(claim: tuple, batch: Batch, refs: dict, lookups: Lookups) -> dict:
    _answer, pk, position, text, origin, tags, span_start, span_end, stratum = claim
    record: dict = {
        "claim_id": pk,
        "position": position,
        "text": text,
        "origin": origin,
        "tags": json.loads(tags),
        "citations": [refs[cited[1]] for cited in batch.citations.get(pk, ())],
        "labels": [
            _label_entry(label, refs, lookups, batch.more_spans)
            for label in batch.labels.get(pk, ())
        ],
        "method": LABEL_METHOD,
    }
    if span_start is not None:
        record["span"] = {"start": span_start, "end": span_end}
    if stratum:
        # Only when set, so exports of projects without a recorded design are unchanged.
        record["stratum"] = stratum
    gold = batch.gold.get(pk)
    if gold is not None:
        _claim, verdict, source, reason, decided_by = gold
        record["gold"] = {"verdict": verdict, "source": source}
        if reason:
            record["gold"]["reason"] = reason
        if decided_by is not None:
            record["gold"]["decided_by"] = decided_by
    record["judges"] = [_judge_entry(verdict, lookups) for verdict in batch.verdicts.get(pk, ())]
    return record


def answer_record(answer: tuple, batch: Batch, lookups: Lookups) -> dict:
    pk, external_id, question, text, reference, risk, answerable, abstention, metadata = answer[:9]
    passages = batch.passages.get(pk, [])
    refs = _pile_refs(passages)
    record = {
        "id": external_id,
        "question": question,
        "answer": text,
        "pile": [
            {"id": source_id, "title": title, "text": body}
            for _answer, _pk, _rank, source_id, title, body in passages
        ],
        "reference": reference,
        "risk_category": risk,
        "answerable": answerable,
        "abstention": abstention,
        "metadata": metadata,
        "claims": [
            _claim_record(claim, batch, refs, lookups) for claim in batch.claims.get(pk, ())
        ],
    }
    system_name, system_version, system_metadata, question_id = answer[9:]
    # Only when set, so a project without systems exports as it always did.
    if system_name is not None:
        record["system"] = {
            "name": system_name,
            **({"version": system_version} if system_version else {}),
            **({"metadata": system_metadata} if system_metadata else {}),
        }
    if question_id:
        record["question_id"] = question_id
    return record
