"""3. Report: snapshot_compute over the 1M-claim project, in a child process."""

from __future__ import annotations

from bench.runner.common import Context, Row, human, slug_for
from bench.runner.data import project_ensure
from bench.runner.processes import child_run


def bench_report(ctx: Context) -> list[Row]:
    if "rollup_claims" in ctx.cfg:
        from bench.runner.report_rollups import bench_report_rollups

        return bench_report_rollups(ctx)
    claims = ctx.cfg["big_claims"]
    size = f"{human(claims)} claims, gold + judge"
    total = Row(
        3,
        "report snapshot (snapshot_compute): total",
        size,
        "s",
        target="≤ 60 s",
        meets=lambda v: v <= 60,
    )
    stats_row = Row(
        3,
        "report snapshot: time in metrics.stats",
        size,
        "s",
        target="≤ 10 s",
        meets=lambda v: v <= 10,
    )
    reads = Row(3, "report snapshot: time in metrics.selectors reads", size, "s")
    cpu = Row(3, "report snapshot: CPU time of the computing process", size, "CPU-s")
    rss = Row(
        3, "report snapshot: peak RSS", size, "MB", target="≤ 2,048 MB", meets=lambda v: v <= 2048
    )
    slug = slug_for("labelled", claims)
    project_ensure(ctx, slug, claims, labelled=1.0, gold=True, judge=True)
    for run in ctx.repeats("report"):
        result, peak = child_run("report", {"slug": slug})
        total.values.append(result["seconds"])
        stats_row.values.append(result["stats_seconds"])
        reads.values.append(result["reads_seconds"])
        cpu.values.append(result["cpu_seconds"])
        rss.values.append(peak)
        ctx.say(
            f"report run {run + 1}: {result['seconds']:.1f} s total, "
            f"{result['stats_seconds']:.1f} s stats, {result['reads_seconds']:.1f} s reads, "
            f"peak {peak:,.0f} MB"
        )
    return [total, stats_row, reads, cpu, rss]
