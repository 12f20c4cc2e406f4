"""Every page a lead and an analyst can reach, in Chromium at 800 px wide: nothing scrolls
the page sideways (a wide table scrolls inside its own box); and axe-core, vendored from the
npm registry (tests/browser/vendor/, its licence beside it), finds no serious or critical
accessibility violation on the labelling screen, the dashboard (every section open) and the
audit card page."""

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate.models import Membership, Role

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "vendor" / "axe-4.14.1.min.js"
SKIP = re.compile(r"logout|/download|\.csv|\.json|\.jsonl|\.md$|format=|/admin/|#")
WIDE = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def shape(path: str) -> str:
    """Pages of one kind (every answer's detail) are visited once."""
    return re.sub(r"\d+", "N", path.split("?")[0])


def crawl(page, start: str, *, limit: int = 40) -> dict[str, list[int]]:
    """Breadth first over the site's own links from `start`; the widths of each page."""
    base = page.base_url
    queue, seen, widths = [start], set(), {}
    while queue and len(widths) < limit:
        path = queue.pop(0)
        if shape(path) in seen:
            continue
        seen.add(shape(path))
        response = page.goto(base + path)
        if response is None or "text/html" not in response.headers.get("content-type", ""):
            continue
        widths[path] = page.evaluate(WIDE)
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        for href in hrefs:
            if href.startswith("/") and not SKIP.search(href) and shape(href) not in seen:
                queue.append(href)
    return widths


@pytest.fixture
def demo(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_load", stdout=io.StringIO())
    return {m.user.username: m.user for m in Membership.objects.filter(project__slug="demo")}


@pytest.mark.parametrize("who", ["lead", "ana"])
def test_no_page_scrolls_sideways_at_800_px(browser_page, demo, who):
    page = browser_page(demo[who], width=800, height=900)
    widths = crawl(page, "/")
    assert len(widths) >= (12 if who == "lead" else 5), sorted(widths)
    wide = {path: w for path, w in widths.items() if w[0] > w[1]}
    assert not wide, f"pages wider than the window at 800 px: {wide}"


def axe_serious(page) -> list[dict]:
    # Evaluated by the browser's debugging protocol: not a <script> the page's CSP would stop.
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    result = page.evaluate(
        "() => axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target)})))"
    )
    return result


def test_axe_finds_nothing_serious_on_the_labelling_screen_the_dashboard_and_the_audit_card(
    browser_page, demo, screenshot
):
    assert demo["lead"].memberships.get(project__slug="demo").role == Role.OWNER
    practice = "/p/demo-practice/label/"
    ana = browser_page(demo["ana"], width=1280, height=720)
    ana.goto(ana.base_url + practice)
    assert axe_serious(ana) == []
    lead = browser_page(demo["lead"], width=1280, height=720)
    for path in (
        "/p/demo/dashboard/",
        "/p/demo/dashboard/?open=all",
        "/p/demo/dashboard/audit-card/page/",
    ):
        lead.goto(lead.base_url + path)
        assert axe_serious(lead) == [], path


def test_a_leads_navigation_fits_one_line_at_1280_px(browser_page, demo, screenshot):
    page = browser_page(demo["lead"], width=1280, height=720)
    page.goto(page.base_url + "/p/demo/")
    middles = page.eval_on_selector_all(
        ".topbar a, .topbar button",
        "els => els.map(e => { const b = e.getBoundingClientRect(); return b.top + b.height / 2; })",
    )
    assert len(middles) >= 12  # brand, nine project links, password, log out
    assert max(middles) - min(middles) <= 6, middles  # one line, not two
    # ...and nothing in it overlaps or wraps inside itself ("Contradictions" ran into the
    # user's name, "Log out" broke over two lines, when a tenth link came in).
    boxes = page.eval_on_selector_all(
        ".topbar a, .topbar button, .topbar .user > span",
        "els => els.filter(e => e.getClientRects().length).map(e => {"
        " const b = e.getBoundingClientRect(); const lines = e.getClientRects().length;"
        " return [b.left, b.right, b.height, e.textContent.trim(), lines]; })",
    )
    boxes.sort()
    for (_, right, _, name, _), (left, _, _, after, _) in zip(boxes, boxes[1:], strict=False):
        assert right <= left + 1, f"{name!r} overlaps {after!r}"
    lowest = min(height for _, _, height, _, _ in boxes)
    for _, _, height, name, _ in boxes:
        assert height <= 1.6 * lowest, f"{name!r} wraps onto two lines"
    assert page.evaluate(WIDE)[0] <= 1280
    screenshot(page, "screens-nav-1280.png", full_page=False)
