"""Issue 29: the monitoring computation for a stream of 1M claims (no database).

Per-claim arrays (day, judge verdict, gold, sampled, π — the rate changes on day 30) go
through what a stream's evaluation does each day: the debiased and gold-only values, their
grouping by day, both confidence sequences over 90 daily looks and the change e-detector.
"""

from __future__ import annotations

import time

import numpy as np

from bench.runner.common import Context, Row, human
from monitor.stats import betting_cs, days_group, edetector, ipw_values, ppi_values

CLAIMS = 1_000_000
DAYS = 90


def _stream(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    day = np.sort(rng.integers(0, DAYS, n))
    pi = np.where(day < 30, 0.1, 0.05)
    y = rng.random(n) < 0.9
    f = np.where(y, rng.random(n) < 0.95, rng.random(n) < 0.2)
    return {"day": day, "pi": pi, "y": y, "f": f, "s": rng.random(n) < pi}


def _evaluate(c: dict[str, np.ndarray]) -> float:
    z, lo, hi = ppi_values(c["f"], c["y"], c["s"], c["pi"])
    debiased = days_group(c["day"], z, lo, hi, DAYS)
    z, lo, hi = ipw_values(c["y"], c["s"], c["pi"])
    gold = days_group(c["day"], z, lo, hi, DAYS)
    band = betting_cs(debiased)
    betting_cs(gold)
    edetector(debiased, 0.9, horizon=DAYS)
    return float(band.upper[-1] - band.lower[-1])


def bench_monitor(ctx: Context) -> list[Row]:
    claims = CLAIMS if ctx.size != "small" else CLAIMS // 10
    data = _stream(np.random.default_rng(29), claims)
    seconds = []
    for _ in range(max(ctx.runs, 3)):
        started = time.perf_counter()
        width = _evaluate(data)
        seconds.append(time.perf_counter() - started)
    ctx.say(f"monitor: final debiased band width {width:.4f}")
    return [
        Row(
            13,
            "monitoring computation (two CS over 90 daily looks + e-detector)",
            f"{human(claims)} claims",
            "s",
            seconds,
            "≤ 10 s",
            lambda v: v <= 10,
            note="pure numpy, monitor/stats.py; judging throughput vs C/L not measured",
        )
    ]
