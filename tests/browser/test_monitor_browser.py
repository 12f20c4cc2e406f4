"""Monitoring in real Chromium (issue 29): a lead reads the stream's band with the target and
the alert's day drawn, follows an alert to its one-sentence explanation and evidence, sees the
judge-drift flag, and the pages pass axe and do not scroll sideways at 800 px."""

import datetime as dt

import numpy as np
import pytest
from django.utils import timezone

from annotate.models import Role
from judges.models import Judge
from monitor.models import Alert, MonitoredStream
from monitor.services import stream_evaluate
from tests.browser.test_screens_pages_browser import axe_serious
from tests.factories import AnswerFactory, JudgeFactory, JudgeRunFactory, MembershipFactory
from tests.monitor.test_services import day_of_claims

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _stream_with_a_drop():
    judge = JudgeFactory(name="live-judge")
    run = JudgeRunFactory(judge=judge)
    answer = AnswerFactory(project=judge.project)
    stream = MonitoredStream.objects.create(
        project=judge.project, judge=judge, sampling_rate=0.5, target=0.9
    )
    start = timezone.now().replace(hour=12) - dt.timedelta(days=12)
    MonitoredStream.objects.filter(id=stream.id).update(started_at=start)
    stream.refresh_from_db()
    rng = np.random.default_rng(29)
    for d in range(12):
        day_of_claims(stream, answer, run, start + dt.timedelta(days=d), 200, 0.97 if d < 5 else 0.6, rng)  # fmt: skip
    alert = stream_evaluate(stream=stream, today=(start + dt.timedelta(days=11)).date())
    assert alert is not None
    sentence = "The judge changed, not necessarily the system: its false-positive rate moved."
    Alert.objects.create(
        stream=stream, kind=Alert.Kind.JUDGE_DRIFT, raised_at=timezone.now(), sentence=sentence,
        evidence={"rate": "specificity", "direction": "up", "calibration_range": [0.05, 0.12]},
    )  # fmt: skip
    Judge.objects.filter(pk=judge.pk).update(
        drifted_on=timezone.localdate(), drift_sentence=sentence
    )
    return judge.project, alert, sentence


def test_lead_reads_the_band_follows_an_alert_and_sees_the_drift_flag(browser_page, screenshot):
    project, alert, drift_sentence = _stream_with_a_drop()
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    page = browser_page(lead, width=1280, height=720)
    page.goto(f"{page.base_url}/p/{project.slug}/monitor/")
    assert page.locator("svg").count() >= 1
    assert page.get_by_text(alert.sentence).is_visible()
    assert page.locator('[data-testid="drift-flag"]').is_visible()
    assert axe_serious(page) == []
    screenshot(page, "monitor-streams.png")

    page.locator(f"#alert-{alert.pk}").get_by_role("link", name="Evidence").click()
    page.wait_for_url(f"**/monitor/alerts/{alert.pk}/")
    assert page.locator('[data-testid="alert-sentence"]').inner_text() == alert.sentence
    assert page.get_by_role("row", name="Detected on").is_visible()
    assert axe_serious(page) == []
    screenshot(page, "monitor-alert.png")

    page.goto(f"{page.base_url}/p/{project.slug}/dashboard/")
    assert drift_sentence in page.locator('[data-testid="judge-drift-flag"]').inner_text()

    narrow = browser_page(lead, width=800, height=900)
    for path in (f"/p/{project.slug}/monitor/", f"/p/{project.slug}/monitor/alerts/{alert.pk}/"):
        narrow.goto(narrow.base_url + path)
        scroll, client = narrow.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert scroll <= client, f"{path} scrolls sideways at 800 px ({scroll} > {client})"
