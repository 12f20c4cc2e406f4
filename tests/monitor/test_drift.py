"""Judge drift in the database (issue 29 item 3): a seeded anchor set of gold claims, the live
judge's re-judgements recorded once per run, a planted change of the judge's specificity raised
as one judge-drift alert (one webhook POST), the judge's figures flagged until a lead clears it;
a judge that does not change raises nothing."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from django.core import mail
from django.utils import timezone

from annotate.models import Claim, Gold
from annotate.vocabulary import Verdict
from judges.models import Judge, JudgeRun, JudgeVerdict
from metrics.services.audit_card import audit_card
from metrics.services.audit_card_text import audit_card_readable
from metrics.services.report import report_compute
from monitor.drift import (
    anchors_choose,
    anchors_record,
    anchors_rejudge,
    drift_clear,
    drift_evaluate,
    drift_figures,
)
from monitor.models import Alert, AnchorJudgement, AnchorSet, MonitoredStream
from monitor.services import alert_notify, streams_ingest
from tests.factories import AnswerFactory, JudgeFactory, JudgeRunFactory

pytestmark = pytest.mark.django_db

DAYS = 40
CHANGE_DAY = 25


def _gold_project(judge, *, supported=120, other=120):
    """Gold claims in answers of four claims: `supported` SUPPORTED, `other` NOT_IN_PILE."""
    verdicts = [Verdict.SUPPORTED] * supported + [Verdict.NOT_IN_PILE] * other
    answers = [AnswerFactory(project=judge.project) for _ in range(-(-len(verdicts) // 4))]
    claims = Claim.objects.bulk_create(
        [
            Claim(project=judge.project, answer=answers[i // 4], text=f"g{i}", position=i % 4)
            for i in range(len(verdicts))
        ]
    )
    Gold.objects.bulk_create(
        [
            Gold(claim=c, verdict=v, source=Gold.Source.UNANIMOUS)
            for c, v in zip(claims, verdicts, strict=True)
        ]
    )
    return claims


def _stream(judge, start):
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge)
    MonitoredStream.objects.filter(pk=stream.pk).update(started_at=start)
    stream.refresh_from_db()
    anchors = anchors_choose(stream=stream, seed=1)
    AnchorSet.objects.filter(pk=anchors.pk).update(created_at=start)
    return stream


def _day_run(judge, stream, when, *, fp_rate, fn_rate, rng):
    """One finished re-judging of the anchors: the judge errs at the given rates."""
    run = JudgeRunFactory(judge=judge, status=JudgeRun.Status.DONE, finished_at=when)
    anchors = stream.anchor_set.claims.values_list("id", "gold__verdict")
    rows = []
    for claim_id, gold in anchors:
        if gold == Verdict.SUPPORTED:
            says_supported = rng.random() >= fn_rate
        else:
            says_supported = rng.random() < fp_rate
        verdict = Verdict.SUPPORTED if says_supported else Verdict.NOT_IN_PILE
        rows.append(JudgeVerdict(run=run, claim_id=claim_id, verdict=verdict))
    JudgeVerdict.objects.bulk_create(rows)
    return run


def test_anchor_set_is_seeded_both_classes_and_drawn_once():
    judge = JudgeFactory()
    _gold_project(judge, supported=150, other=40)
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge)
    anchors = anchors_choose(stream=stream, size=100, seed=4)
    chosen = list(anchors.claims.values_list("gold__verdict", flat=True))
    # half of each class where there is enough; the rarer class all taken, the rest filled
    assert len(chosen) == 100
    assert chosen.count(Verdict.NOT_IN_PILE) == 40  # all the project has
    assert chosen.count(Verdict.SUPPORTED) == 60
    again = anchors_choose(stream=stream, size=10, seed=99)
    assert again.pk == anchors.pk
    assert again.claims.count() == 100
    # the same project, stream and seed draw the same claims
    first = set(anchors.claims.values_list("id", flat=True))
    AnchorSet.objects.filter(pk=anchors.pk).delete()
    assert (
        set(anchors_choose(stream=stream, size=100, seed=4).claims.values_list("id", flat=True))
        == first
    )


def test_recording_is_once_per_run():
    judge = JudgeFactory()
    _gold_project(judge, supported=20, other=20)
    start = timezone.now() - dt.timedelta(days=1)
    stream = _stream(judge, start)
    _day_run(judge, stream, start, fp_rate=0.1, fn_rate=0.1, rng=np.random.default_rng(0))
    assert anchors_record(stream=stream) == 40
    assert anchors_record(stream=stream) == 0
    assert AnchorJudgement.objects.filter(anchor_set=stream.anchor_set).count() == 40
    unfinished = JudgeRunFactory(judge=judge, status=JudgeRun.Status.RUNNING)
    JudgeVerdict.objects.create(
        run=unfinished, claim=stream.anchor_set.claims.first(), verdict=Verdict.SUPPORTED
    )
    assert anchors_record(stream=stream) == 0  # a run still going is not evidence yet


def test_planted_specificity_change_raises_one_judge_drift_alert(
    settings, listener, django_capture_on_commit_callbacks
):
    settings.FAITHAUDIT_MONITOR_WEBHOOKS = json.dumps({"ops": listener.url})
    judge = JudgeFactory()
    _gold_project(judge)
    start = timezone.now().replace(hour=12) - dt.timedelta(days=DAYS)
    stream = _stream(judge, start)
    MonitoredStream.objects.filter(pk=stream.pk).update(webhook="ops", email="lead@example.org")
    stream.refresh_from_db()
    rng = np.random.default_rng(29)
    raised = []
    for d in range(DAYS):
        when = start + dt.timedelta(days=d)
        # specificity 0.90 → 0.75 on the change day (false-positive rate 0.10 → 0.25)
        fp = 0.10 if d < CHANGE_DAY else 0.25
        _day_run(judge, stream, when, fp_rate=fp, fn_rate=0.10, rng=rng)
        with django_capture_on_commit_callbacks(execute=True):
            alert = drift_evaluate(stream=stream, today=timezone.localdate(when))
        if alert is not None:
            raised.append((d, alert.pk))
    assert raised, "the planted change was never detected"
    first_day, alert_id = raised[0]
    assert CHANGE_DAY <= first_day <= CHANGE_DAY + 7
    assert {pk for _, pk in raised} == {alert_id}  # one alert, however often evaluated
    alert = Alert.objects.get(pk=alert_id)
    assert alert.kind == Alert.Kind.JUDGE_DRIFT
    assert alert.evidence["rate"] == "specificity"
    assert alert.evidence["direction"] == "up"
    assert "The judge changed, not necessarily the system" in alert.sentence
    assert len(listener.bodies) == 1
    assert listener.bodies[0]["kind"] == "judge_drift"
    # the configured email went once too (locmem backend), with the alert's sentence
    assert [m.to for m in mail.outbox] == [["lead@example.org"]]
    assert mail.outbox[0].body == alert.sentence
    alert_notify(alert_id=alert.pk)
    assert len(listener.bodies) == 1
    assert len(mail.outbox) == 1
    judge.refresh_from_db()
    assert judge.drifted_on is not None
    assert judge.drift_sentence == alert.sentence

    # The judge's audit card carries the flag, in its data and in its limits.
    card = audit_card(report=report_compute(project=judge.project, judge=judge))
    assert card["judge_drift"] == {
        "since": judge.drifted_on.isoformat(),
        "sentence": alert.sentence,
    }
    limits = audit_card_readable(card=card, design=None)["limits"]
    assert any(line.startswith(f"Judge drift since {judge.drifted_on}") for line in limits)

    # A lead re-audits and clears: the flag goes and the calibration restarts.
    last = timezone.localdate(start + dt.timedelta(days=DAYS - 1))
    drift_clear(stream=stream, today=last)
    judge.refresh_from_db()
    assert judge.drifted_on is None
    assert drift_evaluate(stream=stream, today=last) is None
    card = audit_card(report=report_compute(project=judge.project, judge=judge))
    assert "judge_drift" not in card


def test_a_steady_judge_raises_no_drift_alert():
    judge = JudgeFactory()
    _gold_project(judge)
    start = timezone.now().replace(hour=12) - dt.timedelta(days=DAYS)
    stream = _stream(judge, start)
    rng = np.random.default_rng(3)
    for d in range(DAYS):
        when = start + dt.timedelta(days=d)
        _day_run(judge, stream, when, fp_rate=0.10, fn_rate=0.10, rng=rng)
        assert drift_evaluate(stream=stream, today=timezone.localdate(when)) is None
    assert not Judge.objects.get(pk=judge.pk).drifted_on


def test_batches_carry_a_handful_of_anchors_and_the_daily_rejudge_all():
    judge = JudgeFactory()
    _gold_project(judge, supported=40, other=40)
    # the gold claims are history (created before the stream started): not sampled
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge)
    anchors_choose(stream=stream, size=40, seed=0)
    anchor_answers = set(stream.anchor_set.claims.values_list("answer_id", flat=True))
    assert len(anchor_answers) >= 10

    fresh = [AnswerFactory(project=judge.project) for _ in range(30)]
    Claim.objects.bulk_create(
        [Claim(project=judge.project, answer=a, text="new", position=0) for a in fresh]
    )
    assert streams_ingest(project_id=judge.project_id) == 30
    run = JudgeRun.objects.get(judge=judge)
    ridden = set(run.answer_ids) - {a.pk for a in fresh}
    # 10% of the batch's 30 answers: 3 anchor answers, all from the anchor set
    assert len(ridden) == 3
    assert ridden <= anchor_answers
    assert {a.pk for a in fresh} <= set(run.answer_ids)

    daily = anchors_rejudge(stream=stream)
    assert set(daily.answer_ids) == anchor_answers


def test_a_claim_judged_twice_in_a_day_counts_once():
    judge = JudgeFactory()
    _gold_project(judge, supported=20, other=20)
    start = timezone.now().replace(hour=12) - dt.timedelta(days=1)
    stream = _stream(judge, start)
    rng = np.random.default_rng(1)
    _day_run(judge, stream, start, fp_rate=0.0, fn_rate=0.0, rng=rng)
    # a later run the same day: every not-supported anchor now judged SUPPORTED
    _day_run(judge, stream, start + dt.timedelta(hours=1), fp_rate=1.0, fn_rate=0.0, rng=rng)
    anchors_record(stream=stream)
    assert AnchorJudgement.objects.filter(anchor_set=stream.anchor_set).count() == 80
    fig = drift_figures(stream, timezone.localdate(start))
    assert fig.judged == 40  # 40 anchors on one day, not 80 trials
