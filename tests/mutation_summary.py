"""Per-module figures of the last `mutmut run`, written into tests/MUTATION.md (`make mutation`).

Reads `mutmut results --all true` and `mutmut show` from the work tree's mutants/ directory;
replaces the text between the figures markers of tests/MUTATION.md (the survivors'
explanations around it are written by hand) and prints the same to stdout.
"""

import datetime
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTMUT = str(Path(sys.executable).with_name("mutmut"))
REPORT = ROOT / "tests" / "MUTATION.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
COLUMNS = ("killed", "survived", "timeout", "suspicious", "no tests", "segfault")
LINE = re.compile(r"^\s*(?P<name>\S+?)__mutmut_\d+: (?P<status>.+)$")


def results() -> dict[str, str]:
    out = subprocess.run(
        [MUTMUT, "results", "--all", "true"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in out.splitlines():
        match = LINE.match(line)
        if match:
            found[line.strip().rsplit(":", 1)[0]] = match["status"].strip()
    return found


def module_of(mutant: str) -> str:
    head = mutant.split(".x_")[0].split(".xǁ")[0]
    return head


def diff_of(mutant: str) -> str:
    shown = subprocess.run(
        [MUTMUT, "show", mutant], cwd=ROOT, capture_output=True, text=True
    ).stdout.splitlines()
    changed = [
        line
        for line in shown
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]
    return " / ".join(line[0] + " " + line[1:].strip() for line in changed)[:300]


def figures() -> str:
    found = results()
    by_module: dict[str, Counter] = defaultdict(Counter)
    generated: Counter = Counter()
    survivors = []
    for mutant, status in sorted(found.items()):
        generated[module_of(mutant)] += 1
        if status == "not checked":
            continue
        by_module[module_of(mutant)][status] += 1
        if status in ("survived", "timeout", "suspicious", "no tests"):
            survivors.append((mutant, status))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    lines = [
        f"Run of {datetime.date.today().isoformat()} at commit {commit} "
        "(`make mutation`, mutmut; the tests each mutant ran are those of "
        "`[tool.mutmut]` in pyproject.toml that reach the mutated function).",
        "",
        "`generated` is every mutant mutmut made of the module, `checked` those this run tested (a",
        "sample or a named subset when smaller).",
        "",
        "| module | generated | checked | " + " | ".join(COLUMNS) + " | killed % |",
        "|---|---:|---:|" + "---:|" * len(COLUMNS) + "---:|",
    ]
    total: Counter = Counter()
    for module, counts in sorted(by_module.items()):
        total.update(counts)
        n = sum(counts.values())
        share = 100 * counts["killed"] / n if n else 0.0
        cells = " | ".join(str(counts[c]) for c in COLUMNS)
        lines.append(f"| {module} | {generated[module]} | {n} | {cells} | {share:.1f} |")
    n = sum(total.values())
    cells = " | ".join(str(total[c]) for c in COLUMNS)
    lines.append(
        f"| **all checked modules** | {sum(generated[m] for m in by_module)} | {n} | {cells} "
        f"| {100 * total['killed'] / max(n, 1):.1f} |"
    )
    lines += ["", "Not killed (explained below):", ""]
    lines += [f"- `{mutant}` ({status}): `{diff_of(mutant)}`" for mutant, status in survivors]
    return "\n".join(lines)


def main() -> None:
    text = figures()
    print(text)
    if REPORT.exists():
        body = REPORT.read_text()
        if START in body and END in body:
            head, rest = body.split(START, 1)
            _, tail = rest.split(END, 1)
            REPORT.write_text(f"{head}{START}\n{text}\n{END}{tail}")


if __name__ == "__main__":
    main()
