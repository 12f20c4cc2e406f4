"""3. The statistics core alone (bench.stats, a colleague's), as one row."""

from __future__ import annotations

import re
import subprocess
import sys
import time

from bench.env import ROOT
from bench.runner.common import Context, Row, human


def bench_stats(ctx: Context, write: bool) -> list[Row]:
    claims = ctx.cfg["stats_claims"]
    command = [sys.executable, "-m", "bench.stats", "--size", str(claims)]
    if write:
        command.append("--write")
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    found = re.search(r"\*\*whole set\*\* \| ([\d.]+) \| ([\d.]+)–([\d.]+)", done.stdout)
    if not found:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [
            Row(
                3,
                "statistics core alone (bench.stats)",
                f"{human(claims)} claims",
                "s",
                skipped=f"bench.stats failed: {tail[:200]}",
            )
        ]
    ctx.say(f"bench.stats finished in {time.perf_counter() - started:.0f} s")
    median, low, high = (float(x) for x in found.groups())
    row = Row(
        3,
        "statistics core alone (bench.stats, see its section)",
        f"{human(claims)} claims",
        "s",
        [low, median, high],
        "≤ 10 s",
        lambda v: v <= 10,
        note="median and min–max as bench.stats reports them",
    )
    return [row]
