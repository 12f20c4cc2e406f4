"""Dashboard, recompute, progress polling and downloads, with and without htmx."""

import csv
import io
import json
import math

import numpy as np
import pytest
from django.urls import reverse

from annotate.models import LabelHistory, Role
from annotate.services.labels import label_save
from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from tests.factories import PASSWORD, ClaimFactory, MembershipFactory, UserFactory
from tests.metrics import independent as ref
from tests.metrics.factories_report import CONF, GOLD, build_planted_project

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def planted(client):
    planted = build_planted_project()
    client.login(username="lead", password=PASSWORD)
    return planted


@pytest.fixture
def computed(planted):
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    snapshot.refresh_from_db()
    return snapshot


def url(name, planted, *args):
    return reverse(f"metrics:{name}", args=[planted.project.slug, *args])


def test_dashboard_lead_sees_the_stored_report_with_charts_and_tables(client, planted, computed):
    response = client.get(url("dashboard", planted), {"judge": planted.judge.pk})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    # 29 of 40 gold claims supported: 72.5%, shown as a whole percent rounded half up
    # (metrics/format.py), so 73% where Python's own rounding would print 72%.
    assert GOLD.count("SUPPORTED") == 29
    assert 'data-figure="faithfulness">73%<' in html
    # the first screen's estimates side by side, then the confusion heat map, the reliability
    # diagram and the frontier
    assert html.count("<svg") == 4
    assert 'aria-label="Faithfulness by each estimate, with its 95% interval"' in html
    assert "confusion-table" in html
    assert "frontier-table" in html
    assert "lenient · m-1 · prompt p-1" in html
    assert "no labels since this report" in html
    assert 'class="headline"' in html
    assert 'class="strike"' in html  # the naive judge rate, struck through


def test_dashboard_shows_coverage_and_f1_by_tag_with_its_definition(client, planted, computed):
    html = client.get(url("dashboard", planted), {"judge": planted.judge.pk}).content.decode()
    tag_row = html[html.index("<th>tag: numeric</th>") :]
    tag_row = tag_row[: tag_row.index("</tr>")]
    # numeric: answers 0, 2, 4, 6 hold answer 0's two facts, one grounded.
    assert "50% <span" in tag_row
    assert "(1/2)" in tag_row
    multi = html[html.index("<th>tag: multi-part</th>") :]
    assert "not measured" in multi[: multi.index("</tr>")]
    assert "answers that have at least one claim with the tag" in html
    assert '<th class="num">F1</th>' in html


def test_dashboard_says_how_many_judge_verdicts_on_old_text_it_left_out(client, planted):
    from annotate.services.claims import claim_edit

    claim_edit(claim=planted.rest[0], text="Rewritten unaudited claim.", user=planted.lead)
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    html = client.get(url("dashboard", planted), {"judge": planted.judge.pk}).content.decode()
    assert "1 verdict made on a claim's previous text" in html
    assert "59 claims judged" in html


def test_dashboard_names_an_instrument_with_no_current_verdict(client, planted):
    from judges.models import JudgeVerdict
    from tests.metrics.factories_report import add_second_instrument

    add_second_instrument(planted)
    JudgeVerdict.objects.filter(run__prompt_version="p-2").update(stale=True)
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    html = client.get(url("dashboard", planted), {"judge": planted.judge.pk}).content.decode()
    assert "every verdict made on a claim&#x27;s previous text" in html
    assert "model m-1, prompt p-2: 8 verdicts" in html


def test_dashboard_htmx_renders_only_the_report_partial(client, planted, computed):
    response = client.get(url("dashboard", planted), {"judge": planted.judge.pk}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert html.lstrip().startswith('<div id="report">')


def _planted_crc_at(alpha: float) -> tuple[float, int]:
    """λ̂ and the held-out claims it keeps, from the planted lists: isotonic out of fold (the
    calibrator the report pins), answers shuffled by default_rng(0), the first 5 calibrate."""
    y = np.array(GOLD) == "SUPPORTED"
    answers = np.repeat(np.arange(10), 4)
    calibrated = np.round(ref.out_of_fold(np.array(CONF), y.astype(float), answers, "isotonic"), 4)
    cal = sorted(np.random.default_rng(0).permutation(10)[:5].tolist())
    cut = ref.crc_cut(
        [calibrated[answers == a] for a in cal], [y[answers == a] for a in cal], alpha
    )
    kept = sum(int(np.sum(calibrated[answers == a] >= cut)) for a in range(10) if a not in cal)
    return cut, kept


def test_dashboard_alpha_form_recuts_crc_from_the_snapshot(client, planted, computed):
    # At α = 0.10 five calibration answers certify no cut; at α = 0.2 the budget is 0.2.
    before = client.get(url("dashboard", planted), {"judge": planted.judge.pk}).content.decode()
    assert "none meets α: keep nothing" in before
    assert "0 of 20" in before
    cut, kept = _planted_crc_at(0.2)
    assert math.isfinite(cut)
    assert 0 < kept < 20
    response = client.get(
        url("dashboard", planted),
        {"judge": planted.judge.pk, "alpha": "0.2"},
        HTTP_HX_TARGET="crc",
        **HTMX,
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="crc"')
    assert 'value="0.2"' in html
    assert f'<td class="num" data-figure="lambda-hat">{cut:.3f}</td>' in html
    assert f"{kept} of 20" in html
    assert "keep nothing" not in html


def test_dashboard_counts_labels_saved_since_the_snapshot(client, planted, computed):
    assert computed.labels_at_compute == (
        LabelHistory.objects.order_by("-id").values_list("id", flat=True).first() or 0
    )
    claim = ClaimFactory(answer=planted.answers[0])
    label_save(claim=claim, annotator=planted.analyst, verdict="NOT_IN_PILE")
    # Labels saved in another project since then are not this report's.
    elsewhere = MembershipFactory(role=Role.ANALYST)
    for _ in range(2):
        other = ClaimFactory(answer__project=elsewhere.project)
        label_save(claim=other, annotator=elsewhere.user, verdict="NOT_IN_PILE")
    response = client.get(url("dashboard", planted), {"judge": planted.judge.pk})
    assert "1 label since this report" in response.content.decode()


def test_dashboard_without_snapshot_invites_recompute(client, planted):
    response = client.get(url("dashboard", planted), {"judge": "none"})
    assert response.status_code == 200
    assert "Press <strong>Recompute</strong>" in response.content.decode()


@pytest.mark.parametrize("role", [Role.ANALYST, None])
def test_dashboard_is_404_for_analysts_and_strangers(client, planted, computed, role):
    user = UserFactory(username=f"u-{role}")
    if role:
        MembershipFactory(project=planted.project, user=user, role=role)
    client.force_login(user)
    for name, args in [
        ("dashboard", []),
        ("report-download", []),
        ("audit-card", []),
        ("snapshot-progress", [computed.pk]),
    ]:
        assert client.get(url(name, planted, *args)).status_code == 404
    assert client.post(url("recompute", planted)).status_code == 404
    assert not ReportSnapshot.objects.exclude(pk=computed.pk).exists()


def test_dashboard_unknown_judge_is_404(client, planted):
    assert client.get(url("dashboard", planted), {"judge": "99999"}).status_code == 404


def test_recompute_enqueues_and_computes_a_snapshot(
    client, planted, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(url("recompute", planted), {"judge": planted.judge.pk})
    assert response.status_code == 302
    assert len(callbacks) == 1
    snapshot = ReportSnapshot.objects.get(project=planted.project, judge=planted.judge)
    assert snapshot.status == ReportSnapshot.Status.DONE
    assert snapshot.data["judge"]["n_audited"] == 40


def test_recompute_htmx_returns_the_polling_progress_bar(client, planted):
    response = client.post(url("recompute", planted), {"judge": planted.judge.pk}, **HTMX)
    html = response.content.decode()
    snapshot = ReportSnapshot.objects.get(project=planted.project)
    assert snapshot.status == ReportSnapshot.Status.PENDING  # enqueued on commit
    assert 'id="progress"' in html
    assert url("snapshot-progress", planted, snapshot.pk) in html
    assert 'hx-trigger="every 1s"' in html
    # A second click while it is pending does not create a duplicate.
    client.post(url("recompute", planted), {"judge": planted.judge.pk}, **HTMX)
    assert ReportSnapshot.objects.filter(project=planted.project).count() == 1


def test_progress_polls_while_running_and_stops_when_done(client, planted):
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    ReportSnapshot.objects.filter(pk=snapshot.pk).update(
        status="running", progress=0.4, stage="auditing"
    )
    response = client.get(url("snapshot-progress", planted, snapshot.pk), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "auditing" in html
    assert "40%" in html
    assert "hx-get" in html
    snapshot_compute(snapshot_id=snapshot.pk)
    response = client.get(url("snapshot-progress", planted, snapshot.pk), **HTMX)
    assert response.status_code == 286  # htmx: stop polling
    assert response["HX-Refresh"] == "true"
    plain = client.get(url("snapshot-progress", planted, snapshot.pk))
    assert plain.status_code == 200
    assert "<html" in plain.content.decode()


def test_report_download_is_json_attachment_without_internal_arrays(client, planted, computed):
    response = client.get(url("report-download", planted), {"judge": planted.judge.pk})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith(
        'attachment; filename="report-planted-lenient-'
    )
    assert response["Content-Disposition"].endswith('.json"')
    data = json.loads(response.content)
    assert data["judge"]["n_audited"] == 40
    assert "_instrument_crc_inputs" not in data


def test_audit_card_downloads_json_and_csv_without_secrets(
    client, planted, computed, monkeypatch, llm_endpoints
):
    llm_endpoints(
        {"name": "planted", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "PLANTED_JUDGE_KEY"}
    )
    planted.judge.endpoint = "planted"
    planted.judge.save()
    monkeypatch.setenv("PLANTED_JUDGE_KEY", "sk-do-not-leak-123")
    response = client.get(url("audit-card", planted), {"judge": planted.judge.pk, "format": "json"})
    assert response["Content-Type"] == "application/json"
    assert 'filename="audit-card-planted-lenient-' in response["Content-Disposition"]
    card = json.loads(response.content)
    for key in (
        "judge", "backend", "model", "prompt_version", "date", "audit_sample_size",
        "gold_source", "sensitivity", "specificity", "agreement", "kappa",
        "naive_faithfulness", "debiased_faithfulness", "ppi_faithfulness",
        "gold_only_faithfulness", "headline_estimate", "ece", "crc", "canary_pass_rate", "method",
    ):  # fmt: skip
        assert key in card
    assert card["audit_sample_size"] == 40
    assert card["gold_source"] == {"unanimous": 36, "adjudicated": 4}
    response = client.get(url("audit-card", planted), {"judge": planted.judge.pk, "format": "csv"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].endswith('.csv"')
    rows = {row[0]: row[1] for row in csv.reader(io.StringIO(response.content.decode()))}
    assert rows["audit_sample_size"] == "40"
    assert rows["sensitivity.n"] == str(GOLD.count("SUPPORTED"))
    for content in (json.dumps(card), response.content.decode()):
        assert "sk-do-not-leak-123" not in content
        assert "PLANTED_JUDGE_KEY" not in content


def test_downloads_before_any_report_send_the_lead_to_recompute(client, planted):
    dashboard = url("dashboard", planted)
    for name, params in (
        ("report-download", {"judge": "none"}),
        ("audit-card", {"judge": planted.judge.pk}),
    ):
        response = client.get(url(name, planted), params, follow=True)
        assert response.redirect_chain[0] == (dashboard, 302)
        assert "has been computed yet: press Recompute" in response.content.decode()


def test_dashboard_reads_the_snapshot_and_never_recounts(client, planted, computed):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = client.get(url("dashboard", planted), {"judge": planted.judge.pk})
    assert response.status_code == 200
    sql = " ".join(query["sql"] for query in queries.captured_queries)
    for table in ("annotate_gold", 'annotate_label"', "judges_judgeverdict", "annotate_fact"):
        assert table not in sql
    assert len(queries.captured_queries) <= 12


def test_services_stay_default_alpha_in_step_with_the_pages():
    from metrics import scope, services

    assert scope.DEFAULT_ALPHA == services.DEFAULT_ALPHA
