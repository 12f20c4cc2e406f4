"""The stream pages: the band drawn, the alert's one sentence and its evidence shown, a stream
set up by a lead (bad input refused, nothing made), the judge-drift flag; analysts kept out."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from annotate.models import System
from annotate.vocabulary import Verdict
from judges.models import Judge
from monitor.models import Alert, AnchorJudgement, AnchorSet, MonitoredStream
from tests.factories import GoldFactory, JudgeFactory, MembershipFactory

pytestmark = pytest.mark.django_db


def test_lead_sees_band_and_alert_analyst_gets_404(client):
    judge = JudgeFactory()
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge)
    Alert.objects.create(
        stream=stream,
        kind=Alert.Kind.FAITHFULNESS,
        raised_at=timezone.now(),
        sentence="Faithfulness since 01 Dec 2026 is below the target 90%.",
        evidence={},
    )
    lead = MembershipFactory(project=judge.project, role="lead").user
    analyst = MembershipFactory(project=judge.project, role="analyst").user
    url = f"/p/{judge.project.slug}/monitor/"
    client.force_login(analyst)
    assert client.get(url).status_code == 404
    client.force_login(lead)
    page = client.get(url).content.decode()
    assert "<svg" in page
    assert "Faithfulness since 01 Dec 2026 is below the target 90%." in page
    assert "Labels a week" in page


def _lead_client(client, project):
    client.force_login(MembershipFactory(project=project, role="lead").user)
    return client


def test_lead_sets_up_a_stream_with_its_anchor_set_and_a_bad_rate_is_refused(client, settings):
    settings.FAITHAUDIT_MONITOR_WEBHOOKS = json.dumps({"ops": "https://hooks.example/x"})
    judge = JudgeFactory()
    for verdict in (Verdict.SUPPORTED, Verdict.NOT_IN_PILE) * 3:
        GoldFactory(
            claim__project=judge.project, claim__answer__project=judge.project, verdict=verdict
        )
    client = _lead_client(client, judge.project)
    url = f"/p/{judge.project.slug}/monitor/new/"
    form = client.get(url).content.decode()
    assert 'value="ops"' in form  # the operator's webhooks are the only choices
    fields = {
        "judge": judge.pk,
        "sampling_rate": "1.5",
        "target": "0.9",
        "alpha": "0.05",
        "horizon_days": "90",
        "halfwidth_target": "0.03",
        "webhook": "ops",
        "active": "on",
    }
    refused = client.post(url, fields)
    assert refused.status_code == 422
    assert "1.5 is not a share" in refused.content.decode()
    assert not MonitoredStream.objects.exists()
    fields["sampling_rate"] = "0.2"
    assert client.post(url, fields).status_code == 302
    stream = MonitoredStream.objects.get()
    assert stream.anchor_set.claims.count() == 6
    assert [rate for _, rate in stream.rate_history] == [0.2]
    page = client.get(f"/p/{judge.project.slug}/monitor/").content.decode()
    assert "6 anchor claims" in page
    assert "Calibrating" in page

    fields["sampling_rate"] = "0.05"
    edit = f"/p/{judge.project.slug}/monitor/{stream.pk}/edit/"
    assert client.post(edit, fields).status_code == 302
    stream.refresh_from_db()
    assert stream.sampling_rate == 0.05
    assert [rate for _, rate in stream.rate_history] == [0.2, 0.05]
    fields["webhook"] = "not-declared"
    assert client.post(edit, fields).status_code == 422


def test_alert_page_explains_and_the_drift_flag_shows_until_cleared(client):
    judge = JudgeFactory()
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge)
    anchors = AnchorSet.objects.create(stream=stream)
    sentence = "The judge changed, not necessarily the system: its false-positive rate moved."
    alert = Alert.objects.create(
        stream=stream,
        kind=Alert.Kind.JUDGE_DRIFT,
        raised_at=timezone.now(),
        sentence=sentence,
        evidence={"rate": "specificity", "direction": "up", "calibration_range": [0.05, 0.12]},
    )
    monday = dt.date(2026, 11, 30)
    claim = GoldFactory(claim__project=judge.project, verdict=Verdict.NOT_IN_PILE).claim
    AnchorJudgement.objects.bulk_create(
        [
            AnchorJudgement(
                anchor_set=anchors,
                claim=claim,
                gold_supported=False,
                judge_supported=k < 3,
                judged_on=monday + dt.timedelta(days=k % 5),
            )
            for k in range(10)
        ]
    )
    Judge.objects.filter(pk=judge.pk).update(drifted_on=monday, drift_sentence=sentence)
    client = _lead_client(client, judge.project)
    slug = judge.project.slug
    page = client.get(f"/p/{slug}/monitor/alerts/{alert.pk}/").content.decode()
    assert sentence in page
    assert "more errors (worse)" in page
    assert "5.0%–12.0%" in page
    assert "30%" in page  # 3 of the week's 10 not-supported anchors judged SUPPORTED
    assert sentence in client.get(f"/p/{slug}/monitor/").content.decode()
    dashboard = client.get(f"/p/{slug}/dashboard/?judge={judge.pk}").content.decode()
    assert 'data-testid="judge-drift-flag"' in dashboard
    assert client.post(f"/p/{slug}/monitor/{stream.pk}/drift/clear/").status_code == 302
    dashboard = client.get(f"/p/{slug}/dashboard/?judge={judge.pk}").content.decode()
    assert 'data-testid="judge-drift-flag"' not in dashboard
    anchors.refresh_from_db()
    assert anchors.since == timezone.localdate()


def test_a_second_stream_over_the_same_answers_is_refused_and_nothing_made(client):
    judge = JudgeFactory()
    a = System.objects.create(project=judge.project, name="rag-a")
    b = System.objects.create(project=judge.project, name="rag-b")
    client = _lead_client(client, judge.project)
    url = f"/p/{judge.project.slug}/monitor/new/"
    fields = {
        "judge": judge.pk,
        "sampling_rate": "0.1",
        "target": "0.9",
        "alpha": "0.05",
        "horizon_days": "90",
        "halfwidth_target": "0.03",
        "active": "on",
        "system": a.pk,
    }
    assert client.post(url, fields).status_code == 302
    refused = client.post(url, fields)  # rag-a again
    assert refused.status_code == 422
    assert "already watches system rag-a" in refused.content.decode()
    refused = client.post(url, {**fields, "system": ""})  # every answer covers rag-a's
    assert refused.status_code == 422
    assert MonitoredStream.objects.count() == 1
    assert client.post(url, {**fields, "system": b.pk}).status_code == 302  # disjoint
    first = MonitoredStream.objects.get(system=a)
    edit = f"/p/{judge.project.slug}/monitor/{first.pk}/edit/"
    assert client.post(edit, {**fields, "sampling_rate": "0.2"}).status_code == 302  # itself
    paused = {k: v for k, v in fields.items() if k != "active"}
    assert client.post(edit, paused).status_code == 302
    assert client.post(url, {**fields, "system": ""}).status_code == 422  # rag-b still active
    assert MonitoredStream.objects.count() == 2


def test_the_page_shows_the_judge_alone_beside_the_debiased_band(client):
    judge = JudgeFactory()
    stream = MonitoredStream.objects.create(project=judge.project, judge=judge)
    client = _lead_client(client, judge.project)
    page = client.get(f"/p/{judge.project.slug}/monitor/").content.decode()
    assert "The judge alone, its errors not corrected" in page
    assert "no claim judged yet" in page
    assert stream.pk
