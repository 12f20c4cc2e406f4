"""One measurement, once, in a process of its own: `python -m bench.child NAME 'JSON kwargs'`.

The parent (`bench.runner.processes.child_run`) reads the result from the last stdout line that starts
with RESULT_PREFIX, including this process's own peak RSS (VmHWM of its address space, which
starts afresh at exec). `ru_maxrss` from `os.wait4` is not used for that: Linux carries the
parent's high-water mark into a forked child, so after the driver generated 1M claims every
child reported the driver's ~600 MB.
"""

from __future__ import annotations

import json
import sys

RESULT_PREFIX = "BENCH-RESULT "


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (VmHWM in /proc/self/status)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmHWM in /proc/self/status")


def main(argv: list[str]) -> int:
    name, kwargs = argv[0], json.loads(argv[1] if len(argv) > 1 else "{}")
    from bench.env import django_setup

    django_setup()
    from bench import measures

    result = getattr(measures, f"measure_{name}")(**kwargs)
    result["_peak_rss_mb"] = peak_rss_mb()
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
