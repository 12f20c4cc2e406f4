"""Who may create a project (FAITHAUDIT_PROJECT_CREATORS) and adding members without a
username oracle."""

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from annotate.models import Membership, Project, Role
from annotate.services.projects import project_create
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
NEW = {"name": "Refunds audit", "slug": "refunds-audit", "description": ""}


def test_staff_only_refuses_the_page_the_post_and_the_link_to_others(client, settings):
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"
    client.force_login(UserFactory(is_staff=False))
    page = client.get(reverse("annotate:project-list"))
    assert page.status_code == 200
    assert reverse("annotate:project-new") not in page.content.decode()
    assert client.get(reverse("annotate:project-new")).status_code == 403
    response = client.post(reverse("annotate:project-new"), NEW)
    assert response.status_code == 403
    assert "Only staff may create projects" in response.content.decode()
    assert not Project.objects.filter(slug="refunds-audit").exists()


def test_staff_only_lets_staff_create_and_own(client, settings):
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    assert reverse("annotate:project-new") in client.get("/").content.decode()
    response = client.post(reverse("annotate:project-new"), NEW)
    assert response.status_code == 302
    assert Membership.objects.get(project__slug="refunds-audit").user == staff


def test_any_lets_every_signed_in_user_create(client, settings):
    settings.FAITHAUDIT_PROJECT_CREATORS = "any"
    user = UserFactory(is_staff=False)
    client.force_login(user)
    assert reverse("annotate:project-new") in client.get("/").content.decode()
    assert client.post(reverse("annotate:project-new"), NEW).status_code == 302
    assert Membership.objects.get(project__slug="refunds-audit", role=Role.OWNER).user == user


def test_the_service_refuses_a_non_staff_owner_too(settings):
    """An API will call the service directly: it must not rely on the view's check."""
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"
    with pytest.raises(PermissionDenied):
        project_create(owner=UserFactory(is_staff=False), **NEW)
    assert not Project.objects.exists()
    assert project_create(owner=UserFactory(is_staff=True), **NEW).slug == "refunds-audit"


def test_the_default_is_staff_in_production_and_any_in_the_demo():
    import os
    import subprocess
    import sys

    from tests.reliability.figures import ROOT

    code = "from django.conf import settings; print(settings.FAITHAUDIT_PROJECT_CREATORS)"
    base = {k: v for k, v in os.environ.items() if k != "FAITHAUDIT_PROJECT_CREATORS"}
    seen = {}
    for production in ("0", "1"):
        env = {**base, "DJANGO_PRODUCTION": production, "DJANGO_SECRET_KEY": "x" * 60}
        env["DJANGO_SETTINGS_MODULE"] = "config.settings"
        result = subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {code}"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        seen[production] = result.stdout.strip()
    assert seen == {"0": "any", "1": "staff"}


def _member_message(client, project, username):
    response = client.post(
        reverse("annotate:member-set", args=[project.slug]),
        {"username": username, "role": "lead"},
        follow=True,
    )
    messages = [str(m) for m in get_messages(response.wsgi_request)] or [
        # follow=True consumed them into the page: read them from it
        line
        for line in response.content.decode().splitlines()
        if 'class="msg' in line
    ]
    return response.status_code, response.redirect_chain, messages


def test_adding_a_member_answers_the_same_whether_or_not_the_user_exists(client):
    owner = MembershipFactory(role=Role.OWNER)
    UserFactory(username="ana-existing")
    client.force_login(owner.user)
    known = _member_message(client, owner.project, "ana-existing")
    unknown = _member_message(client, owner.project, "nobody-at-all")
    assert known[0] == unknown[0] == 200
    assert known[1] == unknown[1]
    normalise = lambda texts, name: [t.replace(name, "NAME") for t in texts]  # noqa: E731
    assert normalise(known[2], "ana-existing") == normalise(unknown[2], "nobody-at-all")
    assert known[2], "the owner is told something"
    assert "no user" not in " ".join(unknown[2]).lower()
    # The existing user was added; the unknown name created nothing.
    assert Membership.objects.get(project=owner.project, user__username="ana-existing").role == (
        Role.LEAD
    )
    assert not Membership.objects.filter(user__username="nobody-at-all").exists()
    from django.contrib.auth import get_user_model

    assert not get_user_model().objects.filter(username="nobody-at-all").exists()
