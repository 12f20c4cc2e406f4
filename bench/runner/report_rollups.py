"""14. The headline from rollups (issue 30) at 1M, 3M and 10M claims, in a child process each:
`--only report --size large`. PostgreSQL's parallel query compared at the largest size
(max_parallel_workers_per_gather 0 vs 2). `BENCH_ROLLUP_CLAIMS=1000000,3000000` measures those
sizes only (the others' rows are kept)."""

from __future__ import annotations

import os
import time

from bench.runner.common import Context, Row, human
from bench.runner.processes import child_run


def _ensure(ctx: Context, slug: str, claims: int, gold: int) -> None:
    from annotate.models import Claim, Project

    project = Project.objects.filter(slug=slug).first()
    if project is not None and Claim.objects.filter(project=project).count() == claims:
        return
    from bench.datagen_rollups import rollup_project_generate

    started = time.perf_counter()
    rollup_project_generate(slug=slug, claims=claims, gold=gold, say=ctx.say)
    ctx.generated[slug] = time.perf_counter() - started  # the header's "data generated" line


def _row(label: str, size: str, unit: str, limit: float | None) -> Row:
    if limit is None:
        return Row(14, label, size, unit, target="—", meets=None)
    return Row(14, label, size, unit, target=f"≤ {limit:g} {unit}", meets=lambda v: v <= limit)


def bench_report_rollups(ctx: Context) -> list[Row]:
    """Per size: the incremental recompute after one new gold label (what the dashboard's
    Recompute costs once the state is built), the state's one-time build, and the one
    statement that aggregates every claim afresh (at the largest size with 2 and 0 parallel
    workers)."""
    rows: list[Row] = []
    sizes = ctx.cfg["rollup_claims"]
    if os.environ.get("BENCH_ROLLUP_CLAIMS"):
        sizes = [int(part) for part in os.environ["BENCH_ROLLUP_CLAIMS"].split(",")]
    for claims in sizes:
        slug = f"rollups-{human(claims).lower()}"
        _ensure(ctx, slug, claims, ctx.cfg["rollup_gold"])
        size = f"{human(claims)} claims, {human(claims // 4)} answers, 5k gold, 4 strata, judge"
        label_total = _row(
            "report from rollups, incremental: one new gold label, then recompute",
            size,
            "s",
            2 if claims >= 10_000_000 else 5,
        )
        label_rss = _row("report from rollups, incremental: peak RSS", size, "MB", 500)
        build = _row("report from rollups, incremental: the state's first build", size, "s", None)
        calibration = _row(
            "report from rollups, incremental: then calibration and CRC from the state's "
            "confidence counts",
            size,
            "s",
            None,
        )
        for run in ctx.repeats("report"):
            result, peak = child_run(
                "report_rollups", {"slug": slug, "workers": 2, "mode": "label"}, timeout=1800
            )
            label_total.values.append(result["seconds"])
            label_rss.values.append(peak)
            if result["build_seconds"] is not None:
                build.values.append(result["build_seconds"])
            calibration.values.append(result["calibration_seconds"])
            ctx.say(
                f"{slug} run {run + 1} (one label): {result['seconds']:.2f} s, "
                f"{result['answers_refreshed']:,} answers refreshed, "
                f"{result['rows_read']:,} rows read, peak {peak:,.0f} MB"
                + (f"; build {result['build_seconds']:.1f} s" if result["build_seconds"] else "")
                + f"; calibration {result['calibration_seconds']:.2f} s from "
                f"{result['confidence_rows']:,} confidence rows"
            )
        rows += [label_total, label_rss] + ([build] if build.values else []) + [calibration]
        for workers in (2, 0) if claims == max(sizes) else (2,):
            label = f", {workers} parallel workers" if claims == max(sizes) else ""
            total = _row(
                f"report from rollups, one statement over every claim: total{label}",
                size,
                "s",
                None,
            )
            rss = _row(f"report from rollups, one statement: peak RSS{label}", size, "MB", 500)
            for run in ctx.repeats("report"):
                result, peak = child_run(
                    "report_rollups", {"slug": slug, "workers": workers, "mode": "fresh"}
                )
                total.values.append(result["seconds"])
                rss.values.append(peak)
                ctx.say(
                    f"{slug} run {run + 1} ({workers} workers): {result['seconds']:.1f} s, "
                    f"{result['rows_read']:,} rows read, peak {peak:,.0f} MB"
                )
            rows += [total, rss]
    return rows
