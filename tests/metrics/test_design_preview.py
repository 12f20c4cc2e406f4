"""The queue-design page's preview (issue 32 item 7): each design's forecast before it is
applied, nothing written. On the demo (uniform queue, the baseline judge's finished run) the
preview's uniform forecast is the dashboard's own (the pooled report's), and once Stratified is
applied and the report recomputed, the report's stratified forecast is what the preview said."""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Claim, Membership, Project
from judges.models import JudgeRun
from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from metrics.services.active_design import active_design_apply
from metrics.services.design_preview import design_preview

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(demo_project):
    return demo_project


def _pooled_forecast(project, run):
    snapshot = snapshot_create(project=project, judge=run.judge, all_systems=True)
    snapshot_compute(snapshot_id=snapshot.pk)
    return ReportSnapshot.objects.get(pk=snapshot.pk).data["active_audit"]["forecast"]


def _rows(preview):
    return {row["design"]: row for row in preview["rows"]}


def test_the_uniform_preview_is_the_dashboards_forecast(demo):
    run = JudgeRun.objects.get(project=demo)
    preview = design_preview(project=demo, run=run, budget=30, target=0.10)
    report = _pooled_forecast(demo, run)["uniform"]
    rows = _rows(preview)
    assert set(rows) == {"uniform", "stratified", "active"}
    assert rows["uniform"]["in_use"]
    assert rows["uniform"]["labels_total"] == report["labels_total"]
    assert rows["uniform"]["answers_more"] == report["answers_more"]
    # the claims the report covers: every claim outside abstentions
    assert preview["claims"] == Claim.objects.filter(project=demo, answer__abstention=False).count()


def test_the_stratified_preview_is_what_the_report_says_once_applied(demo):
    run = JudgeRun.objects.get(project=demo)
    before = _rows(design_preview(project=demo, run=run, budget=None, target=0.10))
    assert "active" not in before  # no budget, no active forecast
    keys = list(Claim.objects.filter(project=demo).values_list("id", "queue_key"))
    assert Project.objects.get(pk=demo.pk).queue_design == "uniform"  # the preview wrote nothing
    assert keys == list(Claim.objects.filter(project=demo).values_list("id", "queue_key"))
    active_design_apply(project=demo, run=run, budget=None, design="stratified")
    report = _pooled_forecast(Project.objects.get(pk=demo.pk), run)["stratified"]
    assert before["stratified"]["labels_total"] == report["labels_total"]
    assert before["stratified"]["labels_more"] == report["labels_more"]


def test_the_page_previews_every_design_and_applies_nothing(demo):
    run = JudgeRun.objects.get(project=demo)
    lead = Membership.objects.get(project=demo, user__username="lead").user
    client = Client()
    client.force_login(lead)
    url = reverse("metrics:queue-design", args=["demo"])
    form = {
        "queue_design": "active",
        "label_budget": "30",
        "target_half_width": "0.1",
        "design_run_id": str(run.pk),
        "action": "preview",
    }
    page = client.post(url, form).content.decode()
    for design in ("uniform", "stratified", "active"):
        assert f'data-preview="{design}"' in page, design
    assert "Forecast of each design, before applying" in page
    assert Project.objects.get(pk=demo.pk).queue_design == "uniform"
    # a bad budget is named, nothing previewed
    page = client.post(url, {**form, "label_budget": "100000"})
    assert page.status_code == 400
    assert 'data-testid="design-preview"' not in page.content.decode()


def test_under_an_applied_design_the_preview_weights_the_labels_as_the_report_does(demo):
    """Once Stratified is applied, the labels so far count with their stratum's share n_h/N_h
    in the report's forecast; the preview's row for the design in use reads the same figures,
    not those of the labels taken as drawn with equal probability (what it did before)."""
    run = JudgeRun.objects.get(project=demo)
    # before: labels drawn uniformly, taken with equal probability
    equal = design_preview(project=demo, run=run, budget=None, target=0.10)
    assert equal["drawn"] == "uniform"
    active_design_apply(project=demo, run=run, budget=None, design="stratified")
    project = Project.objects.get(pk=demo.pk)
    report = _pooled_forecast(project, run)
    preview = design_preview(project=project, run=run, budget=None, target=0.10)
    assert preview["drawn"] == "stratified"
    rows = _rows(preview)
    assert rows["stratified"]["in_use"]
    for design in ("uniform", "stratified"):
        for key in ("labels_total", "labels_more", "half_width_now"):
            assert rows[design][key] == pytest.approx(report[design][key], abs=1e-12), (design, key)
    # the equal-probability reading is a different figure: the weights matter here
    assert _rows(equal)["uniform"]["half_width_now"] != pytest.approx(
        rows["uniform"]["half_width_now"], abs=1e-6
    )
    page = _preview_page(project, run)
    assert 'data-testid="preview-weighted"' in page


def _preview_page(project, run):
    lead = Membership.objects.get(project=project, user__username="lead").user
    client = Client()
    client.force_login(lead)
    form = {
        "queue_design": project.queue_design,
        "label_budget": "",
        "target_half_width": "0.1",
        "design_run_id": str(run.pk),
        "action": "preview",
    }
    return client.post(reverse("metrics:queue-design", args=["demo"]), form).content.decode()
