"""Issue 30: the dashboard's "Headline at scale" page — a lead's Refresh computes the headline
from rollups in a task, and the page shows the report's own figures, the calibration where the
report shows it (the reason where it does not), and the reason a project is refused."""

import re

import pytest

from annotate.models import Claim, Gold
from metrics import format as fmt
from metrics.models import RollupHeadline
from metrics.services import report_compute
from tests.factories import LabelFactory, MembershipFactory
from tests.metrics.test_rollup_calibration import _one_stratum_project
from tests.metrics.test_rollups import _project

pytestmark = pytest.mark.django_db


def _lead_client(client, project):
    client.force_login(MembershipFactory(project=project, role="lead").user)
    return client


def _page(client, project, judge) -> str:
    response = client.get(f"/p/{project.slug}/dashboard/at-scale/?judge={judge.pk}")
    assert response.status_code == 200
    return response.content.decode()


def _testid(html: str, testid: str) -> str:
    found = re.search(rf'data-testid="{testid}"[^>]*>(.*?)</(p|div)>', html, re.S)
    assert found, f"{testid} not on the page"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))).strip()


@pytest.fixture
def refresh(client, django_capture_on_commit_callbacks):
    """POST Refresh; the task is enqueued on commit and runs in-process (eager) here."""

    def post(project, judge):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                f"/p/{project.slug}/dashboard/at-scale/refresh/", {"judge": str(judge.pk)}
            )
        assert response.status_code == 302

    return post


def test_refresh_computes_the_headline_and_the_page_shows_the_reports_figures(client, refresh):
    project, judge, run = _one_stratum_project(seed=21)
    _lead_client(client, project)
    assert "Not computed yet." in _page(client, project, judge)
    refresh(project, judge)  # tasks run in-process in the tests (eager)
    row = RollupHeadline.objects.get(project=project)
    assert row.status == RollupHeadline.Status.DONE
    html = _page(client, project, judge)
    want = report_compute(project=project, judge=judge)
    shown = _testid(html, "rollup-faithfulness")
    assert shown.startswith(fmt.percent(want["faithfulness"]["pooled"]["value"], 1))
    assert fmt.percent_interval(want["faithfulness"]["pooled"]["ci"], 1) in shown
    ppi = _testid(html, "rollup-ppi")
    assert ppi.startswith(fmt.percent(want["judge"]["ppi_faithfulness"]["value"], 1))
    crc = want["judge"]["crc"]
    assert crc["not_computed"] is None
    text = _testid(html, "rollup-crc")
    assert f"retains {crc['retained_all_judged']:,} of {crc['judged_with_confidence']:,}" in text


def test_strata_audited_unequally_show_the_reason_not_the_calibration(client, refresh):
    project, judge, run = _project(seed=22)
    _lead_client(client, project)
    refresh(project, judge)
    html = _page(client, project, judge)
    reason = report_compute(project=project, judge=judge)["judge"]["crc"]["not_computed"]
    assert reason
    assert _testid(html, "rollup-calibration-not-shown") == reason
    assert 'data-testid="rollup-crc"' not in html


def test_gold_drawn_by_the_active_queue_is_refused_with_the_reason(client, refresh):
    project, judge, run = _one_stratum_project(seed=23)
    claim = Claim.objects.filter(project=project).first()
    LabelFactory(claim=claim, design="active", inclusion_probability=0.5)
    _lead_client(client, project)
    refresh(project, judge)
    status = _testid(_page(client, project, judge), "rollup-status")
    assert status.startswith("Not computed:")
    assert "active queue" in status
    assert 'data-testid="rollup-faithfulness"' not in _page(client, project, judge)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_second_refresh_re_aggregates_only_the_answers_written_since(client, refresh):
    project, judge, run = _one_stratum_project(seed=24)
    _lead_client(client, project)
    refresh(project, judge)
    refresh(project, judge)
    assert ", 0 answers re-aggregated" in _testid(_page(client, project, judge), "rollup-status")
    claim = Claim.objects.filter(project=project, gold__isnull=True).first()
    Gold.objects.create(claim=claim, verdict="SUPPORTED", source="unanimous")
    refresh(project, judge)
    assert ", 1 answers re-aggregated" in _testid(_page(client, project, judge), "rollup-status")


def test_the_status_polls_while_computing_and_stops_when_done(client):
    """While the task runs the status line polls itself (its stage shown); once done the poll
    stops (286) and reloads the page to show the figures."""
    project, judge, run = _one_stratum_project(seed=25)
    _lead_client(client, project)
    RollupHeadline.objects.create(
        project=project,
        run_id=run.pk,
        key=f"{project.pk}:{run.pk}:",
        status=RollupHeadline.Status.RUNNING,
        stage="counting the judge's confidences",
    )
    url = f"/p/{project.slug}/dashboard/at-scale/?judge={judge.pk}"
    headers = {"HX-Request": "true", "HX-Target": "rollup-status"}
    busy = client.get(url, headers=headers)
    assert busy.status_code == 200
    assert "Computing: counting the judge" in busy.content.decode()
    assert 'hx-trigger="every 2s"' in busy.content.decode()
    RollupHeadline.objects.filter(project=project).update(status=RollupHeadline.Status.DONE)
    done = client.get(url, headers=headers)
    assert done.status_code == 286
    assert done["HX-Refresh"] == "true"
