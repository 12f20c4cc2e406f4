"""config.auth: the session and user reads by SQL keep Django's rules.

A logged-in analyst stays logged in; an expired session, a deactivated account, a changed
password or a session naming a user that is gone or malformed all mean "log in again" — never
someone else's account and never an error page.
"""

from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.utils import timezone

from config.auth import SessionStore, UserBackend
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def _projects_page(client):
    return client.get("/")


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
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
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
