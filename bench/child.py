"""One measurement, once, in a process of its own: `python -m bench.child NAME 'JSON kwargs'`.

The parent (`bench.runner.child_run`) reads the result from the last stdout line that starts
with RESULT_PREFIX and the process's peak RSS from `os.wait4`, so each figure is the peak of
exactly that run, not of the benchmark driver or of an earlier run.
"""

from __future__ import annotations

import json
import sys

RESULT_PREFIX = "BENCH-RESULT "


def main(argv: list[str]) -> int:
    name, kwargs = argv[0], json.loads(argv[1] if len(argv) > 1 else "{}")
    from bench.env import django_setup

    django_setup()
    from bench import measures

    result = getattr(measures, f"measure_{name}")(**kwargs)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
