"""The API under load and end to end, on PostgreSQL: the same 1,000-answer batch sent by 8
clients at once creates each answer once; a CI pipeline (push 200 answers as a batch and as
NDJSON, split, run the baseline judge on a real Celery worker, poll, report, audit card, gate)."""

import json
import threading
import time

import httpx
import pytest
from django.db import connection

from annotate.models import Answer, Claim, Role
from api.tokens import token_create
from tests.api.conftest import native_answer
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

CLIENTS = 8


def _lead_token(slug="shop"):
    project = ProjectFactory(slug=slug, name="Shop")
    lead = UserFactory(username=f"lead-{slug}")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    return project, token_create(user=lead, name="ci").secret


@pytest.mark.postgres
def test_same_batch_from_8_clients_at_once_creates_each_answer_once(
    live_server, transactional_db, settings
):
    assert connection.vendor == "postgresql"
    settings.API_RATE_LIMIT = 0
    project, token = _lead_token()
    batch = json.dumps([native_answer(n, passages=2) for n in range(1000)])
    start = threading.Barrier(CLIENTS)
    results = [None] * CLIENTS

    def client(index):
        with httpx.Client(base_url=live_server.url, timeout=600) as http:
            start.wait()
            response = http.post(
                "/api/v1/projects/shop/answers",
                content=batch,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            results[index] = (response.status_code, response.json())

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * (CLIENTS - 1) + [201], results
    assert sum(body["created"] for _, body in results) == 1000
    assert sum(body["existing"] for _, body in results) == 1000 * (CLIENTS - 1)
    assert Answer.objects.filter(project=project).count() == 1000
    positions = list(Answer.objects.filter(project=project).values_list("position", flat=True))
    assert sorted(positions) == list(range(1000))
    project.refresh_from_db()
    assert project.answers_count == 1000


def _poll(http, url, done, seconds=600):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = http.get(url).json()
        if done(body):
            return body
        time.sleep(0.5)
    raise AssertionError(f"{url} did not finish: {body}")


@pytest.mark.worker
def test_ci_pipeline_push_split_judge_report_gate(live_server, celery_worker, settings):
    settings.API_RATE_LIMIT = 0
    project, token = _lead_token()
    headers = {"Authorization": f"Bearer {token}"}
    answers = [native_answer(n, passages=3) for n in range(200)]
    with httpx.Client(base_url=live_server.url, timeout=300, headers=headers) as http:
        base = "/api/v1/projects/shop"
        pushed = http.post(f"{base}/answers", json=answers[:100])
        assert pushed.status_code == 201, pushed.text
        ndjson = "".join(json.dumps(a) + "\n" for a in answers[100:])
        streamed = http.post(
            f"{base}/answers", content=ndjson, headers={"Content-Type": "application/x-ndjson"}
        )
        assert streamed.json()["created"] == 100
        again = http.post(f"{base}/answers", json=answers[:100]).json()
        assert (again["created"], again["existing"]) == (0, 100)
        for answer in answers:
            split = http.post(f"{base}/answers/{answer['id']}/split", json={"method": "rule"})
            assert split.status_code == 201, split.text
        claims, after = [], 0
        while True:
            page = http.get(f"{base}/claims", params={"after": after, "limit": 150}).json()
            claims += page["items"]
            if page["next"] is None:
                break
            after = page["next"]
        assert len(claims) == Claim.objects.filter(project=project).count() >= 200
        for claim in claims[:60]:
            verdict = "SUPPORTED" if claim["id"] % 5 else "NOT_IN_PILE"
            gold = http.post(
                f"{base}/claims/{claim['id']}/gold", json={"verdict": verdict, "reason": "checked"}
            )
            assert gold.status_code == 201, gold.text
        assert http.post(f"{base}/judges", json={"name": "base"}).status_code == 201
        run = http.post(f"{base}/judges/base/runs", json={"scope": "all"})
        assert run.status_code == 202, run.text
        run = _poll(
            http, f"{base}/runs/{run.json()['id']}", lambda r: r["status"] in ("done", "failed")
        )
        assert run["status"] == "done", run
        assert run["done"] + run["unparseable"] == run["total"] == len(claims)
        report = http.get(f"{base}/report", params={"judge": "base"})
        assert report.status_code == 200
        assert report.json()["judge"]["name"] == "base"
        card = http.get(f"{base}/audit-card", params={"judge": "base"})
        assert card.status_code == 200, card.text
        assert "method" in card.json()
        snapshot = http.post(f"{base}/report/snapshots", params={"judge": "base"}).json()
        snapshot = _poll(
            http,
            f"{base}/report/snapshots/{snapshot['id']}",
            lambda s: s["status"] in ("done", "failed"),
        )
        assert snapshot["status"] == "done"
        gate = http.get(
            f"{base}/gate",
            params={"metric": "faithfulness", "min": 0.0, "on": "lower", "judge": "base"},
        ).json()
        assert gate["pass"] is True
        assert gate["interval"][0] <= gate["figure"] <= gate["interval"][1]
        impossible = http.get(f"{base}/gate", params={"min": 1.0, "judge": "base"}).json()
        assert impossible["pass"] is False
        nonsense = http.get(f"{base}/gate", params={"min": 1.01, "judge": "base"})
        assert nonsense.status_code == 422  # a rate's threshold lies in [0, 1]
        assert nonsense.json()["errors"][0]["field"] == "min"
