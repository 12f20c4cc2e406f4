"""A project's description and guidelines are held to the operator's limits on every path that
writes them (issue 34: a lead's 5 MB guidelines made every labelling page 13.6 MB): the
settings and new-project forms, the API, the services any other caller uses, and the admin.
Each refusal names the field and the limit, and writes nothing."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotate.models import Project, Role
from annotate.services.projects import project_create, project_settings_update
from api.tokens import token_create
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

SETTINGS_POST = {
    "name": "Refunds",
    "analysts_per_claim": 1,
    "double_labelled_share": 0,
    "queue_order": "answer",
}


@pytest.fixture
def small_limits(settings):
    """Limits small enough to write out: 40 characters of description, 60 of guidelines."""
    settings.FAITHAUDIT_MAX_DESCRIPTION_CHARS = 40
    settings.FAITHAUDIT_MAX_GUIDELINES_CHARS = 60
    settings.FAITHAUDIT_PROJECT_CREATORS = "any"


def test_the_defaults_are_100_000_characters_of_guidelines_and_5_000_of_description():
    from django.conf import settings

    assert settings.FAITHAUDIT_MAX_GUIDELINES_CHARS == 100_000
    assert settings.FAITHAUDIT_MAX_DESCRIPTION_CHARS == 5_000


def test_the_settings_page_refuses_guidelines_one_character_too_long(client, small_limits):
    owner = MembershipFactory(role=Role.OWNER, project__guidelines="Quote one sentence.")
    client.force_login(owner.user)
    url = reverse("annotate:settings", args=[owner.project.slug])
    response = client.post(url, {**SETTINGS_POST, "guidelines": "g" * 61})
    assert response.status_code == 200
    page = response.content.decode()
    assert "The guidelines are 61 characters long; at most 60 characters are allowed" in page
    assert "FAITHAUDIT_MAX_GUIDELINES_CHARS" in page
    project = Project.objects.get(pk=owner.project.pk)
    assert (project.guidelines, project.guidelines_version, project.name) == (
        "Quote one sentence.",
        1,
        owner.project.name,
    )
    # Exactly at the limit is saved, and the version moves.
    assert client.post(url, {**SETTINGS_POST, "guidelines": "g" * 60}).status_code == 302
    project.refresh_from_db()
    assert (len(project.guidelines), project.guidelines_version) == (60, 2)


def test_the_settings_page_refuses_a_description_too_long(client, small_limits):
    owner = MembershipFactory(role=Role.OWNER, project__description="Shop answers.")
    client.force_login(owner.user)
    url = reverse("annotate:settings", args=[owner.project.slug])
    response = client.post(url, {**SETTINGS_POST, "description": "d" * 41})
    assert response.status_code == 200
    assert (
        "The project&#x27;s description is 41 characters long; at most 40 characters"
        in response.content.decode()
    )
    assert Project.objects.get(pk=owner.project.pk).description == "Shop answers."


def test_the_new_project_page_refuses_a_description_too_long(client, small_limits):
    client.force_login(UserFactory())
    data = {"name": "Refunds", "slug": "refunds", "description": "d" * 41}
    response = client.post(reverse("annotate:project-new"), data)
    assert response.status_code == 200
    assert "41 characters long; at most 40 characters are allowed" in response.content.decode()
    assert not Project.objects.filter(slug="refunds").exists()


def test_the_api_refuses_a_description_too_long_naming_the_field(client, small_limits):
    token = token_create(user=UserFactory(), name="t").secret
    body = {"slug": "refunds", "name": "Refunds", "description": "d" * 41}
    response = client.post(
        "/api/v1/projects",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 422
    problem = response.json()
    assert problem["errors"][0]["field"] == "description"
    assert "41 characters long; at most 40 characters are allowed" in problem["detail"]
    assert not Project.objects.filter(slug="refunds").exists()
    body["description"] = "d" * 40
    ok = client.post(
        "/api/v1/projects",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert ok.status_code == 201


def test_the_services_refuse_for_every_other_caller(small_limits):
    owner = UserFactory()
    with pytest.raises(ValidationError) as refused:
        project_create(slug="refunds", name="Refunds", owner=owner, description="d" * 41)
    assert list(refused.value.message_dict) == ["description"]
    assert not Project.objects.exists()
    project = project_create(slug="refunds", name="Refunds", owner=owner)
    with pytest.raises(ValidationError) as refused:
        project_settings_update(project=project, guidelines="g" * 61, description="d" * 41)
    assert sorted(refused.value.message_dict) == ["description", "guidelines"]
    project.refresh_from_db()
    assert (project.guidelines, project.description, project.guidelines_version) == ("", "", 1)


def test_the_admin_refuses_guidelines_too_long(client, small_limits):
    admin = UserFactory(is_staff=True, is_superuser=True)
    project = MembershipFactory(role=Role.OWNER).project
    client.force_login(admin)
    url = reverse("admin:annotate_project_change", args=[project.pk])
    data = {
        "slug": project.slug,
        "name": project.name,
        "description": "",
        "guidelines": "g" * 61,
        "guidelines_version": 1,
        "analysts_per_claim": 1,
        "double_labelled_share": 0,
        "queue_seed": project.queue_seed,
        "queue_order": project.queue_order,
        "queue_design": project.queue_design,
        "memberships-TOTAL_FORMS": 0,
        "memberships-INITIAL_FORMS": 0,
    }
    response = client.post(url, data)
    assert response.status_code == 200
    assert "The guidelines are 61 characters long" in response.content.decode()
    project.refresh_from_db()
    assert project.guidelines == ""
