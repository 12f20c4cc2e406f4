"""2. Import: native JSONL into a fresh project, in a child process."""

from __future__ import annotations

from bench.env import OUT
from bench.runner.common import Context, Row, human
from bench.runner.processes import child_run


def bench_import(ctx: Context) -> list[Row]:
    from bench.datagen import answers_jsonl_write

    answers = ctx.cfg["import_answers"]
    size = f"{human(answers)} answers × 5 passages × 4 claims"
    rate = Row(
        2,
        "import native JSONL: answers per second",
        size,
        "answers/s",
        target="≥ 2,000 answers/s",
        meets=lambda v: v >= 2000,
    )
    mbs = Row(2, "import native JSONL: MB of input per second", size, "MB/s")
    cpu = Row(
        2,
        "import: answers per CPU-second of the importing process",
        size,
        "answers/CPU-s",
        target="≥ 2,000 (an upper bound on answers/s)",
        meets=lambda v: v >= 2000,
    )
    rss = Row(
        2,
        "import: peak RSS of the importing process",
        size,
        "MB",
        target="≤ 500 MB",
        meets=lambda v: v <= 500,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"import-{answers}.jsonl"
    if not path.exists():
        ctx.say(f"writing {path.name}")
        answers_jsonl_write(path, answers=answers)
    megabytes = path.stat().st_size / 1e6
    for run in ctx.repeats("import"):
        result, peak = child_run("import", {"path": str(path), "slug": "bench-import"})
        if result["answers"] != answers:
            raise RuntimeError(f"imported {result['answers']} answers of {answers}")
        rate.values.append(result["answers_per_s"])
        mbs.values.append(result["mb_per_s"])
        rss.values.append(peak)
        cpu.values.append(result["answers"] / result["cpu_seconds"])
        ctx.say(
            f"import run {run + 1}: {result['answers_per_s']:,.0f} answers/s, "
            f"{result['seconds']:.1f} s, peak {peak:,.0f} MB"
        )
    mbs.note = f"input {megabytes:,.0f} MB"
    with_state = Row(
        2,
        "import native JSONL into a project with a rollup state (its triggers marking every "
        "answer written): answers per second",
        size,
        "answers/s",
        target="≥ 2,000 answers/s",
        meets=lambda v: v >= 2000,
    )
    for run in ctx.repeats("import"):
        result, _peak = child_run(
            "import", {"path": str(path), "slug": "bench-import", "rollup_state": True}
        )
        with_state.values.append(result["answers_per_s"])
        ctx.say(
            f"import run {run + 1} with a rollup state: {result['answers_per_s']:,.0f} "
            f"answers/s, {result['seconds']:.1f} s, {result['marks']:,} marks left"
        )
    return [rate, cpu, mbs, rss, with_state]
