import hashlib
import logging
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from api.models import ApiToken
from api.tokens import token_create
from tests.api.conftest import ApiClient, native_answer
from tests.factories import PASSWORD


def _create(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("api_token", "create", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_command_prints_the_token_alone_on_its_last_line_and_stores_its_hash(api_world):
    out, err = _create("--user", "lead", "--name", "ci", "--project", "shop", "--expires-days", "3")
    raw = out.strip().splitlines()[-1]
    assert raw.startswith("fa_")
    assert " " not in raw
    token = ApiToken.objects.get(name="ci")
    assert token.secret_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in token.secret_hash
    assert token.project == api_world.project
    assert timedelta(days=2, hours=23) < token.expires_at - timezone.now() <= timedelta(days=3)
    response = ApiClient(raw).get("/api/v1/projects")
    assert [p["slug"] for p in response.json()] == ["shop"]
    listing = StringIO()
    call_command("api_token", "list", "--user", "lead", stdout=listing)
    assert "ci" in listing.getvalue()
    assert raw not in listing.getvalue()
    assert raw[len("fa_") + 8 + 1 :] not in listing.getvalue()
    call_command("api_token", "revoke", "--user", "lead", "--id", str(token.pk), stdout=StringIO())
    assert ApiClient(raw).get("/api/v1/projects").status_code == 401


def test_read_only_flag(api_world):
    out, _ = _create("--user", "lead", "--read-only")
    raw = out.strip().splitlines()[-1]
    client = ApiClient(raw)
    assert client.get("/api/v1/projects/shop").status_code == 200
    response = client.post("/api/v1/projects/shop/answers", [native_answer(1)])
    assert response.status_code == 403
    assert response.json()["type"].endswith("/read-only")


def test_scoped_token_sees_only_its_project(api_world):
    from tests.factories import MembershipFactory, ProjectFactory

    third = ProjectFactory(slug="third")
    MembershipFactory(project=third, user=api_world.people["lead"], role="lead")
    raw = token_create(user=api_world.people["lead"], name="s", project=api_world.project).secret
    client = ApiClient(raw)
    assert client.get("/api/v1/projects/shop").status_code == 200
    assert client.get("/api/v1/projects/third").status_code == 404
    assert ApiClient(api_world.tokens["lead"]).get("/api/v1/projects/third").status_code == 200


@pytest.mark.parametrize(
    "header",
    ["", "Bearer", "Bearer nonsense", "Bearer fa_deadbeef_wrong", "Basic abc", "Token x"],
)
def test_bad_credentials_are_401_problems(api_world, header):
    headers = {"Authorization": header} if header else {}
    response = Client().get("/api/v1/projects", headers=headers)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_expired_and_revoked(api_world):
    new = token_create(user=api_world.people["lead"], name="e", expires_days=1)
    ApiToken.objects.filter(pk=new.token.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert ApiClient(new.secret).get("/api/v1/projects").status_code == 401
    new = token_create(user=api_world.people["lead"], name="r")
    ApiToken.objects.filter(pk=new.token.pk).update(revoked_at=timezone.now())
    assert ApiClient(new.secret).get("/api/v1/projects").status_code == 401


def test_last_used_is_recorded(api_world):
    token = ApiToken.objects.get(user=api_world.people["analyst"])
    assert token.last_used_at is None
    api_world.client("analyst").get("/api/v1/projects")
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_rate_limit_answers_429_with_retry_after(api_world, settings):
    settings.API_RATE_LIMIT = 3
    settings.API_RATE_WINDOW = 10**6  # one window for the whole test
    client = api_world.client("analyst")
    statuses = [client.get("/api/v1/projects").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = client.get("/api/v1/projects")
    assert response["Content-Type"] == "application/problem+json"
    assert 1 <= int(response["Retry-After"]) <= 10**6
    # per token: another token still gets in
    assert api_world.client("lead").get("/api/v1/projects").status_code == 200


def test_account_page_shows_the_token_once_then_only_its_prefix(api_world):
    browser = Client()
    assert browser.login(username="analyst", password=PASSWORD)
    response = browser.post("/account/tokens/", {"name": "laptop", "expires_days": "30"})
    assert response.status_code == 200
    raw = response.context["created"].secret
    assert raw in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    page = browser.get("/account/tokens/").content.decode()
    assert "laptop" in page
    assert raw not in page
    assert f"fa_{raw.split('_')[1]}_" in page
    assert ApiClient(raw).get("/api/v1/projects").status_code == 200
    token = ApiToken.objects.get(name="laptop")
    # another user cannot revoke it
    other = Client()
    other.login(username="lead", password=PASSWORD)
    other.post(f"/account/tokens/{token.pk}/revoke/")
    assert ApiClient(raw).get("/api/v1/projects").status_code == 200
    browser.post(f"/account/tokens/{token.pk}/revoke/")
    assert ApiClient(raw).get("/api/v1/projects").status_code == 401
    assert "revoked" in browser.get("/account/tokens/").content.decode()


def test_account_page_needs_sign_in(db):
    assert Client().get("/account/tokens/").status_code == 302


def test_the_token_never_reaches_the_logs(api_world, caplog):
    caplog.set_level(logging.DEBUG)
    out, err = _create("--user", "lead", "--name", "log")
    raw = out.strip().splitlines()[-1]
    client = ApiClient(raw)
    client.get("/api/v1/projects")
    client.get("/api/v1/projects/nope")
    client.post("/api/v1/projects/shop/answers", "[{bad", content_type="application/json")
    client.post("/api/v1/projects/shop/answers", [native_answer(1)])
    ApiClient(raw + "x").get("/api/v1/projects")
    logged = "\n".join(
        f"{record.getMessage()} {record.args!r} {getattr(record, 'request', '')!r}"
        for record in caplog.records
    )
    assert caplog.records  # something was logged (django.request's 4xx warnings)
    assert raw not in logged
    assert raw.split("_")[-1] not in logged
    assert raw not in err


def test_token_in_no_export(api_world):
    raw = api_world.tokens["lead"]
    client = api_world.client("lead")
    client.post("/api/v1/projects/shop/answers", [native_answer(1)])
    export = b"".join(client.get("/api/v1/projects/shop/claims.ndjson").streaming_content)
    assert raw.encode() not in export
    out = StringIO()
    call_command("export_claims", "--project", "shop", "--format", "jsonl", stdout=out)
    assert raw not in out.getvalue()
