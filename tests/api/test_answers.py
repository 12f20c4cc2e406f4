import json

import pytest

from annotate.models import Answer, Passage
from tests.api.conftest import native_answer

URL = "/api/v1/projects/shop/answers"


def test_batch_creates_then_says_existing(api_world):
    lead = api_world.client("lead")
    batch = [native_answer(n) for n in range(5)]
    first = lead.post(URL, batch)
    assert first.status_code == 201, first.content
    assert first.json()["created"] == 5
    assert first.json()["existing"] == 0
    assert first.json()["passages"] == 10
    again = lead.post(URL, batch)
    assert again.status_code == 200
    assert again.json()["created"] == 0
    assert again.json()["existing"] == 5
    assert Answer.objects.filter(project=api_world.project).count() == 5
    api_world.project.refresh_from_db()
    assert api_world.project.answers_count == 5


def test_pile_kept_in_rank_order(api_world):
    response = api_world.client("lead").post(URL, [native_answer(1, passages=4)])
    assert response.status_code == 201
    ranks = list(
        Passage.objects.filter(answer__external_id="ans-1")
        .order_by("rank")
        .values_list("source_id", flat=True)
    )
    assert ranks == ["doc-1-1", "doc-1-2", "doc-1-3", "doc-1-4"]


def test_changed_answer_refused_naming_id_index_and_field(api_world):
    lead = api_world.client("lead")
    assert lead.post(URL, [native_answer(0), native_answer(1)]).status_code == 201
    changed = native_answer(1, text="Refunds take forever.")
    response = lead.post(URL, [native_answer(7), changed])
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 422
    [error] = problem["errors"]
    assert error["index"] == 1
    assert error["field"] == "answer"
    assert "'ans-1'" in error["detail"]
    # all or nothing: the valid new answer 7 was not written either
    assert not Answer.objects.filter(external_id="ans-7").exists()


def test_bad_item_named_by_index_and_field(api_world):
    bad = native_answer(3)
    bad["pile"][1]["text"] = 12
    response = api_world.client("lead").post(URL, [native_answer(2), bad])
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert errors[0]["index"] == 1
    assert errors[0]["field"] == "pile[1].text"
    assert Answer.objects.count() == 0


def test_more_than_1000_in_json_refused(api_world, settings):
    batch = [native_answer(n, passages=1) for n in range(1001)]
    response = api_world.client("lead").post(URL, batch)
    assert response.status_code == 422
    assert response.json()["errors"][0]["index"] == 1000
    assert "application/x-ndjson" in response.json()["errors"][0]["detail"]
    assert Answer.objects.count() == 0


def test_ndjson_stream(api_world):
    body = "".join(json.dumps(native_answer(n)) + "\n" for n in range(1200))
    response = api_world.client("lead").post(URL, body, content_type="application/x-ndjson")
    assert response.status_code == 201, response.content
    assert response.json()["created"] == 1200
    assert Answer.objects.filter(project=api_world.project).count() == 1200
    bad = json.dumps(native_answer(5000)) + "\n" + "{not json\n"
    response = api_world.client("lead").post(URL, bad, content_type="application/x-ndjson")
    assert response.status_code == 422
    assert response.json()["errors"][0]["index"] == 1
    assert not Answer.objects.filter(external_id="ans-5000").exists()


def test_claims_labels_verdicts_in_the_native_objects(api_world):
    answer = native_answer(9)
    answer["claims"] = [
        {
            "text": "Refunds take 10 days.",
            "labels": [{"annotator": "alice", "verdict": "NOT_IN_PILE"}],
            "judges": [{"name": "ext-judge", "verdict": "SUPPORTED", "confidence": 0.7}],
        }
    ]
    response = api_world.client("lead").post(URL, [answer])
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["claims"], body["labels"], body["judge_verdicts"]) == (1, 1, 1)


@pytest.mark.parametrize("who", ["analyst", "otherlead", "readonly", None])
def test_who_may_not_push(api_world, who):
    response = api_world.client(who).post(URL, [native_answer(1)])
    assert response.status_code in (401, 403, 404)
    assert response["Content-Type"] == "application/problem+json"
    assert Answer.objects.count() == 0


def test_wrong_content_type(api_world):
    response = api_world.client("lead").post(URL, "a,b\n", content_type="text/csv")
    assert response.status_code == 415
