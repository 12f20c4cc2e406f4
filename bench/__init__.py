"""Benchmarks: speed at scale, measured against the targets of issue 7 (not tests).

`python -m bench --size small|default|full [--only NAME] [--write]` creates and migrates its
own PostgreSQL database (DATABASE_URL, default `fa_bench` on 127.0.0.1), generates synthetic
projects with COPY (`bench.datagen`), runs each measurement in a child process (so its peak RSS
is its own), repeats it, and prints or writes the table in `bench/RESULTS.md`.
"""
