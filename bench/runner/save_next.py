"""1. Save-and-next: gunicorn on loopback, 1 and 16 simulated analysts (bench.loadgen)."""

from __future__ import annotations

import asyncio

from bench.env import OUT
from bench.runner.common import Context, Row, human, slug_for
from bench.runner.data import project_ensure


def bench_save_next(ctx: Context) -> list[Row]:
    from bench.datagen import BENCH_PASSWORD
    from bench.loadgen import (
        access_log_size,
        access_log_times,
        analysts_login,
        gunicorn_start,
        percentile,
        save_next_run,
    )

    # Mean pause of a simulated analyst between saves (bench/loadgen.py): far shorter than a
    # real analyst's, so the load is still heavier than 16 people labelling.
    think_mean = 1.0
    claims = ctx.cfg["queue_claims"]
    size = f"{human(claims)} claims"
    at_client = "save-and-next latency at the client (loopback)"
    # gunicorn's own request time from its access log (bench/loadgen.py says what it covers).
    at_server = "save-and-next server time (gunicorn's request time)"
    # The 16-analyst target is read against analysts who pause between saves (think time);
    # the closed loop with no pause is kept as a stress row (see bench/loadgen.py).
    think_label = (
        f"16 analysts, think time mean {think_mean:g} s (still far faster than a person reads a "
        "pile; the target applies to this row)"
    )
    stress_label = "16 analysts, no think time, stress (16 requests always queued)"
    phases = {"1": "1 analyst, back to back", "think": think_label, "16": stress_label}
    # The targets are on the server time; the client rows carry them too, as the client
    # time is an upper bound of the server's.
    targets = {
        ("1", 50): ("≤ 15 ms", lambda v: v <= 15),
        ("think", 95): ("≤ 50 ms", lambda v: v <= 50),
    }
    rows = {}
    for key, label in phases.items():
        for where, what in (("", at_client), ("server_", at_server)):
            for q in (50, 95, 99):
                target, meets = targets.get((key, q), ("—", None))
                rows[f"{where}p{q}_{key}"] = Row(
                    1, f"{what} p{q}, {label}", size, "ms", target=target, meets=meets
                )
    rows["rate_think"] = Row(1, f"saves per second, {think_label}", size, "saves/s")
    rows["rate_16"] = Row(1, f"saves per second, {stress_label}", size, "saves/s")
    rows["cpu"] = Row(
        1, "gunicorn CPU per request (workers' user + system time / requests)", size, "CPU-ms"
    )
    slug = slug_for("queue", claims)
    # Reused between runs: a run labels a few thousand of its ~70k open claims, which does not
    # change what the queue's queries cost.
    project_ensure(ctx, slug, claims, labelled=0.3, gold=False, judge=False)
    from django.contrib.auth import get_user_model

    analysts = list(
        get_user_model()
        .objects.filter(username__startswith=f"{slug}-a")
        .order_by("username")
        .values_list("username", flat=True)
    )
    # Autovacuum is off on this machine's PostgreSQL: earlier runs' reservations and labels
    # would stay as dead rows and stale statistics under the queue's query. Untimed.
    from bench.datagen import tables_vacuum

    tables_vacuum()
    ctx.notes.append(
        "save_next: VACUUM ANALYZE of the labelling tables before measuring (autovacuum is off "
        "on this machine's PostgreSQL; a production server runs it)"
    )
    server = gunicorn_start(log=OUT / "gunicorn.log")
    errors: list[str] = []
    unlogged: list[str] = []  # phases whose access log did not hold one line per save
    think_seconds = ctx.cfg.get("think_seconds", 2 * ctx.cfg["many_seconds"])
    try:

        async def drive():
            team = await analysts_login(server.base_url, analysts[:16], BENCH_PASSWORD)
            try:
                # Warm up the workers' connections and caches.
                await save_next_run(team[:4], slug, saves=5, seconds=5)
                for run in ctx.repeats("save_next"):
                    cpu_before = server.cpu_seconds()
                    runs = {
                        "1": lambda: save_next_run(
                            team[:1], slug, saves=ctx.cfg["one_saves"], seconds=60
                        ),
                        "think": lambda run=run: save_next_run(
                            team,
                            slug,
                            saves=10_000,
                            seconds=think_seconds,
                            think=think_mean,
                            seed=run + 1,
                        ),
                        "16": lambda: save_next_run(
                            team, slug, saves=10_000, seconds=ctx.cfg["many_seconds"]
                        ),
                    }
                    results = {}
                    server_ms = {}
                    for key, start in runs.items():
                        offset = access_log_size(server)
                        results[key] = await start()
                        sent = len(results[key]["latencies"])
                        # gunicorn logs a request after answering it: wait for every save's line.
                        server_ms[key], _ = await access_log_times(server, slug, offset, sent)
                        if len(server_ms[key]) != sent:
                            unlogged.append(
                                f"run {run + 1}, phase {key}: {len(server_ms[key])} save lines "
                                f"in gunicorn's access log for {sent} saves sent"
                            )
                    for key, result in results.items():
                        lat = [x * 1000 for x in result["latencies"]]
                        errors.extend(result["errors"])
                        for q in (50, 95, 99):
                            rows[f"p{q}_{key}"].values.append(percentile(lat, q / 100))
                            rows[f"server_p{q}_{key}"].values.append(
                                percentile(server_ms[key], q / 100)
                            )
                    for key in ("think", "16"):
                        result = results[key]
                        rows[f"rate_{key}"].values.append(len(result["latencies"]) / result["wall"])
                    # Every request of the run: the saves, and each phase's screen GETs.
                    served = sum(len(r["latencies"]) for r in results.values())
                    served += 1 + 2 * len(team)
                    rows["cpu"].values.append(1000 * (server.cpu_seconds() - cpu_before) / served)
                    ctx.say(
                        f"save-and-next run {run + 1} (client / server): 1 analyst p50 "
                        f"{rows['p50_1'].values[-1]:.1f} / "
                        f"{rows['server_p50_1'].values[-1]:.1f} ms; 16 analysts with think "
                        f"time p95 {rows['p95_think'].values[-1]:.1f} / "
                        f"{rows['server_p95_think'].values[-1]:.1f} ms over "
                        f"{len(results['think']['latencies'])} saves; no think time p95 "
                        f"{rows['p95_16'].values[-1]:.1f} / "
                        f"{rows['server_p95_16'].values[-1]:.1f} ms over "
                        f"{len(results['16']['latencies'])} saves; "
                        f"{rows['cpu'].values[-1]:.1f} CPU-ms per request"
                    )
            finally:
                for member in team:
                    await member.client.aclose()

        asyncio.run(drive())
    finally:
        server.stop()
    if errors:
        rows[
            "p50_1"
        ].note = f"{len(errors)} requests failed or were refused: {sorted(set(errors))[:3]}"
    if unlogged:
        rows["server_p50_1"].note = "access log incomplete: " + "; ".join(unlogged[:3])
        ctx.notes.append(f"save_next: gunicorn's access log incomplete: {'; '.join(unlogged)}")
    return list(rows.values())
