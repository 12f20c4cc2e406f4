"""bench/RESULTS.md keeps what a partial run did not measure (bench.runner.results.rows_kept).

`python -m bench --only save_next --write` used to replace the whole results table, so the
import, judge, export and bits figures of the last full run were lost from the file (seen in the
seventh session). Expected tables here are written by hand.
"""

from bench.runner.results import AUTO_BEGIN, AUTO_END, rows_kept

OLD = f"""{AUTO_BEGIN}
- date: 2026-12-01 16:34 UTC; git commit 06c4f91

| # | what | size | median of runs | min–max | target | met |
|---|---|---|---|---|---|---|
| 1 | save p50 | 100k | 11.7 ms (n=3) | 11–12 | ≤ 15 ms | met |
| 2 | import answers/s | 100k | 3,056 (n=3) | 3,003–3,346 | ≥ 2,000 | met |
| 4 | judge share | 1k | 86.0 % (n=3) | 85–87 | ≥ 80% | met |
{AUTO_END}"""

NEW = f"""{AUTO_BEGIN}
- date: 2026-12-01 19:45 UTC; git commit f09aa28

| # | what | size | median of runs | min–max | target | met |
|---|---|---|---|---|---|---|
| 1 | save p50 | 100k | 7.3 ms (n=3) | 7.2–7.5 | ≤ 15 ms | met |
| 3 | report total | 1M | 17.2 s (n=3) | 16.8–17.3 | ≤ 60 s | met |
{AUTO_END}"""


def test_a_partial_write_keeps_the_other_measurements_rows_marked_with_their_date():
    merged = rows_kept(OLD, NEW).splitlines()
    rows = [line for line in merged if line.startswith("| ") and line[2].isdigit()]
    assert rows == [
        "| 1 | save p50 | 100k | 7.3 ms (n=3) | 7.2–7.5 | ≤ 15 ms | met |",
        "| 2 | import answers/s [kept from 2026-12-01 16:34 UTC] | 100k | 3,056 (n=3) "
        "| 3,003–3,346 | ≥ 2,000 | met |",
        "| 3 | report total | 1M | 17.2 s (n=3) | 16.8–17.3 | ≤ 60 s | met |",
        "| 4 | judge share [kept from 2026-12-01 16:34 UTC] | 1k | 86.0 % (n=3) | 85–87 "
        "| ≥ 80% | met |",
    ]
    assert merged[0] == AUTO_BEGIN
    assert merged[-1] == AUTO_END
    assert "- date: 2026-12-01 19:45 UTC; git commit f09aa28" in merged


def test_a_kept_row_keeps_its_first_date_through_later_partial_writes():
    once = rows_kept(OLD, NEW)
    later = NEW.replace("19:45 UTC; git commit f09aa28", "21:00 UTC; git commit abc1234")
    twice = rows_kept(once, later)
    assert "| 2 | import answers/s [kept from 2026-12-01 16:34 UTC] |" in twice
    assert "kept from 2026-12-01 19:45" not in twice


def test_a_full_write_replaces_every_row():
    assert rows_kept(OLD, OLD.replace("11.7 ms", "9.9 ms")) == OLD.replace("11.7 ms", "9.9 ms")


def test_a_run_of_one_size_keeps_the_other_sizes_rows_of_its_measurement():
    old = f"""{AUTO_BEGIN}
- date: 2026-12-06 04:53 UTC; git commit 6a83aa3

| # | what | size | median of runs | min–max | target | met |
|---|---|---|---|---|---|---|
| 14 | rollups recompute | 1M claims | 0.83 s (n=1) | 0.83–0.83 | ≤ 5 s | met |
| 14 | rollups one statement | 1M claims | 6.21 s (n=1) | 6.21–6.21 | — | — |
| 14 | rollups recompute | 10M claims | 0.45 s (n=1) | 0.45–0.45 | ≤ 2 s | met |
{AUTO_END}"""
    new = f"""{AUTO_BEGIN}
- date: 2026-12-06 13:50 UTC; git commit 1234567

| # | what | size | median of runs | min–max | target | met |
|---|---|---|---|---|---|---|
| 14 | rollups recompute | 1M claims | 0.35 s (n=3) | 0.28–0.42 | ≤ 5 s | met |
{AUTO_END}"""
    rows = [line for line in rows_kept(old, new).splitlines() if line.startswith("| 14 ")]
    assert rows == [
        "| 14 | rollups recompute | 1M claims | 0.35 s (n=3) | 0.28–0.42 | ≤ 5 s | met |",
        "| 14 | rollups recompute [kept from 2026-12-06 04:53 UTC] | 10M claims | 0.45 s (n=1) "
        "| 0.45–0.45 | ≤ 2 s | met |",
    ]
