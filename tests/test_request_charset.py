"""A form posted in a charset other than UTF-8 is a 400 with a plain message, not a 500.

Django decodes form fields with the request's declared charset; a UTF-16 body decoded that way
is not what any of our forms can read, and an unknown charset raised LookupError (500).
"""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Label
from tests.factories import (
    PASSWORD,
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

BAD_CHARSETS = ["utf-16", "utf-16-le", "latin-1", "no-such-charset"]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def client() -> Client:
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("charset", BAD_CHARSETS)
def test_login_with_a_foreign_charset_is_a_400(charset):
    UserFactory(username="ana")
    body = f"username=ana&password={PASSWORD}"
    encoded = body.encode(charset) if charset != "no-such-charset" else body.encode()
    response = client().generic(
        "POST",
        reverse("login"),
        encoded,
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
    )
    assert response.status_code == 400
    assert "UTF-8" in response.content.decode()
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize("charset", ["utf-16", "no-such-charset"])
def test_multipart_with_a_foreign_charset_is_a_400(charset):
    boundary = "XyZ"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\nana\r\n'
        f"--{boundary}--\r\n"
    ).encode()
    response = client().generic(
        "POST",
        reverse("login"),
        body,
        content_type=f"multipart/form-data; boundary={boundary}; charset={charset}",
    )
    assert response.status_code == 400


def labelling():
    membership = MembershipFactory()
    answer = AnswerFactory(project=membership.project)
    PassageFactory(answer=answer, rank=1, text="Refunds take 14 days.")
    claim = ClaimFactory(answer=answer, text="Refunds take 14 days.")
    http = client()
    http.force_login(membership.user)
    url = reverse("annotate:label-save", args=[membership.project.slug, claim.pk])
    return http, url, claim


@pytest.mark.parametrize("charset", ["utf-16", "no-such-charset"])
def test_a_labelling_save_with_a_foreign_charset_is_a_400_and_saves_nothing(charset):
    http, url, claim = labelling()
    body = "verdict=NOT_IN_PILE"
    response = http.generic(
        "POST",
        url,
        body.encode("utf-16") if charset == "utf-16" else body.encode(),
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
    )
    assert response.status_code == 400
    assert not Label.objects.filter(claim=claim).exists()


@pytest.mark.parametrize("charset", ["; charset=utf-8", "; charset=UTF-8", '; charset="utf-8"', ""])
def test_utf8_and_no_charset_still_work(charset):
    http, url, claim = labelling()
    response = http.generic(
        "POST",
        url,
        b"verdict=NOT_IN_PILE&note=caf%C3%A9",
        content_type=f"application/x-www-form-urlencoded{charset}",
    )
    assert response.status_code == 302
    assert Label.objects.get(claim=claim).note == "café"


def test_a_json_body_is_not_the_middlewares_business():
    """Only form bodies are decoded by Django with the declared charset."""
    response = client().generic(
        "POST", reverse("login"), b"{}", content_type="application/json; charset=utf-16"
    )
    assert response.status_code != 500
