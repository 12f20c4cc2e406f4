"""4. Judge throughput against the loopback LLM server, then the RAGAS peer rows."""

from __future__ import annotations

from bench.runner.common import Context, Row, _why, human, slug_for
from bench.runner.data import project_ensure
from bench.runner.processes import CONCURRENCY, LATENCY_S, LlmServer, child_run, server_calibrate
from bench.runner.ragas import bench_ragas


def bench_judge(ctx: Context) -> list[Row]:
    claims = ctx.cfg["judge_claims"]
    size = f"{human(claims)} claims, L = 100 ms, C = 32"
    share = Row(
        4,
        "judge throughput as share of C/L (320 claims/s)",
        size,
        "%",
        target="≥ 80%",
        meets=lambda v: v >= 80,
    )
    alone = Row(
        4,
        "loopback server alone (a trivial asyncio client, "
        f"{ctx.cfg.get('calibrate_seconds', 2.0):g} s at C = 32): share of C/L",
        "C = 32, L = 100 ms",
        "%",
    )
    rate = Row(4, "judge throughput", size, "claims/s")
    cpu = Row(
        4,
        "judge: CPU time per claim of the judging process, start to finish of the run",
        size,
        "ms",
    )
    calls = Row(4, "judge: endpoint calls per claim", size, "calls")
    tokens = Row(4, "judge: tokens per claim (prompt + completion)", size, "tokens")
    flowing = Row(
        4,
        "judge: calls per second while calls flow (first to last arrival at the server), "
        "as share of C/L",
        size,
        "%",
    )
    outside = Row(
        4,
        "judge: seconds of the run before the first and after the last endpoint call",
        size,
        "s",
    )
    slug = slug_for("judge", claims)
    project_ensure(ctx, slug, claims, labelled=0.0, gold=False, judge=False)
    server = LlmServer(LATENCY_S)
    try:
        for run in ctx.repeats("judge"):
            server.command("reset")
            calibration = server_calibrate(server, seconds=ctx.cfg.get("calibrate_seconds", 2.0))
            alone.values.append(100 * calibration["calls_per_s"] / (CONCURRENCY / LATENCY_S))
            server.command("reset")
            result, _peak = child_run(
                "judge",
                {
                    "slug": slug,
                    "base_url": server.base_url,
                    "concurrency": CONCURRENCY,
                    "latency_s": LATENCY_S,
                },
                env={"CELERY_BROKER_URL": ""},
            )
            seen = server.stats()
            share.values.append(100 * result["claims_per_s"] / result["limit_per_s"])
            rate.values.append(result["claims_per_s"])
            if "cpu_seconds" in result:
                cpu.values.append(1000 * result["cpu_seconds"] / max(result["claims"], 1))
            calls.values.append(seen["calls"] / max(result["claims"], 1))
            tokens.values.append(
                (result["prompt_tokens"] + result["completion_tokens"]) / max(result["done"], 1)
            )
            if seen["first"] is not None and "mono_start" in result:
                span = max(seen["last"] - seen["first"], 1e-9)
                flowing.values.append(100 * seen["calls"] / span / result["limit_per_s"])
                outside.values.append(
                    (seen["first"] - result["mono_start"]) + (result["mono_end"] - seen["last"])
                )
            ctx.say(
                f"judge run {run + 1}: {result['claims_per_s']:.0f} claims/s "
                f"({share.values[-1]:.0f}% of C/L; the server alone gave "
                f"{alone.values[-1]:.0f}%), {seen['calls']} calls, verdicts {result['verdicts']}"
            )
    finally:
        server.stop()
    rows = [share, alone, rate, flowing, outside, cpu, calls, tokens]
    try:
        rows += bench_ragas(ctx)
    except Exception as error:  # RAGAS is a peer comparison; its failure must not hide ours
        rows.append(Row(4, "RAGAS faithfulness (peer)", "—", "", skipped=_why(error)))
    return rows
