"""Shared process setup: a measurement's child process, the loopback LLM server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from bench.child import RESULT_PREFIX
from bench.env import ROOT


def child_run(
    name: str, kwargs: dict, *, env: dict | None = None, timeout: float = 900
) -> tuple[dict, float]:
    """Run `measure_<name>(**kwargs)` in a fresh process; return (result, peak RSS in MB).

    `result["_cpu_seconds"]` is the process's CPU time (user + system, whole process life,
    Django start-up included): unlike wall time it hardly depends on what else the shared
    machine runs.
    """
    command = [sys.executable, "-m", "bench.child", name, json.dumps(kwargs)]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + timeout
    # Read the pipes while waiting so a chatty child cannot block on a full pipe.
    import threading

    chunks: dict[str, list[str]] = {"out": [], "err": []}

    def drain(stream, key):
        for line in stream:
            chunks[key].append(line)

    readers = [
        threading.Thread(target=drain, args=(process.stdout, "out"), daemon=True),
        threading.Thread(target=drain, args=(process.stderr, "err"), daemon=True),
    ]
    for reader in readers:
        reader.start()
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            process.kill()
            pid, status, usage = os.wait4(process.pid, 0)
            raise RuntimeError(f"{name} ran past {timeout:.0f} s and was stopped")
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join(timeout=5)
    out, err = "".join(chunks["out"]), "".join(chunks["err"])
    result = None
    for line in out.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX) :])
    if process.returncode != 0 or result is None:
        tail = err.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{name} failed (exit {process.returncode}): {tail[0][:300]}")
    result["_cpu_seconds"] = usage.ru_utime + usage.ru_stime
    # The child's own high-water mark: ru_maxrss would include the driver's (see bench.child).
    return result, result.pop("_peak_rss_mb")


class LlmServer:
    """bench.llmproc in a process of its own, driven over its stdin."""

    def __init__(self, latency: float, *, ragas: bool = False):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.llmproc", "--latency", str(latency)]
            + (["--ragas"] if ragas else []),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the loopback LLM server did not start: {line!r}")
        self.base_url = f"http://127.0.0.1:{int(line.split()[1])}/v1"

    def command(self, text: str) -> str:
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def stats(self) -> dict:
        return json.loads(self.command("stats")[len("STATS ") :])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


LATENCY_S = 0.1
CONCURRENCY = 32


def server_calibrate(server: LlmServer, seconds: float = 2.0) -> dict:
    """What the loopback server gives a trivial client at C = 32 (`bench.llmproc
    --calibrate`, a process of its own): the ceiling of this machine before any judge code."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.llmproc", "--calibrate", server.base_url]
        + ["--concurrency", str(CONCURRENCY), "--seconds", str(seconds)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("CALIBRATE ")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"calibration failed: {tail[:300]}")
    return json.loads(lines[-1][len("CALIBRATE ") :])
