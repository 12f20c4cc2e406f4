"""Where a save-and-next POST spends its time, in-process (a profile, not a measurement).

    .venv/bin/python -m bench.profile_save_next [--saves 200] [--top 40] [--sql]

Generates a fresh 100k-claim project in the bench database as the save-and-next measurement
does (`bench-profile-100k`, ~5 s, untimed; fresh each time, so the queue's walk starts as in a
new bench run), then saves as one of its analysts through Django's full request path
(middleware, view, template) with the test client. Prints the wall time per POST split
into time inside database calls and the rest, the statements per POST, and a cProfile of the
POSTs sorted by own time. `--sql` prints each statement of one POST with its time.
`--phases` times named phases of each POST (the label service, the template, the session,
user and membership reads, COMMIT) by wrapping them, and prints each one's median per POST.
`--ahead` has each POST follow its read-ahead GET (…/following/, timed apart) and name the
claim shown ahead, as label.js does: the POST then answers with the confirmation only (the
per-statement and `--phases` figures then count the GET's work in with its POST's).
`--only REGEX` prints only the profile's lines whose file or function matches (say
`template|loader_tags|templatetags` for the template's nodes), `--top` of them.
`--rollup-state` builds the project's rollup state first (`metrics.services.rollups`), so each
write's rollup triggers (migration metrics 0005) join it: their cost on the save path.
`--callers REGEX` prints who calls the functions matching (say `builtins.hasattr`).
`--think SECONDS` pauses before each POST, as an analyst reading: the process (and the
database's) sits idle, and the POST then pays for cold caches and woken processes. On
2026-12-08, `--ahead --phases --saves 40 --think 1` gave a wall p50 of 9.4 ms per POST (3.6 ms
in database calls) against 5.7 (2.2) back to back: the 16-analyst rows of bench/RESULTS.md
(think time 1 s) are read on such POSTs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import statistics
import time

from bench.env import django_setup


class _SqlTimer:
    def __init__(self):
        self.seconds = 0.0
        self.count = 0
        self.log: list[tuple[float, str]] = []
        self.keep = False
        self.by_statement: dict[str, float] = {}

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent = time.perf_counter() - started
            self.seconds += spent
            self.count += 1
            if self.keep:
                self.log.append((spent, sql))
            key = " ".join(sql.split())[:70]
            self.by_statement[key] = self.by_statement.get(key, 0.0) + spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sql", action="store_true")
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--rollup-state", action="store_true")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--ahead", action="store_true")
    parser.add_argument(
        "--callers", default="", help="also print who calls the functions matching (a regex)"
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds to pause before each POST, as an analyst reads (the process idles)",
    )
    parser.add_argument("--only", default="", help="print only the profile's lines matching")
    options = parser.parse_args()
    django_setup(migrate=True)
    from bench.datagen import project_generate, tables_vacuum

    slug = "bench-profile-100k"
    project_generate(slug=slug, claims=options.claims, labelled=0.3, gold=False, judge=False)
    tables_vacuum()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    if options.rollup_state:
        from annotate.models import Project
        from metrics.services.rollups import rollups_read

        rollups_read(project=Project.objects.get(slug=slug))
    user = get_user_model().objects.filter(username__startswith=f"{slug}-a").order_by("-id")[0]
    client = Client()
    client.force_login(user)
    page = client.get(f"/p/{slug}/label/")
    pattern = re.compile(rf"/p/{re.escape(slug)}/label/(\d+)/save/")
    claim_id = int(pattern.search(page.content.decode()).group(1))
    headers = {"HX-Request": "true", "HX-Target": "screen"}

    def ms(values):
        return statistics.median(values) * 1000

    timer = _SqlTimer()
    walls, in_db, statements = [], [], []

    shown = re.compile(r'id="screen" class="label-screen" data-claim-id="(\d+)"')
    aheads: list[float] = []

    def post() -> None:
        nonlocal claim_id
        sent = dict(headers)
        if options.ahead:  # label.js's read-ahead first, timed apart
            started = time.perf_counter()
            ahead = client.get(f"/p/{slug}/label/{claim_id}/following/", headers=headers)
            aheads.append(time.perf_counter() - started)
            if ahead.status_code == 200:
                sent["X-Screen-Ahead"] = shown.search(ahead.content.decode()).group(1)
        if options.think:
            time.sleep(options.think)
        db_before, count_before = timer.seconds, timer.count
        started = time.perf_counter()
        response = client.post(
            f"/p/{slug}/label/{claim_id}/save/",
            {"verdict": "NOT_IN_PILE", "note": ""},
            headers=sent,
        )
        walls.append(time.perf_counter() - started)
        in_db.append(timer.seconds - db_before)
        statements.append(timer.count - count_before)
        assert response.status_code == 200, response.status_code
        following = int(shown.search(response.content.decode()).group(1))
        assert following != claim_id, f"claim {claim_id} was not saved: served again"
        claim_id = following

    phases = _phases_install() if options.phases else None
    with connection.execute_wrapper(timer):
        for _ in range(20):  # warm caches, connections, templates
            post()
        walls.clear(), in_db.clear(), statements.clear(), aheads.clear()
        if options.sql:
            timer.keep = True
            post()
            timer.keep = False
            for spent, sql in timer.log:
                print(f"{spent * 1000:6.2f} ms  {sql[:160]}")
            walls.clear(), in_db.clear(), statements.clear()
        for _ in range(options.saves):
            post()
        print(
            f"{len(walls)} POSTs without the profiler: wall p50 {ms(walls):.2f} ms, of it in "
            f"database calls {ms(in_db):.2f} ms; {statistics.median(statements):.0f} statements"
        )
        if aheads:
            print(f"  each after its read-ahead GET: wall p50 {ms(aheads):.2f} ms")
        for key, spent in sorted(timer.by_statement.items(), key=lambda kv: -kv[1]):
            print(f"  {spent / (options.saves + 20) * 1000:6.2f} ms per POST  {key}")
        if phases is not None:
            phases.report(len(walls))
        walls.clear(), in_db.clear(), statements.clear()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(options.saves):
            post()
        profiler.disable()

    print(
        f"\n{len(walls)} POSTs: wall p50 {ms(walls):.2f} ms (under cProfile), of it in database "
        f"calls {ms(in_db):.2f} ms; {statistics.median(statements):.0f} statements per POST"
    )
    stats = pstats.Stats(profiler)
    restrict = (options.only, options.top) if options.only else (options.top,)
    stats.sort_stats("tottime").print_stats(*restrict)
    stats.sort_stats("cumulative").print_stats(*restrict)
    if options.callers:
        stats.sort_stats("tottime").print_callers(options.callers)


class _Phases:
    """Wall time spent inside each wrapped callable, summed per POST (a phase called twice in
    one POST counts both calls)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def wrap(self, owner, attribute: str, name: str) -> None:
        original = getattr(owner, attribute)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

        setattr(owner, attribute, timed)

    def report(self, posts: int) -> None:
        print(f"  phases, mean per POST over {posts} POSTs (warm-up included):")
        for name, spent in sorted(self.seconds.items(), key=lambda kv: -kv[1]):
            print(f"  {spent / (posts + 20) * 1000:6.2f} ms  {name}")


def _phases_install() -> _Phases:
    from django.db.backends.base.base import BaseDatabaseWrapper

    import annotate.access
    import annotate.views.labelling as labelling
    from config import auth

    phases = _Phases()
    phases.wrap(labelling, "label_save_and_next", "label service (its transaction)")
    phases.wrap(labelling, "render", "template render")
    phases.wrap(labelling, "claim_next_for_user", "read-ahead's queue (claim_next_for_user)")
    phases.wrap(labelling, "labelling_progress", "progress")
    phases.wrap(labelling, "thread_context", "comments thread")
    phases.wrap(labelling, "label_screen_get", "screen context (label_screen_get)")
    phases.wrap(labelling, "claim_reveal_for_user", "saved claim's reveal")
    phases.wrap(labelling, "LabelForm", "form construction")
    phases.wrap(annotate.access, "project_get_for_user", "membership and project read")
    phases.wrap(
        annotate.access, "session_membership_get", "session with its user and membership read"
    )
    phases.wrap(auth.SessionStore, "_get_session_from_db", "session read (on its own)")
    phases.wrap(auth.UserBackend, "get_user", "user read")
    phases.wrap(BaseDatabaseWrapper, "commit", "COMMIT")
    return phases


if __name__ == "__main__":
    main()
