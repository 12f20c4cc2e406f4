"""No 500 on bad input to the API (issue 34, item 3): OTLP traces are read with the importers'
depth, number and type guards and refused with a problem naming the field; JSON bodies are
capped (`FAITHAUDIT_API_MAX_BODY_BYTES`) and refused with a 413 before they are read. Each case
answered 500 on main (RecursionError, ValueError, AttributeError), or took a 63 MB body."""

import json

import pytest

from annotate.models import Answer, Project
from tests.api.conftest import api_world, native_answer  # noqa: F401 - the API's fixture
from tests.api.test_otlp import _attr, _genai_trace, _request, _span

OTLP = "/api/v1/otlp/v1/traces"
SHOP = {"X-FaithAudit-Project": "shop"}
ATTRIBUTE = "resourceSpans[0].scopeSpans[0].spans[0].attributes[0]"


def _with_value(value_json: str) -> str:
    """A trace request whose first span's first attribute has this AnyValue (as JSON text)."""
    body = json.dumps(_request(_span("a1a1a1a1a1a1a1a1", "s", {"k": "HOLE"})))
    return body.replace('{"stringValue": "HOLE"}', value_json)


def _kvlist(depth: int) -> str:
    return '{"kvlistValue": {"values": [{"key": "k", "value": ' * depth + "{}" + "}]}}" * depth


CASES = {
    # name: (body, status, field the first error names (a prefix where the path runs deep))
    "a body nested 1,000 lists deep": ("[" * 1000 + "]" * 1000, 422, ""),
    "a value nested 1,000 lists deep": (
        _with_value("[" * 1000 + "]" * 1000),
        422,
        f"{ATTRIBUTE}.value",
    ),
    "a kvlist 300 deep": (_with_value(_kvlist(300)), 422, f"{ATTRIBUTE}.value"),
    "a kvlist 20 deep": (_with_value(_kvlist(20)), 422, f"{ATTRIBUTE}.value"),
    'intValue "abc"': (_with_value('{"intValue": "abc"}'), 422, f"{ATTRIBUTE}.value.intValue"),
    "intValue of 5,000 digits": (
        _with_value('{"intValue": "' + "7" * 5000 + '"}'),
        422,
        f"{ATTRIBUTE}.value.intValue",
    ),
    "intValue a bare 5,000-digit number": (
        _with_value('{"intValue": ' + "7" * 5000 + "}"),
        422,
        f"{ATTRIBUTE}.value.intValue",
    ),
    'doubleValue "zz"': (
        _with_value('{"doubleValue": "zz"}'),
        422,
        f"{ATTRIBUTE}.value.doubleValue",
    ),
    "doubleValue a bare NaN": (
        _with_value('{"doubleValue": NaN}'),
        422,
        f"{ATTRIBUTE}.value.doubleValue",
    ),
    "doubleValue 1e999": (
        _with_value('{"doubleValue": 1e999}'),
        422,
        f"{ATTRIBUTE}.value.doubleValue",
    ),
    'boolValue "false"': (
        _with_value('{"boolValue": "false"}'),
        422,
        f"{ATTRIBUTE}.value.boolValue",
    ),
    "arrayValue a list": (_with_value('{"arrayValue": [1]}'), 422, f"{ATTRIBUTE}.value.arrayValue"),
    "kvlist values of numbers": (
        _with_value('{"kvlistValue": {"values": [7]}}'),
        422,
        f"{ATTRIBUTE}.value.kvlistValue.values[0]",
    ),
    "spans [1, null, 'x']": (
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [1, None, "x"]}]}]}),
        422,
        "resourceSpans[0].scopeSpans[0].spans[0]",
    ),
    "resourceSpans [1, null, 'x']": (
        json.dumps({"resourceSpans": [1, None, "x"]}),
        422,
        "resourceSpans[0]",
    ),
    "scopeSpans an object": (
        json.dumps({"resourceSpans": [{"scopeSpans": {"spans": []}}]}),
        422,
        "resourceSpans[0].scopeSpans",
    ),
    "an attribute key that is a number": (
        json.dumps(_request(_span("a1a1a1a1a1a1a1a1", "s", {}))).replace(
            '"attributes": []', '"attributes": [{"key": 5, "value": {}}]'
        ),
        422,
        f"{ATTRIBUTE}.key",
    ),
    "a spanId that is a list": (
        json.dumps(_request(_span("a1a1a1a1a1a1a1a1", "s", {}))).replace(
            '"spanId": "a1a1a1a1a1a1a1a1"', '"spanId": [1]'
        ),
        422,
        "resourceSpans[0].scopeSpans[0].spans[0].spanId",
    ),
    "startTimeUnixNano 'soon'": (
        json.dumps(_request(_span("a1a1a1a1a1a1a1a1", "s", {}))).replace(
            '"startTimeUnixNano": "1700000000000000001"', '"startTimeUnixNano": "soon"'
        ),
        422,
        "resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano",
    ),
    "the body not JSON": ('{"resourceSpans": [', 400, None),
    "the body not UTF-8": (b'{"resourceSpans": ["\xff"]}', 400, None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_trace_request_is_a_problem_naming_the_field(api_world, case, figures):  # noqa: F811
    body, status, field = CASES[case]
    response = api_world.client("lead").post(OTLP, body, headers=SHOP)
    assert response.status_code == status, response.content[:400]
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == status
    if field is not None:
        assert problem["errors"], problem
        named = problem["errors"][0]["field"]
        assert named.startswith(field) if field else named == "", (named, problem)
    assert not Answer.objects.exists()
    figures.add("bad input", **{"OTLP hostile requests refused": 1})


def test_a_documents_attribute_holding_deep_json_is_refused_by_attribute():
    """The JSON inside a string attribute (gen_ai.retrieval.documents) gets the same guards."""
    from api.otlp import TraceError, traces_to_records

    request = _genai_trace()
    attributes = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    attributes[2] = _attr("gen_ai.retrieval.documents", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(TraceError) as refused:
        traces_to_records(request)
    [(field, detail)] = refused.value.problems
    assert field == "resourceSpans[0].scopeSpans[0].spans[0].attributes[2].value.stringValue"
    assert "nested too deeply" in detail


def test_problems_in_several_spans_are_all_named(api_world):  # noqa: F811
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [1, None, "x"]}]}]})
    problem = api_world.client("lead").post(OTLP, body, headers=SHOP).json()
    assert [error["field"] for error in problem["errors"]] == [
        f"resourceSpans[0].scopeSpans[0].spans[{i}]" for i in range(3)
    ]
    assert problem["errors"][1]["detail"] == "expected an object, got null"


def test_proto3_spellings_of_a_non_finite_double_are_valid_otlp(api_world):  # noqa: F811
    """OpenTelemetry's JSON exporters write a NaN score as the string "NaN": read as no value,
    the trace still becomes its answer."""
    request = _genai_trace()
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["attributes"].append({"key": "score", "value": {"doubleValue": "NaN"}})
    spans[1]["attributes"].append({"key": "n", "value": {"intValue": "-42"}})
    response = api_world.client("lead").post(OTLP, request, headers=SHOP)
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 1


class _Unreadable:
    """A request body that fails the test if the server reads any of it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/api/v1/projects/shop/answers", "application/json"),
        (OTLP, "application/json"),
        ("/api/v1/projects", "application/json"),  # an operation with a pydantic body
    ],
)
def test_a_body_declared_over_the_cap_is_a_413_before_it_is_read(
    api_world,  # noqa: F811
    path,
    content_type,
    figures,
):
    """The default cap, 10 MiB: a 63 MB JSON array was read and parsed on main."""
    client = api_world.client("lead")
    response = client.client.generic(
        "POST",
        path,
        b"",
        content_type=content_type,
        headers={**client._headers(None), **SHOP},
        CONTENT_LENGTH=str(10 * 1024 * 1024 + 1),
        **{"wsgi.input": _Unreadable()},
    )
    assert response.status_code == 413, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["max_bytes"] == 10 * 1024 * 1024
    assert "FAITHAUDIT_API_MAX_BODY_BYTES" in problem["detail"]
    figures.add("bad input", **{"API bodies over the cap refused": 1})


def test_the_cap_is_the_setting_and_ndjson_is_streamed_past_it(api_world, settings):  # noqa: F811
    settings.FAITHAUDIT_API_MAX_BODY_BYTES = 1000
    lead = api_world.client("lead")
    batch = [native_answer(n) for n in range(5)]
    assert len(json.dumps(batch)) > 1000  # hand-checked: 5 answers of ~300 bytes
    response = lead.post("/api/v1/projects/shop/answers", batch)
    assert response.status_code == 413
    assert not Answer.objects.exists()
    response = lead.post(
        "/api/v1/projects/shop/answers",
        "\n".join(json.dumps(answer) for answer in batch),
        content_type="application/x-ndjson",
    )
    assert response.status_code == 201
    assert Answer.objects.count() == 5


def test_a_pydantic_body_with_nan_or_deep_nesting_names_the_field(api_world):  # noqa: F811
    lead = api_world.client("lead")
    response = lead.post("/api/v1/projects", '{"slug": "p", "name": NaN}')
    assert response.status_code == 422, response.content
    assert response.json()["errors"][0]["field"] == "name"
    response = lead.post(
        "/api/v1/projects", '{"slug": "p", "name": ' + "[" * 5000 + "]" * 5000 + "}"
    )
    assert response.status_code == 422, response.content
    assert response.json()["errors"][0]["field"] == "name"
    assert not Project.objects.filter(slug="p").exists()
