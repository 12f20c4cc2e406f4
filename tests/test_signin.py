"""Signing in: failed sign-ins lock a username out for a cool-off (the login page's and the
admin's), a client address only after many more (an office shares one), and users change or
reset their own password, its old password guessed no more often than at the login page."""

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
    settings.LOGIN_USERNAME_FAILURE_LIMIT = 5
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 100
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


def test_the_defaults_are_5_per_username_and_100_per_address_in_15_minutes():
    from django.conf import settings as configured

    assert configured.AXES_FAILURE_LIMIT == 5
    assert configured.LOGIN_USERNAME_FAILURE_LIMIT == 5
    assert configured.LOGIN_ADDRESS_FAILURE_LIMIT == 100
    assert timedelta(minutes=15) == configured.AXES_COOLOFF_TIME


def test_five_wrong_passwords_do_not_lock_out_colleagues_behind_the_same_address():
    """Issue 34: one analyst mistyping five times locked out the whole office for 15 minutes."""
    mistyper, colleague = UserFactory(), UserFactory()
    fail(mistyper.username, 5, address="10.0.0.1")
    assert sign_in(mistyper.username, PASSWORD, address="10.0.0.1")[0].status_code == 429
    response, signed_in = sign_in(colleague.username, PASSWORD, address="10.0.0.1")
    assert (response.status_code, signed_in) == (302, True)


def fail_many(address: str, failures: int) -> list:
    """`failures` wrong passwords from `address`, four per username (under every username's
    limit); the users they went to."""
    users = [UserFactory() for _ in range(-(-failures // 4))]
    for number in range(failures):
        fail(users[number // 4].username, 1, address=address)
    return users


def test_the_address_is_locked_for_everyone_at_its_own_limit_of_100():
    fail_many("10.0.0.7", 99)
    colleague = UserFactory()
    # 99 failures from the office: a colleague still signs in, and that forgives only theirs.
    assert sign_in(colleague.username, PASSWORD, address="10.0.0.7")[1]
    fail(UserFactory().username, 1, address="10.0.0.7")  # the 100th
    response, signed_in = sign_in(colleague.username, PASSWORD, address="10.0.0.7")
    assert (response.status_code, signed_in) == (429, False)
    assert "Too many failed sign-ins" in response.content.decode()
    # The same user from another address is not affected.
    assert sign_in(colleague.username, PASSWORD, address="10.0.0.8")[1]


def test_guessing_many_usernames_from_one_address_is_stopped_at_the_address_limit():
    users = fail_many("10.0.0.9", 100)  # 25 usernames, none at its own limit
    response, signed_in = sign_in(users[0].username, PASSWORD, address="10.0.0.9")
    assert (response.status_code, signed_in) == (429, False)
    assert sign_in(users[0].username, PASSWORD, address="10.0.0.10")[1]


def test_a_username_limit_above_the_pair_limit_locks_only_the_address_that_guessed(settings):
    settings.LOGIN_USERNAME_FAILURE_LIMIT = 8
    user = UserFactory()
    fail(user.username, 5, address="10.0.0.1")  # the (username, address) pair's limit
    assert sign_in(user.username, PASSWORD, address="10.0.0.1")[0].status_code == 429
    assert sign_in(user.username, PASSWORD, address="10.0.0.2")[1]
    fail(user.username, 4, address="10.0.0.3")
    fail(user.username, 4, address="10.0.0.4")  # 8 from anywhere: the username's limit
    response, signed_in = sign_in(user.username, PASSWORD, address="10.0.0.5")
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


def change_password(client, old: str):
    new = "a brand new passphrase 42"
    return client.post(
        reverse("password_change"),
        {"old_password": old, "new_password1": new, "new_password2": new},
    )


def test_wrong_old_passwords_lock_the_password_change_like_sign_ins():
    """Issue 34: the password-change form allowed unlimited guesses of the old password."""
    user = UserFactory()
    client = Client(REMOTE_ADDR="10.0.0.1")
    client.force_login(user)
    for _ in range(4):
        assert "incorrect" in change_password(client, WRONG).content.decode()
    refused = change_password(client, WRONG)  # the fifth
    assert refused.status_code == 429
    assert "Your password cannot be changed for now" in refused.content.decode()
    # Now even the right old password is refused, and the password is unchanged.
    right = change_password(client, PASSWORD)
    assert right.status_code == 429
    assert 14 * 60 <= int(right["Retry-After"]) <= 15 * 60
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    # The guesses counted as failed sign-ins: the login page is locked for the username too.
    assert sign_in(user.username, PASSWORD, address="10.0.0.2")[0].status_code == 429


def test_a_right_old_password_after_four_wrong_ones_changes_it():
    user = UserFactory()
    client = Client(REMOTE_ADDR="10.0.0.1")
    client.force_login(user)
    for _ in range(4):
        assert change_password(client, WRONG).status_code == 200
    assert change_password(client, PASSWORD).status_code == 302
    user.refresh_from_db()
    assert user.check_password("a brand new passphrase 42")
