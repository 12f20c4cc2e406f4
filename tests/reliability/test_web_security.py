"""Web security that is not a browser's job: CSRF on every state-changing request (found from the
resolver), the production settings pass `check --deploy`, security headers and cookies, an
oversized upload refused before its body is read, forged quotes refused through the view."""

import os
import re
import secrets
import subprocess
import sys

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Label
from tests.factories import PASSWORD
from tests.reliability.figures import ROOT
from tests.reliability.test_permissions import OTHER_PATTERNS, PROJECT_PATTERNS, url_for
from tests.reliability.world import world_build


@pytest.mark.django_db
def test_every_state_changing_request_needs_the_csrf_token(figures):
    """The owner (allowed everywhere) POSTs to every URL without a token: 403 wherever POST is
    taken at all, and nothing changes."""
    world = world_build("CSRF", slug="csrf")
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["owner"])
    before = (Label.objects.count(), world.project.claims.count())
    post_views, checked = [], 0
    for name, route, _ in PROJECT_PATTERNS + OTHER_PATTERNS:
        if name.startswith("admin:") and name != "admin:login":
            continue  # staff only: everyone here is redirected before any form is read
        url = url_for(route, world.project.slug, world.ids())
        status = client.post(url, {"verdict": "SUPPORTED", "text": "x"}).status_code
        checked += 1
        if status == 405:
            continue
        post_views.append(name)
        assert status == 403, f"{name} took a POST without a CSRF token (HTTP {status})"
    assert {
        "annotate:label-save",
        "annotate:import",
        "judges:run-start",
        "annotate:member-set",
    } <= set(post_views)
    assert (Label.objects.count(), world.project.claims.count()) == before
    # And with the token the same client gets through (the check above is not a blanket 403).
    client.get(reverse("annotate:label-claim", args=["csrf", world.claims[1].pk]))
    token = client.cookies["csrftoken"].value
    response = client.post(
        reverse("annotate:label-save", args=["csrf", world.claims[1].pk]),
        {"verdict": "NOT_IN_PILE", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    figures.add("web security", csrf_post_views=len(post_views), requests=checked + 2)


def test_check_deploy_is_clean_under_production_settings(figures):
    env = {
        **os.environ,
        "DJANGO_PRODUCTION": "1",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "DJANGO_ALLOWED_HOSTS": "audit.example.org",
    }
    # Set in this process for Playwright (tests/browser/conftest.py); never in a deployment.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    # Without a secret key production refuses to start rather than run with a known one.
    env.pop("DJANGO_SECRET_KEY")
    refused = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in refused.stderr
    figures.add("web security", deploy_checks=1)


@pytest.mark.django_db
def test_security_headers_and_cookies(client):
    world = world_build("HDR", slug="hdr")
    login = client.post(
        reverse("login"), {"username": world.users["analyst"].username, "password": PASSWORD}
    )
    assert login.status_code == 302
    assert login.cookies["sessionid"]["httponly"]
    assert login.cookies["sessionid"]["samesite"] == "Lax"
    response = client.get(reverse("annotate:project-detail", args=["hdr"]))
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


class _Unreadable:
    """A request body that fails the test if anything reads it."""

    read_bytes = 0

    def read(self, *args, **kwargs):
        raise AssertionError("the oversized upload was read")

    readline = read


@pytest.mark.django_db
def test_oversized_upload_is_refused_before_its_body_is_read(settings, figures):
    settings.IMPORT_MAX_UPLOAD_BYTES = 1000
    world = world_build("BIG", slug="big")
    client = Client(raise_request_exception=True)
    client.force_login(world.users["lead"])
    response = client.generic(
        "POST",
        reverse("annotate:import", args=["big"]),
        b"",
        content_type="multipart/form-data; boundary=xyz",
        **{"wsgi.input": _Unreadable(), "CONTENT_LENGTH": str(5 * 1024**3)},
    )
    assert response.status_code == 413
    page = response.content.decode()
    assert "upload limit" in page
    assert "Nothing was imported" in page
    figures.add("bad input", oversized_uploads_refused=1)


@pytest.mark.django_db
def test_forged_quotes_are_refused_through_the_view(client):
    """Offsets that point at other text than the quote, and a passage of another project."""
    mine = world_build("QMINE", slug="qmine")
    theirs = world_build("QTHEIRS", slug="qtheirs")
    client.force_login(mine.users["analyst"])
    claim = mine.claims[1]
    url = reverse("annotate:label-save", args=["qmine", claim.pk])
    text = mine.passage.text
    forged = [
        # the right passage, a quote that is not at these offsets
        {"passage": mine.passage.pk, "start_utf16": 0, "end_utf16": 10, "quote": "Gift cards"},
        # a quote that is nowhere in the passage (typed, no offsets)
        {"passage": mine.passage.pk, "quote": "refunds are instant"},
        # another project's passage with its real text
        {"passage": theirs.passage.pk, "quote": theirs.passage.text[:20]},
        # offsets past the end of the passage
        {
            "passage": mine.passage.pk,
            "start_utf16": len(text) + 5,
            "end_utf16": len(text) + 9,
            "quote": "abcd",
        },
    ]
    for evidence in forged:
        response = client.post(url, {"verdict": "SUPPORTED", **evidence})
        assert response.status_code == 422, evidence
        assert re.search(r"class=\"[^\"]*error", response.content.decode()), evidence
    assert not Label.objects.filter(claim=claim, annotator=mine.users["analyst"]).exists()
    # The genuine quote goes through.
    start = text.index("Gift cards are final.")
    response = client.post(
        url,
        {
            "verdict": "SUPPORTED",
            "passage": mine.passage.pk,
            "start_utf16": start,
            "end_utf16": start + 21,
            "quote": "Gift cards are final.",
        },
    )
    assert response.status_code == 302


@pytest.mark.django_db
def test_content_security_policy_on_every_kind_of_answer(client, settings, figures):
    """Pages, partials, downloads, redirects and error pages all carry the policy."""
    from tests.reliability.test_permissions import assert_csp

    settings.AXES_FAILURE_LIMIT = 2
    world = world_build("CSP", slug="csp")
    answers = {"login page": client.get(reverse("login"))}
    for _ in range(3):
        locked = client.post(reverse("login"), {"username": "nobody", "password": "wrong"})
    answers["locked out (429)"] = locked
    assert locked.status_code == 429
    client.force_login(world.users["owner"])
    answers["project page"] = client.get(reverse("annotate:project-detail", args=["csp"]))
    answers["htmx partial"] = client.get(
        reverse("metrics:dashboard", args=["csp"]), HTTP_HX_REQUEST="true"
    )
    answers["csv download"] = client.get(
        reverse("annotate:export", args=["csp"]), {"format": "csv"}
    )
    answers["not found (404)"] = client.get("/p/no-such-project/")
    answers["redirect"] = client.get(reverse("annotate:label-next", args=["csp"]))
    settings.FAITHAUDIT_PROJECT_CREATORS = "staff"
    answers["forbidden (403)"] = client.get(reverse("annotate:project-new"))
    assert answers["forbidden (403)"].status_code == 403
    for what, response in answers.items():
        assert_csp(response, what)
    figures.add("web security", csp_answers=len(answers))
