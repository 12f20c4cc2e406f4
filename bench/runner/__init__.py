"""Orchestration: data, child runs, repeats, rows, and the RESULTS.md table.

Each measurement is a function `bench_<name>(ctx)` returning rows, in a module of its own
(save_next, importing, report, judge with ragas, export, pages, stats_core); `common` holds
the sizes, budgets, Row and Context, `processes` the child process and the loopback LLM
server, `data` the generated projects, `run` the whole run and `results` bench/RESULTS.md.
A measurement that cannot run (missing code, an error) yields rows marked
"not measured: <why>" and the others go on.
"""

from bench.runner.common import BUDGETS, SIZES, Context, Row, fmt, human, slug_for
from bench.runner.results import results_write, table
from bench.runner.run import MEASURE, MEASUREMENTS, run_all

__all__ = [
    "BUDGETS",
    "MEASURE",
    "MEASUREMENTS",
    "SIZES",
    "Context",
    "Row",
    "fmt",
    "human",
    "results_write",
    "run_all",
    "slug_for",
    "table",
]
