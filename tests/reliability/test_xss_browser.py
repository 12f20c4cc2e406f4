"""XSS payloads in every text a user or an import file can supply render inert, checked in real
headless Chromium: after each page has loaded (images failed, handlers had their chance),
`window.__xss` is still undefined and no `javascript:` link exists."""

import pytest

from annotate.models import Answer, Claim, Gold, Label, Passage, Project
from judges.models import Canary
from metrics.services import snapshot_compute
from tests.reliability.world import world_build

SCRIPT = "<script>window.__xss=1</script>"
IMG = '<img src=x onerror="window.__xss=1">'
LINK = '<a href="javascript:window.__xss=1">click me</a>'
SVG = '"><svg onload="window.__xss=1">'
ALL = f"{SCRIPT} {IMG} {LINK} {SVG} javascript:window.__xss=1"

PAGES = [
    ("annotate:project-detail", "owner"),
    ("annotate:answer-detail", "owner"),
    ("annotate:label-claim", "analyst"),
    ("annotate:label-next", "analyst"),
    ("annotate:claims-edit", "owner"),
    ("annotate:facts", "owner"),
    ("annotate:adjudicate", "owner"),
    ("annotate:adjudicate-claim", "owner"),
    ("annotate:contradictions", "owner"),
    ("metrics:dashboard", "owner"),
    ("judges:judge-detail", "owner"),
    ("judges:run-detail", "owner"),
    ("judges:canary-list", "owner"),
]


def poisoned_world():
    world = world_build("XSS", slug="xss")
    Project.objects.filter(pk=world.project.pk).update(
        name=f"Project {SVG}", description=ALL, guidelines=ALL
    )
    Answer.objects.filter(pk=world.answer.pk).update(question=f"Q {ALL}", text=f"A {ALL}")
    Passage.objects.filter(pk=world.passage.pk).update(
        title=f"T {IMG}", text=world.passage.text + f" {ALL}", source_id=LINK
    )
    for claim in world.claims:
        Claim.objects.filter(pk=claim.pk).update(text=f"C {ALL}")
    Label.objects.filter(claim__project=world.project).update(note=f"N {ALL}")
    Label.objects.filter(annotator=world.users["lead"]).update(verdict="CONTRADICTED")
    Gold.objects.filter(claim__project=world.project).update(reason=f"R {ALL}")
    Canary.objects.filter(project=world.project).update(text=f"K {ALL}")
    snapshot_compute(snapshot_id=world.snapshot.pk)
    return world


@pytest.mark.browser
def test_payloads_render_inert_in_chromium(browser_page, figures):
    from django.urls import reverse

    world = poisoned_world()
    ids = world.ids()
    pages = {role: browser_page(world.users[role]) for role in ("owner", "analyst")}
    for page in pages.values():
        page.on("dialog", lambda dialog: dialog.dismiss())
    checked = 0
    for name, role in PAGES:
        page = pages[role]
        pattern_kwargs = {
            "annotate:answer-detail": ["answer_id"],
            "annotate:label-claim": ["claim_id"],
            "annotate:claims-edit": ["answer_id"],
            "annotate:facts": ["answer_id"],
            "annotate:adjudicate-claim": ["claim_id"],
            "judges:judge-detail": ["judge_id"],
            "judges:run-detail": ["run_id"],
        }.get(name, [])
        url = reverse(name, kwargs={"slug": "xss", **{k: ids[k] for k in pattern_kwargs}})
        response = page.goto(f"{page.base_url}{url}")
        assert response.status == 200, (name, response.status)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(150)
        content = page.content()
        assert "window.__xss=1" in content, f"{name}: the payload is not on the page at all"
        assert page.evaluate("typeof window.__xss") == "undefined", f"XSS ran on {name}"
        assert page.evaluate("document.querySelectorAll('a[href^=\"javascript:\" i]').length") == 0
        assert page.evaluate("document.querySelectorAll('img[src=x], svg[onload]').length") == 0, (
            f"{name}: an injected element exists"
        )
        checked += 1
    figures.add("web security", xss_pages_checked=checked, xss_payloads=5)
