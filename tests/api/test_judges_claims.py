"""Judges, runs, claims and the claims export over the API (eager tasks)."""

import json

from annotate.models import Claim
from judges.models import JudgeRun, JudgeVerdict
from tests.api.conftest import native_answer

BASE = "/api/v1/projects/shop"


def _push_and_split(client, n=4):
    assert client.post(f"{BASE}/answers", [native_answer(i) for i in range(n)]).status_code == 201
    for i in range(n):
        response = client.post(f"{BASE}/answers/ans-{i}/split", {"method": "rule"})
        assert response.status_code == 201, response.content


def test_judge_create_list_run_status_cancel_resume(api_world, django_capture_on_commit_callbacks):
    lead = api_world.client("lead")
    _push_and_split(lead)
    created = lead.post(f"{BASE}/judges", {"name": "base"})
    assert created.status_code == 201
    assert created.json()["backend"] == "baseline"
    assert lead.post(f"{BASE}/judges", {"name": "base"}).status_code == 409
    assert [j["name"] for j in lead.get(f"{BASE}/judges").json()] == ["base"]
    with django_capture_on_commit_callbacks(execute=True):
        started = lead.post(f"{BASE}/judges/base/runs", {"scope": "all"})
    assert started.status_code == 202
    claims = Claim.objects.filter(project=api_world.project).count()
    assert started.json()["total"] == claims
    run = lead.get(f"{BASE}/runs/{started.json()['id']}").json()
    assert run["status"] == "done"
    assert run["done"] + run["unparseable"] == claims
    assert run["remaining"] == 0
    assert JudgeVerdict.objects.filter(run_id=run["id"]).count() == claims
    # finished: cancel and resume say so
    cancel = lead.post(f"{BASE}/runs/{run['id']}/cancel")
    assert cancel.status_code == 409
    assert lead.post(f"{BASE}/runs/{run['id']}/resume").status_code == 409
    # unjudged: nothing left
    with django_capture_on_commit_callbacks(execute=True):
        again = lead.post(f"{BASE}/judges/base/runs", {"scope": "unjudged"})
    assert again.json()["total"] == 0
    bad = lead.post(f"{BASE}/judges/base/runs", {"scope": "some"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "scope"
    assert [r["id"] for r in lead.get(f"{BASE}/judges/base/runs").json()] == [
        again.json()["id"],
        run["id"],
    ]


def test_cancel_a_pending_run(api_world):
    lead = api_world.client("lead")
    _push_and_split(lead, 1)
    lead.post(f"{BASE}/judges", {"name": "base"})
    started = lead.post(f"{BASE}/judges/base/runs", {})  # not committed: stays pending
    cancelled = lead.post(f"{BASE}/runs/{started.json()['id']}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert JudgeRun.objects.get(pk=started.json()["id"]).status == "cancelled"


def test_claims_create_edit_split_refused_twice(api_world):
    lead = api_world.client("lead")
    _push_and_split(lead, 1)
    assert lead.post(f"{BASE}/answers/ans-0/split", {"method": "rule"}).status_code == 409
    added = lead.post(f"{BASE}/answers/ans-0/claims", {"text": "They go to the original card."})
    assert added.status_code == 201
    edited = lead.send("PATCH", f"{BASE}/claims/{added.json()['id']}", {"text": "Cards get it."})
    assert edited.status_code == 200
    assert Claim.objects.get(pk=added.json()["id"]).text == "Cards get it."
    empty = lead.send("PATCH", f"{BASE}/claims/{added.json()['id']}", {"text": ""})
    assert empty.status_code == 422
    assert empty.json()["errors"][0]["field"] == "text"
    llm = lead.post(f"{BASE}/answers/ans-0/split", {"method": "llm"})
    assert llm.status_code == 422
    assert llm.json()["errors"][0]["field"] == "judge"


def test_claims_cursor_pages_cover_every_claim_once(api_world):
    lead = api_world.client("lead")
    _push_and_split(lead, 7)
    seen, after = [], 0
    while True:
        page = lead.get(f"{BASE}/claims", {"after": after, "limit": 3}).json()
        seen += [item["id"] for item in page["items"]]
        if page["next"] is None:
            break
        after = page["next"]
    expected = list(
        Claim.objects.filter(project=api_world.project).order_by("pk").values_list("pk", flat=True)
    )
    assert seen == expected


def test_claims_export_streams_native_lines_that_import_back(api_world):
    lead = api_world.client("lead")
    _push_and_split(lead, 3)
    response = lead.get(f"{BASE}/claims.ndjson")
    assert response["Content-Type"] == "application/x-ndjson"
    lines = b"".join(response.streaming_content).decode().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == ["ans-0", "ans-1", "ans-2"]
    # the export is the native format: sent back, everything is already there
    again = lead.post(f"{BASE}/answers", "\n".join(lines), content_type="application/x-ndjson")
    assert again.status_code == 200, again.content
    assert again.json()["existing"] == 3
