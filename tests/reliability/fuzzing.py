"""Generated bad import files: valid records of every format, structurally mutated.

`file_strategy(fmt)` draws (bytes, file name, mutation) for one of the six formats: native
JSON Lines / JSON / CSV, RAGAS JSON Lines / CSV, RAGChecker JSON. Each file holds a valid
record and then a mutated one (so a rejection must also undo the valid record before it).
Mutations: a field dropped, a field given a value of the wrong type (huge numbers, NaN, lists,
objects, null), the JSON broken, bytes that are not UTF-8, a quote outside its passage, an
unknown verdict, or nothing (the control: the file must import).
"""

import copy
import csv
import io
import json

from hypothesis import strategies as st

PASSAGE = "Refunds are processed within 14 days. They go to the original card."


def native_record(n: int) -> dict:
    return {
        "id": f"fz-{n}",
        "question": "How long do refunds take?",
        "answer": "Refunds take 14 days.",
        "pile": [
            {"id": "doc-1", "title": "Policy", "text": PASSAGE},
            {"id": "doc-2", "title": "Cards", "text": "Gift cards are final."},
        ],
        "citations": ["doc-1"],
        "risk_category": "financial",
        "answerable": True,
        "claims": [
            {
                "text": "Refunds take 14 days.",
                "tags": ["numeric"],
                "labels": [
                    {
                        "annotator": "fuzz-ana",
                        "verdict": "SUPPORTED",
                        "quote": {"passage": "doc-1", "start": 0, "end": 36},
                    }
                ],
                "gold": {"verdict": "SUPPORTED", "source": "unanimous"},
                "judge": {"name": "fuzz-judge", "verdict": "SUPPORTED", "confidence": 0.9},
            }
        ],
    }


def ragas_record(n: int) -> dict:
    return {
        "user_input": f"How long do refunds take? ({n})",
        "response": "Refunds take 14 days.",
        "retrieved_contexts": [PASSAGE, "Gift cards are final."],
        "reference": "14 days",
    }


def ragchecker_record(n: int) -> dict:
    return {
        "query_id": f"q-{n}",
        "query": "How long do refunds take?",
        "gt_answer": "14 days.",
        "response": "Refunds take 14 days. Gift cards are final.",
        "retrieved_context": [
            {"doc_id": "d1", "text": PASSAGE},
            {"doc_id": "d2", "text": "Gift cards are final."},
        ],
        "response_claims": [["Refunds", "take", "14 days"], "Gift cards are final."],
        "retrieved2response": [["Entailment", "Neutral"], ["Neutral", "Entailment"]],
    }


RECORD = {
    "native-jsonl": native_record,
    "native-json": native_record,
    "native-csv": native_record,
    "ragas-jsonl": ragas_record,
    "ragas-csv": ragas_record,
    "ragchecker-json": ragchecker_record,
}
FORMATS = tuple(RECORD)

# Paths a mutation may hit, per schema (a path is a list of keys and indexes).
PATHS = {
    "native": [
        ["id"],
        ["question"],
        ["answer"],
        ["pile"],
        ["pile", 0],
        ["pile", 0, "id"],
        ["pile", 0, "text"],
        ["pile", 1, "title"],
        ["citations"],
        ["risk_category"],
        ["answerable"],
        ["claims"],
        ["claims", 0],
        ["claims", 0, "text"],
        ["claims", 0, "tags"],
        ["claims", 0, "labels"],
        ["claims", 0, "labels", 0, "annotator"],
        ["claims", 0, "labels", 0, "verdict"],
        ["claims", 0, "labels", 0, "quote"],
        ["claims", 0, "labels", 0, "quote", "start"],
        ["claims", 0, "labels", 0, "quote", "end"],
        ["claims", 0, "labels", 0, "quote", "passage"],
        ["claims", 0, "gold"],
        ["claims", 0, "gold", "verdict"],
        ["claims", 0, "judge"],
        ["claims", 0, "judge", "verdict"],
        ["claims", 0, "judge", "confidence"],
    ],
    "ragas": [
        ["user_input"],
        ["response"],
        ["retrieved_contexts"],
        ["retrieved_contexts", 0],
        ["reference"],
    ],
    "ragchecker": [
        ["query_id"],
        ["query"],
        ["gt_answer"],
        ["response"],
        ["retrieved_context"],
        ["retrieved_context", 0],
        ["retrieved_context", 0, "doc_id"],
        ["retrieved_context", 0, "text"],
        ["response_claims"],
        ["response_claims", 0],
        ["retrieved2response"],
        ["retrieved2response", 0],
        ["retrieved2response", 0, 1],
    ],
}
VERDICT_PATHS = {
    "native": [
        ["claims", 0, "labels", 0, "verdict"],
        ["claims", 0, "gold", "verdict"],
        ["claims", 0, "judge", "verdict"],
    ],
    "ragchecker": [["retrieved2response", 0, 0]],
}
MUTATIONS = ("none", "drop", "wrong_type", "bad_json", "bad_utf8", "quote_outside", "verdict")
MUST_REJECT = {"bad_json", "bad_utf8", "quote_outside", "verdict"}

wrong_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(10**400),
    st.just(-(10**400)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=2),
    st.dictionaries(st.sampled_from(["x", "id", "text"]), st.integers(), max_size=2),
)


def schema_of(fmt: str) -> str:
    return fmt.split("-")[0]


def _parent(record, path):
    node = record
    for key in path[:-1]:
        node = node[key]
    return node


def _dumps(value) -> str:
    # Python's json writes NaN/Infinity (not JSON): that is a kind of bad input too.
    return json.dumps(value, ensure_ascii=False)


def _csv(records: list[dict], schema: str) -> bytes:
    columns = []
    for record in records:
        for key in record:
            if key not in columns:
                columns.append(key)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for record in records:
        row = []
        for key in columns:
            value = record.get(key, "")
            row.append(value if isinstance(value, str) else _dumps(value))
        writer.writerow(row)
    return out.getvalue().encode("utf-8")


def serialise(fmt: str, records: list) -> tuple[bytes, str]:
    schema, container = fmt.split("-")
    if container == "jsonl":
        return ("\n".join(_dumps(r) for r in records) + "\n").encode(), "fuzz.jsonl"
    if container == "csv":
        return _csv(records, schema), "fuzz.csv"
    if schema == "ragchecker":
        return _dumps({"results": records}).encode(), "fuzz.json"
    return _dumps(records).encode(), "fuzz.json"


@st.composite
def file_strategy(draw, fmt: str):
    """(content, name, mutation, path) for one generated file of `fmt`."""
    schema = schema_of(fmt)
    make = RECORD[fmt]
    good, bad = make(1), make(2)
    mutation = draw(st.sampled_from(MUTATIONS))
    path = None
    if mutation == "verdict" and schema not in VERDICT_PATHS:
        mutation = "drop"
    if mutation == "quote_outside" and schema != "native":
        mutation = "wrong_type"
    if mutation == "drop":
        path = draw(st.sampled_from(PATHS[schema]))
        parent = _parent(bad, path)
        if isinstance(parent, list):
            parent.pop(path[-1])
        else:
            parent.pop(path[-1], None)
    elif mutation == "wrong_type":
        path = draw(st.sampled_from(PATHS[schema]))
        _parent(bad, path)[path[-1]] = draw(wrong_values)
    elif mutation == "verdict":
        path = draw(st.sampled_from(VERDICT_PATHS[schema]))
        _parent(bad, path)[path[-1]] = draw(
            st.sampled_from(["MAYBE", "supported?", "", "UNPARSEABLE!"])
        )
    elif mutation == "quote_outside":
        path = ["claims", 0, "labels", 0, "quote"]
        start = draw(st.integers(min_value=len(PASSAGE) - 3, max_value=len(PASSAGE) + 10**6))
        _parent(bad, path)[path[-1]] = {"passage": "doc-1", "start": start, "end": start + 5}
    records = [good, bad]
    content, name = serialise(fmt, copy.deepcopy(records))
    if mutation in ("bad_json", "bad_utf8"):
        # Somewhere inside the second record's bytes (for JSON: inside the file's second half).
        first = serialise(fmt, [good])[0]
        lo = len(first) - (2 if name.endswith(".json") else 0)
        lo = max(1, min(lo, len(content) - 2))
        pos = draw(st.integers(min_value=lo, max_value=len(content) - 2))
        if mutation == "bad_json":
            cut = draw(st.sampled_from([b"", b"{", b'"', b",,", b"]"]))
            content = content[:pos] + cut + content[pos + draw(st.integers(1, 4)) :]
            if name.endswith(".csv"):
                # Break the nested JSON of a cell, not only the CSV around it.
                content = (
                    content.replace(b'[{""id', b'[{""id"', 1) if b'[{""id' in content else content
                )
            if _parses(content, name):
                mutation = "bad_json(still valid)"
        else:
            content = (
                content[:pos]
                + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"]))
                + content[pos:]
            )
    return content, name, mutation, path


def _parses(content: bytes, name: str) -> bool:
    """Whether the (possibly broken) JSON or JSON Lines still parses; CSV counts as parsing."""
    if name.endswith(".csv"):
        return True
    try:
        text = content.decode("utf-8")
        if name.endswith(".jsonl"):
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)
        else:
            json.loads(text)
    except ValueError:
        return False
    return True
