"""A lead splits an answer by LLM from its claims page in real Chromium; a real worker calls
the endpoint, the progress shows, and the page reloads with the new claims."""

import os
import time
import urllib.request

import pytest

from judges.models import SplitJob
from tests.factories import PASSWORD, AnswerFactory, JudgeFactory, MembershipFactory
from tests.llm_server import start_server
from tests.services import CHROMIUM

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls beside Playwright
ANSWER = "Refunds take 14 days. Refunds are issued to the original card."


@pytest.mark.browser
@pytest.mark.worker
def test_split_by_llm_from_the_claims_page_shows_progress_then_the_claims(
    llm_endpoints, celery_worker, live_server, settings
):
    from playwright.sync_api import sync_playwright

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    base_url, ctl = start_server(latency_s=1.5)  # slow enough to watch it wait
    llm_endpoints(loopback=base_url)
    try:
        lead = MembershipFactory(role="lead").user
        project = lead.memberships.get().project
        lead.set_password(PASSWORD)
        lead.save()
        judge = JudgeFactory(
            project=project, backend="openai", model="loopback", endpoint="loopback"
        )
        answer = AnswerFactory(project=project, text=ANSWER)
        urllib.request.urlopen(f"{live_server.url}/login/", timeout=120).close()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                ],
            )
            page = browser.new_page()
            page.set_default_timeout(60_000)
            polls = []
            page.on("request", lambda r: polls.append(r.url) if "?poll=" in r.url else None)
            page.goto(f"{live_server.url}/login/")
            page.fill("#id_username", lead.username)
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(f"{live_server.url}/p/{project.slug}/answers/{answer.pk}/claims/")
            page.select_option("#split-judge", str(judge.pk))
            page.get_by_role("button", name="Split by LLM").click()
            page.get_by_test_id("split-job").wait_for()
            waiting = page.get_by_test_id("split-progress").inner_text()
            assert "Waiting for a worker" in waiting or "0 of 1" in waiting
            page.get_by_test_id("split-result").wait_for()  # after the reload, from the panel
            page.get_by_test_id("claim-item").nth(1).wait_for()
            texts = [box.input_value() for box in page.locator("[data-claim-text]").all()]
            assert texts == [
                "Refunds take 14 days.",
                "Refunds are issued to the original card.",
            ]
            assert polls, "the progress was polled"
            seen = len(polls)
            time.sleep(2.5)
            assert len(polls) == seen, "polling went on after the split finished"
            browser.close()
        job = SplitJob.objects.get()
        assert (job.status, job.claims_created) == ("done", 2)
        assert [c.kind for c in ctl.log] == ["decompose"]
    finally:
        ctl.stop()
