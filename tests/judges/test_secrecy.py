"""The API key is read from the environment and never stored, logged, or shown."""

import logging

import pytest
from django.urls import reverse

from judges.models import Canary, Judge, JudgeFailure, JudgeRun, JudgeVerdict
from judges.services import judge_run_start
from tests.factories import PASSWORD
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db

KEY = "sk-test-Zx81qPw0rTy7uIo3"


def _everything_stored() -> str:
    rows = []
    for model in (Judge, JudgeRun, JudgeVerdict, JudgeFailure, Canary):
        rows.extend(repr(row) for row in model.objects.values())
    return "\n".join(rows)


def test_api_key_never_reaches_db_logs_or_pages(
    client,
    lead,
    project,
    openai_judge,
    llm,
    llm_endpoints,
    monkeypatch,
    caplog,
    django_capture_on_commit_callbacks,
):
    base_url, ctl = llm
    monkeypatch.setenv("FA_JUDGE_KEY", KEY)
    llm_endpoints({"name": "loopback", "base_url": base_url, "api_key_env": "FA_JUDGE_KEY"})
    make_claims(project, ["Refunds are processed within 14 days", "Shoes fly", "Hats sing"])
    ctl.fail("500", claim="Shoes fly", times=None)  # a failure row with an error message
    ctl.fail("429", claim="Hats sing", retry_after=0.1)  # a logged retry
    caplog.set_level(logging.DEBUG)
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_start(judge=openai_judge)
    run.refresh_from_db()
    assert (run.status, run.done, run.failed) == ("done", 2, 1)
    # The key did go to the endpoint, in the Authorization header...
    assert {c.authorization for c in ctl.log} == {f"Bearer {KEY}"}
    assert "retry 1/" in caplog.text  # (the retry was logged)

    # ...and nowhere else. Then an endpoint that echoes the key back in its error message:
    ctl.clear_faults()
    ctl.fail("401", times=None)
    with django_capture_on_commit_callbacks(execute=True):
        refused = judge_run_start(judge=openai_judge)
    refused.refresh_from_db()
    assert refused.status == "failed"
    assert refused.error == (
        "the endpoint refused the key: HTTP 401 Unauthorized (invalid_request_error)"
    )  # summarised: the reply's message quoted the key

    client.login(username=lead.username, password=PASSWORD)
    pages = [
        client.get(reverse("judges:judge-list", args=[project.slug])),
        client.get(reverse("judges:judge-detail", args=[project.slug, openai_judge.pk])),
        client.get(reverse("judges:run-detail", args=[project.slug, run.pk])),
        client.get(reverse("judges:run-detail", args=[project.slug, refused.pk])),
    ]
    assert all(page.status_code == 200 for page in pages)
    assert "loopback" in pages[1].content.decode()  # the endpoint's name is shown
    for text in [_everything_stored(), caplog.text, *(p.content.decode() for p in pages)]:
        assert KEY not in text
        assert KEY[8:] not in text  # nor a tail of it
