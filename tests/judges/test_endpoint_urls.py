"""The operator's declared endpoints are shown to leads by name and models only; their base
URLs (which can name internal hosts) to the project's owners alone (issue 34)."""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Role
from api.tokens import token_create
from tests.factories import JudgeFactory, MembershipFactory, ProjectFactory

pytestmark = pytest.mark.django_db
URL = "http://10.20.30.40:8000/v1"


@pytest.fixture
def world(llm_endpoints):
    llm_endpoints({"name": "internal", "base_url": URL, "models": ["m1"]})
    project = ProjectFactory(slug="shop")
    members = {
        role: MembershipFactory(project=project, role=role).user for role in (Role.OWNER, Role.LEAD)
    }
    judge = JudgeFactory(project=project, backend="openai", model="m1", endpoint="internal")
    return project, members, judge


def page(user, name: str, *args, method="get", data=None):
    client = Client()
    client.force_login(user)
    response = getattr(client, method)(reverse(f"judges:{name}", args=["shop", *args]), data or {})
    return response.status_code, response.content.decode()


def test_a_lead_sees_the_endpoints_names_and_models_but_not_their_urls(world):
    _, members, judge = world
    lead = members[Role.LEAD]
    status, listing = page(lead, "judge-list")
    assert status == 200
    assert "internal (models m1)" in listing
    assert "10.20.30.40" not in listing
    status, detail = page(lead, "judge-detail", judge.pk)
    assert status == 200
    assert "internal (models m1)" in detail
    assert "10.20.30.40" not in detail
    # A refused form comes back without them too.
    status, refused = page(lead, "judge-create", method="post", data={"name": ""})
    assert status == 400
    assert "10.20.30.40" not in refused


def test_an_owner_sees_where_each_endpoint_points(world):
    _, members, judge = world
    owner = members[Role.OWNER]
    assert f"internal ({URL}; models m1)" in page(owner, "judge-list")[1]
    assert f"internal ({URL}; models m1)" in page(owner, "judge-detail", judge.pk)[1]


def test_the_api_names_a_judges_endpoint_without_its_url(world, client):
    _, members, _ = world
    token = token_create(user=members[Role.LEAD], name="t").secret
    response = client.get(
        "/api/v1/projects/shop/judges", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200
    assert response.json()[0]["endpoint"] == "internal"
    assert "10.20.30.40" not in response.content.decode()
