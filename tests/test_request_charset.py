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


def _csrf_client_and_token(membership, url_page) -> tuple[Client, str]:
    """A signed-in browser that passes the CSRF check as a real one does: with the cookie the
    page set and its token in the X-CSRFToken header (the body cannot carry it readably)."""
    http = Client(enforce_csrf_checks=True, raise_request_exception=False)
    http.force_login(membership.user)
    http.get(url_page)
    return http, http.cookies["csrftoken"].value


# Each is what codecs.lookup calls "utf-8", or US-ASCII (a subset of UTF-8).
UTF8_ALIASES = ["UTF8", "utf_8", "U8", "utf8", "cp65001", "ascii", "us-ascii", "US-ASCII", "646"]


@pytest.mark.parametrize("charset", UTF8_ALIASES)
def test_every_name_of_utf8_and_ascii_is_read_as_utf8(charset):
    """On main Django refused any spelling but "utf-8" with a BadRequest that the CSRF check
    raised again inside the 400 page: a 500, and the label lost."""
    membership = MembershipFactory()
    answer = AnswerFactory(project=membership.project)
    PassageFactory(answer=answer, rank=1, text="Refunds take 14 days.")
    claim = ClaimFactory(answer=answer, text="Refunds take 14 days.")
    slug = membership.project.slug
    http, token = _csrf_client_and_token(
        membership, reverse("annotate:label-claim", args=[slug, claim.pk])
    )
    note = b"&note=caf%C3%A9" if "8" in charset or "utf" in charset.lower() else b"&note=cafe"
    response = http.generic(
        "POST",
        reverse("annotate:label-save", args=[slug, claim.pk]),
        b"verdict=NOT_IN_PILE" + note,
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 302, response.content[:300]
    assert Label.objects.get(claim=claim).note == ("café" if b"C3" in note else "cafe")


@pytest.mark.parametrize("charset", ["latin-1", "utf-16", "utf-8-sig", "no-such"])
def test_other_charsets_are_a_clean_400_through_the_csrf_check(charset):
    membership = MembershipFactory()
    claim = ClaimFactory(answer=AnswerFactory(project=membership.project))
    slug = membership.project.slug
    http, token = _csrf_client_and_token(
        membership, reverse("annotate:label-claim", args=[slug, claim.pk])
    )
    response = http.generic(
        "POST",
        reverse("annotate:label-save", args=[slug, claim.pk]),
        b"verdict=NOT_IN_PILE",
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 400
    assert "UTF-8" in response.content.decode()
    assert not Label.objects.filter(claim=claim).exists()
