"""OTLP/HTTP JSON traces, shaped as the OpenTelemetry GenAI conventions and OpenInference
(Phoenix) write them, each becoming an answer with its pile in rank order."""

import json

from annotate.models import Answer
from api.tokens import token_create

URL = "/api/v1/otlp/v1/traces"
TRACE = "5b8efff798038103d269b633813fc60c"


def _attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}  # OTLP JSON: int64 as a string
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def _span(span_id, name, attrs, *, parent="", start=1):
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 10),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
        "status": {},
    }


def _request(*spans):
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "rag-app")]},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}],
            }
        ]
    }


def _genai_trace():
    documents = [
        {"id": "kb-7", "score": 0.91, "content": "Refunds are processed within 14 days."},
        {"id": "kb-2", "score": 0.55, "content": "Refunds go to the original card."},
        {"id": "kb-9", "score": 0.12, "content": "Gift cards are not refundable."},
    ]
    retrieval = _span(
        "a1a1a1a1a1a1a1a1",
        "retrieval kb",
        {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.retrieval.query.text": "how long do refunds take",
            "gen_ai.retrieval.documents": json.dumps(documents),
        },
        parent="0000000000000001",
        start=1,
    )
    chat = _span(
        "b2b2b2b2b2b2b2b2",
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": json.dumps(
                [
                    {
                        "role": "system",
                        "parts": [{"type": "text", "content": "Answer from the context."}],
                    },
                    {
                        "role": "user",
                        "parts": [{"type": "text", "content": "How long do refunds take?"}],
                    },
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": "Refunds take 14 days."}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        },
        parent="0000000000000001",
        start=5,
    )
    return _request(retrieval, chat)


def _openinference_trace():
    retriever = {
        "openinference.span.kind": "RETRIEVER",
        "input.value": "how long do refunds take",
    }
    for i, (doc_id, text, score) in enumerate(
        [
            ("p-3", "Refunds are processed within 14 days.", 0.8),
            ("p-1", "Refunds go to the card.", 0.4),
        ]
    ):
        retriever[f"retrieval.documents.{i}.document.id"] = doc_id
        retriever[f"retrieval.documents.{i}.document.content"] = text
        retriever[f"retrieval.documents.{i}.document.score"] = score
    llm = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Use the context.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "How long do refunds take?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Within 14 days.",
    }
    # A query-rewrite LLM call inside the retriever is not the answer.
    rewrite = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "refund duration",
    }
    return _request(
        _span("c3c3c3c3c3c3c3c3", "retrieve", retriever, start=1),
        _span("e5e5e5e5e5e5e5e5", "rewrite", rewrite, parent="c3c3c3c3c3c3c3c3", start=2),
        _span("d4d4d4d4d4d4d4d4", "ChatCompletion", llm, start=5),
    )


def _pile(answer):
    return list(answer.passages.order_by("rank").values_list("source_id", "text"))


def test_genai_conventions_trace_becomes_an_answer(api_world):
    client = api_world.client("lead")
    response = client.post(URL, _genai_trace(), headers={"X-FaithAudit-Project": "shop"})
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 1
    answer = Answer.objects.get(project=api_world.project, external_id=TRACE)
    assert answer.text == "Refunds take 14 days."
    assert answer.question == "How long do refunds take?"
    assert [source for source, _ in _pile(answer)] == ["kb-7", "kb-2", "kb-9"]
    # the same trace again: nothing new
    again = client.post(URL, _genai_trace(), headers={"X-FaithAudit-Project": "shop"})
    assert (again.json()["created"], again.json()["existing"]) == (0, 1)


def test_openinference_trace_becomes_an_answer(api_world):
    scoped = token_create(user=api_world.people["lead"], name="otel", project=api_world.project)
    from tests.api.conftest import ApiClient

    response = ApiClient(scoped.secret).post(URL, _openinference_trace())
    assert response.status_code == 200, response.content
    answer = Answer.objects.get(project=api_world.project, external_id=TRACE)
    assert answer.text == "Within 14 days."
    assert answer.question == "How long do refunds take?"
    assert _pile(answer) == [
        ("p-3", "Refunds are processed within 14 days."),
        ("p-1", "Refunds go to the card."),
    ]


def test_trace_without_retrieval_is_skipped_and_said(api_world):
    request = _genai_trace()
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    del spans[0]
    response = api_world.client("lead").post(URL, request, headers={"X-FaithAudit-Project": "shop"})
    assert response.status_code == 200
    assert response.json()["skipped"] == 1
    assert "no retrieval span" in response.json()["partialSuccess"]["errorMessage"]
    assert not Answer.objects.exists()


def test_project_must_be_named_and_a_lead_s(api_world):
    response = api_world.client("lead").post(URL, _genai_trace())
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "X-FaithAudit-Project"
    response = api_world.client("analyst").post(
        URL, _genai_trace(), headers={"X-FaithAudit-Project": "shop"}
    )
    assert response.status_code == 404
    assert not Answer.objects.exists()
