"""Regenerate tests/RELIABILITY.md: run the reliability tests and write down what they measured.

    python -m tests.reliability.report            # the tests in tests/reliability/ (+ the
                                                  # colleagues' SIGKILL-mid-snapshot test)
    python -m tests.reliability.report -k fuzz    # extra pytest arguments are passed on

It points the figures at a fresh file of its own, runs pytest in-process with a small plugin that
records each test's outcome and duration, then writes the figures the tests added
(`tests/reliability/figures.py`) with the date, the commit, the command and the services used.
Services come from the environment, as for pytest: set DATABASE_URL and CELERY_BROKER_URL (and
REQUIRE_SERVICES=1) for the full run; skipped tests are listed as skipped, never as passed.
"""

import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.reliability import figures as figures_module
from tests.reliability.figures import ROOT, figures_load

OUTPUT = ROOT / "tests" / "RELIABILITY.md"
# Tests outside tests/reliability/ that this report relies on (not duplicated here).
BORROWED = {
    "tests/metrics/test_tasks.py::test_worker_killed_mid_compute_then_redelivered_completes_once": (
        "worker faults",
        {"report snapshot sigkills (tests/metrics)": 1},
    ),
}


# The security issue's findings, each proved by the tests of a file elsewhere in the suite: the
# report runs them too and counts the cases that passed under "security".
SECURITY = {
    "tests/judges/test_security_endpoints.py": "secrets and SSRF through a judge's endpoint",
    "tests/judges/test_split_jobs.py": "LLM splitting on a worker, never in a request",
    "tests/judges/test_split_browser.py": "LLM splitting with progress in the browser",
    "tests/annotate/test_limits.py": "pile and text limits, paged piles",
    "tests/annotate/test_import_hostile.py": "hostile import files (nesting, huge and non-finite numbers)",
    "tests/annotate/test_import_annotators.py": "imports never touch other accounts",
    "tests/annotate/test_changed_after_reveal.py": "labels changed after a reveal",
    "tests/annotate/test_save_conflicts.py": "one analyst in several tabs: no deadlock, no lost save",
    "tests/annotate/test_export_injection.py": "CSV formula injection, download names",
    "tests/annotate/test_project_creators.py": "who may create projects, members without a username oracle",
    "tests/test_signin.py": "sign-in lockout, password change and reset",
    "tests/annotate/test_project_text_limits.py": "project description and guidelines limits",
    "tests/api/test_members.py": "members API without a username oracle",
    "tests/annotate/test_reserved_claims.py": "reserved claims saved only by their holder",
    "tests/api/test_ratelimit_shared.py": "API rate limit shared by every process (Redis)",
    "tests/judges/test_endpoint_urls.py": "endpoint base URLs for project owners only",
    "tests/test_request_charset.py": "non-UTF-8 form posts",
    "tests/api/test_strict_json.py": "API responses are JSON (no NaN, no Infinity)",
    "tests/browser/test_csp_browser.py": "Content-Security-Policy in the browser",
}


# Issue 34 ("one blindness rule for every path"): what an analyst could learn before their own
# label, each leak with the responses the matrix flagged on main before the fix (commit f09cce1;
# None: not a response the matrix reads) and the test that proves it closed.
# tests/reliability/test_blindness_matrix.py asserts none is left (its figures: "blindness").
BLINDNESS_FIXED = [
    (
        "API GET claims/<id>/labels showed judge verdicts and colleagues' labels without "
        "recording a Reveal (fixed first, in 81afb1c; kept)",
        None,
        "tests/api/test_permissions.py::test_analyst_token_is_blind_until_their_own_label",
    ),
    (
        "the answers list's filters by judge verdict, gold, disagreement and system narrowed an "
        "analyst's list (an answer listed only under NOT_IN_PILE had that judge verdict)",
        16,
        "tests/annotate/test_screens_answers_bulk.py",
    ),
    (
        "the answers list offered an analyst those filters",
        20,
        "tests/annotate/test_screens_answers_bulk.py",
    ),
    (
        "the answers list's System column named each answer's system to an analyst",
        20,
        "tests/annotate/test_screens_answers_bulk.py",
    ),
    (
        "the pairwise pair's form field (and the undo's link) carried the two answers' ids, "
        "and an answer's id led to its system",
        8,
        "tests/annotate/test_pairwise_screen.py",
    ),
    (
        "the pairwise side was a plain SHA-256 of the analyst's and the answers' ids, "
        "computable by anyone who found the ids",
        None,
        "tests/annotate/test_pairwise_screen.py::test_pairwise_sides_and_tokens_need_the_servers_key",
    ),
]


# What the matrix cannot close, because it is the data a lead imported, not a page's choice.
BLINDNESS_RESIDUAL = (
    "Not closed by the product: answer ids and import order are the importer's. An id that "
    "names its system (the demo's second system's ids end in @2024-07) or answers imported one "
    "system after the other still let an analyst who searches the answers list for a pairwise "
    "answer's text guess its system; give answers ids that do not name their system."
)


def blindness_section(figures: dict) -> list[str]:
    """The blindness matrix's figures in words, and the leaks it was built to close."""
    area = figures["areas"].get("blindness")
    if not area:
        return []
    cells = (area["web_routes"] + area["api_operations"]) * area["roles"]
    flagged = sum(n for _, n, _ in BLINDNESS_FIXED if n)
    lines = [
        "",
        "## Blindness",
        "",
        f"{area['web_routes']} web routes and {area['api_operations']} API operations × "
        f"{area['roles']} roles (an analyst before their own label, the same after it, a lead) "
        f"= {cells:,} route-role cells, in {area['requests']:,} requests (htmx partials, both "
        "claims, every filter of the answers list, saves); "
        f"{area['reveals_shown_with_a_reveal_recorded']:,} responses showed a reveal after the "
        f"analyst's label, each with its Reveal recorded. Before the fix the matrix flagged "
        f"{flagged} leaking responses; **{area['leaks_remaining']} leaks remaining**. "
        f"{len(BLINDNESS_FIXED)} leaks found and fixed:",
        "",
    ]
    for leak, n, test in BLINDNESS_FIXED:
        count = f"; {n} responses flagged" if n else ""
        lines.append(f"- {leak}{count} (`{test}`)")
    return [*lines, "", BLINDNESS_RESIDUAL]


# What each of issue 34's smaller mends tried and found, written by hand (the tests above
# re-check it on every run; the figures are theirs).
MENDS = """\
## Mends (issue 34, item 4)

**Project texts.** A 61-character guidelines text against a limit of 60 was posted on the
settings page, through the admin and the services, and a 41-character description against 40 on
the new-project page and `POST /api/v1/projects`: every path refused it with the field and the
setting named (`FAITHAUDIT_MAX_GUIDELINES_CHARS`, `FAITHAUDIT_MAX_DESCRIPTION_CHARS`) and wrote
nothing; exactly at the limit was saved. Defaults 100,000 and 5,000 characters. Measured on
SQLite, test client: the labelling page is 11.7 KB with no guidelines, 111.6 KB and 30 ms with
100,000 characters (the most now allowed), 5.0 MB and 1.1 s with 5,000,000 (no longer possible).
(`tests/annotate/test_project_text_limits.py`)

**Members without a username oracle.** `PUT …/members/<name>` for an existing user, a
deactivated one and a name nobody has: 200 and the same body all three times (it was 404 "No
such user" for the last); only the active user was added. The members form answered the three
alike too, and no longer adds a deactivated account. (`tests/api/test_members.py`)

**Reserved claims.** Claim reserved for analyst A; analyst B saved it through the service, the
labelling screen (htmx and without JavaScript) and the API: refused each time with the reason,
B given his own next claim (the API's 409 names it as `next_claim`, reserved for him), 0 labels
written by B; A's save then succeeded (before, B's save was taken and A's refused with 422).
Once A's reservation lapsed B could save; a claim needing two labels took B's beside A's.
Checked on SQLite and PostgreSQL. (`tests/annotate/test_reserved_claims.py`)

**Sign-in lockout.** Five wrong passwords by one user from an address: that username locked
(429), a colleague at the same address signed in (before: locked out for 15 minutes). 99 failures
from one address spread over 25 usernames: a colleague still signed in, and that success did not
clear the others' failures; the 100th locked the address for everyone (429), not other
addresses. With the username limit raised to 8, five failures locked only the (username,
address) pair; eight from anywhere locked the username. Password change: four wrong old
passwords then the right one changed it; five wrong ones gave 429, after which the right one was
refused too (password unchanged) and the login page was locked for that username.
(`tests/test_signin.py`)

**Shared rate limit.** A second process configured from the environment as deployed
(`FAITHAUDIT_RATE_LIMIT_CACHE_URL`, Redis) spent 3 of a token's 5 requests; this process then
got 2 and the third was refused with the seconds to wait (before, each process counted alone:
N processes, N times the limit). Two clients alternating on one token through the API: 200 five
times, then 429. The count sits in `caches["ratelimit"]`, not the default cache. With Redis
unreachable, requests went through with a logged warning. Settings checked in fresh processes:
the broker's Redis by default, the cache URL when set, local memory with neither.
(`tests/api/test_ratelimit_shared.py`)

**Endpoint URLs.** An endpoint declared at `http://10.20.30.40:8000/v1`: a lead's judge list,
judge page and refused judge form named it "internal (models m1)" with no URL; the project
owner's showed the URL; the API's judge list names only the endpoint.
(`tests/judges/test_endpoint_urls.py`)
"""


def security_figures(rows: dict) -> dict:
    """Cases passed and failed per finding, read from the run's outcomes."""
    counts = {}
    for path, finding in SECURITY.items():
        mine = [r["outcome"] for nodeid, r in rows.items() if nodeid.startswith(path + "::")]
        counts[f"{finding}: cases passed"] = sum(1 for o in mine if o == "passed")
        failed = sum(1 for o in mine if o.startswith(("failed", "error")))
        if failed:
            counts[f"{finding}: cases failed"] = failed
    return counts


class Outcomes:
    def __init__(self):
        self.rows: dict[str, dict] = {}

    def pytest_runtest_logreport(self, report):
        row = self.rows.setdefault(report.nodeid, {"outcome": "passed", "seconds": 0.0})
        row["seconds"] += report.duration
        if report.failed:
            row["outcome"] = "failed" if report.when == "call" else f"error ({report.when})"
        elif report.skipped and row["outcome"] == "passed":
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            row["outcome"] = f"skipped: {reason}".strip()


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _service(name: str) -> str:
    url = os.environ.get(name, "")
    if not url:
        return "not set"
    parsed = urlparse(url)
    return f"{parsed.scheme}://{parsed.hostname}:{parsed.port or ''}{parsed.path}"


def bad_input_section(figures: dict) -> list[str]:
    """Issue 34's figures in words: fuzz requests per route, server errors, gate cases."""
    fuzz = figures["areas"].get("fuzzing", {})
    bad = figures["areas"].get("bad input", {})
    if "OTLP route requests" not in fuzz and "gate thresholds refused" not in bad:
        return []
    lines = ["", "## Bad input to the routes (issue 34)", ""]
    for route, key in (("OTLP trace ingestion", "OTLP route"), ("the label form", "label form")):
        requests = fuzz.get(f"{key} requests", fuzz.get(f"{key} posts", 0))
        lines.append(
            f"- {route}: {requests:,} generated requests (seeded, tests/reliability/"
            f"test_fuzz_routes.py), {fuzz.get(f'{key} refused', 0):,} refused with a "
            f"well-formed error, {fuzz.get(f'{key} server errors', 0)} server errors"
        )
    lines += [
        f"- OTLP requests of named hostile shapes refused by field: "
        f"{bad.get('OTLP hostile requests refused', 0)}; JSON bodies over the cap refused "
        f"with a 413 before being read: {bad.get('API bodies over the cap refused', 0)}",
        f"- gate thresholds refused with a 422 naming min or max (NaN, ±Infinity, 1e400, "
        f"outside 0 to 1, not numbers): {bad.get('gate thresholds refused', 0)}; a figure "
        "that is not finite fails the gate closed (tests/reliability/test_gate_thresholds.py)",
    ]
    return lines


def render(outcomes: dict, figures: dict, *, command: str, seconds: float) -> str:
    passed = sum(1 for r in outcomes.values() if r["outcome"] == "passed")
    failed = [n for n, r in outcomes.items() if r["outcome"].startswith(("failed", "error"))]
    skipped = [n for n, r in outcomes.items() if r["outcome"].startswith("skipped")]
    lines = [
        "# Reliability figures",
        "",
        "Generated by `python -m tests.reliability.report`; do not edit by hand.",
        "",
        f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {_git('rev-parse', '--short', 'HEAD')}"
        + (
            " (with uncommitted changes)"
            if _git("status", "--porcelain", "--untracked-files=no")
            else ""
        ),
        f"- command: `{command}`",
        f"- database: {_service('DATABASE_URL')}; broker: {_service('CELERY_BROKER_URL')}; "
        f"REQUIRE_SERVICES={os.environ.get('REQUIRE_SERVICES', '0')}",
        f"- tests: {passed} passed, {len(failed)} failed, {len(skipped)} skipped "
        f"in {seconds:.0f} s",
        "",
        *MENDS.splitlines(),
        "",
        "## Figures",
        "",
        'Counts are what the tests did and found (summed over tests); every "lost" or',
        '"duplicated" figure is also asserted to be zero by its test.',
        "",
        "| area | figure | value |",
        "|---|---|---:|",
    ]
    for area in sorted(figures["areas"]):
        for name, value in sorted(figures["areas"][area].items()):
            shown = f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"
            lines.append(f"| {area} | {name.replace('_', ' ')} | {shown} |")
    lines += bad_input_section(figures)
    lines += blindness_section(figures)
    lines += ["", "## Tests", "", "| test | outcome | seconds |", "|---|---|---:|"]
    for nodeid, row in sorted(outcomes.items()):
        lines.append(f"| `{nodeid}` | {row['outcome']} | {row['seconds']:.1f} |")
    if failed:
        lines += ["", "**Failing:** " + ", ".join(f"`{n}`" for n in failed)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    # A file of this run's own: a test suite running at the same time (tests/reliability is
    # part of `make test`) must not add its figures to this report's.
    figures_module.FIGURES_FILE = Path(tempfile.mkdtemp(prefix="reliability-")) / "figures.json"
    # The report fuzzes 1,000 files per format; `make test` a fresh 250 on every run.
    os.environ.setdefault("RELIABILITY_FUZZ_EXAMPLES", "1000")
    outcomes = Outcomes()
    missing = [path for path in SECURITY if not (ROOT / path).exists()]
    if missing:
        raise SystemExit(f"tests named in SECURITY are missing: {', '.join(missing)}")
    args = ["-q", "-p", "no:cacheprovider", "tests/reliability", *BORROWED, *SECURITY, *argv]
    started = time.monotonic()
    os.chdir(ROOT)
    code = pytest.main(args, plugins=[outcomes])
    seconds = time.monotonic() - started
    figures = figures_load()
    for nodeid, (area, counts) in BORROWED.items():
        if outcomes.rows.get(nodeid, {}).get("outcome") == "passed":
            bucket = figures["areas"].setdefault(area, {})
            for name, value in counts.items():
                bucket[name] = bucket.get(name, 0) + value
    figures["areas"]["security"] = security_figures(outcomes.rows)
    command = shlex.join(["python", "-m", "tests.reliability.report", *argv])
    OUTPUT.write_text(render(outcomes.rows, figures, command=command, seconds=seconds))
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
