"""`python -m bench --size small|default|full [--only NAME ...] [--runs N] [--write]`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    from bench.env import environ_defaults
    from bench.runner import MEASUREMENTS, SIZES

    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmarks of issue 7 against PostgreSQL and Redis on this machine.",
    )
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    parser.add_argument(
        "--only",
        action="append",
        choices=MEASUREMENTS,
        help="run only this measurement (repeatable); default: all",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median reported)")
    parser.add_argument(
        "--write", action="store_true", help="write the table into bench/RESULTS.md"
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    environ_defaults()
    from bench.runner import results_write, run_all, table

    rows, ctx = run_all(size=args.size, only=args.only or [], runs=args.runs, write=args.write)
    print()
    print(table(rows))
    for note in ctx.notes:
        print(f"- {note}")
    if args.write:
        command = "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:])
        results_write(rows, ctx, command.strip())
        print("wrote bench/RESULTS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
