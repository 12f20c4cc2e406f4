"""Answers pushed over the API to a monitored project: their claims are Poisson-sampled into
the queue with π stored and judged by the stream's judge (a queued ordinary run)."""

from __future__ import annotations

import pytest
from django.db.models import F

from annotate.models import Claim, Reservation
from annotate.services.queue import claim_next_for_user
from judges.models import JudgeRun
from monitor.models import SampledClaim
from monitor.streams import stream_create
from tests.api.conftest import api_world, native_answer  # noqa: F401
from tests.factories import JudgeFactory

URL = "/api/v1/projects/shop/answers"


@pytest.mark.django_db
def test_api_answers_of_a_monitored_project_are_sampled_and_judged(
    api_world,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    judge = JudgeFactory(project=api_world.project)
    stream = stream_create(project=api_world.project, data={"judge": judge, "sampling_rate": 0.3})
    batch = []
    for n in range(40):
        one = native_answer(n)
        one["claims"] = [{"text": f"Refunds take {n % 30 + 1} days."}, {"text": "Card."}]
        batch.append(one)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_world.client("lead").post(URL, batch)
    assert response.status_code == 201
    assert SampledClaim.objects.filter(stream=stream).count() == 80
    drawn = SampledClaim.objects.filter(stream=stream, sampled=True)
    assert 8 <= drawn.count() <= 45
    queued = Claim.objects.filter(monitor_sample__in=drawn)
    assert set(queued.values_list("inclusion_probability", flat=True)) == {0.3}
    assert not queued.filter(routed_to_judge=True).exists()
    assert Claim.objects.filter(monitor_sample__sampled=False, routed_to_judge=True).count() == (
        80 - drawn.count()
    )
    assert JudgeRun.objects.filter(judge=judge).count() == 1
    # the analysts' queue serves the sampled claims only, each once
    api_world.project.refresh_from_db()
    assert api_world.project.monitored
    served = set()
    for _ in range(drawn.count() + 1):
        claim = claim_next_for_user(project=api_world.project, user=api_world.people["analyst"])
        if claim is None:
            break
        served.add(claim.pk)
        Reservation.objects.filter(claim=claim).delete()
        Claim.objects.filter(pk=claim.pk).update(label_count=F("labels_required"))
    assert served == set(queued.values_list("pk", flat=True))


@pytest.mark.django_db
def test_an_unmonitored_project_is_left_alone(api_world, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=True):
        response = api_world.client("lead").post(URL, [native_answer(1)])
    assert response.status_code == 201
    assert not SampledClaim.objects.exists()
