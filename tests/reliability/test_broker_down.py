"""Redis unreachable: labelling keeps working, starting a judge run or a report says so clearly
(no 500), and nothing is half-written (no run left pending with no task to run it).

The machine's real Redis stays up (others use it): the app is pointed at a dead broker port.
Celery reads CELERY_BROKER_URL from the environment before its own settings, so that is what
the test changes, and it drops the app's cached connection pools.
"""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Label, LabelHistory
from judges.models import JudgeRun
from metrics.models import ReportSnapshot
from tests.reliability.world import world_build

DEAD_BROKER = "redis://127.0.0.1:1/0"


@pytest.fixture
def dead_broker(monkeypatch):
    from config.celery import app

    def reset_pools():
        app._pool = None
        app.amqp._producer_pool = None

    monkeypatch.setenv("CELERY_BROKER_URL", DEAD_BROKER)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    reset_pools()
    assert DEAD_BROKER.split("/")[2] in app.connection().as_uri()
    yield
    monkeypatch.undo()
    app.conf.task_always_eager = eager
    reset_pools()


@pytest.mark.redis
def test_labelling_works_and_judge_run_fails_clearly_without_the_broker(
    transactional_db, dead_broker, figures
):
    world = world_build("BROKERDOWN", slug="broker-down")
    client = Client(raise_request_exception=False)

    # Labelling: an analyst's save goes through, with its history row.
    client.force_login(world.users["analyst"])
    claim = world.claims[1]
    response = client.post(
        reverse("annotate:label-save", args=[world.project.slug, claim.pk]),
        {"verdict": "NOT_IN_PILE", "note": "saved while Redis is down"},
    )
    assert response.status_code == 302, response.status_code
    label = Label.objects.get(claim=claim, annotator=world.users["analyst"])
    assert label.note == "saved while Redis is down"
    assert LabelHistory.objects.filter(claim=claim, action="created").exists()
    assert client.get(reverse("annotate:label-next", args=[world.project.slug])).status_code == 200

    # A judge run: a clear message, and the run is not left pending with no task.
    client.force_login(world.users["lead"])
    runs_before = set(JudgeRun.objects.values_list("pk", flat=True))
    response = client.post(
        reverse("judges:run-start", args=[world.project.slug, world.judge.pk]),
        {"kind": "verify", "scope": "all"},
        follow=True,
    )
    assert response.status_code == 200, response.status_code
    page = response.content.decode()
    assert "task queue (Redis) could not be reached" in page
    new_runs = JudgeRun.objects.exclude(pk__in=runs_before)
    assert [run.status for run in new_runs] in ([], ["failed"])
    assert not JudgeRun.objects.filter(status__in=["pending", "running"]).exists()

    # The dashboard's Recompute: the same (no snapshot under way that it could hand back).
    ReportSnapshot.objects.filter(project=world.project).delete()
    response = client.post(reverse("metrics:recompute", args=[world.project.slug]), follow=True)
    assert response.status_code == 200, response.status_code
    assert "task queue (Redis) could not be reached" in response.content.decode()
    assert (
        not ReportSnapshot.objects.filter(status__in=["pending", "running"])
        .exclude(pk=world.snapshot.pk)
        .exists()
    )
    figures.add("faults", broker_outages=1, requests_during_outage=4)
