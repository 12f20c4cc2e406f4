"""A monitored stream in the database: Poisson sampling with π stored, the alert raised once
when the faithfulness drops below target, and exactly one webhook POST on loopback."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from django.utils import timezone

from annotate.models import Claim, Gold
from annotate.vocabulary import Verdict
from judges.models import JudgeVerdict
from monitor.models import Alert, MonitoredStream, SampledClaim
from monitor.services import (
    alert_notify,
    claims_sample,
    stream_evaluate,
    stream_figures,
    stream_rate_set,
)
from tests.factories import AnswerFactory, JudgeFactory, JudgeRunFactory

pytestmark = pytest.mark.django_db


def day_of_claims(stream, answer, run, when, n, share_supported, rng):
    claims = Claim.objects.bulk_create(
        [Claim(project=stream.project, answer=answer, text=f"c{i}", position=i) for i in range(n)]
    )
    supported = rng.random(n) < share_supported
    JudgeVerdict.objects.bulk_create(
        [
            JudgeVerdict(run=run, claim=c, verdict=Verdict.SUPPORTED if s else Verdict.NOT_IN_PILE)
            for c, s in zip(claims, supported, strict=True)
        ]
    )
    claims_sample(stream=stream, claim_ids=[c.id for c in claims], at=when, rng=rng)
    drawn = SampledClaim.objects.filter(claim__in=claims, sampled=True).values_list(
        "claim_id", flat=True
    )
    truth = dict(zip([c.id for c in claims], supported, strict=True))
    Gold.objects.bulk_create(
        [
            Gold(
                claim_id=c,
                verdict=Verdict.SUPPORTED if truth[c] else Verdict.NOT_IN_PILE,
                source=Gold.Source.UNANIMOUS,
            )
            for c in drawn
        ]
    )


def test_a_drop_raises_one_alert_and_one_webhook(settings, listener):
    settings.FAITHAUDIT_MONITOR_WEBHOOKS = json.dumps({"ops": listener.url})
    judge = JudgeFactory()
    run = JudgeRunFactory(judge=judge)
    answer = AnswerFactory(project=judge.project)
    stream = MonitoredStream.objects.create(
        project=judge.project, judge=judge, sampling_rate=0.5, target=0.9, webhook="ops"
    )
    start = timezone.now().replace(hour=12) - dt.timedelta(days=12)
    MonitoredStream.objects.filter(id=stream.id).update(started_at=start)
    stream.refresh_from_db()
    rng = np.random.default_rng(29)
    for d in range(12):
        when = start + dt.timedelta(days=d)
        if d == 3:
            stream_rate_set(stream=stream, rate=0.25, at=when)
        day_of_claims(stream, answer, run, when, 300, 0.97 if d < 4 else 0.6, rng)

    early = SampledClaim.objects.filter(stream=stream, drawn_at__lt=start + dt.timedelta(days=3))
    late = SampledClaim.objects.filter(stream=stream, drawn_at__gte=start + dt.timedelta(days=3))
    assert set(early.values_list("pi", flat=True)) == {0.5}
    assert set(late.values_list("pi", flat=True)) == {0.25}
    drawn = Claim.objects.filter(monitor_sample__sampled=True, monitor_sample__pi=0.25)
    assert set(drawn.values_list("inclusion_probability", flat=True)) == {0.25}
    assert not drawn.filter(routed_to_judge=True).exists()
    # Poisson sampling: about a quarter of the later days' 2,400 claims, not exactly
    assert 500 < late.filter(sampled=True).count() < 700

    alert = stream_evaluate(stream=stream, today=(start + dt.timedelta(days=11)).date())
    again = stream_evaluate(stream=stream, today=(start + dt.timedelta(days=11)).date())
    assert alert is not None
    assert again.id == alert.id
    assert Alert.objects.filter(stream=stream).count() == 1
    assert "below the target 90%" in alert.sentence
    assert alert.evidence["detected_on"] > (start + dt.timedelta(days=4)).date().isoformat()

    alert_notify(alert_id=alert.id)
    alert_notify(alert_id=alert.id)
    assert len(listener.bodies) == 1
    assert listener.bodies[0]["alert"] == alert.id
    assert listener.bodies[0]["sentence"] == alert.sentence


def test_a_steady_stream_raises_nothing():
    judge = JudgeFactory()
    run = JudgeRunFactory(judge=judge)
    answer = AnswerFactory(project=judge.project)
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge, sampling_rate=0.3)
    start = timezone.now().replace(hour=12) - dt.timedelta(days=6)
    MonitoredStream.objects.filter(id=stream.id).update(started_at=start)
    stream.refresh_from_db()
    rng = np.random.default_rng(3)
    for d in range(6):
        day_of_claims(stream, answer, run, start + dt.timedelta(days=d), 200, 0.95, rng)
    assert stream_evaluate(stream=stream, today=(start + dt.timedelta(days=5)).date()) is None


def test_the_judge_alone_is_shown_uncorrected_and_the_debiased_band_corrects_it():
    """A lenient judge says SUPPORTED to every claim while 80% are: the judge-alone sequence
    sits near 100% (what a monitor of the judge's score reports), the debiased one covers 80%;
    claims the judge has not judged yet are not counted as its NOT_IN_PILE."""
    judge = JudgeFactory()
    run = JudgeRunFactory(judge=judge)
    answer = AnswerFactory(project=judge.project)
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge, sampling_rate=0.5)
    start = timezone.now().replace(hour=12) - dt.timedelta(days=6)
    MonitoredStream.objects.filter(id=stream.id).update(started_at=start)
    stream.refresh_from_db()
    rng = np.random.default_rng(8)
    for d in range(6):
        claims = Claim.objects.bulk_create(
            [Claim(project=stream.project, answer=answer, text=f"c{i}") for i in range(350)]
        )
        # 300 judged, 50 a day not judged yet
        JudgeVerdict.objects.bulk_create(
            [JudgeVerdict(run=run, claim=c, verdict=Verdict.SUPPORTED) for c in claims[:300]]
        )
        ids = [c.id for c in claims]
        claims_sample(stream=stream, claim_ids=ids, at=start + dt.timedelta(days=d), rng=rng)
        truth = dict(zip(ids, rng.random(len(ids)) < 0.8, strict=True))
        drawn = SampledClaim.objects.filter(claim__in=claims, sampled=True)
        Gold.objects.bulk_create(
            [
                Gold(
                    claim_id=c,
                    verdict=Verdict.SUPPORTED if truth[c] else Verdict.CONTRADICTED,
                    source=Gold.Source.UNANIMOUS,
                )
                for c in drawn.values_list("claim_id", flat=True)
            ]
        )
    fig = stream_figures(stream, (start + dt.timedelta(days=5)).date())
    # 1,800 judged, all SUPPORTED: near 1 (the 300 unjudged counted as 0 would put it ≤ 0.86)
    assert fig.judge_alone.lower[-1] > 0.98
    assert fig.debiased.lower[-1] < 0.8 < fig.debiased.upper[-1]
    assert fig.debiased.upper[-1] < fig.judge_alone.lower[-1]
