import pytest
from django.urls import reverse

from annotate.models import Membership, Role
from annotate.services.projects import MembershipError, membership_remove, membership_set
from tests.factories import MembershipFactory, ProjectFactory, UserFactory


@pytest.mark.django_db
def test_project_list_shows_only_my_projects(client):
    mine = MembershipFactory(role=Role.ANALYST, project__name="Refund answers")
    ProjectFactory(name="Someone else's secret project")
    client.force_login(mine.user)
    page = client.get(reverse("annotate:project-list")).content.decode()
    assert "Refund answers" in page
    assert "secret project" not in page


@pytest.mark.django_db
def test_creating_a_project_makes_me_its_owner(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(
        reverse("annotate:project-new"), {"name": "Fees audit", "slug": "fees", "description": ""}
    )
    assert response.status_code == 302
    assert Membership.objects.get(project__slug="fees", user=user).role == Role.OWNER


@pytest.mark.django_db
def test_owner_adds_a_member_and_cannot_remove_the_last_owner(client):
    owner = MembershipFactory(role=Role.OWNER)
    UserFactory(username="ana")
    client.force_login(owner.user)
    client.post(
        reverse("annotate:member-set", args=[owner.project.slug]),
        {"username": "ana", "role": "analyst"},
    )
    assert Membership.objects.get(project=owner.project, user__username="ana").role == "analyst"
    with pytest.raises(MembershipError, match="at least one owner"):
        membership_remove(project=owner.project, membership_id=owner.pk)
    # No such user: nothing written, and no error that would tell a username exists.
    assert membership_set(project=owner.project, username="nobody", role="lead") is None
    assert not Membership.objects.filter(user__username="nobody").exists()


@pytest.mark.django_db
def test_settings_reject_a_share_outside_0_1(client):
    owner = MembershipFactory(role=Role.OWNER)
    client.force_login(owner.user)
    url = reverse("annotate:settings", args=[owner.project.slug])
    response = client.post(
        url,
        {"name": "x", "analysts_per_claim": 1, "double_labelled_share": 1.5},
    )
    assert response.status_code == 200
    assert "between 0 and 1" in response.content.decode()
    owner.project.refresh_from_db()
    assert owner.project.double_labelled_share == 0


@pytest.mark.django_db
def test_settings_page_shows_and_saves_counting_labels_made_outside_the_queue(client):
    owner = MembershipFactory(role=Role.OWNER)
    client.force_login(owner.user)
    url = reverse("annotate:settings", args=[owner.project.slug])
    page = client.get(url).content.decode()
    assert 'name="count_outside_queue_labels"' in page
    assert "outside the queue" in page
    assert owner.project.count_outside_queue_labels is False
    response = client.post(
        url,
        {
            "name": "x",
            "analysts_per_claim": 1,
            "double_labelled_share": 0,
            "queue_order": "answer",
            "count_outside_queue_labels": "on",
        },
    )
    assert response.status_code == 302
    owner.project.refresh_from_db()
    assert owner.project.count_outside_queue_labels is True
