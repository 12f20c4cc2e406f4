"""A lead watches a run's progress bar fill in real Chromium while a real worker judges."""

import os
import time
import urllib.request

import pytest

from judges.models import JudgeRun
from tests.factories import PASSWORD, JudgeFactory, MembershipFactory, ProjectFactory
from tests.judges.conftest import make_claims
from tests.llm_server import start_server
from tests.services import CHROMIUM

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls beside Playwright
N_CLAIMS = 40


@pytest.mark.browser
@pytest.mark.worker
def test_progress_bar_polls_until_done_then_stops(
    llm_endpoints, celery_worker, live_server, settings
):
    from playwright.sync_api import sync_playwright

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    base_url, ctl = start_server(latency_s=0.2)
    llm_endpoints(loopback=base_url)  # the worker reads the same declaration
    try:
        project = ProjectFactory()
        lead = MembershipFactory(project=project, role="lead").user
        lead.set_password(PASSWORD)
        lead.save()
        make_claims(project, [f"Claim {i} about refunds" for i in range(N_CLAIMS)])
        judge = JudgeFactory(
            project=project,
            backend="openai",
            model="loopback",
            endpoint="loopback",
            max_concurrency=2,
            timeout_seconds=5,
            verify_prompt="",
        )
        # The live server's first request imports every view module: do it before the clock.
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
            progress_requests = []
            page.on(
                "request",
                lambda r: (
                    progress_requests.append(time.monotonic()) if "/progress/" in r.url else None
                ),
            )
            page.goto(f"{live_server.url}/login/")
            page.fill("#id_username", lead.username)
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(f"{live_server.url}/p/{project.slug}/judges/{judge.pk}/")
            page.click("text=Start run")

            seen = set()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                text = page.locator("#run-progress p").first.inner_text()
                seen.add(text.split(" — ")[-1])
                if text.startswith("Done"):
                    break
                time.sleep(0.2)
            run = JudgeRun.objects.get()
            assert run.status == "done"
            assert f"{N_CLAIMS} of {N_CLAIMS} claims processed." in seen
            # The bar moved while we watched, without our reloading the page.
            assert any(
                s.endswith("claims processed.") and not s.startswith(("0 of", f"{N_CLAIMS} of"))
                for s in seen
            ), seen
            page.wait_for_selector("text=Agreement with gold")  # the page reloaded once done
            polls = len(progress_requests)
            time.sleep(2.5)
            assert len(progress_requests) == polls, "polling went on after the run finished"
            browser.close()
    finally:
        ctl.stop()
