"""A seeded uniform random sample of mutmut's mutants, for a run too large to do whole.

    .venv/bin/python -m tests.mutation_sample --seed 21 --size 150 metrics.services.common ...

The population is every mutant name mutmut generated (the keys of mutants/**/*.meta, which
`mutmut run` writes before it tests anything) whose module is one of the prefixes given; the
names are sorted, then `random.Random(seed).sample(names, size)` draws the sample, so the same
commit, prefixes, seed and size give the same names. Prints one line of design (seed, population,
commit) on stderr and the sampled names on stdout, one a line, to pass to `mutmut run`.
"""

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def population(prefixes: list[str]) -> list[str]:
    names = set()
    for meta in (ROOT / "mutants").rglob("*.meta"):
        for name in json.loads(meta.read_text())["exit_code_by_key"]:
            module = name.split(".x_")[0].split(".xǁ")[0]
            if any(module == p or module.startswith(p + ".") for p in prefixes):
                names.add(name)
    return sorted(names)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("prefixes", nargs="+", help="module names, e.g. metrics.stats")
    args = parser.parse_args(argv)
    names = population(args.prefixes)
    if not names:
        sys.exit("no mutants: run `mutmut run` once so that mutants/ holds the generated names")
    sample = sorted(random.Random(args.seed).sample(names, min(args.size, len(names))))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"seed {args.seed}, {len(sample)} of a population of {len(names)} mutants of "
        f"{', '.join(args.prefixes)}, commit {commit}",
        file=sys.stderr,
    )
    print("\n".join(sample))


if __name__ == "__main__":
    main()
