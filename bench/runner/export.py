"""5. CSV export of the 1M- and 10k-claim projects, in child processes."""

from __future__ import annotations

import statistics

from bench.env import OUT
from bench.runner.common import Context, Row, fmt, human, slug_for
from bench.runner.data import project_ensure
from bench.runner.processes import child_run

EXPORT_LIMIT_S = {"small": 20.0, "default": 120.0, "full": 900.0}


def bench_export(ctx: Context) -> list[Row]:
    big, small = ctx.cfg["big_claims"], ctx.cfg["small_claims"]
    limit = EXPORT_LIMIT_S[ctx.size]
    seconds = Row(
        5,
        "export CSV (claims_export)",
        f"{human(big)} labelled claims",
        "s",
        target="≤ 30 s",
        meets=lambda v: v <= 30,
    )
    rate = Row(
        5,
        "export CSV: claims written per second",
        f"{human(big)} labelled claims",
        "claims/s",
        target="≥ 33,333 claims/s (30 s for 1M)",
        meets=lambda v: v >= 1_000_000 / 30,
    )
    rss_big = Row(
        5,
        "export CSV: peak RSS",
        f"{human(big)} labelled claims",
        "MB",
        target="constant (≈ small size)",
    )
    rss_small = Row(5, "export CSV: peak RSS", f"{human(small)} labelled claims", "MB")
    cpu = Row(
        5,
        "export CSV: claims per CPU-second of the exporting process",
        f"{human(big)} labelled claims",
        "claims/CPU-s",
    )
    big_slug, small_slug = slug_for("labelled", big), slug_for("labelled", small)
    project_ensure(ctx, big_slug, big, labelled=1.0, gold=True, judge=True)
    project_ensure(ctx, small_slug, small, labelled=1.0, gold=True, judge=True)
    OUT.mkdir(parents=True, exist_ok=True)
    partial = []
    for run in ctx.repeats("export"):
        result, peak = child_run(
            "export", {"slug": big_slug, "path": str(OUT / "export.csv"), "limit_s": limit}
        )
        rate.values.append(result["rows_per_s"])
        cpu.values.append(result["rows"] / max(result["cpu_seconds"], 1e-9))
        rss_big.values.append(peak)
        if result["complete"]:
            seconds.values.append(result["seconds"])
        else:
            partial.append(result)
        ctx.say(
            f"export run {run + 1}: {result['rows']:,} of {result['claims']:,} claims in "
            f"{result['seconds']:.1f} s ({result['rows_per_s']:,.0f} claims/s), "
            f"peak {peak:,.0f} MB{'' if result['complete'] else ', stopped at the limit'}"
        )
        _result, peak_small = child_run(
            "export", {"slug": small_slug, "path": str(OUT / "export-small.csv")}
        )
        rss_small.values.append(peak_small)
        if partial:
            break  # one stopped run says enough; the budget goes to the other measurements
    if partial:
        got = partial[0]
        estimate = got["claims"] / max(got["rows_per_s"], 1e-9)
        seconds.skipped = (
            f"stopped at the {limit:.0f} s limit after {got['rows']:,} of {got['claims']:,} "
            f"claims; at {got['rows_per_s']:,.0f} claims/s the whole export takes ≈ "
            f"{estimate:,.0f} s (not met)"
        )
    base = statistics.median(rss_small.values)
    # Constant: the big export's peak stays within 25% (or 50 MB) of the small one's.
    rss_big.meets = lambda v: v <= max(base * 1.25, base + 50)
    rss_big.target = f"constant: ≤ max(1.25 × {fmt(base)}, {fmt(base)} + 50) MB"
    if partial:
        rss_big.note = f"over the first {partial[0]['rows']:,} claims"
    return [seconds, rate, cpu, rss_big, rss_small]
