"""A Recompute of a project past FAITHAUDIT_REPORT_MAX_CLAIMS fails at once, saying why and
where the figures are (the headline at scale), instead of a worker killed for the memory the
full report would take (850 MB per million claims)."""

import pytest
from django.urls import reverse

from annotate.models import Claim, Label, Role, System, Verdict
from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from metrics.services import snapshots as snapshots_module
from metrics.services.rollups import rollups_read
from tests.factories import (
    PASSWORD,
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def _project():
    """Six claims: three of system rag@1's answers, three of answers without a system."""
    project = ProjectFactory()
    system = System.objects.create(project=project, name="rag", version="1")
    for owner in (system, None):
        answer = AnswerFactory(project=project, system=owner)
        for _ in range(3):
            ClaimFactory(answer=answer)
    return project, system


def _computed(project, system=None) -> ReportSnapshot:
    snapshot = snapshot_create(project=project, system=system)
    return snapshot_compute(snapshot_id=snapshot.pk)


def test_a_project_past_the_cap_fails_at_once_saying_why(settings):
    settings.FAITHAUDIT_REPORT_MAX_CLAIMS = 5
    project, _ = _project()
    snapshot = _computed(project)
    assert snapshot.status == ReportSnapshot.Status.FAILED
    assert snapshot.error == (
        "the full report reads every claim into memory, 6 here (under 0.1 GB), and this server "
        'computes it up to 5 claims (FAITHAUDIT_REPORT_MAX_CLAIMS). "Headline at scale" shows '
        "the faithfulness, the judge's PPI++, calibration and CRC from rollups, read in memory "
        "bounded by the gold."
    )
    assert snapshot.data in ({}, None)
    assert snapshot.computed_at is None


def test_the_message_says_the_memory_at_that_size(settings, monkeypatch):
    settings.FAITHAUDIT_REPORT_MAX_CLAIMS = 5
    project, _ = _project()
    # As if each of the 6 claims stood for 10M / 6: 850 bytes a claim at 10M is 8.5 GB.
    monkeypatch.setattr(snapshots_module, "REPORT_BYTES_PER_CLAIM", 850 * 10_000_000 / 6)
    message = snapshots_module._too_large(snapshot_create(project=project))
    assert "6 here (about 8.5 GB)" in message


def test_gold_drawn_by_the_active_queue_is_not_sent_to_a_headline_that_refuses_it(settings):
    # The rollups do not weight 1/π yet (rollups_read refuses): the message must not promise
    # the lead a figure there, computed on raw gold.
    settings.FAITHAUDIT_REPORT_MAX_CLAIMS = 5
    project, _ = _project()
    claim = Claim.objects.filter(project=project).first()
    Label.objects.create(
        claim=claim, annotator=UserFactory(), verdict=Verdict.NOT_IN_PILE, design="active"
    )
    error = _computed(project).error
    assert error.startswith("the full report reads every claim into memory, 6 here")
    assert '"Headline at scale" does not weight gold drawn by the active queue yet' in error
    assert "shows the faithfulness" not in error
    with pytest.raises(ValueError, match="do not weight gold drawn by the active queue"):
        rollups_read(project=project)


def test_at_the_cap_or_without_one_the_report_is_computed(settings):
    project, _ = _project()
    for cap in (6, 0):
        settings.FAITHAUDIT_REPORT_MAX_CLAIMS = cap
        snapshot = _computed(project)
        assert snapshot.status == ReportSnapshot.Status.DONE
        assert snapshot.data["claims"]["in_project"] == 6


def test_a_systems_report_counts_that_systems_claims(settings):
    settings.FAITHAUDIT_REPORT_MAX_CLAIMS = 5
    project, system = _project()
    snapshot = _computed(project, system)
    assert snapshot.status == ReportSnapshot.Status.DONE
    assert snapshot.data["claims"]["in_project"] == 3
    assert _computed(project).status == ReportSnapshot.Status.FAILED


def test_the_dashboard_shows_the_lead_why(client, settings):
    settings.FAITHAUDIT_REPORT_MAX_CLAIMS = 5
    project, _ = _project()
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    client.login(username=lead.username, password=PASSWORD)
    _computed(project)
    html = client.get(reverse("metrics:dashboard", args=[project.slug])).content.decode()
    assert "The last recompute failed: the full report reads every claim into memory" in html
    assert "FAITHAUDIT_REPORT_MAX_CLAIMS" in html
    assert reverse("metrics:rollups", args=[project.slug]) in html  # the page it points to
