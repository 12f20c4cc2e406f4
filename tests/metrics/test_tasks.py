"""compute_report: writes the snapshot (in-process and on a real worker), idempotent, survives a
worker killed mid-compute without a duplicate snapshot."""

import time

import numpy as np
import pytest

from annotate.models import Answer, Claim, Gold
from judges.models import JudgeVerdict
from metrics import services
from metrics.models import ReportSnapshot
from metrics.services import snapshot_request
from metrics.tasks import compute_report
from tests.factories import JudgeFactory, JudgeRunFactory, ProjectFactory
from tests.metrics.factories_report import GOLD, build_planted_project

VERDICTS = ["SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"]


def wait_for(predicate, timeout: float, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


@pytest.mark.django_db
def test_compute_report_task_writes_the_snapshot(django_capture_on_commit_callbacks):
    planted = build_planted_project()
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = snapshot_request(project=planted.project, judge=planted.judge)
    snapshot.refresh_from_db()
    assert snapshot.status == ReportSnapshot.Status.DONE
    assert snapshot.progress == 1.0
    assert snapshot.computed_at is not None
    assert snapshot.data["claims"]["SUPPORTED"] == GOLD.count("SUPPORTED")
    assert snapshot.data["judge"]["n_audited"] == 40
    assert snapshot.labels_at_compute == snapshot.data["labels_at_compute"]


@pytest.mark.django_db
def test_compute_report_is_idempotent_for_a_done_snapshot():
    planted = build_planted_project()
    snapshot = services.snapshot_create(project=planted.project, judge=None)
    compute_report(snapshot.pk)
    snapshot.refresh_from_db()
    first = snapshot.computed_at
    compute_report(snapshot.pk)  # a redelivered message after success changes nothing
    snapshot.refresh_from_db()
    assert snapshot.computed_at == first
    assert ReportSnapshot.objects.filter(project=planted.project).count() == 1


@pytest.mark.django_db
def test_compute_report_failure_is_recorded_on_the_snapshot(monkeypatch):
    project = ProjectFactory()
    snapshot = services.snapshot_create(project=project)

    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(services.snapshots, "report_build", broken)
    compute_report(snapshot.pk)
    snapshot.refresh_from_db()
    assert snapshot.status == ReportSnapshot.Status.FAILED
    assert "database went away" in snapshot.error


@pytest.mark.django_db
def test_snapshot_request_returns_the_unfinished_one_instead_of_a_duplicate(
    django_capture_on_commit_callbacks,
):
    project = ProjectFactory()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first = snapshot_request(project=project)
        second = snapshot_request(project=project)
    assert first.pk == second.pk
    assert len(callbacks) == 1


def _bulk_project(answers: int, claims_per_answer: int, seed: int = 3):
    """A project big enough that computing its report takes a moment: gold on half, a judge."""
    rng = np.random.default_rng(seed)
    project = ProjectFactory()
    judge = JudgeFactory(project=project, name="bulk")
    run = JudgeRunFactory(judge=judge, prompt_version="p-bulk")
    Answer.objects.bulk_create(
        Answer(project=project, external_id=f"b{i}", position=i, question="q", text="t")
        for i in range(answers)
    )
    answer_ids = list(Answer.objects.filter(project=project).values_list("id", flat=True))
    Claim.objects.bulk_create(
        Claim(project=project, answer_id=a, text="c", position=k)
        for a in answer_ids
        for k in range(claims_per_answer)
    )
    claim_ids = list(Claim.objects.filter(project=project).values_list("id", flat=True))
    truth = rng.choice(3, size=len(claim_ids), p=[0.7, 0.15, 0.15])
    Gold.objects.bulk_create(
        Gold(claim_id=c, verdict=VERDICTS[t], source="unanimous")
        for c, t in zip(claim_ids, truth, strict=True)
        if c % 2 == 0
    )
    confidence = np.clip(np.where(truth == 0, 0.75, 0.35) + rng.normal(0, 0.15, truth.size), 0, 1)
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(
            run=run,
            claim_id=c,
            verdict="SUPPORTED" if p >= 0.5 else "NOT_IN_PILE",
            confidence=float(p),
        )
        for c, p in zip(claim_ids, confidence, strict=True)
    )
    return project, judge


@pytest.mark.worker
def test_worker_computes_a_snapshot(celery_worker):
    planted = build_planted_project()
    snapshot = snapshot_request(project=planted.project, judge=planted.judge)
    wait_for(
        lambda: ReportSnapshot.objects.get(pk=snapshot.pk).status == ReportSnapshot.Status.DONE,
        timeout=90,
    )
    snapshot.refresh_from_db()
    assert snapshot.data["judge"]["n_audited"] == 40
    assert snapshot.data["faithfulness"]["pooled"]["value"] == pytest.approx(
        GOLD.count("SUPPORTED") / 40
    )


@pytest.mark.worker
def test_worker_killed_mid_compute_then_redelivered_completes_once(celery_worker):
    project, judge = _bulk_project(answers=1500, claims_per_answer=8)
    snapshot = snapshot_request(project=project, judge=judge)

    def caught_running():
        row = ReportSnapshot.objects.get(pk=snapshot.pk)
        return row if row.status == ReportSnapshot.Status.RUNNING else None

    wait_for(caught_running, timeout=90, interval=0.01)
    celery_worker.kill()  # SIGKILL mid-compute, as a crashed machine
    row = ReportSnapshot.objects.get(pk=snapshot.pk)
    assert row.status == ReportSnapshot.Status.RUNNING, "the report finished before the kill"
    assert row.computed_at is None

    celery_worker.start()
    # The broker hands an unacknowledged (acks_late) message out again after its visibility
    # timeout (an hour in settings); the test re-sends it at once, as that redelivery would.
    compute_report.delay(snapshot.pk)
    wait_for(
        lambda: ReportSnapshot.objects.get(pk=snapshot.pk).status == ReportSnapshot.Status.DONE,
        timeout=120,
    )
    done = ReportSnapshot.objects.get(pk=snapshot.pk)
    assert ReportSnapshot.objects.filter(project=project).count() == 1
    assert done.data["judge"]["n_judged"] == 1500 * 8
    assert done.data["judge"]["n_audited"] == 1500 * 8 // 2
    first = done.computed_at
    # A second redelivery after success leaves the snapshot as it is.
    compute_report.delay(snapshot.pk)
    time.sleep(2)
    assert ReportSnapshot.objects.get(pk=snapshot.pk).computed_at == first
    assert ReportSnapshot.objects.filter(project=project).count() == 1


@pytest.mark.django_db
def test_snapshot_request_reenqueues_a_stale_unfinished_snapshot_into_the_same_row(
    django_capture_on_commit_callbacks,
):
    from datetime import timedelta

    from django.utils import timezone

    project = ProjectFactory()
    stale = services.snapshot_create(project=project)
    ReportSnapshot.objects.filter(pk=stale.pk).update(
        status="running", created_at=timezone.now() - services.SNAPSHOT_STALE_AFTER - timedelta(1)
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = snapshot_request(project=project)
    assert again.pk == stale.pk
    assert len(callbacks) == 1
    stale.refresh_from_db()
    assert stale.status == ReportSnapshot.Status.DONE
    assert ReportSnapshot.objects.filter(project=project).count() == 1
