"""Role enforcement on every project view, found from the URL resolver so none can escape.

Every URL with a project `<slug>` must go through `annotate.access.project_view`: anonymous
users are sent to log in, non-members and members below the view's role get 404 (never 403,
which would confirm the project exists).
"""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.http import Http404
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.models import ROLE_RANK, Role
from annotate.selectors import project_get_for_user
from tests.factories import MembershipFactory, ProjectFactory, UserFactory


def _project_patterns():
    found = []

    def walk(patterns, prefix, namespace):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                ns = entry.namespace or namespace
                walk(entry.url_patterns, prefix + str(entry.pattern), ns)
            elif isinstance(entry, URLPattern) and "<slug:slug>" in prefix + str(entry.pattern):
                found.append((f"{namespace}:{entry.name}", prefix + str(entry.pattern), entry))

    walk(get_resolver().url_patterns, "", None)
    return found


PATTERNS = _project_patterns()


def _url(route: str, slug: str) -> str:
    path = route.replace("<slug:slug>", slug)
    path = re.sub(r"<int:[a-z_]+>", "999999", path)
    path = re.sub(r"<(?:str:|uuid:|path:)?[a-z_]+>", "x", path)
    return "/" + path


def test_resolver_finds_the_project_views():
    names = {name for name, _, _ in PATTERNS}
    assert {"annotate:project-detail", "annotate:label-next", "annotate:import"} <= names


@pytest.mark.parametrize(("name", "route", "pattern"), PATTERNS, ids=[p[0] for p in PATTERNS])
def test_every_project_view_declares_its_role(name, route, pattern):
    assert getattr(pattern.callback, "required_role", None) in Role.values, (
        f"{name} is not wrapped in annotate.access.project_view"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "route", "pattern"), PATTERNS, ids=[p[0] for p in PATTERNS])
def test_every_project_view_hides_the_project_from_outsiders(client, name, route, pattern):
    project = ProjectFactory(slug="secret-project")
    url = _url(route, project.slug)
    required = pattern.callback.required_role

    # Anonymous: sent to log in (a method the view does not take is refused first, 405).
    for response in (client.get(url), client.post(url)):
        assert response.status_code in (302, 405), name
        if response.status_code == 302:
            location = urlsplit(response["Location"])
            assert location.path == reverse("login"), name
            assert parse_qs(location.query)["next"] == [url], name

    outsider = UserFactory()
    MembershipFactory(user=outsider, role=Role.OWNER)  # owner elsewhere, not here
    client.force_login(outsider)
    for method in (client.get, client.post):
        assert method(url).status_code in (404, 405), f"{name} leaks to a non-member"

    for role in Role.values:
        if ROLE_RANK[Role(role)] >= ROLE_RANK[Role(required)]:
            continue
        member = UserFactory()
        MembershipFactory(project=project, user=member, role=role)
        client.force_login(member)
        for method in (client.get, client.post):
            status = method(url).status_code
            assert status in (404, 405), f"{name} lets a {role} in (HTTP {status})"


@pytest.mark.django_db
def test_member_with_the_role_reaches_the_plain_views(client):
    project = ProjectFactory()
    for name, route, pattern in PATTERNS:
        if re.search(r"<(?!slug:slug)", route):
            continue  # needs an object id; covered by each feature's own tests
        user = UserFactory()
        MembershipFactory(project=project, user=user, role=pattern.callback.required_role)
        client.force_login(user)
        response = client.get(_url(route, project.slug))
        status = response.status_code
        assert status in (200, 302, 405), f"{name} refused its own role (HTTP {status})"
        if status == 200 and response["Content-Type"].startswith("text/html"):
            assert project.name in response.content.decode(), f"{name} served another page"
        if status == 302:  # somewhere in the project (e.g. no report yet), never the login page
            location = urlsplit(response["Location"]).path
            assert location.startswith(f"/p/{project.slug}/"), f"{name} sent its member away"
            assert location != reverse("login"), f"{name} sent its member to log in"


# Outside projects, only these answer someone who is not signed in (signing in, and getting a
# new password); every other page sends them to log in. A new view must be added here on
# purpose to be open.
OPEN_OUTSIDE_PROJECTS = {
    "login",
    "logout",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "favicon",  # the site's icon, on the login page too
}


def _other_patterns():
    found = []
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLPattern):
            found.append((entry.name, "/" + str(entry.pattern)))
    return found


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "route"), _other_patterns(), ids=[p[0] for p in _other_patterns()]
)
def test_pages_outside_projects_need_sign_in_unless_open_on_purpose(client, name, route):
    url = re.sub(r"<(?:str:|uuid:|path:)?[a-z0-9_]+>", "x", route)
    response = client.get(url)
    if name in OPEN_OUTSIDE_PROJECTS:
        assert response.status_code in (200, 302, 405), name
        if response.status_code == 302:
            assert reverse("login") not in response["Location"] or name == "logout", name
    else:
        assert response.status_code == 302, name
        assert reverse("login") in response["Location"], name


@pytest.mark.django_db
def test_a_membership_read_handed_down_for_another_user_or_project_is_read_again():
    # annotate.access hands its read down to the selector; a read that is not this user's
    # membership in this project (a wiring mistake) must not decide access.
    ana, ben = UserFactory(), UserFactory()
    mine, other = ProjectFactory(), ProjectFactory()
    own = MembershipFactory(project=mine, user=ana, role=Role.ANALYST)
    bens_lead = MembershipFactory(project=mine, user=ben, role=Role.LEAD)
    elsewhere = MembershipFactory(project=other, user=ana, role=Role.LEAD)
    for wrong in (bens_lead, elsewhere):
        with pytest.raises(Http404):  # she is an analyst in `mine`, not a lead
            project_get_for_user(user=ana, slug=mine.slug, role=Role.LEAD, read=(ana.pk, wrong))
        project, membership = project_get_for_user(user=ana, slug=mine.slug, read=(ana.pk, wrong))
        assert (project.pk, membership.pk) == (mine.pk, own.pk)
    # the read that is hers is used as it is
    assert project_get_for_user(user=ana, slug=mine.slug, read=(ana.pk, own))[1] is own
