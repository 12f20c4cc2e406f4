"""Time per label (issue 32): the labelling screen sends the seconds it measured with each
save; the server keeps them (capped, a bad measure never refuses the label), a claim's time is
the sum over its saves, and the dashboard reads the team's pace as analyst time."""

import pytest
from django.urls import reverse

from annotate.models import LABEL_SECONDS_MAX, Label, LabelTime, Role
from annotate.selectors import label_pace
from metrics.format import duration
from metrics.services import snapshot_compute, snapshot_create
from metrics.services.summary import labels_time_text
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _world(claims=3):
    # two analysts a claim: one analyst's save reserving the next claim never holds it from
    # the other
    project = ProjectFactory(quote_required=False, analysts_per_claim=2)
    answer = AnswerFactory(project=project)
    PassageFactory(answer=answer, rank=1, text="Refunds take 14 days.")
    made = [
        ClaimFactory(answer=answer, text=f"claim {i}", labels_required=2) for i in range(claims)
    ]
    return project, made


def _save(client, project, claim, seconds, verdict="NOT_IN_PILE"):
    url = reverse("annotate:label-save", args=[project.slug, claim.pk])
    return client.post(url, {"verdict": verdict, "seconds": seconds}, **HTMX)


def test_seconds_are_kept_capped_and_a_bad_measure_loses_only_the_timing(client):
    project, (a, b, c) = _world()
    analyst = UserFactory()
    MembershipFactory(project=project, user=analyst)
    client.force_login(analyst)
    assert _save(client, project, a, "42.5").status_code == 200
    assert _save(client, project, b, "not a number").status_code == 200
    assert _save(client, project, c, "99999").status_code == 200
    assert Label.objects.filter(annotator=analyst).count() == 3  # every label saved
    times = dict(LabelTime.objects.values_list("claim_id", "seconds"))
    assert times == {a.pk: 42.5, c.pk: LABEL_SECONDS_MAX}
    for bad in ("-3", "nan", "inf", ""):
        assert _save(client, project, b, bad).status_code == 200
    assert not LabelTime.objects.filter(claim=b).exists()


def test_pace_sums_a_claims_saves_and_takes_medians_by_hand(client):
    project, claims = _world(claims=5)
    ana, bea = UserFactory(username="ana"), UserFactory(username="bea")
    for user in (ana, bea):
        MembershipFactory(project=project, user=user)
    client.force_login(ana)
    for claim, seconds in zip(claims[:3], ("10", "20", "50"), strict=True):
        _save(client, project, claim, seconds)
    _save(client, project, claims[2], "10", verdict="NOT_IN_PILE")  # an edit adds: 60
    client.force_login(bea)
    for claim, seconds in zip(claims[3:], ("30", "50"), strict=True):
        _save(client, project, claim, seconds)
    pace = label_pace(project=project)
    assert pace["analysts"] == [
        {"analyst": "ana", "labels": 3, "median_seconds": 20.0},  # 10, 20, 60
        {"analyst": "bea", "labels": 2, "median_seconds": 40.0},  # 30, 50
    ]
    assert pace["timed_labels"] == 5
    assert pace["median_seconds"] == 30.0  # 10, 20, 30, 50, 60


def test_the_forecast_in_analyst_time_by_hand():
    pace = {"timed_labels": 120, "median_seconds": 100.0}
    # 90 labels × 100 s = 9,000 s = 2.5 hours
    assert labels_time_text(90, pace) == (
        "about 90 labels ≈ 2.5 hours of analyst time at this team's pace "
        "(median 1 min 40 s a label over 120 timed labels)"
    )
    assert labels_time_text(90, {"timed_labels": 4, "median_seconds": 100.0}) is None
    assert labels_time_text(None, pace) is None
    assert duration(59.4) == "59 s"
    assert duration(59.6) == "1 min"
    assert duration(3 * 3600 + 1) == "3.0 hours"


def test_the_dashboard_shows_each_analysts_pace(client):
    project, claims = _world(claims=2)
    ana = UserFactory(username="ana")
    MembershipFactory(project=project, user=ana)
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    client.force_login(ana)
    _save(client, project, claims[0], "95")
    snapshot_compute(snapshot_id=snapshot_create(project=project).pk)
    client.force_login(lead)
    page = client.get(reverse("metrics:dashboard", args=[project.slug])).content.decode()
    table = page[page.index('data-testid="analyst-pace"') :]
    table = table[: table.index("</table>")]
    assert "<td>ana</td>" in table
    assert "1 min 35 s" in table
