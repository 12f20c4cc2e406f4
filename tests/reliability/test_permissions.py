"""Who may reach what: every URL pattern of the project (from the resolver, so a new view cannot
escape), for anonymous, an analyst of another project, an analyst, a lead and an owner.

What DESIGN.md's roles allow: analysts label (and read answers, mark facts); leads also import,
export, split, adjudicate, run judges and see dashboards; owners also manage members and settings.
Below the role: 404, never 403 (that would confirm the project exists); another project's
object ids under one's own project's slug: 404 too. Test tests/test_access.py checks each view
declares a role; this file checks the role is the right one and that each role really gets in.
"""

import re
from types import SimpleNamespace

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.factories import MembershipFactory, UserFactory
from tests.reliability.world import world_build

# The minimum role of every project URL, from DESIGN.md's "Who uses it and for what".
EXPECTED_ROLE = {
    # analysts: read answers, label, mark facts
    "annotate:project-detail": "analyst",
    "annotate:answer-detail": "analyst",
    "annotate:label-next": "analyst",
    "annotate:label-undo": "analyst",
    "annotate:label-claim": "analyst",
    "annotate:label-save": "analyst",
    "annotate:label-following": "analyst",
    "annotate:label-skip": "analyst",
    "annotate:comment-post": "analyst",
    "annotate:pairwise-index": "analyst",
    "annotate:pairwise": "analyst",
    "annotate:pairwise-save": "analyst",
    "annotate:pairwise-undo": "analyst",
    "annotate:facts": "analyst",
    "annotate:fact-add": "analyst",
    "annotate:fact-delete": "analyst",
    # analysts: read test sets and their cards, review their items (issue 27)
    "testsets:index": "analyst",
    "testsets:detail": "analyst",
    "testsets:card": "analyst",
    "testsets:review": "analyst",
    "testsets:review-item": "analyst",
    "testsets:item-accept": "analyst",
    "testsets:item-edit": "analyst",
    "testsets:item-reject": "analyst",
    # leads: import/export, split into claims, adjudicate, judges, dashboards
    "annotate:import": "lead",
    "annotate:import-job": "lead",
    "annotate:import-job-retry": "lead",
    "annotate:export": "lead",
    "annotate:import-preferences": "lead",
    "annotate:claims-edit": "lead",
    "annotate:claims-split": "lead",
    "annotate:claim-add": "lead",
    "annotate:answer-abstention": "lead",
    "annotate:claim-edit": "lead",
    "annotate:claim-split-at": "lead",
    "annotate:claim-merge": "lead",
    "annotate:claim-delete": "lead",
    "annotate:adjudicate": "lead",
    "annotate:adjudicate-claim": "lead",
    "annotate:contradictions": "lead",
    "annotate:skipped": "lead",
    "annotate:skipped-return": "lead",
    "judges:judge-list": "lead",
    "judges:judge-create": "lead",
    "judges:judge-detail": "lead",
    "judges:judge-update": "lead",
    "judges:run-start": "lead",
    "judges:run-bulk": "lead",
    "judges:run-detail": "lead",
    "judges:run-progress": "lead",
    "judges:run-cancel": "lead",
    "judges:run-resume": "lead",
    "judges:canary-list": "lead",
    "judges:canary-add": "lead",
    "judges:canary-transplant": "lead",
    "judges:split-start": "lead",
    "judges:split-bulk": "lead",
    "judges:split-job": "lead",
    "judges:split-panel": "lead",
    "metrics:dashboard": "lead",
    "metrics:recompute": "lead",
    "metrics:rollups": "lead",
    "metrics:rollups-refresh": "lead",
    "metrics:compare-pairwise-run": "lead",
    "metrics:snapshot-progress": "lead",
    "metrics:report-download": "lead",
    "metrics:audit-card": "lead",
    "metrics:audit-card-page": "lead",
    "metrics:compare": "lead",
    # judge versions on development / held-out gold (issue 28)
    "metrics:judge-versions": "lead",
    "metrics:gold-split": "lead",
    "metrics:judge-version-create": "lead",
    "metrics:judge-compare": "lead",
    "metrics:queue-design": "lead",
    "metrics:selective-routing": "lead",
    "monitor:streams": "lead",
    "monitor:stream-new": "lead",
    "monitor:stream-edit": "lead",
    "monitor:drift-clear": "lead",
    "monitor:alert": "lead",
    # leads: test sets' files, publication, and runs of the system under test (issue 27)
    "testsets:import": "lead",
    "testsets:export": "lead",
    "testsets:publish": "lead",
    "testsets:new-version": "lead",
    "testsets:runs": "lead",
    "testsets:run-start": "lead",
    "testsets:run-detail": "lead",
    "testsets:run-progress": "lead",
    "testsets:run-resume": "lead",
    "testsets:run-truth": "lead",
    # the knowledge base: members read it; leads upload and generate test sets (issue 27)
    "testsets:documents": "analyst",
    "testsets:documents-upload": "lead",
    "testsets:generate": "lead",
    "testsets:generation-job": "lead",
    "testsets:generation-job-resume": "lead",
    # owners: members and settings
    "annotate:settings": "owner",
    "annotate:member-set": "owner",
    "annotate:member-remove": "owner",
}
RANK = {"analyst": 1, "lead": 2, "owner": 3}
# Every response carries the Content-Security-Policy with at least these directives, and
# nothing that would let an inline or injected script run.
CSP_REQUIRED = {
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
    "form-action 'self'",
}


def assert_csp(response, name: str) -> None:
    policy = response.get("Content-Security-Policy", "")
    directives = {directive.strip() for directive in policy.split(";")}
    assert directives >= CSP_REQUIRED, (name, response.status_code, policy)
    assert "unsafe-inline" not in policy, (name, policy)
    assert "unsafe-eval" not in policy, (name, policy)


WHO = ("anonymous", "outsider", "analyst", "lead", "owner")


def all_patterns() -> list[tuple[str, str, object]]:
    """(name, route, callback) of every URL pattern, admin included."""
    found = []

    def walk(patterns, prefix, namespace):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, prefix + str(entry.pattern), entry.namespace or namespace)
            elif isinstance(entry, URLPattern):
                name = f"{namespace}:{entry.name}" if namespace else str(entry.name)
                found.append((name, prefix + str(entry.pattern), entry.callback))

    walk(get_resolver().url_patterns, "", None)
    return found


# The JSON API (`api:`, token authentication, no login redirects) has its own matrix over every
# route × every kind of token: tests/api/test_permissions.py.
PATTERNS = [p for p in all_patterns() if not p[0].startswith("api:")]
PROJECT_PATTERNS = [p for p in PATTERNS if "<slug:slug>" in p[1]]
OTHER_PATTERNS = [p for p in PATTERNS if "<slug:slug>" not in p[1]]
OBJECT_PATTERNS = [p for p in PROJECT_PATTERNS if re.search(r"<int:", p[1])]


def url_for(route: str, slug: str, ids: dict[str, int]) -> str:
    path = route.replace("<slug:slug>", slug)
    path = re.sub(r"<int:([a-z_]+)>", lambda m: str(ids[m.group(1)]), path)
    path = re.sub(r"<(?:str:|path:)?([a-z_]+)>", "x", path)
    path = re.sub(r"^\^|\$$", "", path)  # admin's regex patterns
    path = re.sub(r"\(\?P<[a-z_]+>[^)]*\)", "1", path)
    return "/" + path


def client_for(who: str, world, outsider) -> Client:
    client = Client()
    if who == "outsider":
        client.force_login(outsider)
    elif who != "anonymous":
        client.force_login(world.users[who])
    return client


def request_any(client: Client, url: str):
    """GET the URL; where GET is not allowed, POST it (empty form: the role check comes first)."""
    response = client.get(url)
    if response.status_code == 405:
        response = client.post(url)
    return response


def test_every_project_url_has_a_role_from_design():
    names = {name for name, _, _ in PROJECT_PATTERNS}
    assert names == set(EXPECTED_ROLE), (
        "classify new project URLs in EXPECTED_ROLE (or remove stale ones): "
        f"{sorted(names ^ set(EXPECTED_ROLE))}"
    )
    wrong = {
        name: (callback.required_role, EXPECTED_ROLE[name])
        for name, _, callback in PROJECT_PATTERNS
        if getattr(callback, "required_role", None) != EXPECTED_ROLE[name]
    }
    assert wrong == {}, "view role (declared, expected by DESIGN.md)"


# Downloads that need a computed report to be more than a 404 "nothing computed yet".
NEEDS_REPORT = {"metrics:report-download", "metrics:audit-card", "metrics:audit-card-page"}
QUERY = {
    "metrics:audit-card": "?judge={judge_id}",
    "metrics:audit-card-page": "?judge={judge_id}",
    "metrics:report-download": "?judge={judge_id}",
}


def _world_for(name: str, n: int):
    world = world_build(f"W{n}", slug=f"w-{n}")
    if name in NEEDS_REPORT:
        from metrics.services import snapshot_compute

        snapshot_compute(snapshot_id=world.snapshot.pk)
    return world


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "route", "callback"), PROJECT_PATTERNS, ids=[p[0] for p in PROJECT_PATTERNS]
)
def test_each_role_gets_exactly_what_design_allows(name, route, callback, figures):
    required = EXPECTED_ROLE[name]
    outsider = MembershipFactory(role="analyst").user  # an analyst of another project
    world, built, requests = None, 0, 0
    for who in WHO:
        if world is None:
            built += 1
            world = _world_for(name, built)
        url = url_for(route, world.project.slug, world.ids())
        url += QUERY.get(name, "").format(**world.ids())
        client = client_for(who, world, outsider)
        response = client.get(url)
        method = "GET"
        if response.status_code == 405:
            response, method = client.post(url), "POST"
        requests += 1
        status = response.status_code
        assert_csp(response, name)
        if who == "anonymous":
            assert status == 302, (name, status)
            assert reverse("login") in response["Location"], name
        elif who == "outsider" or RANK[who] < RANK[required]:
            assert status == 404, f"{name}: {who} got HTTP {status}, expected 404"
        else:
            assert status in (200, 201, 204, 302, 303, 400, 409, 413, 422), (
                f"{name}: {who} (allowed) got HTTP {status}"
            )
            if status == 302:
                assert reverse("login") not in response["Location"], name
            if method == "POST":
                world = None  # it may have deleted what the next caller's URL points at
    figures.add("permissions", requests=requests)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "route", "callback"), OBJECT_PATTERNS, ids=[p[0] for p in OBJECT_PATTERNS]
)
def test_another_projects_ids_under_my_slug_are_404(name, route, callback, figures):
    """An owner of `mine` (and of nothing else) asks for `theirs`' objects under /p/mine/…."""
    mine = world_build("MINE")
    theirs = world_build("THEIRS")
    client = Client()
    client.force_login(mine.users["owner"])
    url = url_for(route, mine.project.slug, theirs.ids())
    for method in (client.get, client.post):
        status = method(url).status_code
        assert status in (404, 405), f"{name}: another project's object gave HTTP {status}"
    # Their objects are all still there (a POST did nothing to them).
    theirs.claims[0].refresh_from_db()
    theirs.fact.refresh_from_db()
    theirs.memberships["analyst"].refresh_from_db()
    theirs.skip.refresh_from_db()
    theirs.test_item.refresh_from_db()
    assert theirs.test_item.status == "pending", name
    theirs.test_set.refresh_from_db()
    assert theirs.test_set.status == "draft", name
    figures.add("permissions", requests=2)


# Pages for signing in without a password (reset by email, or the "ask an admin" page).
OPEN_PAGES = {
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}


@pytest.mark.django_db
def test_urls_outside_projects(settings, figures):
    """Admin (every one of its URLs): staff only, so everyone here is sent to the admin login.
    Login and password reset pages: open. Project list, password change and (with
    FAITHAUDIT_PROJECT_CREATORS=any) new project: any signed-in user; anonymous to login.
    Every answer carries the Content-Security-Policy."""
    settings.FAITHAUDIT_PROJECT_CREATORS = "any"
    users = {role: UserFactory(username=f"plain-{role}") for role in ("analyst", "lead", "owner")}
    world = SimpleNamespace(users=users)
    outsider = UserFactory(username="outsider")
    ids = dict.fromkeys(("answer_id", "claim_id", "membership_id", "token_id"), 1)
    requests = 0
    for name, route, _ in OTHER_PATTERNS:
        url = url_for(route, "x", ids)
        # Admin rights are not a project role: every user here is non-staff alike.
        callers = ("anonymous", "owner") if name.startswith("admin:") else WHO
        for who in callers:
            response = request_any(client_for(who, world, outsider), url)
            requests += 1
            status = response.status_code
            assert_csp(response, name)
            if name in ("admin:login", "login") or name in OPEN_PAGES:
                assert status == 200, (name, who, status)
            elif name == "favicon":  # open to all: a redirect to the static icon
                assert status == 302, (name, who, status)
                assert response["Location"].endswith("/favicon.svg"), (name, who)
            elif name in ("logout", "admin:logout"):
                assert status in (200, 302), (name, who, status)
            elif name == "api-pages:token-revoke" and who != "anonymous":
                # a POST back to the tokens page (revoking nothing of another user's)
                assert status == 302, (name, who, status)
                assert response["Location"] == reverse("api-pages:tokens"), name
            elif name.startswith("admin:"):
                if name == "admin:view_on_site":
                    assert status in (302, 404), (name, who, status)
                    continue
                assert status == 302, (name, who, status)
                assert "/admin/login/" in response["Location"], (name, who)
            elif who == "anonymous":
                assert status == 302, (name, status)
                assert reverse("login") in response["Location"], name
            else:
                assert status == 200, (name, who, status)
    assert requests >= 2 * 100  # the admin alone has over a hundred URLs
    # With FAITHAUDIT_PROJECT_CREATORS=staff (production's default) only staff get the page.
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"
    for who in ("outsider", "owner"):
        response = client_for(who, world, outsider).get(reverse("annotate:project-new"))
        assert response.status_code == 403, who
        assert_csp(response, "annotate:project-new")
    staff = UserFactory(username="plain-staff", is_staff=True)
    client = Client()
    client.force_login(staff)
    assert client.get(reverse("annotate:project-new")).status_code == 200
    figures.add("permissions", requests=requests + 3)


@pytest.mark.django_db
def test_project_list_shows_only_my_projects(client):
    mine = world_build("ZEBRAMINE")
    world_build("QUOKKATHEIRS")
    client.force_login(mine.users["analyst"])
    page = client.get(reverse("annotate:project-list")).content.decode()
    assert "ZEBRAMINE" in page
    assert "QUOKKATHEIRS" not in page
