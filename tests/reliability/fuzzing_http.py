"""Generated bad requests to two HTTP routes: OTLP trace ingestion and the label form.

`otlp_strategy()` draws (body bytes, mutation, path): a valid trace request (OpenTelemetry GenAI
conventions or OpenInference), then one mutation at a random path of it: a key dropped, a value
of the wrong type, a hostile JSON token (nesting 1,000 to 5,000 deep, a 5,000-digit number,
NaN, Infinity, 1e400), a random AnyValue (`intValue` "abc", a `doubleValue` of text, a kvlist
deep or malformed), hostile JSON inside the documents attribute, broken JSON, bytes that are
not UTF-8, or nothing (the control: the trace must become an answer).

`label_form_strategy()` draws (fields, charset, htmx, mutation): a valid save of the label form
(two spans), then up to three fields given hostile values (unicode digits such as "²", numbers
of 30 or 5,000 digits, signs, text, NUL, emoji, nothing) or dropped, or repeated span fields of
unequal counts, posted in a charset from UTF-8's aliases and others.
"""

import copy
import json

from hypothesis import strategies as st

from tests.api.test_otlp import _genai_trace, _openinference_trace

HOSTILE_TOKENS = st.one_of(
    st.sampled_from([1_000, 5_000]).map(lambda n: "[" * n + "]" * n),
    st.sampled_from([1_000, 5_000]).map(lambda n: '{"a":' * n + "0" + "}" * n),
    st.integers(min_value=4_301, max_value=6_000).map(lambda n: "7" * n),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-2E+999"]),
)
WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.sampled_from(["values", "key", "value", "x"]), st.integers(), max_size=2),
)
NUMBER_TEXT = st.one_of(
    st.sampled_from(["abc", "", " ", "1.5", "-", "0x1f", "²", "٣", "1e3", "NaN", "Infinity"]),
    st.integers(min_value=20, max_value=6_000).map(lambda n: "9" * n),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)


def _kvlist(depth: int) -> dict:
    value: dict = {"stringValue": "x"}
    for _ in range(depth):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


ANY_VALUES = st.one_of(
    NUMBER_TEXT.map(lambda text: {"intValue": text}),
    NUMBER_TEXT.map(lambda text: {"doubleValue": text}),
    WRONG_VALUES.map(lambda value: {"intValue": value}),
    WRONG_VALUES.map(lambda value: {"doubleValue": value}),
    WRONG_VALUES.map(lambda value: {"boolValue": value}),
    WRONG_VALUES.map(lambda value: {"stringValue": value}),
    WRONG_VALUES.map(lambda value: {"arrayValue": value}),
    WRONG_VALUES.map(lambda value: {"kvlistValue": {"values": value}}),
    st.integers(min_value=1, max_value=40).map(_kvlist),
    WRONG_VALUES,
)
EMBEDDED = st.one_of(
    HOSTILE_TOKENS,
    st.sampled_from(['{"id": 1}', "[1, null]", '[{"id": [1], "content": {"a": 1}}]', "[", ""]),
)
MUTATIONS = (
    "none",
    "drop",
    "wrong_type",
    "hostile",
    "any_value",
    "embedded",
    "bad_json",
    "bad_utf8",
)
HOLE = "__HOSTILE__"


def paths_of(value, path=()) -> list[tuple]:
    """Every key and index path inside `value`, outermost first."""
    found = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        found.append((*path, key))
        if isinstance(child, dict | list):
            found.extend(paths_of(child, (*path, key)))
    return found


def _parent(value, path):
    for key in path[:-1]:
        value = value[key]
    return value


def _attribute_values(request) -> list[tuple]:
    return [p for p in paths_of(request) if p[-2:-1] == ("attributes",) or p[-1:] == ("value",)]


@st.composite
def otlp_strategy(draw):
    request = copy.deepcopy(draw(st.sampled_from([_genai_trace, _openinference_trace]))())
    mutation = draw(st.sampled_from(MUTATIONS))
    path, hostile = None, None
    if mutation == "embedded" and "gen_ai.retrieval.documents" not in json.dumps(request):
        mutation = "any_value"
    if mutation == "drop":
        path = draw(st.sampled_from(paths_of(request)))
        parent = _parent(request, path)
        del parent[path[-1]]
    elif mutation in ("wrong_type", "hostile"):
        path = draw(st.sampled_from(paths_of(request)))
        if mutation == "hostile":
            hostile = draw(HOSTILE_TOKENS)
        _parent(request, path)[path[-1]] = HOLE if hostile else draw(WRONG_VALUES)
    elif mutation == "any_value":
        values = [p for p in paths_of(request) if p[-1] == "value"]
        path = draw(st.sampled_from(values))
        _parent(request, path)[path[-1]] = draw(ANY_VALUES)
    elif mutation == "embedded":
        spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
        for span in spans:
            for item in span["attributes"]:
                if item["key"] == "gen_ai.retrieval.documents":
                    item["value"] = {"stringValue": draw(EMBEDDED)}
        path = ("gen_ai.retrieval.documents",)
    content = json.dumps(request, ensure_ascii=False)
    if hostile:
        content = content.replace(f'"{HOLE}"', hostile)
    body = content.encode()
    if mutation == "bad_json":
        pos = draw(st.integers(min_value=1, max_value=len(body) - 2))
        cut = draw(st.sampled_from([b"", b"{", b'"', b",,", b"]"]))
        body = body[:pos] + cut + body[pos + draw(st.integers(1, 4)) :]
    elif mutation == "bad_utf8":
        pos = draw(st.integers(min_value=1, max_value=len(body) - 2))
        body = (
            body[:pos] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80"])) + body[pos:]
        )
    return body, mutation, path


FORM_NUMBERS = ("passage", "start_utf16", "end_utf16")
SPAN_FIELDS = ("more_passage", "more_start_utf16", "more_end_utf16", "more_quote")
FORM_FIELDS = (*FORM_NUMBERS, "verdict", "quote", "note", "correct", *SPAN_FIELDS)
FORM_VALUES = st.one_of(
    NUMBER_TEXT,
    st.sampled_from(
        ["SUPPORTED", "supported", "MAYBE", "0", "-1", "\x00", "🙂", "x" * 6_000, str(2**31)]
    ),
    st.text(max_size=12, alphabet=st.characters(blacklist_categories=("Cs",))),
)
CHARSETS = (
    "",
    "; charset=utf-8",
    "; charset=UTF8",
    "; charset=utf_8",
    "; charset=us-ascii",
    "; charset=latin-1",
    "; charset=utf-16",
    "; charset=bogus",
)
READABLE_CHARSETS = CHARSETS[:5]


@st.composite
def label_form_strategy(draw, valid: dict):
    """(fields, charset, htmx, mutation) from `valid`, a dict of the form's fields (lists for
    the repeated span fields)."""
    fields = copy.deepcopy(valid)
    mutation = draw(st.sampled_from(["none", "values", "values", "values", "drop", "unequal"]))
    if mutation == "values":
        for name in draw(st.lists(st.sampled_from(FORM_FIELDS), min_size=1, max_size=3)):
            if name in SPAN_FIELDS:
                fields[name] = draw(st.lists(FORM_VALUES, min_size=1, max_size=3))
                for other in SPAN_FIELDS:  # keep the counts equal: the value is what is tried
                    fields[other] = (fields[other] * 3)[: len(fields[name])]
            else:
                fields[name] = draw(FORM_VALUES)
    elif mutation == "drop":
        for name in draw(st.lists(st.sampled_from(FORM_FIELDS), min_size=1, max_size=3)):
            fields.pop(name, None)
    elif mutation == "unequal":
        name = draw(st.sampled_from(SPAN_FIELDS))
        fields[name] = fields[name] * draw(st.integers(min_value=2, max_value=3))
    charset = draw(st.sampled_from(CHARSETS)) if mutation != "none" else ""
    return fields, charset, draw(st.booleans()), mutation
