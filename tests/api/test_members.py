"""Adding a member by name tells nobody which usernames exist (issue 34): the API's PUT and
the settings page's members form answer the same for a user given the role, a deactivated
user (who cannot be added) and a name nobody has."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from annotate.models import Membership, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def put_member(api_world, username: str):
    response = api_world.client("owner").send(
        "PUT", f"/api/v1/projects/shop/members/{username}", {"role": "lead"}
    )
    body = response.json()
    return response.status_code, {
        **body,
        "username": body.get("username", "").replace(username, "NAME"),
    }


def test_the_api_answers_the_same_for_an_existing_a_deactivated_and_an_unknown_name(api_world):
    UserFactory(username="ana-existing")
    UserFactory(username="bo-deactivated", is_active=False)
    answers = {
        name: put_member(api_world, name)
        for name in ("ana-existing", "bo-deactivated", "nobody-at-all")
    }
    expected = (
        200,
        {
            "username": "NAME",
            "role": "lead",
            "detail": "If a user called {name} exists, they are now a lead of this project.",
        },
    )
    for name, (status, body) in answers.items():
        assert (status, {**body, "detail": body["detail"].replace(name, "{name}")}) == expected
    # Only the existing, active user was added; nothing was created for the others.
    members = dict(
        Membership.objects.filter(project=api_world.project).values_list("user__username", "role")
    )
    assert members["ana-existing"] == Role.LEAD
    assert "bo-deactivated" not in members
    assert not get_user_model().objects.filter(username="nobody-at-all").exists()


def test_the_settings_page_answers_the_same_for_a_deactivated_user(api_world):
    UserFactory(username="bo-deactivated", is_active=False)
    said = {}
    for name in ("analyst", "bo-deactivated", "nobody-at-all"):
        client = Client()  # a fresh session: no message left over from the previous post
        client.force_login(api_world.people["owner"])
        response = client.post(
            reverse("annotate:member-set", args=["shop"]), {"username": name, "role": "lead"}
        )
        assert response.status_code == 302
        said[name] = [str(m).replace(name, "NAME") for m in get_messages(response.wsgi_request)]
    assert (
        said["analyst"]
        == said["bo-deactivated"]
        == said["nobody-at-all"]
        == ["If a user called NAME exists, they are now a lead of this project."]
    )
    assert not Membership.objects.filter(user__username="bo-deactivated").exists()
    assert Membership.objects.get(project=api_world.project, user__username="analyst").role == (
        Role.LEAD
    )
