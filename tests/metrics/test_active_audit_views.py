"""The active-audit panel on the dashboard and the project page, and the lead's routing action
(issue 14): routing sets exactly the claims at or above the certified threshold, stopping
clears them, only leads may do either, POST with CSRF only."""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Claim, Project, Role
from metrics.services import snapshot_compute, snapshot_create
from tests.factories import PASSWORD, MembershipFactory, UserFactory
from tests.metrics.test_active_audit import build_confident_judge_project, expected_threshold

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project, judge, rows = build_confident_judge_project(target_half_width=0.05)
    lead = UserFactory(username="lead-aa")
    analyst = UserFactory(username="analyst-aa")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    MembershipFactory(project=project, user=analyst, role=Role.ANALYST)
    return {"project": project, "judge": judge, "rows": rows}


@pytest.fixture
def computed(world):
    """The world with its report computed (what the dashboard and project page read)."""
    snapshot = snapshot_create(project=world["project"], judge=world["judge"])
    snapshot_compute(snapshot_id=snapshot.pk)
    snapshot.refresh_from_db()
    return {**world, "snapshot": snapshot}


def _client(username):
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def _route_url(project):
    return reverse("metrics:selective-routing", args=[project.slug])


def test_lead_routes_exactly_the_claims_at_or_above_the_threshold_and_stops(world):
    project, judge, rows = world["project"], world["judge"], world["rows"]
    client = _client("lead-aa")
    response = client.post(
        _route_url(project), {"action": "route", "judge": judge.pk, "target": 0.9, "delta": 0.1}
    )
    assert response.status_code == 302
    routed = set(
        Claim.objects.filter(project=project, routed_to_judge=True).values_list("pk", flat=True)
    )
    threshold = expected_threshold(rows, 0.9, 0.1)
    expected = {claim.pk for claim, c, _g, _j in rows if c >= threshold}
    assert routed == expected
    assert 0 < len(routed) < len(rows)
    assert Project.objects.get(pk=project.pk).selective_judging is True

    response = client.post(_route_url(project), {"action": "stop", "judge": judge.pk})
    assert response.status_code == 302
    assert not Claim.objects.filter(project=project, routed_to_judge=True).exists()
    assert Project.objects.get(pk=project.pk).selective_judging is False


def test_a_looser_target_routes_more_claims_each_the_certified_set(world):
    project, judge, rows = world["project"], world["judge"], world["rows"]
    client = _client("lead-aa")
    routed = {}
    for target in (0.9, 0.8):
        client.post(_route_url(project), {"action": "route", "judge": judge.pk, "target": target})
        threshold = expected_threshold(rows, target, 0.1)
        assert threshold is not None
        expected = {claim.pk for claim, c, _g, _j in rows if c >= threshold}
        routed[target] = set(
            Claim.objects.filter(project=project, routed_to_judge=True).values_list("pk", flat=True)
        )
        assert routed[target] == expected
    assert routed[0.9] <= routed[0.8]
    assert len(routed[0.8]) > len(routed[0.9])


def test_an_impossible_target_routes_nothing_and_says_why(world):
    project, judge = world["project"], world["judge"]
    client = _client("lead-aa")
    response = client.post(
        _route_url(project),
        {"action": "route", "judge": judge.pk, "target": 0.999, "delta": 0.001},
        follow=True,
    )
    assert "Nothing routed" in response.content.decode()
    assert not Claim.objects.filter(project=project, routed_to_judge=True).exists()
    assert Project.objects.get(pk=project.pk).selective_judging is False


def test_bad_input_names_the_field_and_writes_nothing(world):
    project, judge = world["project"], world["judge"]
    response = _client("lead-aa").post(
        _route_url(project), {"action": "route", "judge": judge.pk, "target": "2"}, follow=True
    )
    assert "target" in response.content.decode()
    assert not Claim.objects.filter(project=project, routed_to_judge=True).exists()


def test_only_leads_may_route(world):
    """An analyst gets the house's role refusal (404, as every lead page: the page never says
    whether the project exists) and nothing changes."""
    project, judge = world["project"], world["judge"]
    response = _client("analyst-aa").post(
        _route_url(project), {"action": "route", "judge": judge.pk}
    )
    assert response.status_code in (403, 404)
    assert not Claim.objects.filter(project=project, routed_to_judge=True).exists()
    assert Project.objects.get(pk=project.pk).selective_judging is False


def test_routing_needs_post_and_csrf(world):
    project, judge = world["project"], world["judge"]
    client = _client("lead-aa")
    assert client.get(_route_url(project)).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.login(username="lead-aa", password=PASSWORD)
    response = strict.post(_route_url(project), {"action": "route", "judge": judge.pk})
    assert response.status_code == 403
    assert not Claim.objects.filter(project=project, routed_to_judge=True).exists()


def test_dashboard_shows_the_panel_with_both_forecasts_progress_and_the_action(computed):
    project, judge = computed["project"], computed["judge"]
    html = (
        _client("lead-aa")
        .get(reverse("metrics:dashboard", args=[project.slug]), {"judge": judge.pk})
        .content.decode()
    )
    block = computed["snapshot"].data["active_audit"]
    assert 'id="active-audit-panel"' in html
    assert 'data-forecast="uniform"' in html
    assert "<progress" in html
    assert 'aria-describedby="active-progress-text"' in html
    more = block["forecast"]["uniform"]["labels_more"]
    assert f"about {more} more" in html
    assert "Route claims" in html
    assert f"{100 * block['selective']['share_of_claims']:.0f}%" in html


def test_project_page_shows_the_forecast_to_analysts_without_the_action(computed):
    project = computed["project"]
    url = reverse("annotate:project-detail", args=[project.slug])
    lead_html = _client("lead-aa").get(url).content.decode()
    analyst_html = _client("analyst-aa").get(url).content.decode()
    for html in (lead_html, analyst_html):
        assert 'id="active-audit-panel"' in html
        assert "<progress" in html
    assert "Route claims" in lead_html
    assert "Route claims" not in analyst_html
    assert 'data-testid="active-headline"' not in analyst_html  # analysts label blind


def test_project_page_without_a_report_shows_no_panel(client):
    project, _judge, _rows = build_confident_judge_project(n_gold=12, n_rest=3)
    lead = UserFactory(username="lead-np")
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    html = (
        _client("lead-np")
        .get(reverse("annotate:project-detail", args=[project.slug]))
        .content.decode()
    )
    assert "active-audit-panel" not in html
