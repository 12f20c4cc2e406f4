"""The stream page: the band drawn, the alert's one sentence shown, analysts kept out."""

from __future__ import annotations

import pytest
from django.utils import timezone

from monitor.models import Alert, MonitoredStream
from tests.factories import JudgeFactory, MembershipFactory

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
