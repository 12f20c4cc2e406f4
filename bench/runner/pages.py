"""6. Dashboard and project page server time, in-process in a child."""

from __future__ import annotations

from bench.runner.common import Context, Row, human, slug_for
from bench.runner.data import project_ensure
from bench.runner.processes import child_run


def bench_pages(ctx: Context) -> list[Row]:
    rows = []
    for claims, slug in (
        (ctx.cfg["small_claims"], slug_for("labelled", ctx.cfg["small_claims"])),
        (ctx.cfg["big_claims"], slug_for("labelled", ctx.cfg["big_claims"])),
    ):
        project_ensure(ctx, slug, claims, labelled=1.0, gold=True, judge=True)
        size = f"{human(claims)} claims, stored snapshot"
        result, _peak = child_run("pages", {"slug": slug, "requests": ctx.cfg["page_requests"]})
        times = result["times"]
        rows.append(
            Row(
                6,
                "dashboard server time (in-process)",
                size,
                "ms",
                [t * 1000 for t in times["dashboard"]],
                "≤ 200 ms",
                lambda v: v <= 200,
                note=f"{result['queries']['dashboard']} queries",
            )
        )
        rows.append(
            Row(
                6,
                "project page server time (in-process)",
                size,
                "ms",
                [t * 1000 for t in times["project"]],
                "≤ 50 ms",
                lambda v: v <= 50,
                note=f"{result['queries']['project']} queries",
            )
        )
        if result["snapshot_computed_first"]:
            ctx.notes.append(f"pages: the {slug} snapshot was computed before timing (untimed)")
    return rows
