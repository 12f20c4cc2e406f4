"""The whole run: each chosen measurement in turn, with --only the previous run's other rows."""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable

from bench.env import OUT
from bench.runner.audit_efficiency import bench_audit_efficiency
from bench.runner.bits import bench_bits
from bench.runner.common import SIZES, Context, Row, _why
from bench.runner.export import bench_export
from bench.runner.importing import bench_import
from bench.runner.judge import bench_judge
from bench.runner.monitor import bench_monitor
from bench.runner.pages import bench_pages
from bench.runner.report import bench_report
from bench.runner.save_next import bench_save_next
from bench.runner.stats_core import bench_stats
from bench.testset import bench_generation, bench_sut, bench_testset

MEASUREMENTS = (
    "save_next",
    "import",
    "report",
    "judge",
    "export",
    "pages",
    "stats",
    "bits",
    "audit_efficiency",
    "testset",
    "sut",
    "generation",
    "monitor",
)
TESTSET_PARTS = ("sut", "generation")
# Measurements that need no database: with only these chosen, Django is not set up.
NO_DJANGO = ("audit_efficiency", "testset", "monitor")

# Each measurement's function (ctx) -> rows, by its `--only` name; stats and audit_efficiency
# also take `write` (each maintains its own section of bench/RESULTS.md).
MEASURE: dict[str, Callable[[Context], list[Row]]] = {
    "save_next": bench_save_next,
    "import": bench_import,
    "report": bench_report,
    "judge": bench_judge,
    "export": bench_export,
    "pages": bench_pages,
    "bits": bench_bits,
    "testset": bench_testset,
    "sut": bench_sut,
    "generation": bench_generation,
    "monitor": bench_monitor,
}


def run_all(*, size: str, only: list[str], runs: int, write: bool) -> tuple[list[Row], Context]:
    from bench.env import django_setup

    # `--only testset` is the whole of issue 27's bench: verification, the system-under-test
    # calls and LLM generation against their endpoints' C/L.
    if "testset" in only:
        only = [*only, *(m for m in TESTSET_PARTS if m not in only)]
    chosen = [m for m in MEASUREMENTS if not only or m in only]
    if any(m not in NO_DJANGO for m in chosen):
        django_setup(migrate=True)
    started = time.perf_counter()

    def say(message: str) -> None:
        print(f"[bench {time.perf_counter() - started:6.1f} s] {message}", flush=True)

    ctx = Context(size=size, cfg=SIZES[size], runs=runs, say=say)
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    loads = []
    for name in chosen:
        say(f"measuring {name}")
        load_before = os.getloadavg()[0]
        measure_started = time.perf_counter()
        try:
            if name == "stats":
                rows += bench_stats(ctx, write)
            elif name == "audit_efficiency":
                # its own section of RESULTS.md: with --write, or whenever asked for by --only
                rows += bench_audit_efficiency(ctx, write or name in only)
            else:
                rows += MEASURE[name](ctx)
        except Exception as error:
            traceback.print_exc()
            rows.append(Row(MEASUREMENTS.index(name) + 1, name, size, "", skipped=_why(error)))
        loads.append(
            f"{name} {time.perf_counter() - measure_started:.0f} s "
            f"(load {load_before:.1f} → {os.getloadavg()[0]:.1f})"
        )
    ctx.notes.append(
        f"time per measurement, with the machine's 1-minute load average before → after "
        f"(2 cores; above 2 the measured processes waited for a CPU): {'; '.join(loads)}"
    )
    ctx.notes.append(f"whole run: {time.perf_counter() - started:.0f} s")
    saved = OUT / f"results-{size}.json"
    if only and saved.exists():
        rows = _merge_previous(rows, chosen, json.loads(saved.read_text()), ctx)
    saved.write_text(
        json.dumps(
            {"rows": [r.as_dict() for r in rows], "notes": ctx.notes, "generated": ctx.generated},
            indent=2,
        )
    )
    return rows, ctx


# Rows numbered past MEASUREMENTS, by the measurement that writes them (14: `--only report
# --size large`, the headline from rollups).
EXTRA_ROWS = {14: "report"}


def _measurement_of(row: dict) -> str:
    if "bench.stats" in row["what"]:
        return "stats"
    return EXTRA_ROWS.get(row["number"]) or MEASUREMENTS[row["number"] - 1]


def _merge_previous(rows: list[Row], chosen: list[str], previous: dict, ctx: Context) -> list[Row]:
    """With --only, the other measurements' rows (and notes) of the last run of this size."""
    kept = []
    for data in previous.get("rows", []):
        if _measurement_of(data) in chosen:
            continue
        row = Row(
            data["number"],
            data["what"],
            data["size"],
            data["unit"],
            data["values"],
            data["target"],
            None,
            data["note"],
            data["skipped"],
        )
        if data.get("met") is not None:
            row.meets = lambda _v, met=data["met"]: met
        kept.append(row)

    def belongs_to_rerun(note: str) -> bool:
        head = note.split(":", 1)[0].split(" ", 1)[0].lower()
        return head in chosen or (head == "ragas" and "judge" in chosen)

    ctx.notes[:0] = [
        note if note.startswith("previous run") else f"previous run: {note}"
        for note in previous.get("notes", [])
        if not note.startswith("re-measured") and not belongs_to_rerun(note)
    ]
    ctx.notes.append(
        f"re-measured in this run: {', '.join(chosen)}; other rows from the "
        "previous run of this size"
    )
    for slug, seconds in previous.get("generated", {}).items():
        ctx.generated.setdefault(slug, seconds)
    order = {name: i for i, name in enumerate(MEASUREMENTS)}
    merged = kept + rows
    merged.sort(key=lambda r: order[_measurement_of(r.as_dict())])
    return merged
