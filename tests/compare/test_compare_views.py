"""The comparison page: leads only, the demo's two systems side by side."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotate.models import Membership, Role, System

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(demo_project):
    return demo_project


def client_for(username):
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client


def test_lead_sees_the_difference_and_the_worst_regressed_question(demo):
    page = client_for("lead").get(reverse("metrics:compare", args=["demo"]))
    assert page.status_code == 200
    html = page.content.decode()
    # The demo: B fixes the refund deadline and the dose, and invents a €5 minimum fee.
    assert "assistant@2024-07 (B) " in html
    assert "on 9 shared questions" in html
    assert "B − A faithfulness:" in html
    assert "Questions B got worse on (1)" in html
    assert "What does it cost to withdraw cash abroad with the Standard account?" in html
    assert "The minimum fee is €5." in html
    assert "The minimum fee is €2.50." in html
    assert 'class="side side-a"' in html
    assert 'class="side side-b"' in html


def test_analysts_may_not_open_the_comparison_as_the_dashboard(demo):
    ana = client_for("ana")
    dashboard = ana.get(reverse("metrics:dashboard", args=["demo"])).status_code
    assert dashboard in (403, 404)
    assert ana.get(reverse("metrics:compare", args=["demo"])).status_code == dashboard


def test_systems_and_judge_are_chosen_by_parameters(demo):
    a, b = System.objects.filter(project=demo).order_by("id")
    url = reverse("metrics:compare", args=["demo"])
    swapped = client_for("lead").get(url, {"a": b.pk, "b": a.pk, "judge": "none"})
    assert swapped.status_code == 200
    html = swapped.content.decode()
    assert "assistant@2024-06 (B)" in html
    assert client_for("lead").get(url, {"a": 999999}).status_code == 404
    same = client_for("lead").get(url, {"a": a.pk, "b": a.pk})
    assert "Choose two different systems." in same.content.decode()


def test_a_project_with_one_system_says_how_to_add_another():
    from tests.factories import ProjectFactory, UserFactory

    project = ProjectFactory(slug="solo")
    user = UserFactory(username="solo-lead")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client()
    client.force_login(user)
    html = client.get(reverse("metrics:compare", args=["solo"])).content.decode()
    assert "This project has 0 systems." in html


def test_the_report_of_a_two_system_project_is_per_system(demo):
    from metrics.services import report_compute
    from tests.compare.builders import answer_record, import_records
    from tests.factories import ProjectFactory

    a, b = System.objects.filter(project=demo).order_by("id")
    first = report_compute(project=demo)
    assert first["system"]["version"] == "2024-06"
    assert [s["version"] for s in first["systems"]] == ["2024-06", "2024-07"]
    assert report_compute(project=demo, system=a)["claims"] == first["claims"]
    second = report_compute(project=demo, system=b)
    # B: the refund deadline and the dose now supported, the €5 minimum fee contradicted.
    assert second["claims"]["SUPPORTED"] == first["claims"]["SUPPORTED"] + 1
    assert second["claims"]["CONTRADICTED"] == first["claims"]["CONTRADICTED"] - 1
    # One system: no system keys, every answer counts, as before systems existed.
    solo = ProjectFactory()
    import_records(solo, [answer_record("q1", "only", [("SUPPORTED", None)])])
    report = report_compute(project=solo)
    assert "system" not in report
    assert "systems" not in report


def test_the_page_shows_the_judge_per_system(demo):
    html = client_for("lead").get(reverse("metrics:compare", args=["demo"])).content.decode()
    assert "The judge on each system" in html
    assert "assistant@2024-06" in html
    assert 'class="judge-equality"' in html
    assert "Faithfulness across versions" in html
    assert html.count('class="trend-point"') == 2


def test_the_dashboard_says_which_system_it_reports(demo):
    from judges.models import Judge
    from metrics.services import snapshot_compute, snapshot_create

    snapshot = snapshot_create(project=demo, judge=Judge.objects.get(project=demo))
    snapshot_compute(snapshot_id=snapshot.pk)
    first = System.objects.filter(project=demo).order_by("id").first()
    html = (
        client_for("lead")
        .get(reverse("metrics:dashboard", args=["demo"]), {"system": first.pk})
        .content.decode()
    )
    assert "This report covers the answers of system <strong>assistant@2024-06</strong>" in html
    assert "one of the project's 2 systems" in html
    pooled = client_for("lead").get(reverse("metrics:dashboard", args=["demo"])).content.decode()
    assert "This report covers the answers of all the project's 2 systems pooled" in pooled
    assert reverse("metrics:compare", args=["demo"]) in html
