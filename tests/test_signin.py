"""Signing in: failed sign-ins lock a username and a client address out for a cool-off (the
login page's and the admin's), and users change or reset their own password."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
WRONG = "not the password"


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def sign_in(username, password, *, address="10.0.0.1", path=None):
    """One sign-in from `address` by a fresh browser; the response and whether it got in."""
    client = Client(REMOTE_ADDR=address)
    response = client.post(path or reverse("login"), {"username": username, "password": password})
    return response, SESSION_KEY in client.session


def fail(username, times, *, address="10.0.0.1", path=None):
    for _ in range(times):
        response, signed_in = sign_in(username, WRONG, address=address, path=path)
        assert not signed_in
    return response


def test_four_wrong_passwords_then_the_right_one_gets_in():
    user = UserFactory()
    assert fail(user.username, 4).status_code == 200  # the form again, with its error
    response, signed_in = sign_in(user.username, PASSWORD)
    assert response.status_code == 302
    assert signed_in


def test_after_five_wrong_passwords_even_the_right_one_is_refused_with_when_to_retry():
    user = UserFactory()
    fail(user.username, 5)
    response, signed_in = sign_in(user.username, PASSWORD)
    assert not signed_in
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed sign-ins" in page
    assert "Try again in 15 minutes" in page
    assert 14 * 60 <= int(response["Retry-After"]) <= 15 * 60


def test_the_username_is_locked_from_every_address():
    user = UserFactory()
    fail(user.username, 5, address="10.0.0.1")
    response, signed_in = sign_in(user.username, PASSWORD, address="10.9.9.9")
    assert (response.status_code, signed_in) == (429, False)


def test_the_address_is_locked_for_every_username():
    victim, other = UserFactory(), UserFactory()
    fail(victim.username, 5, address="10.0.0.1")
    response, signed_in = sign_in(other.username, PASSWORD, address="10.0.0.1")
    assert (response.status_code, signed_in) == (429, False)
    # Another user from another address is not affected.
    response, signed_in = sign_in(other.username, PASSWORD, address="10.0.0.2")
    assert (response.status_code, signed_in) == (302, True)


def test_guessing_many_usernames_from_one_address_is_stopped():
    users = [UserFactory() for _ in range(5)]
    for user in users:
        fail(user.username, 1, address="10.0.0.7")
    response, signed_in = sign_in(users[0].username, PASSWORD, address="10.0.0.7")
    assert (response.status_code, signed_in) == (429, False)


def test_the_lockout_expires_after_the_cool_off():
    from axes.models import AccessAttempt

    user = UserFactory()
    fail(user.username, 5)
    assert sign_in(user.username, PASSWORD)[0].status_code == 429
    # Sixteen minutes pass (the failures are dated back; the cool-off is 15).
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    response, signed_in = sign_in(user.username, PASSWORD)
    assert (response.status_code, signed_in) == (302, True)


def test_attempts_while_locked_out_do_not_extend_the_lockout():
    from axes.models import AccessAttempt

    user = UserFactory()
    fail(user.username, 5)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=14))
    fail(user.username, 3)  # refused, and not counted
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert sign_in(user.username, PASSWORD)[1]


def test_the_admin_login_is_locked_out_too():
    admin = UserFactory(is_staff=True, is_superuser=True)
    path = reverse("admin:login")
    fail(admin.username, 5, path=path)
    response, signed_in = sign_in(admin.username, PASSWORD, path=path)
    assert (response.status_code, signed_in) == (429, False)
    assert "Too many failed sign-ins" in response.content.decode()


def test_a_right_password_clears_earlier_failures():
    user = UserFactory()
    fail(user.username, 4)
    assert sign_in(user.username, PASSWORD)[1]
    fail(user.username, 4)
    assert sign_in(user.username, PASSWORD)[1]


# -- Changing and resetting a password ---------------------------------------------------------


def test_a_signed_in_user_changes_their_password_with_the_old_one(client):
    user = UserFactory()
    client.force_login(user)
    # The header's "Account" link, then the account page's "Change your password".
    account = reverse("api-pages:tokens")
    assert f'href="{account}"' in client.get("/").content.decode()
    assert reverse("password_change") in client.get(account).content.decode()
    url = reverse("password_change")
    new = "a brand new passphrase 42"
    refused = client.post(url, {"old_password": WRONG, "new_password1": new, "new_password2": new})
    assert refused.status_code == 200
    assert "incorrect" in refused.content.decode()
    done = client.post(url, {"old_password": PASSWORD, "new_password1": new, "new_password2": new})
    assert done.status_code == 302
    assert done["Location"] == reverse("password_change_done")
    assert client.get(done["Location"]).status_code == 200
    assert sign_in(user.username, new)[1]
    assert not sign_in(user.username, PASSWORD)[1]


def test_password_change_needs_a_signed_in_user(client):
    response = client.get(reverse("password_change"))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_password_reset_by_email_where_mail_is_configured(client, settings):
    settings.PASSWORD_RESET_BY_EMAIL = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = UserFactory(email="ana@example.org")
    assert reverse("password_reset") in client.get(reverse("login")).content.decode()
    response = client.post(reverse("password_reset"), {"email": "ana@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["ana@example.org"]
    link = re.search(r"https?://[^/\s]+(/password/reset/\S+/)", mail.outbox[0].body).group(1)
    set_form = client.get(link, follow=True)
    assert set_form.status_code == 200
    new = "reset passphrase 2026 ok"
    done = client.post(set_form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done.status_code == 302
    assert sign_in(user.username, new)[1]
    # An unknown address: the same answer, no mail.
    response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1


def test_password_reset_is_not_offered_without_mail(client, settings):
    settings.PASSWORD_RESET_BY_EMAIL = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    UserFactory(email="ana@example.org")
    login_page = client.get(reverse("login")).content.decode()
    assert reverse("password_reset") not in login_page
    assert "Ask an administrator" in login_page
    page = client.get(reverse("password_reset"))
    assert page.status_code == 200
    assert "Ask an administrator" in page.content.decode()
    client.post(reverse("password_reset"), {"email": "ana@example.org"})
    assert mail.outbox == []


def test_sign_ins_without_a_request_are_not_counted_and_do_not_fail(client):
    """Django's test client and server code authenticate with no request: no client address
    to count and no one guessing over HTTP, so the lockout neither counts nor blocks them."""
    from axes.models import AccessAttempt

    user = UserFactory()
    for _ in range(6):
        assert client.login(username=user.username, password=WRONG) is False
    assert client.login(username=user.username, password=PASSWORD) is True
    assert not AccessAttempt.objects.exists()
