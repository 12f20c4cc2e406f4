"""Issue 21's six hand mutations, each applied to a temporary copy of the work tree.

    .venv/bin/python -m tests.mutation_issue21 [NAME ...]

For each mutation: copy the tracked files to a temporary directory, replace the one occurrence
of the original line by the mutant, run the tests named for it there, print the tests that
failed. The work tree itself is never edited. tests/MUTATION.md records the last run.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ["tests/metrics/test_report.py", "tests/metrics/test_report_crc.py"]
MUTATIONS = {
    "crc_on_test_half": (
        "metrics/services/conformal.py",
        "cal_c, cal_s, test_c, test_s = parts or _crc_parts(inputs)",
        "test_c, test_s, cal_c, cal_s = parts or _crc_parts(inputs)",
        REPORT,
    ),
    "worse_calibrator": (
        "metrics/services/calibration.py",
        'return min(candidates, key=lambda m: ece[m]) if candidates else "raw"',
        'return max(candidates, key=lambda m: ece[m]) if candidates else "raw"',
        REPORT,
    ),
    "split_not_shuffled": (
        "metrics/services/calibration.py",
        "shuffled = rng.permutation(audited_answers)",
        "shuffled = audited_answers",
        ["tests/metrics/test_report_crc.py"],
    ),
    "dropped_side_retained": (
        "metrics/services/conformal.py",
        "retained_all = int(judged_counts[first_kept:].sum())",
        "retained_all = int(judged_counts[:first_kept].sum())",
        REPORT,
    ),
    "tie_counted_correct": (
        "metrics/services/rates.py",
        "correct = int((votes > 0).sum())",
        "correct = int((votes >= 0).sum())",
        ["tests/metrics/test_report.py"],
    ),
    "rg_interval_not_containing_estimate": (
        "metrics/stats/prevalence.py",
        "return float(min(lo, point)), float(max(hi, point))",
        "return float(lo), float(hi)",
        ["tests/metrics/stats/test_prevalence.py"],
    ),
}


def copy_tree(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(MUTATIONS))
    if unknown:
        sys.exit(f"unknown mutation(s): {', '.join(unknown)}; known: {', '.join(MUTATIONS)}")
    survived = 0
    with tempfile.TemporaryDirectory(prefix="mutation21-") as tmp:
        copy = Path(tmp)
        copy_tree(copy)
        for name in names or list(MUTATIONS):
            path, original, mutant, tests = MUTATIONS[name]
            target = copy / path
            text = target.read_text()
            if text.count(original) != 1:
                sys.exit(f"{name}: {path} holds {text.count(original)} copies of the original")
            target.write_text(text.replace(original, mutant))
            try:
                run = subprocess.run(
                    [sys.executable, "-m", "pytest", *tests, "-q", "-rf", "-p", "no:cacheprovider"],
                    cwd=copy,
                    capture_output=True,
                    text=True,
                )
            finally:
                target.write_text(text)
            failed = [
                line.split(" ", 1)[1].split(" - ")[0]
                for line in run.stdout.splitlines()
                if line.startswith("FAILED ")
            ]
            survived += not failed
            print(f"{name}: {len(failed)} failed" + "".join(f"\n    {t}" for t in failed))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
