"""The Content-Security-Policy in real Chromium: the watch on every browser test reports an
injected inline script or style, and the app's own pages and htmx exchanges report none."""

import pytest
from django.urls import reverse

from tests.reliability.world import world_build

pytestmark = pytest.mark.browser


def test_the_watch_reports_an_inline_script_on_the_app_origin(browser_page):
    world = world_build("CSPW", slug="cspw")
    page = browser_page(world.users["analyst"])
    page.goto(f"{page.base_url}/")
    assert page.csp_violations == []
    # Inline script and style attribute added to a page of ours: refused and reported.
    page.evaluate(
        """() => {
        const script = document.createElement("script");
        script.textContent = "window.__ran = 1";
        document.body.appendChild(script);
        document.body.setAttribute("style", "background: red");
    }"""
    )
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.__ran") is None
    directives = {v.get("directive") for v in page.csp_violations if "directive" in v}
    assert {"script-src-elem", "style-src-attr"} <= directives, page.csp_violations
    # A whole document written on the app origin: its inline script is refused too (reported
    # on the console, as document.open() drops the page's listeners).
    page.csp_violations.clear()
    page.set_content("<html><body><script>window.__ran = 2</script><p>x</p></body></html>")
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.__ran") is None
    assert page.csp_violations, "an inline script written into the page was not reported"
    page.csp_violations.clear()  # provoked on purpose: not this test's failure


PAGES = [
    ("annotate:project-list", "owner", {}),
    ("annotate:project-detail", "owner", {}),
    ("annotate:answer-detail", "owner", {"answer_id"}),
    ("annotate:settings", "owner", {}),
    ("annotate:import", "owner", {}),
    ("annotate:export", "owner", {}),
    ("annotate:import-job", "owner", {"import_job_id"}),
    ("annotate:claims-edit", "owner", {"answer_id"}),
    ("annotate:facts", "owner", {"answer_id"}),
    ("annotate:adjudicate", "owner", {}),
    ("annotate:contradictions", "owner", {}),
    ("annotate:label-next", "analyst", {}),
    ("metrics:dashboard", "owner", {}),
    ("judges:judge-list", "owner", {}),
    ("judges:judge-detail", "owner", {"judge_id"}),
    ("judges:run-detail", "owner", {"run_id"}),
    ("judges:canary-list", "owner", {}),
    ("testsets:index", "owner", {}),
    ("testsets:detail", "owner", {"testset_id"}),
    ("testsets:import", "owner", {}),
    ("testsets:review", "analyst", {"testset_id"}),
    ("testsets:runs", "owner", {}),
    ("testsets:run-detail", "owner", {"sut_run_id"}),
    ("password_change", "owner", set()),
]


def test_every_page_and_htmx_exchange_runs_under_the_policy(browser_page):
    from metrics.services import snapshot_compute

    world = world_build("CSPP", slug="cspp")
    snapshot_compute(snapshot_id=world.snapshot.pk)
    world.users["owner"].is_staff = True
    world.users["owner"].is_superuser = True
    world.users["owner"].save()
    ids = world.ids()
    pages = {role: browser_page(world.users[role]) for role in ("owner", "analyst")}
    for name, role, keys in PAGES:
        kwargs = {k: ids[k] for k in keys}
        if (
            name.startswith(("annotate:", "metrics:", "judges:", "testsets:"))
            and name != "annotate:project-list"
        ):
            kwargs["slug"] = "cspp"
        page = pages[role]
        response = page.goto(f"{page.base_url}{reverse(name, kwargs=kwargs)}")
        assert response.status == 200, (name, response.status)
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")
    owner = pages["owner"]
    # htmx: the dashboard's recompute swaps in its polling progress bar and then the report.
    owner.goto(f"{owner.base_url}{reverse('metrics:dashboard', args=['cspp'])}")
    owner.click("text=Recompute")
    owner.wait_for_load_state("networkidle")
    # The labelling screen: save a verdict by keyboard (htmx swap of the next claim).
    analyst = pages["analyst"]
    analyst.goto(f"{analyst.base_url}{reverse('annotate:label-next', args=['cspp'])}")
    analyst.keyboard.press("3")
    analyst.keyboard.press("Enter")
    analyst.wait_for_load_state("networkidle")
    # The test-set review screen: accept by keyboard (htmx swap of the next item).
    analyst.goto(
        f"{analyst.base_url}{reverse('testsets:review', args=['cspp', ids['testset_id']])}"
    )
    analyst.keyboard.press("a")
    analyst.wait_for_selector("text=Nothing left to review")
    # The admin, as staff.
    for path in (reverse("admin:index"), reverse("admin:auth_user_changelist")):
        assert owner.goto(f"{owner.base_url}{path}").status == 200
        owner.wait_for_load_state("networkidle")
    for page in pages.values():
        page.wait_for_timeout(200)
        assert page.csp_violations == [], page.csp_violations
