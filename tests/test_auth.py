"""config.auth: the session and user reads by SQL keep Django's rules.

A logged-in analyst stays logged in; an expired session, a deactivated account, a changed
password or a session naming a user that is gone or malformed all mean "log in again" — never
someone else's account and never an error page.
"""

import importlib
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import UserSession
from config.auth import SessionStore, UserBackend
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def _projects_page(client):
    return client.get("/")


def _project_page(client, membership):
    """A project page, where the user is read with the membership in one statement
    (annotate.access) and handed to the backend: the same rules must hold there."""
    return client.get(f"/p/{membership.project.slug}/")


def test_a_logged_in_analyst_is_recognised_on_the_next_request(client):
    membership = MembershipFactory()
    client.force_login(membership.user)
    response = _projects_page(client)
    assert response.status_code == 200
    assert response.wsgi_request.user == membership.user
    assert membership.project.name in response.content.decode()


def test_an_expired_session_asks_to_log_in_again(client):
    user = UserFactory()
    client.force_login(user)
    UserSession.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    response = _projects_page(client)
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_a_deactivated_account_is_logged_out(client):
    user = UserFactory()
    client.force_login(user)
    user.is_active = False
    user.save()
    assert _projects_page(client).status_code == 302


def test_a_password_change_elsewhere_ends_the_session(client):
    user = UserFactory()
    client.force_login(user)
    user.set_password("another long passphrase 42")
    user.save()
    assert _projects_page(client).status_code == 302


def test_a_session_naming_a_missing_or_malformed_user_is_nobody():
    backend = UserBackend()
    assert backend.get_user(10**9) is None
    assert backend.get_user("not-a-number") is None
    user = UserFactory()
    loaded = backend.get_user(str(user.pk))
    assert loaded == user
    assert loaded.username == user.username
    assert loaded.password == user.password


def test_the_session_store_reads_back_what_it_saved():
    saved = SessionStore()
    saved[SESSION_KEY] = "42"
    saved["note"] = {"draft": "é"}
    saved.save()
    loaded = SessionStore(saved.session_key)
    assert loaded[SESSION_KEY] == "42"
    assert loaded["note"] == {"draft": "é"}
    assert SessionStore("x" * 32).load() == {}  # unknown key: an empty, fresh session


@pytest.mark.parametrize("change", ["deactivated", "password changed", "user gone"])
def test_on_a_project_page_the_user_read_with_the_membership_keeps_djangos_checks(client, change):
    membership = MembershipFactory()
    user = membership.user
    client.force_login(user)
    assert _project_page(client, membership).status_code == 200
    if change == "deactivated":
        user.is_active = False
        user.save()
    elif change == "password changed":
        user.set_password("another long passphrase 42")
        user.save()
    else:
        user.delete()
    response = _project_page(client, membership)
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_a_project_page_reads_its_user_and_membership_in_one_statement(client):
    membership = MembershipFactory()
    outsider = UserFactory()
    client.force_login(membership.user)
    with CaptureQueriesContext(connection) as queries:
        response = _project_page(client, membership)
    assert response.status_code == 200
    assert response.wsgi_request.user == membership.user
    reads = [q["sql"] for q in queries if "auth_user" in q["sql"]]
    assert len(reads) == 1
    assert "annotate_membership" in reads[0]
    # ...and the session in that same statement: no read of the session table on its own.
    assert [q["sql"] for q in queries if "annotate_user_session" in q["sql"]] == reads
    # Someone else's session on the same page: their own user, and no membership (404).
    client.force_login(outsider)
    response = _project_page(client, membership)
    assert response.status_code == 404
    assert response.wsgi_request.user == outsider


def test_signing_in_writes_the_user_beside_the_session_and_signing_out_removes_it(client):
    user = UserFactory(password="a long passphrase 42")
    response = client.post(
        "/login/", {"username": user.username, "password": "a long passphrase 42"}
    )
    assert response.status_code == 302
    (row,) = UserSession.objects.all()
    assert row.user_id == user.pk
    assert row.get_decoded()[SESSION_KEY] == str(user.pk)
    client.post("/logout/")
    assert not UserSession.objects.exists()


def test_a_session_row_naming_another_user_than_its_signed_data_never_signs_in_that_user(client):
    """The column is a shortcut, the signed data the truth: a row whose column was changed
    (by hand, or by a bug) still serves the user its data names, never the column's."""
    membership = MembershipFactory()
    other = MembershipFactory(project=membership.project).user
    client.force_login(membership.user)
    UserSession.objects.update(user=other)
    response = _project_page(client, membership)
    assert response.status_code == 200
    assert response.wsgi_request.user == membership.user
    assert response.wsgi_request.membership == membership
    # ...and the page's own read of user and membership was the data's user's, not the row's.
    assert response.wsgi_request.membership_read[0] == membership.user.pk


def test_a_session_saved_before_its_row_named_its_user_still_signs_in(client):
    membership = MembershipFactory()
    client.force_login(membership.user)
    UserSession.objects.update(user=None)  # as a session carried over undecodable, or older
    response = _project_page(client, membership)
    assert response.status_code == 200
    assert response.wsgi_request.user == membership.user


def test_an_expired_or_unknown_session_on_a_project_page_asks_to_log_in_again(client):
    membership = MembershipFactory()
    client.force_login(membership.user)
    UserSession.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    response = _project_page(client, membership)
    assert response.status_code == 302
    assert "/login/" in response["Location"]
    client.cookies["sessionid"] = "y" * 32
    assert _project_page(client, membership).status_code == 302


def test_the_upgrade_carries_live_sessions_over_with_their_user():
    """annotate migration 0022: Django's live sessions copied with the user their data names,
    so an upgrade signs nobody out; expired ones are left behind."""
    from django.apps import apps
    from django.contrib.sessions.backends.db import SessionStore as DjangoStore

    migration = importlib.import_module("annotate.migrations.0022_user_session")
    user = UserFactory()
    live, gone, anonymous = DjangoStore(), DjangoStore(), DjangoStore()
    live[SESSION_KEY] = str(user.pk)
    gone[SESSION_KEY] = str(user.pk)
    anonymous["draft"] = "x"
    for store in (live, gone, anonymous):
        store.save()
    gone_row = DjangoStore.get_model_class().objects.get(pk=gone.session_key)
    gone_row.expire_date = timezone.now() - timedelta(seconds=1)
    gone_row.save()
    migration.sessions_carry_over(apps, None)
    rows = {row.session_key: row for row in UserSession.objects.all()}
    assert set(rows) == {live.session_key, anonymous.session_key}
    assert rows[live.session_key].user_id == user.pk
    assert rows[anonymous.session_key].user_id is None
    assert SessionStore(live.session_key)[SESSION_KEY] == str(user.pk)
