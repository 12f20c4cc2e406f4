"""Claim services: splitting an answer, editing by hand, abstentions; labels never move silently."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotate.models import Claim, Gold, Label, LabelHistory, Role, Verdict
from annotate.queue_order import answer_queue_key, claim_labels_required, claim_queue_key
from annotate.services.claims import (
    ClaimsError,
    answer_abstention_set,
    claim_add,
    claim_delete,
    claim_edit,
    claim_split_at,
    claims_merge,
    claims_split,
)
from annotate.services.labels import label_save
from judges.models import Backend
from tests.factories import (
    AnswerFactory,
    JudgeFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

ANSWER = "Sure! Refunds take 14 days and are issued to the original card. I hope this helps."


@pytest.fixture
def lead():
    return UserFactory(username="lena-lead")


@pytest.fixture
def answer(lead):
    project = ProjectFactory(analysts_per_claim=1, double_labelled_share=0.5, queue_seed=11)
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    return AnswerFactory(project=project, text=ANSWER, external_id="a-1")


def _label(claim, verdict=Verdict.NOT_IN_PILE, name=None):
    analyst = UserFactory(username=name) if name else UserFactory()
    MembershipFactory(project=claim.project, user=analyst, role=Role.ANALYST)
    claim.labels_required = max(claim.labels_required, claim.labels.count() + 1)
    claim.save(update_fields=["labels_required"])
    return label_save(claim=claim, annotator=analyst, verdict=verdict, require_quote=False)


def test_claims_split_by_rule_stores_claims_with_spans_origin_queue_and_tags(answer, lead):
    created = claims_split(answer=answer, user=lead)
    claims = list(answer.claims.order_by("position"))
    assert created == claims
    assert [c.text for c in claims] == [
        "Refunds take 14 days.",
        "Refunds are issued to the original card.",
    ]
    assert [c.position for c in claims] == [0, 1]
    assert {c.origin for c in claims} == {"rule"}
    assert [ANSWER[c.span_start : c.span_end] for c in claims] == [
        "Refunds take 14 days",
        "are issued to the original card.",
    ]
    assert claims[0].tags == ["numeric"]
    for claim in claims:
        key = claim_queue_key(
            seed=11, answer_external_id="a-1", position=claim.position, text=claim.text
        )
        # An answer at a time (the default); double-labelling follows the claim's own key.
        assert claim.queue_key == answer_queue_key(
            seed=11, answer_external_id="a-1", position=claim.position
        )
        assert claim.labels_required == claim_labels_required(
            analysts_per_claim=1, double_share=0.5, queue_key=key
        )
    answer.refresh_from_db()
    assert answer.abstention_suggested is False


def test_claims_split_suggests_an_abstention_for_a_lead_to_confirm(lead, answer):
    answer.text = "I'm sorry, but the documents do not say how long refunds take."
    answer.save()
    assert claims_split(answer=answer, user=lead) == []
    answer.refresh_from_db()
    assert answer.abstention_suggested
    assert not answer.abstention
    answer_abstention_set(answer=answer, abstention=True, user=lead)
    answer.refresh_from_db()
    assert answer.abstention
    assert not answer.abstention_suggested


def test_claims_split_refuses_an_analyst(answer):
    analyst = UserFactory()
    MembershipFactory(project=answer.project, user=analyst, role=Role.ANALYST)
    with pytest.raises(ClaimsError, match="Only a lead"):
        claims_split(answer=answer, user=analyst)
    assert not answer.claims.exists()


def test_claims_split_refuses_to_resplit_without_force(answer, lead):
    claims_split(answer=answer, user=lead)
    with pytest.raises(ClaimsError, match="already has 2 claims"):
        claims_split(answer=answer, user=lead)


def test_claims_split_force_keeps_labelled_claims_and_flags_the_ones_it_would_lose(answer, lead):
    first, second = claims_split(answer=answer, user=lead)
    kept_label = _label(first, Verdict.SUPPORTED)
    first.text = "Refunds take two weeks."  # edited by hand earlier: the new split differs
    first.save()
    untouched_label = _label(second)
    unlabelled = claim_add(answer=answer, text="A stray claim.", user=lead)

    claims_split(answer=answer, user=lead, force=True)

    assert not Claim.objects.filter(pk=unlabelled.pk).exists()
    texts = list(answer.claims.order_by("position").values_list("text", flat=True))
    assert texts == [
        "Refunds take two weeks.",
        "Refunds take 14 days.",
        "Refunds are issued to the original card.",
    ]
    # The labelled claim the new split reproduces is the same row, not flagged.
    second.refresh_from_db()
    assert second.needs_review is False
    assert Label.objects.get(pk=untouched_label.pk).claim_id == second.pk
    # The one it would lose is kept, with its label, flagged for a lead.
    first.refresh_from_db()
    kept_label.refresh_from_db()
    assert first.needs_review
    assert kept_label.needs_review
    assert LabelHistory.objects.filter(claim=first, action=LabelHistory.Action.FLAGGED).count() == 1


def test_claim_edit_keeps_labels_flags_them_and_writes_history(answer, lead):
    claim, _ = claims_split(answer=answer, user=lead)
    label = _label(claim, Verdict.SUPPORTED)
    assert Gold.objects.filter(claim=claim, source=Gold.Source.UNANIMOUS).exists()

    claim_edit(claim=claim, text="Refunds take up to 14 days.", user=lead)

    claim.refresh_from_db()
    label.refresh_from_db()
    assert claim.text == "Refunds take up to 14 days."
    assert claim.origin == "manual"
    assert claim.needs_review
    assert label.needs_review
    assert label.verdict == Verdict.SUPPORTED  # kept, not moved or changed
    flagged = LabelHistory.objects.get(claim=claim, action=LabelHistory.Action.FLAGGED)
    assert flagged.label_id_at_time == label.pk
    assert flagged.verdict == Verdict.SUPPORTED
    # Gold from labels on the old text would be a lie: it waits for review.
    assert not Gold.objects.filter(claim=claim).exists()


def test_claim_edit_without_labels_flags_nothing(answer, lead):
    claim, _ = claims_split(answer=answer, user=lead)
    claim_edit(claim=claim, text="Refunds take 15 days.", user=lead)
    claim.refresh_from_db()
    assert not claim.needs_review
    assert not LabelHistory.objects.exists()
    with pytest.raises(ClaimsError, match="empty"):
        claim_edit(claim=claim, text="   ", user=lead)


def test_claim_split_at_makes_a_new_neighbour_and_keeps_labels_on_the_first(answer, lead):
    first, last = claims_split(answer=answer, user=lead)
    claim_edit(claim=first, text="Refunds take 14 days to the original card.", user=lead)
    label = _label(first)
    first.refresh_from_db()
    at = first.text.index(" to the")
    kept, new = claim_split_at(claim=first, at=at, user=lead)

    assert kept.pk == first.pk
    assert kept.text == "Refunds take 14 days"
    assert new.text == "to the original card."
    assert list(answer.claims.order_by("position").values_list("pk", flat=True)) == [
        first.pk,
        new.pk,
        last.pk,
    ]
    assert list(answer.claims.order_by("position").values_list("position", flat=True)) == [0, 1, 2]
    label.refresh_from_db()
    assert label.claim_id == first.pk
    assert label.needs_review
    assert not new.labels.exists()
    assert new.origin == "manual"
    assert ANSWER[kept.span_start : kept.span_end] == "Refunds take 14 days"
    assert new.labels_required >= 1
    assert new.queue_key != kept.queue_key
    with pytest.raises(ClaimsError, match="not inside"):
        claim_split_at(claim=new, at=0, user=lead)


def test_claims_merge_keeps_the_labelled_claim_and_flags_it(answer, lead):
    first, second = claims_split(answer=answer, user=lead)
    extra = claim_add(answer=answer, text="Shipping is free.", user=lead)
    label = _label(second)
    merged = claims_merge(first=first, second=second, user=lead)

    assert merged.pk == second.pk  # the claim with the label survives
    assert merged.text == "Refunds take 14 days. Refunds are issued to the original card."
    assert (merged.span_start, merged.span_end) == (first.span_start, second.span_end)
    assert not Claim.objects.filter(pk=first.pk).exists()
    label.refresh_from_db()
    assert label.claim_id == merged.pk
    assert label.needs_review
    assert LabelHistory.objects.filter(claim=merged, action="flagged").count() == 1
    assert list(answer.claims.order_by("position").values_list("pk", "position")) == [
        (merged.pk, 0),
        (extra.pk, 1),
    ]


def test_claims_merge_refuses_when_both_claims_have_labels(answer, lead):
    first, second = claims_split(answer=answer, user=lead)
    _label(first)
    _label(second)
    with pytest.raises(ClaimsError, match="Both claims have labels"):
        claims_merge(first=first, second=second, user=lead)
    assert answer.claims.count() == 2


def test_claims_merge_refuses_claims_that_are_not_neighbours(answer, lead):
    first, _ = claims_split(answer=answer, user=lead)
    third = claim_add(answer=answer, text="Shipping is free.", user=lead)
    with pytest.raises(ClaimsError, match="neighbouring"):
        claims_merge(first=first, second=third, user=lead)


def test_claim_delete_asks_before_discarding_labels_and_keeps_counters(answer, lead):
    first, second = claims_split(answer=answer, user=lead)
    label = _label(first, name="ana")
    membership = label.annotator.memberships.get(project=answer.project)
    membership.refresh_from_db()
    assert membership.labels_saved == 1
    with pytest.raises(ClaimsError, match="1 label"):
        claim_delete(claim=first, user=lead)
    assert Claim.objects.filter(pk=first.pk).exists()

    claim_delete(claim=first, user=lead, discard_labels=True)
    assert not Claim.objects.filter(pk=first.pk).exists()
    membership.refresh_from_db()
    assert membership.labels_saved == 0
    second.refresh_from_db()
    assert second.position == 0


def test_claim_add_after_a_claim_renumbers_and_finds_the_span(answer, lead):
    first, second = claims_split(answer=answer, user=lead)
    added = claim_add(answer=answer, text="issued to the original card", user=lead)
    assert ANSWER[added.span_start : added.span_end] == "issued to the original card"
    assert added.position == 2
    assert added.origin == "manual"
    inserted = claim_add(answer=answer, text="Not in the answer.", user=lead, after=first)
    assert inserted.span_start is None
    order = list(answer.claims.order_by("position").values_list("pk", flat=True))
    assert order == [first.pk, inserted.pk, second.pk, added.pk]


def test_claims_split_by_llm_writes_the_texts_it_is_handed_and_aligns_spans(answer, lead):
    """The judges side calls the LLM (on a worker); annotate aligns and writes its claims."""
    claims = claims_split(
        answer=answer,
        method="llm",
        texts=["Refunds take 14 days.", " ", "Refunds go to the original card."],
        origin="llm:abc123",
        user=lead,
    )
    assert [c.origin for c in claims] == ["llm:abc123", "llm:abc123"]
    assert ANSWER[claims[0].span_start : claims[0].span_end] == "Refunds take 14 days"
    assert claims[1].span_start is not None  # its sentence, found by shared words


def test_claims_split_by_llm_needs_the_texts_and_an_llm_origin(answer, lead):
    with pytest.raises(ClaimsError, match="runs as a job"):
        claims_split(answer=answer, method="llm", user=lead)
    with pytest.raises(ClaimsError, match="runs as a job"):
        claims_split(answer=answer, method="llm", texts=["A."], origin="rule", user=lead)
    with pytest.raises(ClaimsError, match="no claims"):
        claims_split(answer=answer, method="llm", texts=[" "], origin="llm:x", user=lead)
    assert not answer.claims.exists()


class _DecomposeHandler(BaseHTTPRequestHandler):
    """A real OpenAI-compatible endpoint on loopback that decomposes into fixed claims."""

    reply = "- Refunds take 14 days.\n- Refunds are issued to the original card."
    prompts: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.prompts.append(body["messages"][-1]["content"])
        payload = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_claims_split_by_llm_through_a_real_openai_compatible_endpoint(answer, lead, llm_endpoints):
    from judges.split_jobs import split_job_execute, split_job_start

    server = ThreadingHTTPServer(("127.0.0.1", 0), _DecomposeHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.server_address[:2]
        llm_endpoints(decomposer=f"http://{host}:{port}/v1")
        judge = JudgeFactory(
            project=answer.project,
            backend=Backend.OPENAI,
            model="decomposer",
            endpoint="decomposer",
        )
        job = split_job_start(judge=judge, answer=answer, user=lead, enqueue=False)
        assert split_job_execute(job.pk) == "done"
    finally:
        server.shutdown()
    claims = list(answer.claims.order_by("position"))
    assert ANSWER in _DecomposeHandler.prompts[-1]
    assert [c.text for c in claims] == [
        "Refunds take 14 days.",
        "Refunds are issued to the original card.",
    ]
    assert all(c.origin.startswith("llm:") and len(c.origin) > 4 for c in claims)


def test_split_at_after_a_merge_gives_each_part_its_source_span_back(answer, lead):
    first, second = claims_split(answer=answer, user=lead)
    merged = claims_merge(first=first, second=second, user=lead)
    at = merged.text.index(" Refunds are")
    kept, new = claim_split_at(claim=merged, at=at, user=lead)
    assert ANSWER[kept.span_start : kept.span_end] == "Refunds take 14 days"
    # "Refunds are issued ..." is not verbatim in the answer: it takes the rest of the span.
    assert ANSWER[new.span_start : new.span_end] == "are issued to the original card."
