"""The site's own pages: a page above one's role is a styled 404 naming the role; the favicon."""

from pathlib import Path

import pytest
from django.urls import reverse

from tests.factories import MembershipFactory, ProjectFactory, UserFactory

ROOT = Path(__file__).resolve().parent.parent


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
