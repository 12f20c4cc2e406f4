"""The queue's design computed from a judge run (metrics.services.active_design), its task,
command and the leads' page (issue 14)."""

import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.models import ActiveStratum, Claim, Gold, Project, Role
from annotate.services.design import DesignError
from judges.models import JudgeRun
from metrics import stats
from metrics.services import active_design as ad
from metrics.services.active_design import active_design_apply
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    MembershipFactory,
    ProjectFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def water_filling(sd, budget, floor=0.05):
    """π_i = min(1, c·max(sd_i, floor·mean sd)) with Σπ = budget, c found by bisection (an
    independent derivation of the brief's formula)."""
    sd = np.asarray(sd, dtype=float)
    s = np.maximum(sd, floor * sd.mean())
    low, high = 0.0, 1e9
    for _ in range(200):
        mid = (low + high) / 2
        if np.minimum(1.0, mid * s).sum() < budget:
            low = mid
        else:
            high = mid
    return np.minimum(1.0, high * s)


def judged_project(*, answers=8, per_answer=3, order="claim", confidences=None, risk="none"):
    project = ProjectFactory(queue_order=order)
    run = JudgeRunFactory(judge__project=project, project=project)
    claims = []
    rng = np.random.default_rng(3)
    for a in range(answers):
        answer = AnswerFactory(project=project, external_id=f"x{a}", risk_category=risk)
        for c in range(per_answer):
            claim = ClaimFactory(answer=answer, position=c, text=f"c{c} of {a}")
            conf = (
                confidences[len(claims)]
                if confidences is not None
                else float(rng.uniform(0.02, 0.98))
            )
            JudgeVerdictFactory(
                run=run,
                claim=claim,
                verdict="SUPPORTED" if conf >= 0.5 else "CONTRADICTED",
                confidence=conf,
            )
            claims.append(claim)
    return project, run, claims


def test_pi_from_the_raw_confidence_when_gold_is_scarce():
    project, run, claims = judged_project()
    active_design_apply(project=project, run=run, budget=6)
    conf = np.array([c.judge_verdicts.get().confidence for c in claims])
    expected = water_filling(np.sqrt(conf * (1 - conf)), 6)
    stored = np.array([Claim.objects.get(pk=c.pk).inclusion_probability for c in claims])
    np.testing.assert_allclose(stored, expected, rtol=1e-6)
    assert stored.sum() == pytest.approx(6)
    project.refresh_from_db()
    assert (project.queue_design, project.design_run_id, project.label_budget) == (
        "active",
        run.pk,
        6,
    )


def test_pi_from_platt_calibrated_confidence_with_30_gold():
    project, run, claims = judged_project(answers=12, per_answer=3)
    rng = np.random.default_rng(5)
    for claim in claims[:32]:
        GoldFactory(claim=claim, verdict="SUPPORTED" if rng.random() < 0.5 else "CONTRADICTED")
    active_design_apply(project=project, run=run, budget=10)
    conf = np.array([c.judge_verdicts.get().confidence for c in claims])
    y = np.array(
        [1 if Gold.objects.get(claim=c).verdict == "SUPPORTED" else 0 for c in claims[:32]]
    )
    p = stats.platt_calibrator(conf[:32], y)(conf)
    expected = water_filling(np.sqrt(p * (1 - p)), 10)
    stored = np.array([Claim.objects.get(pk=c.pk).inclusion_probability for c in claims])
    np.testing.assert_allclose(stored, expected, rtol=1e-6)
    # not the raw confidence's π (the calibration did something)
    raw = water_filling(np.sqrt(conf * (1 - conf)), 10)
    assert np.abs(stored - raw).max() > 1e-3


def test_an_answer_at_a_time_draws_answers_with_their_claims_error_sd():
    project, run, claims = judged_project(answers=10, per_answer=3, order="answer")
    active_design_apply(project=project, run=run, budget=9)
    conf = np.array([c.judge_verdicts.get().confidence for c in claims]).reshape(10, 3)
    answer_sd = np.sqrt((conf * (1 - conf)).sum(axis=1))
    expected = water_filling(answer_sd, 9 * 10 / 30)
    stored = np.array([Claim.objects.get(pk=c.pk).inclusion_probability for c in claims]).reshape(
        10, 3
    )
    np.testing.assert_allclose(stored, np.repeat(expected[:, None], 3, axis=1), rtol=1e-6)


@pytest.mark.parametrize(
    "status", [JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING, JudgeRun.Status.FAILED]
)
def test_no_finished_run_is_refused_and_the_queue_stays_uniform(status):
    project, run, claims = judged_project(answers=2, per_answer=2)
    JudgeRun.objects.filter(pk=run.pk).update(status=status)
    keys = list(Claim.objects.order_by("id").values_list("queue_key", flat=True))
    with pytest.raises(DesignError, match="the active queue needs a finished judge run"):
        active_design_apply(project=project, run=run.pk, budget=2)
    with pytest.raises(DesignError, match="finished judge run"):
        active_design_apply(project=project, run=None, budget=2)
    assert list(Claim.objects.order_by("id").values_list("queue_key", flat=True)) == keys
    assert Project.objects.get(pk=project.pk).queue_design == "uniform"


def test_another_projects_run_is_refused():
    project, _, _ = judged_project(answers=1, per_answer=2)
    _, other_run, _ = judged_project(answers=1, per_answer=2)
    with pytest.raises(DesignError, match="design_run_id"):
        active_design_apply(project=project, run=other_run.pk, budget=1)


@pytest.mark.parametrize("budget", [0, -3, 7])
def test_a_budget_outside_the_claims_is_refused(budget):
    project, run, _ = judged_project(answers=2, per_answer=3)
    with pytest.raises(DesignError, match="label_budget"):
        active_design_apply(project=project, run=run, budget=budget)
    assert not Claim.objects.filter(inclusion_probability__isnull=False).exists()


def test_stratified_strata_are_verdict_band_and_risk_with_the_judges_prior():
    confidences = [0.95, 0.97, 0.85, 0.3, 0.05, 0.65]
    project, run, claims = judged_project(
        answers=2, per_answer=3, confidences=confidences, risk="health"
    )
    active_design_apply(project=project, run=run, budget=None, design="stratified")
    names = [Claim.objects.get(pk=c.pk).active_stratum for c in claims]
    assert names == [
        "SUPPORTED · conf 0.9–1 · health",
        "SUPPORTED · conf 0.9–1 · health",
        "SUPPORTED · conf 0.8–0.9 · health",
        "CONTRADICTED · conf 0.6–0.8 · health",  # its own confidence: 1 − 0.3 = 0.7
        "CONTRADICTED · conf 0.9–1 · health",
        "SUPPORTED · conf 0.6–0.8 · health",
    ]
    rows = {s.name: s for s in ActiveStratum.objects.filter(project=project)}
    assert rows["SUPPORTED · conf 0.9–1 · health"].claims == 2
    assert rows["SUPPORTED · conf 0.9–1 · health"].prior_p == pytest.approx(0.96)
    project.refresh_from_db()
    assert project.queue_design == "stratified"


def test_applied_again_labelled_claims_keep_their_pi():
    project, run, claims = judged_project(answers=4, per_answer=2)
    active_design_apply(project=project, run=run, budget=2)
    first, second = (Claim.objects.get(pk=c.pk) for c in claims[:2])
    Claim.objects.filter(pk=first.pk).update(label_count=1)
    active_design_apply(project=project, run=run, budget=6)
    assert Claim.objects.get(pk=first.pk).inclusion_probability == first.inclusion_probability
    # an unlabelled claim takes the new budget's π (larger: thrice the budget)
    assert Claim.objects.get(pk=second.pk).inclusion_probability > second.inclusion_probability


def test_the_command_applies_and_refuses_clearly(capsys):
    project, run, _ = judged_project(answers=3, per_answer=2)
    call_command("active_design", project.slug, "--run", str(run.pk), "--budget", "3")
    assert "queue design active" in capsys.readouterr().out
    assert Project.objects.get(pk=project.pk).queue_design == "active"
    with pytest.raises(CommandError, match="label_budget"):
        call_command("active_design", project.slug, "--run", str(run.pk), "--budget", "0")
    call_command("active_design", project.slug, "--design", "uniform")
    assert Project.objects.get(pk=project.pk).queue_design == "uniform"


# ------------------------------------------------------------------------------------------
# the leads' page


def url(project):
    return reverse("metrics:queue-design", args=[project.slug])


@pytest.mark.parametrize("role", [Role.ANALYST])
def test_only_leads_see_or_change_the_design(client, role):
    project, run, _ = judged_project(answers=2, per_answer=2)
    member = MembershipFactory(project=project, role=role)
    client.force_login(member.user)
    assert client.get(url(project)).status_code == 404
    response = client.post(
        url(project), {"queue_design": "active", "label_budget": 2, "design_run_id": run.pk}
    )
    assert response.status_code == 404
    assert Project.objects.get(pk=project.pk).queue_design == "uniform"


@pytest.mark.parametrize("role", [Role.LEAD, Role.OWNER])
def test_a_lead_applies_the_active_design(client, role, django_capture_on_commit_callbacks):
    project, run, _ = judged_project(answers=3, per_answer=2)
    member = MembershipFactory(project=project, role=role)
    client.force_login(member.user)
    page = client.get(url(project)).content.decode()
    assert f'<option value="{run.pk}"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url(project),
            {
                "queue_design": "active",
                "label_budget": 3,
                "target_half_width": 0.05,
                "design_run_id": run.pk,
            },
        )
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.queue_design == "active"
    assert project.target_half_width == 0.05
    assert project.design_job["state"] == "done"
    assert Claim.objects.filter(project=project, inclusion_probability__isnull=True).count() == 0
    assert "Applied: active" in client.get(url(project)).content.decode()


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"label_budget": 0}, "label_budget", "at least one label"),
        ({"label_budget": 99}, "label_budget", "more than the project"),
        ({"target_half_width": 0.6}, "target_half_width", "between 0 and 0.5"),
        ({"target_half_width": 0}, "target_half_width", "between 0 and 0.5"),
        ({"design_run_id": ""}, "design_run_id", "finished judge run"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(
    client, data, field, words, django_capture_on_commit_callbacks
):
    project, run, _ = judged_project(answers=2, per_answer=2)
    member = MembershipFactory(project=project, role=Role.LEAD)
    client.force_login(member.user)
    post = {"queue_design": "active", "label_budget": 2, "design_run_id": run.pk, **data}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url(project), post)
    assert response.status_code == 400
    assert words in response.content.decode()
    assert field in response.context["form"].errors
    project.refresh_from_db()
    assert project.queue_design == "uniform"
    assert project.design_job == {}
    assert project.target_half_width is None


def test_an_unfinished_run_is_not_offered_and_refused(client, django_capture_on_commit_callbacks):
    project, run, _ = judged_project(answers=2, per_answer=2)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    member = MembershipFactory(project=project, role=Role.LEAD)
    client.force_login(member.user)
    assert f'<option value="{run.pk}"' not in client.get(url(project)).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url(project), {"queue_design": "active", "label_budget": 2, "design_run_id": run.pk}
        )
    assert response.status_code == 400
    assert Project.objects.get(pk=project.pk).queue_design == "uniform"


def test_the_task_records_a_failure_and_keeps_the_design():
    from metrics.tasks import apply_active_design

    project, run, _ = judged_project(answers=2, per_answer=2)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FAILED)
    apply_active_design(project.pk, "active", run.pk, 2)
    project.refresh_from_db()
    assert project.design_job["state"] == "failed"
    assert "finished judge run" in project.design_job["error"]
    assert project.queue_design == "uniform"


def test_the_jobs_progress_is_polled_while_it_runs(client):
    project, run, _ = judged_project(answers=1, per_answer=2)
    member = MembershipFactory(project=project, role=Role.LEAD)
    client.force_login(member.user)
    Project.objects.filter(pk=project.pk).update(
        design_job={"state": "running", "progress": 0.4, "design": "active", "run": run.pk}
    )
    html = client.get(url(project) + "?job=1", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="design-job"' in html
    assert 'hx-trigger="every 1s"' in html
    assert "(40%)" in html
    assert "<html" not in html
    Project.objects.filter(pk=project.pk).update(
        design_job={"state": "failed", "error": "design_run_id: gone.", "design": "active"}
    )
    html = client.get(url(project) + "?job=1", HTTP_HX_REQUEST="true").content.decode()
    assert "could not be applied: design_run_id: gone." in html
    assert "every 1s" not in html


NAN = math.nan


# ------------------------------------------------------------------------------------------
# metrics.services.active_design: the design's inputs from a judge run


class _Connection:
    def __init__(self, atomic):
        self.in_atomic_block = atomic


def test_job_progress_is_written_rounded_and_clipped_only_outside_a_transaction(monkeypatch):
    calls = []
    monkeypatch.setattr(ad, "_job_update", lambda pid, **changes: calls.append((pid, changes)))
    monkeypatch.setattr(ad.transaction, "get_connection", lambda: _Connection(False))
    ad._progress(7, 0.12345)
    ad._progress(7, 1.7)
    ad._progress(7, -0.2)
    assert calls == [(7, {"progress": 0.123}), (7, {"progress": 1.0}), (7, {"progress": 0.0})]
    monkeypatch.setattr(ad.transaction, "get_connection", lambda: _Connection(True))
    ad._progress(7, 0.5)
    assert len(calls) == 3


def test_scaled_progress_maps_the_store_onto_the_last_nine_tenths():
    assert ad._scaled(None) is None
    seen = []
    scaled = ad._scaled(seen.append)
    scaled(0.0)
    scaled(0.5)
    scaled(1.0)
    assert seen == pytest.approx([0.1, 0.55, 1.0], abs=1e-15)


def test_confidence_bands_and_stratum_names():
    assert ad._band(None) == "no confidence"
    assert ad._band(NAN) == "no confidence"
    assert ad._band(0.0) == "conf 0–0.6"
    assert ad._band(0.6) == "conf 0.6–0.8"
    assert ad._band(0.85) == "conf 0.8–0.9"
    assert ad._band(0.9) == "conf 0.9–1"
    assert ad._band(1.0) == "conf 0.9–1"
    support = {
        "p": np.array([0.9, 0.2, 0.5, 0.5]),
        "verdict": np.array(["SUPPORTED", "CONTRADICTED", "", "NOT_IN_PILE"], dtype=object),
        "confidence": np.array([0.95, 0.15, NAN, NAN]),
        "risk": np.array(["health", "legal", "none", "health"], dtype=object),
    }
    names = ad.active_strata_names(support)
    assert names.dtype == object
    assert names.tolist() == [
        "SUPPORTED · conf 0.9–1 · health",
        "CONTRADICTED · conf 0.8–0.9 · legal",  # its own confidence: 1 − 0.15
        "no verdict · none",
        "NOT_IN_PILE · no confidence · health",
    ]


def test_active_probabilities_a_claim_or_an_answer_at_a_time():
    """π ∝ √(p(1 − p)) scaled to the budget (water-filling: no cap reached here); an answer at
    a time: the answer's sd √Σ p(1 − p), the budget in answers, its claims sharing its π."""
    p = np.array([0.5, 0.9, 0.5, 0.8, 0.7, 0.6])
    support = {"p": p, "answer_id": np.array([1, 1, 2, 2, 3, 3])}
    sd = np.sqrt(p * (1 - p))
    got = ad.active_probabilities(project=Project(queue_order="claim"), support=support, budget=3)
    np.testing.assert_allclose(got, 3 * sd / sd.sum(), rtol=1e-12)
    by_answer = np.sqrt(np.array([0.25 + 0.09, 0.25 + 0.16, 0.21 + 0.24]))
    expected = 1.5 * by_answer / by_answer.sum()  # budget 3 claims × 3 answers / 6 claims
    got = ad.active_probabilities(project=Project(queue_order="answer"), support=support, budget=3)
    np.testing.assert_allclose(got, np.repeat(expected, 2), rtol=1e-12)


class _Rows:
    """A queryset stand-in: filter / order_by / values_list chain, then the planted rows."""

    def __init__(self, rows):
        self.rows = rows

    def filter(self, *args, **kwargs):
        return self

    def order_by(self, *args):
        return self

    def values_list(self, *args, **kwargs):
        return self

    def iterator(self, chunk_size=None):
        return iter(self.rows)

    def __iter__(self):
        return iter(self.rows)


def _plant_run(monkeypatch, claims, verdicts, gold):
    for name, rows in (("Claim", claims), ("JudgeVerdict", verdicts), ("Gold", gold)):
        model = type(name, (), {"objects": _Rows(rows)})
        monkeypatch.setattr(ad, name, model)


def test_claim_support_probabilities_whole_output_with_scarce_gold(monkeypatch):
    """Fewer than 30 gold claims: p is the run's raw confidence, and a verdict with no
    confidence gets 0.5 (not its few gold's share); a claim the run did not judge 0.5; a
    verdict on a claim outside the project is ignored."""
    _plant_run(
        monkeypatch,
        claims=[(11, 1, "health"), (12, 1, "health"), (13, 2, "legal"), (14, 2, "legal")],
        verdicts=[
            (11, "SUPPORTED", 0.8),
            (12, "CONTRADICTED", None),
            (13, "CONTRADICTED", None),
            (99, "SUPPORTED", 0.1),
        ],
        gold=[(12, "CONTRADICTED"), (13, "NOT_IN_PILE"), (98, "SUPPORTED")],
    )
    out = ad.claim_support_probabilities(project=None, run=None)
    assert set(out) == {"claim_id", "answer_id", "risk", "verdict", "confidence", "p", "calibrated"}
    assert out["claim_id"].tolist() == [11, 12, 13, 14]
    assert out["answer_id"].tolist() == [1, 1, 2, 2]
    assert out["risk"].tolist() == ["health", "health", "legal", "legal"]
    assert out["verdict"].tolist() == ["SUPPORTED", "CONTRADICTED", "CONTRADICTED", ""]
    np.testing.assert_array_equal(out["confidence"], [0.8, NAN, NAN, NAN])
    assert out["p"].tolist() == [0.8, 0.5, 0.5, 0.5]
    assert out["calibrated"] is False


def test_claim_support_probabilities_with_30_gold_calibrates_and_uses_the_verdicts_share(
    monkeypatch,
):
    """30 gold claims the run judged with a confidence: p is Platt-calibrated (checked against
    scikit-learn's unregularised logistic fit on the confidence); 30 gold claims with a verdict
    but no confidence: their verdict's gold SUPPORTED share."""
    from tests.metrics.independent import platt_fit

    rng = np.random.default_rng(5)
    conf = np.round(rng.uniform(0.05, 0.95, 30), 3)
    truth = (rng.random(30) < conf).astype(int)
    claims = [(i, i, "none") for i in range(1, 62)]
    verdicts = [(i + 1, "SUPPORTED", float(c)) for i, c in enumerate(conf)]
    verdicts += [(31 + i, "NOT_IN_PILE", None) for i in range(30)]
    gold = [(i + 1, "SUPPORTED" if t else "CONTRADICTED") for i, t in enumerate(truth)]
    gold += [(31 + i, "SUPPORTED" if i < 9 else "NOT_IN_PILE") for i in range(30)]
    _plant_run(monkeypatch, claims, verdicts, gold)
    out = ad.claim_support_probabilities(project=None, run=None)
    assert out["calibrated"] is True
    calibrate = platt_fit(conf, truth)
    np.testing.assert_allclose(out["p"][:30], calibrate(conf), atol=1e-4)
    assert out["p"][30:60].tolist() == [0.3] * 30
    assert out["p"][60] == 0.5
