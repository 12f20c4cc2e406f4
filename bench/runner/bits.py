"""8. Grounding-bits throughput against the loopback server (issue 18): two /completions
scoring calls per claim, so the ceiling at C calls in flight and latency L is C/(2L) claims/s
(160 at C = 32, L = 100 ms); the target is 80% of it. Each run is followed by a run of the
chat judge on the same server and project, so a machine busy with other work shows in both
figures at once."""

from __future__ import annotations

from bench.runner.common import Context, Row, human, slug_for
from bench.runner.data import project_ensure
from bench.runner.processes import CONCURRENCY, LATENCY_S, LlmServer, child_run


def bench_bits(ctx: Context) -> list[Row]:
    claims = ctx.cfg["judge_claims"]
    size = f"{human(claims)} claims, L = 100 ms, C = 32"
    limit = CONCURRENCY / (2 * LATENCY_S)
    share = Row(
        8,
        f"grounding-bits throughput as share of C/(2L) ({limit:g} claims/s)",
        size,
        "%",
        target="≥ 80%",
        meets=lambda v: v >= 80,
    )
    rate = Row(8, "grounding-bits throughput", size, "claims/s")
    calls = Row(8, "grounding bits: endpoint calls per claim", size, "calls")
    cpu = Row(8, "grounding bits: CPU time per claim of the judging process", size, "ms")
    control = Row(
        8,
        "control: the chat judge right after, same server and project, as share of C/L",
        size,
        "%",
    )
    slug = slug_for("judge", claims)
    project_ensure(ctx, slug, claims, labelled=0.0, gold=False, judge=False)
    server = LlmServer(LATENCY_S)
    try:
        for run in ctx.repeats("bits"):
            server.command("reset")
            result, _peak = child_run(
                "judge",
                {
                    "slug": slug,
                    "base_url": server.base_url,
                    "concurrency": CONCURRENCY,
                    "latency_s": LATENCY_S,
                    "backend": "bits",
                },
                env={"CELERY_BROKER_URL": ""},
            )
            seen = server.stats()
            share.values.append(100 * result["claims_per_s"] / result["limit_per_s"])
            rate.values.append(result["claims_per_s"])
            calls.values.append(seen["calls"] / max(result["claims"], 1))
            cpu.values.append(1000 * result["cpu_seconds"] / max(result["claims"], 1))
            server.command("reset")
            chat, _peak = child_run(
                "judge",
                {
                    "slug": slug,
                    "base_url": server.base_url,
                    "concurrency": CONCURRENCY,
                    "latency_s": LATENCY_S,
                },
                env={"CELERY_BROKER_URL": ""},
            )
            control.values.append(100 * chat["claims_per_s"] / chat["limit_per_s"])
            ctx.say(
                f"bits run {run + 1}: {result['claims_per_s']:.1f} claims/s "
                f"({share.values[-1]:.0f}% of C/(2L)), {seen['calls']} calls, "
                f"verdicts {result['verdicts']}; the chat judge after it: "
                f"{control.values[-1]:.0f}% of C/L"
            )
    finally:
        server.stop()
    return [share, control, rate, calls, cpu]
