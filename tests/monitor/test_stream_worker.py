"""A monitored stream end to end on PostgreSQL with a real Celery worker (issue 29): 10,000
answers pushed over the API in daily batches; the worker samples each batch into the queue with
π stored and judges it; analysts' gold arrives for the sampled claims; faithfulness drops on
day 5; the daily evaluation on the worker raises one alert, and a webhook listener on loopback
receives exactly one POST however often the stream is evaluated or the alert re-sent."""

from __future__ import annotations

import datetime as dt
import json
import time

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

from annotate.models import Claim, Gold
from annotate.services.queue import claim_next_for_user
from annotate.vocabulary import Verdict
from judges.models import JudgeRun, JudgeVerdict
from monitor.models import Alert, MonitoredStream, SampledClaim
from monitor.services import stream_evaluate
from monitor.streams import stream_create
from monitor.tasks import evaluate_streams, notify_alert
from tests.api.conftest import api_world, native_answer  # noqa: F401
from tests.factories import JudgeFactory

URL = "/api/v1/projects/shop/answers"
DAYS = 10
PER_DAY = 1000
DROP_DAY = 5
PI = 0.3


def _wait(predicate, what: str, timeout: float = 240.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def webhook_env(listener, monkeypatch, settings):
    """The operator's webhook declaration, for this process and the worker started after it."""
    declared = json.dumps({"ops": listener.url})
    monkeypatch.setenv("FAITHAUDIT_MONITOR_WEBHOOKS", declared)
    settings.FAITHAUDIT_MONITOR_WEBHOOKS = declared
    return listener


def _batch(day: int, rng) -> tuple[list[dict], dict[str, bool]]:
    """A day's answers, one claim each: faithful (the claim is the pile's sentence) with
    probability 0.97 before the drop, 0.6 after; the truth by external id."""
    share = 0.97 if day < DROP_DAY else 0.6
    answers, truth = [], {}
    for i in range(PER_DAY):
        n = day * PER_DAY + i
        one = native_answer(n)
        faithful = bool(rng.random() < share)
        days = n % 30 + 1
        text = f"Refunds take {days} days." if faithful else "Refunds are paid in gold bars."
        one["claims"] = [{"text": text}]
        answers.append(one)
        truth[one["id"]] = faithful
    return answers, truth


@pytest.mark.worker
def test_ten_thousand_answers_over_the_api_sampled_judged_and_alerted_once(
    api_world,  # noqa: F811
    webhook_env,
    celery_worker,
):
    project = api_world.project
    judge = JudgeFactory(project=project, name="live")
    stream = stream_create(
        project=project,
        data={"judge": judge, "sampling_rate": PI, "target": 0.9, "webhook": "ops"},
    )
    start = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0) - dt.timedelta(
        days=DAYS
    )
    MonitoredStream.objects.filter(pk=stream.pk).update(started_at=start)
    project.refresh_from_db()  # monitored now: the queue serves sampled claims only
    stream.refresh_from_db()
    rng = np.random.default_rng(2029)
    api = api_world.client("lead")
    for day in range(DAYS):
        answers, truth = _batch(day, rng)
        before = timezone.now()
        response = api.post(URL, answers)
        assert response.status_code == 201, response.content[:300]
        seen = (day + 1) * PER_DAY
        _wait(
            lambda seen=seen: SampledClaim.objects.filter(stream=stream).count() == seen,
            "sampling",
        )
        today = SampledClaim.objects.filter(stream=stream, drawn_at__gte=before)
        if day == 0:
            # the analysts' queue serves a sampled claim, drawn with the stream's π
            served = claim_next_for_user(project=project, user=api_world.people["analyst"])
            assert today.get(claim=served).sampled
            assert served.inclusion_probability == PI
        # the day is simulated: its claims were drawn on day `day`
        today.update(drawn_at=start + dt.timedelta(days=day, hours=12))
        drawn = Claim.objects.filter(
            monitor_sample__stream=stream,
            monitor_sample__sampled=True,
            answer__external_id__in=list(truth),
        ).values_list("pk", "answer__external_id")
        Gold.objects.bulk_create(
            [
                Gold(
                    claim_id=pk,
                    verdict=Verdict.SUPPORTED if truth[ext] else Verdict.NOT_IN_PILE,
                    source=Gold.Source.UNANIMOUS,
                )
                for pk, ext in drawn
            ]
        )

    sampled = SampledClaim.objects.filter(stream=stream, sampled=True)
    assert 0.27 * DAYS * PER_DAY < sampled.count() < 0.33 * DAYS * PER_DAY
    assert set(
        Claim.objects.filter(monitor_sample__in=sampled).values_list(
            "inclusion_probability", flat=True
        )
    ) == {PI}
    assert set(sampled.values_list("pi", flat=True)) == {PI}
    _wait(
        lambda: (
            not JudgeRun.objects.filter(judge=judge).exclude(status=JudgeRun.Status.DONE).exists()
            and JudgeVerdict.objects.filter(run__judge=judge).count() >= DAYS * PER_DAY
        ),
        "the judge's runs",
        timeout=600,
    )

    evaluate_streams.delay()
    _wait(lambda: len(webhook_env.bodies) == 1, "the webhook POST")
    alert = Alert.objects.get(stream=stream, kind=Alert.Kind.FAITHFULNESS)
    assert webhook_env.bodies[0]["alert"] == alert.pk
    assert webhook_env.bodies[0]["sentence"] == alert.sentence
    detected = dt.date.fromisoformat(alert.evidence["detected_on"])
    assert (
        start.date() + dt.timedelta(days=DROP_DAY)
        <= detected
        < start.date() + dt.timedelta(days=DAYS)
    )
    # evaluated again, the alert re-sent: still one POST
    assert stream_evaluate(stream=stream).pk == alert.pk
    evaluate_streams.delay()
    notify_alert.delay(alert.pk)
    _wait(lambda: Alert.objects.get(pk=alert.pk).webhook_sent_at is not None, "the alert's record")
    time.sleep(3)
    assert len(webhook_env.bodies) == 1
    assert Alert.objects.filter(stream=stream).count() == 1

    lead = Client()
    lead.force_login(api_world.people["lead"])
    page = lead.get(f"/p/{project.slug}/monitor/").content.decode()
    assert "<svg" in page
    assert alert.sentence in page
    detail = lead.get(f"/p/{project.slug}/monitor/alerts/{alert.pk}/").content.decode()
    assert alert.sentence in detail
    assert "Webhook ops notified" in detail
    assert detected.strftime("%d %b %Y") in detail
