"""The figures the reliability tests measure, collected into tests/artifacts/reliability.json.

Each test adds what it did (`figures.add("concurrency", saves=1000)`): requests made, saves,
fuzz cases per format, faults injected, retries counted on the loopback server, data lost.
`python -m tests.reliability.report` empties the file, runs the tests, and turns it into
tests/RELIABILITY.md. Counts are summed over tests; "lost" figures are what the tests found
(they also assert it is zero, so a non-zero figure only appears beside a failing test).
"""

import fcntl
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FIGURES_FILE = Path(
    os.environ.get("RELIABILITY_FIGURES", ROOT / "tests" / "artifacts" / "reliability.json")
)


def figures_load() -> dict:
    if not FIGURES_FILE.exists():
        return {"areas": {}, "tests": {}}
    return json.loads(FIGURES_FILE.read_text())


class Figures:
    """Adds counts under an area to the figures file; the test's id records who measured."""

    def __init__(self, nodeid: str):
        self.nodeid = nodeid

    def add(self, area: str, **counts: int | float) -> None:
        # `make test` runs on two processes: the read-modify-write holds a lock.
        FIGURES_FILE.parent.mkdir(parents=True, exist_ok=True)
        with open(FIGURES_FILE.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._add(area, counts)

    def _add(self, area: str, counts: dict) -> None:
        data = figures_load()
        bucket = data["areas"].setdefault(area, {})
        for name, value in counts.items():
            bucket[name] = bucket.get(name, 0) + value
        data["tests"].setdefault(self.nodeid, {}).setdefault(area, {})
        for name, value in counts.items():
            mine = data["tests"][self.nodeid][area]
            mine[name] = mine.get(name, 0) + value
        FIGURES_FILE.parent.mkdir(parents=True, exist_ok=True)
        FIGURES_FILE.write_text(json.dumps(data, indent=1, sort_keys=True))
