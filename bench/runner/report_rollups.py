"""3b. The headline from rollups (issue 30) at 1M, 3M and 10M claims, in a child process each:
`--only report --size large`. PostgreSQL's parallel query compared at the largest size
(max_parallel_workers_per_gather 0 vs 2)."""

from __future__ import annotations

from bench.runner.common import Context, Row, human
from bench.runner.processes import child_run


def _ensure(ctx: Context, slug: str, claims: int, gold: int) -> None:
    from annotate.models import Claim, Project

    project = Project.objects.filter(slug=slug).first()
    if project is not None and Claim.objects.filter(project=project).count() == claims:
        return
    from bench.datagen_rollups import rollup_project_generate

    rollup_project_generate(slug=slug, claims=claims, gold=gold, say=ctx.say)


def bench_report_rollups(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    sizes = ctx.cfg["rollup_claims"]
    for claims in sizes:
        slug = f"rollups-{human(claims).lower()}"
        _ensure(ctx, slug, claims, ctx.cfg["rollup_gold"])
        size = f"{human(claims)} claims, {human(claims // 4)} answers, 5k gold, 4 strata, judge"
        limit = 5 if claims <= 1_000_000 else 60
        for workers in (2, 0) if claims == max(sizes) else (2,):
            label = f", {workers} parallel workers" if claims == max(sizes) else ""
            total = Row(
                3,
                f"report from rollups (headline + PPI++): total{label}",
                size,
                "s",
                target=f"≤ {limit} s" if workers else "—",
                meets=(lambda v, lim=limit: v <= lim) if workers else None,
            )
            rss = Row(
                3,
                f"report from rollups: peak RSS{label}",
                size,
                "MB",
                target="≤ 500 MB",
                meets=lambda v: v <= 500,
            )
            for run in ctx.repeats("report"):
                result, peak = child_run("report_rollups", {"slug": slug, "workers": workers})
                total.values.append(result["seconds"])
                rss.values.append(peak)
                ctx.say(
                    f"{slug} run {run + 1} ({workers} workers): {result['seconds']:.1f} s, "
                    f"{result['rows_read']:,} rows read, peak {peak:,.0f} MB"
                )
            rows += [total, rss]
    return rows
