"""Issue 19's mends: the port make run prints, a demo analyst with claims left, the favicon,
no internal module names in the pages, styled 403/404 pages that name the role needed."""

import io
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.models import Project
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

ROOT = Path(__file__).resolve().parent.parent


def test_make_run_hands_its_port_to_the_demo_banner():
    dry = subprocess.run(
        ["make", "-n", "run", "PORT=8111"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "manage.py demo_load --address 127.0.0.1:8111" in dry
    assert "runserver 127.0.0.1:8111" in dry


@pytest.mark.django_db
def test_the_demo_prints_the_port_given_and_leaves_its_analysts_claims_to_label(
    client, django_capture_on_commit_callbacks
):
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_load", "--address", "0.0.0.0:8111", stdout=out)
    printed = out.getvalue()
    assert "Demo ready at http://127.0.0.1:8111/p/demo/" in printed
    assert "http://127.0.0.1:8111/p/demo-practice/label/" in printed
    assert ":8000" not in printed

    practice = Project.objects.get(slug="demo-practice")
    assert practice.claims.exists()
    assert not practice.claims.filter(labels__isnull=False).exists()
    ana = practice.memberships.get(user__username="ana").user
    client.force_login(ana)
    screen = client.get(reverse("annotate:label-next", args=["demo-practice"])).content.decode()
    assert 'data-claim-id="' in screen
    assert "Your queue is empty" not in screen
    again = io.StringIO()
    call_command("demo_load", stdout=again)  # idempotent
    assert Project.objects.filter(slug__startswith="demo").count() == 2


@pytest.mark.django_db
def test_a_page_above_ones_role_is_a_styled_404_naming_the_role_with_navigation(client):
    project = ProjectFactory()
    analyst = UserFactory()
    MembershipFactory(project=project, user=analyst)
    client.force_login(analyst)
    response = client.get(reverse("metrics:dashboard", args=[project.slug]))
    html = response.content.decode()
    assert response.status_code == 404
    assert "This page needs the role of lead or an owner in its project" in html
    assert 'rel="stylesheet"' in html  # the site's page, not Django's bare "Not Found"
    assert f'href="{reverse("annotate:project-list")}">Your projects</a>' in html
    assert project.name not in html  # nothing about the project itself
    owner_only = client.get(reverse("annotate:settings", args=[project.slug])).content.decode()
    assert "This page needs the role of owner in its project" in owner_only
    outsider = UserFactory()
    client.force_login(outsider)
    other = client.get(reverse("annotate:label-next", args=[project.slug])).content.decode()
    assert "This page is for members of its project" in other
    nowhere = client.get("/no/such/page/").content.decode()
    assert "There is no page at this address" in nowhere


@pytest.mark.django_db
def test_the_favicon_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"].endswith("favicon.svg")
    client.force_login(UserFactory())
    page = client.get(reverse("annotate:project-list")).content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in page
    assert (ROOT / "static" / "favicon.svg").read_text().startswith("<svg")
