"""Report snapshots (metrics/services/snapshots.py): requested, queued by id, computed with their
progress, failed with the message when the broker is down."""

import pytest
from kombu.exceptions import OperationalError

from annotate.models import Gold
from metrics.models import ReportSnapshot
from metrics.services import snapshots
from tests.factories import AnswerFactory, ClaimFactory, ProjectFactory

# --- metrics.services.snapshots: the broker down fails the snapshot with its message --------


@pytest.mark.django_db
def test_enqueue_with_the_broker_down_fails_the_pending_snapshot_with_the_message(monkeypatch):
    def broker_down(snapshot_id):
        raise OperationalError("connection refused")

    monkeypatch.setattr(snapshots, "_enqueue", broker_down)
    snapshot = ReportSnapshot.objects.create(project=ProjectFactory())
    snapshots._enqueue_or_fail(snapshot.pk)
    snapshot.refresh_from_db()
    assert snapshot.status == ReportSnapshot.Status.FAILED
    assert snapshot.error == (
        "the task queue (Redis) could not be reached; press Recompute once it is back"
    )


S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


@pytest.mark.django_db
def test_snapshot_requested_without_a_broker_is_computed_in_process(
    django_capture_on_commit_callbacks,
):
    """snapshots `_enqueue` `_1` (`snapshot_compute(snapshot_id=None)` when tasks run eagerly:
    the requested snapshot never computed). Three claims, two with gold (S, N): once the
    transaction commits the snapshot is done and its report counts them (3 claims, 2 with gold,
    half of them supported)."""
    from metrics.models import ReportSnapshot
    from metrics.services import snapshot_request

    project = ProjectFactory()
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(3)]
    Gold.objects.create(claim=claims[0], verdict=S, source="unanimous")
    Gold.objects.create(claim=claims[1], verdict=N, source="unanimous")
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = snapshot_request(project=project)
    snapshot.refresh_from_db()
    assert snapshot.status == ReportSnapshot.Status.DONE
    claims_block = snapshot.data["claims"]
    assert (claims_block["in_project"], claims_block["total"], claims_block["without_gold"]) == (
        3,
        2,
        1,
    )
    assert snapshot.data["faithfulness"]["pooled"]["value"] == pytest.approx(0.5)


# --- snapshots: the queue is handed the snapshot's id -----------------------------------------


def test_enqueue_eager_computes_the_snapshot_by_its_id(monkeypatch):
    from metrics.services import snapshots

    calls = []
    monkeypatch.setitem(snapshots.current_app.conf, "task_always_eager", True)
    monkeypatch.setattr(snapshots, "snapshot_compute", lambda **kw: calls.append(kw))
    monkeypatch.setattr(
        snapshots.current_app, "send_task", lambda *a, **kw: pytest.fail("sent in eager mode")
    )
    snapshots._enqueue(41)
    assert calls == [{"snapshot_id": 41}]


def test_enqueue_with_a_broker_sends_the_task_by_name_with_the_id(monkeypatch):
    from metrics.services import snapshots

    sent = []
    monkeypatch.setitem(snapshots.current_app.conf, "task_always_eager", False)
    monkeypatch.setattr(snapshots.current_app, "send_task", lambda *a, **kw: sent.append((a, kw)))
    monkeypatch.setattr(snapshots, "snapshot_compute", lambda **kw: pytest.fail("computed"))
    snapshots._enqueue(42)
    assert sent == [(("metrics.tasks.compute_report",), {"args": (42,)})]
    assert snapshots.COMPUTE_REPORT_TASK == "metrics.tasks.compute_report"


@pytest.mark.django_db
def test_enqueue_or_fail_with_the_broker_down_fails_only_that_pending_snapshot(monkeypatch):
    from kombu.exceptions import OperationalError

    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    pending = ReportSnapshot.objects.create(project=project)
    other = ReportSnapshot.objects.create(project=project)
    done = ReportSnapshot.objects.create(project=project, status=ReportSnapshot.Status.DONE)

    def down(snapshot_id):
        raise OperationalError("no broker")

    monkeypatch.setattr(snapshots, "_enqueue", down)
    snapshots._enqueue_or_fail(pending.pk)
    snapshots._enqueue_or_fail(done.pk)
    pending.refresh_from_db()
    other.refresh_from_db()
    done.refresh_from_db()
    assert (pending.status, pending.error) == (
        ReportSnapshot.Status.FAILED,
        "the task queue (Redis) could not be reached; press Recompute once it is back",
    )
    assert (other.status, other.error) == (ReportSnapshot.Status.PENDING, "")
    assert (done.status, done.error) == (ReportSnapshot.Status.DONE, "")
    ids = []
    monkeypatch.setattr(snapshots, "_enqueue", ids.append)
    snapshots._enqueue_or_fail(other.pk)
    assert ids == [other.pk]


@pytest.mark.django_db
def test_snapshot_compute_progress_clipped_and_rounded_then_done(monkeypatch):
    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    snap = ReportSnapshot.objects.create(project=project, error="old")
    seen = []

    from metrics.services.report import Report

    def fake_report(*, project, judge, progress, system, all_systems):
        row = ReportSnapshot.objects.get(pk=snap.pk)
        seen.append((row.status, row.progress, row.stage, row.error))
        for fraction, stage in ((1.7, "x" * 250), (-0.3, "neg"), (0.12345, "mid")):
            progress(fraction, stage)
            row = ReportSnapshot.objects.get(pk=snap.pk)
            seen.append((row.progress, row.stage))
        seen.append((project.pk, judge, system, all_systems))
        return Report({"labels_at_compute": 17, "k": 1}, [{"n": 2}])

    monkeypatch.setattr(snapshots, "report_build", fake_report)
    out = snapshots.snapshot_compute(snapshot_id=snap.pk)
    assert seen == [
        (ReportSnapshot.Status.RUNNING, 0.0, "starting", ""),
        (1.0, "x" * 200),
        (0.0, "neg"),
        (0.123, "mid"),
        (project.pk, None, None, False),
    ]
    assert (out.status, out.progress, out.stage, out.data, out.labels_at_compute) == (
        ReportSnapshot.Status.DONE,
        1.0,
        "done",
        {"labels_at_compute": 17, "k": 1},
        17,
    )
    assert out.crc_inputs == [{"n": 2}]  # beside the report, not in it
    assert out.computed_at is not None
    # done: left alone (the report is not computed again)
    monkeypatch.setattr(snapshots, "report_build", lambda **kw: pytest.fail("recomputed"))
    assert snapshots.snapshot_compute(snapshot_id=snap.pk).pk == snap.pk
    assert snapshots.snapshot_compute(snapshot_id=snap.pk + 1000) is None


@pytest.mark.django_db
def test_snapshot_compute_failure_names_the_error(monkeypatch):
    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    snap = ReportSnapshot.objects.create(project=ProjectFactory())

    def boom(**kw):
        raise ValueError("no claims at all")

    monkeypatch.setattr(snapshots, "report_build", boom)
    out = snapshots.snapshot_compute(snapshot_id=snap.pk)
    assert (out.status, out.error) == (ReportSnapshot.Status.FAILED, "ValueError: no claims at all")


@pytest.mark.django_db
def test_snapshot_request_reuses_a_fresh_pending_row_and_reenqueues_a_stale_one(
    monkeypatch, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    from metrics.models import ReportSnapshot
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    ids = []
    monkeypatch.setattr(snapshots, "_enqueue", ids.append)
    with django_capture_on_commit_callbacks(execute=True):
        first = snapshots.snapshot_request(project=project)
    assert ids == [first.pk]
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = snapshots.snapshot_request(project=project)
    assert again.pk == first.pk
    assert callbacks == []
    assert ids == [first.pk]
    ReportSnapshot.objects.filter(pk=first.pk).update(
        created_at=timezone.now() - timedelta(minutes=11)
    )
    with django_capture_on_commit_callbacks(execute=True):
        stale = snapshots.snapshot_request(project=project)
    assert stale.pk == first.pk
    assert ids == [first.pk, first.pk]
    assert ReportSnapshot.objects.filter(project=project).count() == 1
    # another judge scope is another row
    with django_capture_on_commit_callbacks(execute=True):
        pooled = snapshots.snapshot_request(project=project, all_systems=True)
    assert pooled.pk != first.pk
    assert pooled.all_systems is True
    assert ids[-1] == pooled.pk
    assert timedelta(minutes=10) == snapshots.SNAPSHOT_STALE_AFTER


@pytest.mark.django_db
def test_snapshot_request_refuses_another_projects_system():
    from annotate.models import System
    from metrics.services import snapshots
    from tests.factories import ProjectFactory

    project, elsewhere = ProjectFactory(), ProjectFactory()
    system = System.objects.create(project=elsewhere, name="rag", version="1")
    with pytest.raises(ValueError, match=r"^the system must belong to the project$") as err:
        snapshots.snapshot_request(project=project, system=system)
    assert str(err.value) == "the system must belong to the project"
