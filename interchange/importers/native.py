"""FaithAudit's own format: one answer per record with its pile, claims, labels, gold and judges.

    {"id", "question", "answer", "pile": [{"id", "title", "text"}], "citations"?, "reference"?,
     "risk_category"?, "answerable"?, "abstention"?, "metadata"?,
     "system"?: "name" or {"name", "version"?, ...metadata}, "question_id"?,
     "claims"?: [{"text", "position"?, "origin"?, "tags"?, "stratum"?, "citations"?,
                  "span"?: {"start", "end"},
                  "labels"?: [{"annotator", "verdict", "quote"?: {"passage", "start", "end", "text"?},
                               "more_quotes"?: [{"passage", "start", "end", "text"?}],
                               "note"?, "correct"?, "changed_after_reveal"?}],
                  "gold"?: {"verdict", "source", "reason"?, "decided_by"?},
                  "judge"?: {"name", "verdict", "confidence"?} (or a list of them),
                  "judges"?: [{"name", "verdict", "confidence"?, "prompt_version"?, "model"?,
                               "kind"?, "run"?}]}]}

A quote's or citation's `passage` is the pile item's `id` (its source id) or its 1-based rank;
offsets are Unicode code points. This is also what `export_claims --format jsonl` writes.
`more_quotes`: a label's spans after its `quote` when the decision needs more than one sentence
(up to 5 spans in all, none overlapping another in its passage); a file without it has labels of
one span, as before.
"""

import functools
from typing import Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError

from annotate.limits import Limits, limits_current
from annotate.models import IMPORTED_SUFFIX, Correctness, Gold, RiskCategory, Verdict
from annotate.quotes import QuoteError, quote_verify
from interchange.importers.fields import FieldReader, csv_row_decode, join, shown
from interchange.importers.records import (
    AnswerIn,
    ClaimIn,
    GoldIn,
    JudgeVerdictIn,
    LabelIn,
    PassageIn,
    QuoteIn,
)
from interchange.importers.sources import RawRecord
from interchange.importers.systems import system_parse
from judges.models import JudgeRun, JudgeVerdictChoice

CSV_STRUCTURED = {"pile", "citations", "claims", "metadata"}
CSV_BOOLEANS = {"answerable", "abstention"}
# The fields each object of the native format may carry; any other is named in a warning.
ANSWER_FIELDS = frozenset(
    {"id", "question", "answer", "pile", "reference", "risk_category", "answerable",
     "abstention", "metadata", "citations", "claims", "system", "question_id"}
)  # fmt: skip
PASSAGE_FIELDS = frozenset({"id", "title", "text"})
# "claim_id" and "method" (and a judge's "backend" and "method") are what an export writes for
# the reader; an import does not read them back, nor warns about them.
CLAIM_FIELDS = frozenset(
    {"text", "position", "origin", "tags", "stratum", "citations", "span", "labels", "gold",
     "judge", "judges", "claim_id", "method"}
)  # fmt: skip
LABEL_FIELDS = frozenset(
    {"annotator", "verdict", "quote", "more_quotes", "note", "changed_after_reveal", "correct"}
)
GOLD_FIELDS = frozenset({"verdict", "source", "reason", "decided_by"})
JUDGE_FIELDS = frozenset(
    {"name", "verdict", "confidence", "prompt_version", "model", "kind", "run", "backend",
     "method"}
)  # fmt: skip

_username_valid = UnicodeUsernameValidator()


@functools.lru_cache(maxsize=4096)
def _username_ok(name: str) -> bool:
    """Django's username rule; cached, since a file names the same few analysts on every line."""
    try:
        _username_valid(name)
    except ValidationError:
        return False
    return True


JUDGE_KINDS = [JudgeRun.Kind.VERIFY.value, JudgeRun.Kind.CITATION.value]
# Read once: a TextChoices' `.values` builds a new list on every access, per field of every record.
CORRECTNESS = Correctness.values
VERDICTS = Verdict.values
GOLD_SOURCES = Gold.Source.values
JUDGE_VERDICTS = JudgeVerdictChoice.values
RISK_CATEGORIES = RiskCategory.values


def annotator_read(reader: FieldReader, raw: dict, path: str) -> str | None:
    """`raw["annotator"]`: a username-shaped name (required), or None with the problem noted.
    An export names an imported annotator "alice (imported)": the name read is "alice"."""
    annotator = reader.get(raw, "annotator", path, "string", max_length=161)
    if annotator is None:
        return None
    annotator = annotator.strip().removesuffix(IMPORTED_SUFFIX)
    if len(annotator) > 150 or not _username_ok(annotator):
        reader.fail(
            join(path, "annotator"),
            f"{shown(annotator)} is not a valid annotator name "
            "(letters, digits and @.+-_ only, at most 150)",
        )
        return None
    return annotator


def passage_resolve(reader: FieldReader, ref: Any, pile: list[PassageIn], path: str) -> int | None:
    """The 0-based pile index a reference names: an integer is a rank, a string a source id."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        if 1 <= ref <= len(pile):
            return ref - 1
        reader.fail(path, f"no passage of rank {ref}: the pile has {len(pile)} (ranks from 1)")
        return None
    if not isinstance(ref, str) or not ref:
        reader.fail(path, f"expected a passage id or rank, got {shown(ref)}")
        return None
    matches = [index for index, passage in enumerate(pile) if passage.source_id == ref]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        reader.fail(path, f"no passage with id {shown(ref)} in this answer's pile")
    else:
        reader.fail(
            path,
            f"passage id {shown(ref)} names {len(matches)} passages of the pile; "
            "use the rank (1-based) instead",
        )
    return None


def _pile(reader: FieldReader, record: dict, limits: Limits) -> list[PassageIn] | None:
    items = reader.get(record, "pile", "", "list")
    if not reader.count_within(items, "pile", "passage", "passages_per_answer", limits):
        return None
    if items is None:
        return None
    pile = []
    for index, item in enumerate(items):
        path = join("pile", index)
        if not reader.check(item, path, "object"):
            continue
        reader.unknown(item, PASSAGE_FIELDS, path)
        source_id = reader.get(item, "id", path, "id", required=False, default="", max_length=300)
        title = reader.get(
            item, "title", path, "string", required=False, default="", max_length=500
        )
        text = reader.get(item, "text", path, "string")
        if text is not None and reader.within(text, join(path, "text"), "passage_chars", limits):
            pile.append(PassageIn(source_id=source_id or "", title=title or "", text=text))
    return pile if len(pile) == len(items) else None


def _quote(reader: FieldReader, raw: Any, path: str, pile: list[PassageIn]) -> QuoteIn | None:
    if not reader.check(raw, path, "object"):
        return None
    if "passage" not in raw:
        reader.fail(join(path, "passage"), "missing (this field is required)")
        return None
    index = passage_resolve(reader, raw["passage"], pile, join(path, "passage"))
    start = reader.get(raw, "start", path, "integer")
    end = reader.get(raw, "end", path, "integer")
    text = reader.get(raw, "text", path, "string", required=False)
    if index is None or start is None or end is None:
        return None
    passage_text = pile[index].text
    if text is None:
        text = passage_text[start:end] if 0 <= start <= end <= len(passage_text) else ""
    try:
        quote_verify(passage_text=passage_text, start=start, end=end, quote=text)
    except QuoteError as error:
        reader.fail(path, str(error))
        return None
    return QuoteIn(passage_index=index, start=start, end=end, text=text)


def _correct(reader: FieldReader, raw: dict, path: str) -> str:
    value = raw.get("correct")
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return Correctness.YES if value else Correctness.NO
    if isinstance(value, str) and value.strip().lower() in CORRECTNESS:
        return value.strip().lower()
    reader.fail(
        join(path, "correct"),
        f"expected true, false or one of {', '.join(CORRECTNESS)}, got {shown(value)}",
    )
    return ""


def label_parse(
    reader: FieldReader, raw: Any, path: str, pile: list[PassageIn], *, quote_required: bool
) -> LabelIn | None:
    """One analyst's label, under the rules of `annotate.services.labels.label_save`."""
    if not reader.check(raw, path, "object"):
        return None
    reader.unknown(raw, LABEL_FIELDS, path)
    annotator = annotator_read(reader, raw, path)
    verdict = reader.verdict(raw, "verdict", path, VERDICTS)
    quote = None
    if raw.get("quote") is not None:
        quote = _quote(reader, raw["quote"], join(path, "quote"), pile)
        if quote is None:
            return None
    elif quote_required and verdict in (Verdict.SUPPORTED, Verdict.CONTRADICTED):
        reader.fail(
            join(path, "quote"),
            f"a {verdict} label needs a quote (this project requires evidence quotes)",
        )
        return None
    more_quotes = []
    if raw.get("more_quotes") is not None:
        more_path = join(path, "more_quotes")
        if not reader.check(raw["more_quotes"], more_path, "list"):
            return None
        if raw["more_quotes"] and quote is None:
            reader.fail(more_path, "more quotes need the first one in `quote`")
            return None
        for index, item in enumerate(raw["more_quotes"]):
            more = _quote(reader, item, join(more_path, index), pile)
            if more is None:
                return None
            more_quotes.append(more)
    # As the labelling form's note field.
    note = reader.get(raw, "note", path, "string", required=False, default="", max_length=5000)
    correct = _correct(reader, raw, path)
    changed = reader.get(
        raw, "changed_after_reveal", path, "boolean", required=False, default=False
    )
    if annotator is None or verdict is None or note is None or changed is None:
        return None
    if verdict == Verdict.SUPPORTED:
        correct = ""  # as label_save: correctness is asked of unfaithful claims only
    return LabelIn(
        annotator=annotator.strip(),
        verdict=verdict,
        quote=quote,
        more_quotes=more_quotes,
        note=note,
        correct=correct,
        field=path,
        changed_after_reveal=changed,
    )


def _gold(reader: FieldReader, raw: Any, path: str) -> GoldIn | None:
    if not reader.check(raw, path, "object"):
        return None
    verdict = reader.verdict(raw, "verdict", path, VERDICTS)
    reader.unknown(raw, GOLD_FIELDS, path)
    source = reader.get(raw, "source", path, "string")
    if source is not None and source not in GOLD_SOURCES:
        reader.fail(
            join(path, "source"),
            f"unknown gold source {shown(source)}: use {', '.join(GOLD_SOURCES)}",
        )
        source = None
    reason = reader.get(raw, "reason", path, "string", required=False, default="")
    decided_by = reader.get(
        raw, "decided_by", path, "string", required=False, default="", max_length=161
    )
    if decided_by:
        decided_by = decided_by.strip().removesuffix(IMPORTED_SUFFIX)
        if len(decided_by) > 150:
            reader.fail(join(path, "decided_by"), "a name of more than 150 characters")
            decided_by = None
    if verdict is None or source is None or reason is None or decided_by is None:
        return None
    return GoldIn(verdict=verdict, source=source, reason=reason, decided_by=decided_by)


def judge_parse(reader: FieldReader, raw: Any, path: str) -> JudgeVerdictIn | None:
    if not reader.check(raw, path, "object"):
        return None
    reader.unknown(raw, JUDGE_FIELDS, path)
    name = reader.get(raw, "name", path, "string", max_length=100)
    if name is not None and not name.strip():
        reader.fail(join(path, "name"), "must not be empty")
        name = None
    verdict = reader.verdict(raw, "verdict", path, JUDGE_VERDICTS)
    confidence = reader.get(raw, "confidence", path, "number", required=False)
    if confidence is not None and not 0 <= confidence <= 1:
        reader.fail(
            join(path, "confidence"),
            f"confidence {shown(confidence)} is outside [0, 1] (it is P(SUPPORTED))",
        )
        return None
    version = reader.get(
        raw, "prompt_version", path, "string", required=False, default="", max_length=40
    )
    model = reader.get(raw, "model", path, "string", required=False, default="", max_length=200)
    kind = reader.get(raw, "kind", path, "string", required=False, default="verify")
    if kind is not None and kind not in JUDGE_KINDS:
        reader.fail(
            join(path, "kind"), f"unknown judge run kind {shown(kind)}: use verify or citation"
        )
        kind = None
    run = reader.get(raw, "run", path, "id", required=False, default="")
    if None in (name, verdict, version, model, kind, run):
        return None
    return JudgeVerdictIn(
        name=name.strip(),
        verdict=verdict,
        confidence=None if confidence is None else float(confidence),
        prompt_version=version or "imported",
        model=model,
        kind=kind,
        run=str(run),
        field=path,
    )


def _strings(reader: FieldReader, raw: dict, key: str, path: str) -> list[str] | None:
    values = reader.get(raw, key, path, "list", required=False, default=[])
    if values is None:
        return None
    ok = all(
        reader.check(value, join(join(path, key), i), "string") for i, value in enumerate(values)
    )
    return values if ok else None


def _citations(
    reader: FieldReader, raw: dict, path: str, pile: list[PassageIn]
) -> list[int] | None:
    refs = reader.get(raw, "citations", path, "list", required=False, default=[])
    if refs is None:
        return None
    indexes = [
        passage_resolve(reader, ref, pile, join(join(path, "citations"), i))
        for i, ref in enumerate(refs)
    ]
    if None in indexes:
        return None
    return list(dict.fromkeys(indexes))


def _claim_span(
    reader: FieldReader, raw: dict, path: str, answer: AnswerIn
) -> tuple[int, int] | None:
    """The claim's (start, end) in the answer text, when given and inside it."""
    if raw.get("span") is None:
        return None
    span_raw = raw["span"]
    span_path = join(path, "span")
    if not reader.check(span_raw, span_path, "object"):
        return None
    start = reader.get(span_raw, "start", span_path, "integer")
    end = reader.get(span_raw, "end", span_path, "integer")
    if start is None or end is None:
        return None
    if 0 <= start <= end <= len(answer.text):
        return (start, end)
    reader.fail(
        span_path,
        f"span {start}–{end} is not inside the answer text ({len(answer.text)} characters)",
    )
    return None


def _claim_labels(
    reader: FieldReader, raw: dict, path: str, answer: AnswerIn, quote_required: bool
) -> list:
    """The claim's labels, one per annotator (a second is an issue naming the first)."""
    labels = []
    annotators: dict[str, str] = {}
    for i, label_raw in enumerate(
        reader.get(raw, "labels", path, "list", required=False, default=[]) or []
    ):
        label_path = join(join(path, "labels"), i)
        label = label_parse(
            reader, label_raw, label_path, answer.pile, quote_required=quote_required
        )
        if label is None:
            continue
        if label.annotator in annotators:
            reader.fail(
                join(label_path, "annotator"),
                f"duplicate id: {label.annotator!r} already labelled this claim "
                f"in {annotators[label.annotator]} (one label per analyst and claim)",
            )
            continue
        annotators[label.annotator] = label_path
        labels.append(label)
    return labels


def _claim_judges(reader: FieldReader, raw: dict, path: str) -> list[JudgeVerdictIn]:
    """The claim's judge verdicts from `judge` (one or a list) then `judges`, one per judge
    run (a second is an issue naming the first)."""
    judges = []
    judge_raw = raw.get("judge")
    entries: list[tuple[str, Any]] = []
    if isinstance(judge_raw, list):
        entries += [(join(join(path, "judge"), i), item) for i, item in enumerate(judge_raw)]
    elif judge_raw is not None:
        entries.append((join(path, "judge"), judge_raw))
    judges_list = reader.get(raw, "judges", path, "list", required=False, default=[]) or []
    entries += [(join(join(path, "judges"), i), item) for i, item in enumerate(judges_list)]
    runs: dict[tuple, str] = {}
    for judge_path, item in entries:
        judge = judge_parse(reader, item, judge_path)
        if judge is None:
            continue
        key = (judge.name, judge.prompt_version, judge.kind, judge.run)
        if key in runs:
            reader.fail(
                judge_path,
                f"duplicate id: judge {judge.name!r} already gave this claim a verdict in "
                f'{runs[key]} (one verdict per judge run and claim; tell runs apart with "run")',
            )
            continue
        runs[key] = judge_path
        judges.append(judge)
    return judges


def _claim(
    reader: FieldReader,
    raw: Any,
    path: str,
    index: int,
    answer: AnswerIn,
    quote_required: bool,
    limits: Limits,
) -> ClaimIn | None:
    if not reader.check(raw, path, "object"):
        return None
    issues_before = len(reader.issues)
    reader.unknown(raw, CLAIM_FIELDS, path)
    text = reader.get(raw, "text", path, "string")
    if text is not None and not text.strip():
        reader.fail(join(path, "text"), "must not be empty")
    reader.within(text, join(path, "text"), "claim_chars", limits)
    position = reader.get(raw, "position", path, "integer", required=False, default=index)
    if position is not None and position < 0:
        reader.fail(join(path, "position"), f"must be 0 or more, got {position}")
    origin = reader.get(
        raw, "origin", path, "string", required=False, default="manual", max_length=80
    )
    tags = _strings(reader, raw, "tags", path)
    # The audit design stratum the claim was sampled in (DESIGN.md "Sampling").
    stratum = reader.get(raw, "stratum", path, "string", required=False, default="", max_length=200)
    citations = _citations(reader, raw, path, answer.pile)
    span = _claim_span(reader, raw, path, answer)
    labels = _claim_labels(reader, raw, path, answer, quote_required)
    gold = _gold(reader, raw["gold"], join(path, "gold")) if raw.get("gold") is not None else None
    judges = _claim_judges(reader, raw, path)
    if len(reader.issues) > issues_before:
        return None
    return ClaimIn(
        text=text,
        position=position,
        origin=origin,
        tags=tags,
        stratum=(stratum or "").strip(),
        citations=citations,
        span=span,
        labels=labels,
        gold=gold,
        judges=judges,
    )


def risk_category_parse(reader: FieldReader, record: dict) -> str:
    raw = reader.get(record, "risk_category", "", "string", required=False, default="")
    if not raw:
        return RiskCategory.NONE
    value = raw.strip().lower()
    if value not in RISK_CATEGORIES:
        reader.fail(
            "risk_category",
            f"unknown risk category {shown(raw)}: use {', '.join(RISK_CATEGORIES)}",
        )
        return RiskCategory.NONE
    return value


def native_parse(
    raw: RawRecord, *, quote_required: bool, limits: Limits | None = None
) -> tuple[AnswerIn | None, FieldReader]:
    limits = limits or limits_current()
    reader = FieldReader(raw.location)
    record = raw.value
    if raw.from_csv:
        record = csv_row_decode(
            record, structured=CSV_STRUCTURED, booleans=CSV_BOOLEANS, reader=reader
        )
        if reader.issues:
            return None, reader
    if not reader.check(record, "", "object"):
        return None, reader
    reader.unknown(record, ANSWER_FIELDS, "")
    external_id = reader.get(record, "id", "", "id", max_length=200)
    question = reader.get(record, "question", "", "string")
    reader.within(question, "question", "question_chars", limits)
    text = reader.get(record, "answer", "", "string")
    reader.within(text, "answer", "answer_chars", limits)
    pile = _pile(reader, record, limits)
    reference = reader.get(record, "reference", "", "string", required=False, default="")
    reader.within(reference, "reference", "answer_chars", limits)
    risk = risk_category_parse(reader, record)
    answerable = reader.get(record, "answerable", "", "boolean", required=False)
    abstention = reader.get(record, "abstention", "", "boolean", required=False, default=False)
    metadata = reader.get(record, "metadata", "", "object", required=False, default={})
    if metadata and not reader.storable(metadata, "metadata"):
        metadata = None
    system = system_parse(reader, record["system"], "system") if record.get("system") else None
    question_id = reader.get(
        record, "question_id", "", "id", required=False, default="", max_length=200
    )
    if None in (external_id, question, text, pile, reference, metadata) or reader.issues:
        return None, reader
    answer = AnswerIn(
        location=raw.location,
        external_id=external_id,
        question=question,
        text=text,
        pile=pile,
        reference=reference,
        risk_category=risk,
        answerable=answerable,
        abstention=bool(abstention),
        metadata=dict(metadata),
        system=system,
        question_id=(question_id or "").strip(),
    )
    if record.get("citations") is not None:
        cited = _citations(reader, record, "", pile)
        if cited is not None:
            answer.metadata["citations"] = [pile[i].source_id or i + 1 for i in cited]
    claims = reader.get(record, "claims", "", "list", required=False, default=[]) or []
    if not reader.count_within(claims, "claims", "claim", "claims_per_answer", limits):
        return None, reader
    for index, claim_raw in enumerate(claims):
        claim = _claim(
            reader, claim_raw, join("claims", index), index, answer, quote_required, limits
        )
        if claim is not None:
            answer.claims.append(claim)
    if reader.issues:
        return None, reader
    return answer, reader
