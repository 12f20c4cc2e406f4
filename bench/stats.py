"""Benchmark of the statistics core on a synthetic project (not a test).

Run from the repository root:

    .venv/bin/python -m bench.stats                 # 1,000,000 claims, 3 repeats, print a table
    .venv/bin/python -m bench.stats --size 200000   # smaller
    .venv/bin/python -m bench.stats --write         # also update "## Statistics core" in
                                                    # bench/RESULTS.md

It computes the whole report the dashboard shows — kappa, alpha, the confusion matrix,
sensitivity/specificity with Wilson intervals, Rogan–Gladen with all three intervals, PPI++,
cross-fitted Platt and isotonic calibration, ECE and reliability bins, the CRC cut with its held-out
check, and the back-off frontier with coverage — and prints per-step wall time (median of the
repeats, min–max) and the process's peak resident memory (VmHWM).
Targets (issue 3): the whole set in ≤ 10 s and ≤ 2 GB peak on the 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from metrics import stats

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Statistics core"
TARGET_SECONDS = 10.0
TARGET_MB = 2048.0

VERDICTS = np.array(stats.VERDICTS, dtype=object)


def make_data(size: int, seed: int = 0) -> dict[str, Any]:
    """A synthetic project of ``size`` claims in answers of 1 + Poisson(3) claims (~size/4).

    Gold verdicts: 62% SUPPORTED, 10% CONTRADICTED, 28% NOT_IN_PILE. The judge has se ≈ 0.90,
    sp ≈ 0.75 and an over-confident P(SUPPORTED); a second analyst agrees with gold 90% of the
    time. Each supported claim grounds one of its answer's 3–6 facts.
    """
    rng = np.random.default_rng(seed)
    lengths = 1 + rng.poisson(3.0, size=size // 3)
    lengths = lengths[np.cumsum(lengths) <= size]
    short = size - int(lengths.sum())
    if short:
        lengths = np.append(lengths, short)
    n = int(lengths.sum())
    gold_code = rng.choice(3, size=n, p=[0.62, 0.10, 0.28])
    is_sup = gold_code == 0
    judge_sup = np.where(is_sup, rng.random(n) < 0.90, rng.random(n) < 0.25)
    other = np.where(rng.random(n) < 0.8, np.where(gold_code == 0, 2, gold_code), 3 - gold_code)
    other = np.where(other == 0, 2, other)
    judge_code = np.where(judge_sup, 0, other)
    judge_code = np.where(rng.random(n) < 0.001, 3, judge_code)  # a few UNPARSEABLE
    names = np.array([*stats.VERDICTS, "UNPARSEABLE"], dtype=object)
    confidence = np.clip(np.where(judge_sup, rng.beta(8, 1.5, n), rng.beta(1.5, 5, n)), 0.0, 1.0)
    analyst2 = np.where(rng.random(n) < 0.9, gold_code, rng.choice(3, size=n))
    answer_of = np.repeat(np.arange(lengths.size), lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    n_facts = rng.integers(3, 7, size=lengths.size)
    fact_pick = (rng.random(n) * n_facts[answer_of]).astype(np.int64)
    facts_flat = [
        (int(f),) if s else () for f, s in zip(fact_pick.tolist(), is_sup.tolist(), strict=False)
    ]
    facts_grounded = [facts_flat[a:b] for a, b in zip(starts, starts + lengths, strict=False)]
    audit = rng.random(n) < 0.1
    return {
        "n": n,
        "answers": lengths.size,
        "gold": names[gold_code],
        "judge": names[judge_code],
        "analyst2": names[analyst2],
        "gold_code": gold_code.astype(float),
        "analyst2_code": analyst2.astype(float),
        "is_sup": is_sup,
        "confidence": confidence,
        "answer_of": answer_of,
        "starts": starts,
        "ends": starts + lengths,
        "facts_grounded": facts_grounded,
        "facts_total": n_facts.tolist(),
        "audit": audit,
        "judge_sup": judge_sup,
    }


def steps(d: dict[str, Any]) -> tuple[list[tuple[str, Callable[[], None]]], dict[str, Any]]:
    """The report, one timed step each, and the dict the steps fill (later steps reuse it)."""
    memo: dict[str, Any] = {}
    bounds = list(zip(d["starts"].tolist(), d["ends"].tolist(), strict=True))

    def per_answer(flat: np.ndarray) -> list[np.ndarray]:
        # the per-answer lists the API takes, as a caller would build them (views, no copies)
        return [flat[a:b] for a, b in bounds]

    def kappa() -> None:
        memo["kappa"] = stats.cohen_kappa(d["gold"], d["judge"])
        memo["agreement"] = stats.agreement(d["gold"], d["judge"])

    def alpha() -> None:
        memo["alpha"] = stats.krippendorff_alpha(np.vstack([d["gold_code"], d["analyst2_code"]]))

    def se_sp() -> None:
        memo["confusion"] = stats.confusion(d["gold"], d["judge"])
        memo["sesp"] = stats.sensitivity_specificity(d["gold"], d["judge"])
        memo["asym"] = stats.asymmetry(d["gold"], d["judge"])

    def rogan() -> None:
        s = memo["sesp"]
        pos = int(np.sum(d["judge"] == "SUPPORTED"))
        n = int(np.isin(d["judge"], VERDICTS).sum())
        args = (
            pos,
            n,
            s["sensitivity"]["successes"],
            s["sensitivity"]["n"],
            s["specificity"]["successes"],
            s["specificity"]["n"],
        )
        memo["rg"] = stats.rogan_gladen(
            pos / n, s["sensitivity"]["value"], s["specificity"]["value"]
        )
        memo["rg_ci"] = {
            m: stats.rogan_gladen_interval(*args, method=m)
            for m in ("lang-reiczigel", "delta", "bootstrap")
        }
        memo["rg_var"] = stats.rogan_gladen_variance(*args)

    def ppi() -> None:
        a = d["audit"]
        memo["ppi"] = stats.ppi_mean_interval(d["is_sup"][a], d["judge_sup"][a], d["judge_sup"][~a])
        k = int(d["is_sup"][a].sum())
        memo["gold_only"] = stats.wilson_interval(k, int(a.sum()))

    def platt() -> None:
        memo["platt"] = stats.cross_fitted_calibration(
            d["confidence"], d["is_sup"], "platt", groups=None
        )

    def isotonic() -> None:
        memo["iso"] = stats.cross_fitted_calibration(d["confidence"], d["is_sup"], "isotonic")

    def ece() -> None:
        memo["ece"] = {
            name: stats.expected_calibration_error(c, d["is_sup"])
            for name, c in (
                ("raw", d["confidence"]),
                ("platt", memo["platt"]),
                ("iso", memo["iso"]),
            )
        }
        memo["bins"] = stats.reliability_bins(memo["iso"], d["is_sup"])

    def crc() -> None:
        conf = per_answer(memo["iso"])
        sup = per_answer(d["is_sup"])
        half = len(conf) // 2
        lam = stats.crc_threshold(conf[:half], sup[:half], alpha=0.10)
        memo["crc"] = stats.crc_evaluate(conf[half:], sup[half:], lam)

    def front() -> None:
        conf = per_answer(memo["iso"])
        sup = per_answer(d["is_sup"])
        memo["frontier"] = stats.frontier(
            conf, sup, d["facts_grounded"], facts_total=d["facts_total"]
        )

    return [
        ("Cohen's kappa + agreement (gold vs judge)", kappa),
        ("Krippendorff's alpha (2 coders, nominal)", alpha),
        ("confusion + se/sp (Wilson) + asymmetry", se_sp),
        ("Rogan–Gladen + LR / delta / bootstrap CIs", rogan),
        ("PPI++ (10% audited)", ppi),
        ("cross-fitted Platt (5 folds)", platt),
        ("cross-fitted isotonic (5 folds)", isotonic),
        ("ECE ×3 + reliability bins", ece),
        ("CRC λ̂ (half) + held-out check (half)", crc),
        ("frontier, 101 cuts, with coverage", front),
    ], memo


def peak_rss_mb() -> float:
    # VmHWM, not ru_maxrss: ru_maxrss carries a forking parent's high-water mark (bench.child).
    from bench.child import peak_rss_mb as own_peak

    return own_peak()


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        text = Path("/proc/cpuinfo").read_text()
        found = re.search(r"model name\s*:\s*(.+)", text)
        if found:
            cpu = found.group(1).strip()
    except OSError:
        pass
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f", {kb / 1024**2:.0f} GiB RAM"
    except (OSError, AttributeError):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run(size: int, repeats: int) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    data = make_data(size)
    gen = time.perf_counter() - t0
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    totals: list[float] = []
    cpu_totals: list[float] = []
    memo: dict[str, Any] = {}
    for _ in range(repeats):
        plan, memo = steps(data)
        total = cpu_total = 0.0
        for name, fn in plan:
            t, c = time.perf_counter(), time.process_time()
            fn()
            elapsed, used = time.perf_counter() - t, time.process_time() - c
            total += elapsed
            cpu_total += used
            times.setdefault(name, []).append(elapsed)
            cpu.setdefault(name, []).append(used)
        totals.append(total)
        cpu_totals.append(cpu_total)
    rows: list[dict[str, Any]] = [
        {
            "step": name,
            "median": statistics.median(ts),
            "min": min(ts),
            "max": max(ts),
            "cpu": statistics.median(cpu[name]),
            "target": None,
        }
        for name, ts in times.items()
    ]
    rows.append(
        {
            "step": "**whole set**",
            "median": statistics.median(totals),
            "min": min(totals),
            "max": max(totals),
            "cpu": statistics.median(cpu_totals),
            "target": TARGET_SECONDS,
        }
    )
    meta = {
        "claims": data["n"],
        "answers": data["answers"],
        "generate_seconds": gen,
        "peak_mb": peak_rss_mb(),
        "repeats": repeats,
        "load": (load_before, os.getloadavg()[0]),
    }
    return rows, meta, memo


def table(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"| step | wall s (median of {meta['repeats']}) | min–max | CPU s (median) | target | met |",
        "|---|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        target = f"≤ {r['target']:.0f} s" if r["target"] else "—"
        met = ("yes" if r["median"] <= r["target"] else "NO") if r["target"] else "—"
        lines.append(
            f"| {r['step']} | {r['median']:.3f} | {r['min']:.3f}–{r['max']:.3f} | {r['cpu']:.3f} "
            f"| {target} | {met} |"
        )
    mb = meta["peak_mb"]
    lines.append(
        f"| **peak RSS** (whole process) | {mb:,.0f} MB | — | — | ≤ {TARGET_MB:,.0f} MB | "
        f"{'yes' if mb <= TARGET_MB else 'NO'} |"
    )
    return "\n".join(lines)


def section(
    rows: list[dict[str, Any]], meta: dict[str, Any], figures: dict[str, Any], cmd: str
) -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            HEADING,
            "",
            f"- machine: {machine()}",
            f"- date: {when}",
            f"- git commit: {git_commit()} (the tree the run started from)",
            f"- command: `{cmd}`",
            f"- data: {meta['claims']:,} synthetic claims in {meta['answers']:,} answers "
            f"(generated in {meta['generate_seconds']:.1f} s, not timed)",
            f"- 1-minute load average: {meta['load'][0]:.1f} at start, {meta['load'][1]:.1f} at end "
            f"({os.cpu_count()} cores). Above the core count the machine was shared: wall times "
            "then include waiting for a CPU, and the CPU column (this process's own time, "
            "`time.process_time`) is the better measure of the code.",
            "",
            table(rows, meta),
            "",
            _summary(figures),
            "",
        ]
    )


def _summary(f: dict[str, Any]) -> str:
    if not f:
        return ""
    s = f["sesp"]
    rg = f["rg_ci"]
    ppi = f["ppi"]
    crc = f["crc"]
    return (
        f"Figures of the last pass: κ = {f['kappa']:.3f}, α = {f['alpha']:.3f}, "
        f"se = {s['sensitivity']['value']:.3f}, sp = {s['specificity']['value']:.3f}; "
        f"Rogan–Gladen {f['rg']:.3f} (LR {rg['lang-reiczigel'][0]:.3f}–{rg['lang-reiczigel'][1]:.3f}); "
        f"PPI++ {ppi['value']:.3f} ({ppi['ci'][0]:.3f}–{ppi['ci'][1]:.3f}, λ = {ppi['lambda']:.2f}); "
        f"ECE raw {f['ece']['raw']:.3f} → Platt {f['ece']['platt']:.3f}, isotonic "
        f"{f['ece']['iso']:.3f}; CRC at α = 0.10: held-out false-claim rate "
        f"{crc['false_claim_rate']:.3f}, {crc['retained_share']:.0%} of claims kept."
    )


def write_section(text: str) -> None:
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(r"^## Statistics core\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(old):
        new = pattern.sub(lambda _m: text + "\n", old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    RESULTS.write_text(new.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.stats", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--size", type=int, default=1_000_000, help="number of claims")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes (median reported)")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    rows, meta, figures = run(args.size, args.repeats)
    cmd = ".venv/bin/python -m bench.stats" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:])
    )
    text = section(rows, meta, figures, cmd)
    print(text)
    if args.write:
        write_section(text)
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    ok = rows[-1]["median"] <= TARGET_SECONDS and meta["peak_mb"] <= TARGET_MB
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
