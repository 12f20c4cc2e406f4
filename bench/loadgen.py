"""Measurement 1: save-and-next under gunicorn, driven by simulated analysts over loopback.

`gunicorn_start()` serves the product as in production: the `web` service's command in
docker-compose.yml (`gunicorn config.wsgi --workers 3 --threads 4 --keep-alive 75`;
tests/test_bench_loadgen.py checks that both say the same)
against the bench database. `save_next_run()` has each
logged-in analyst do what label.js does in a browser: GET the labelling screen, then for each
claim GET the screen its save will answer with, ahead (…/following/, reserving that claim),
and POST the screen's save form as htmx does (HX-Request, X-CSRFToken, X-Screen-Ahead naming
the claim shown ahead), which saves the label and answers with the confirmation of the claim
shown ahead (the counters and the "Saved …" line) — the request an analyst's save waits for.
Both requests are timed and count in the load; `ahead=False` posts without the read-ahead, the
answer then being the whole next screen (a save whose screen ahead had not arrived in time).

Two ways to drive it:
- `think=0`: a closed loop, every analyst posting again the moment the previous answer arrives.
  With 16 analysts on 2 cores that is a stress test, not analysts: the server always has 16
  requests queued, so p95 is roughly 16 x CPU-per-request / 2 whatever the code does.
- `think=1.0`: each analyst pauses between saves for a think time drawn from a seeded
  exponential distribution with that mean (1 s), after a random start within the first mean.
  A person reading a pile and quoting a sentence takes tens of seconds per claim, so this is
  still many times faster than real analysts; it is the load the 16-analyst p95 target is read
  against.

Each save is timed twice:
- at the client: from just before httpx sends the POST to when its answer has been read. Over
  loopback, but it includes the client's own HTTP handling (httpx on asyncio, in this Python
  process, shared by all simulated analysts) and, with 16 analysts, the time a request waits
  for a free gunicorn worker thread; so it is an upper bound of the server's time.
- at the server: gunicorn's request time (the `%(D)s` atom of its access log, microseconds),
  written by `gunicorn_start()` to `Server.access_log`. gunicorn's gthread worker measures it
  from when a worker thread has parsed the request line and headers to when the whole response
  has been written to the socket: Django's middleware, view, queries and template, plus
  reading the form body and writing the answer. It excludes the time the request waited in
  the socket backlog or for a free thread, and anything on the client's side.
  `access_log_times()` reads the save POSTs' times from a part of that log.
The app sends no Server-Timing header; the server-side figure is gunicorn's, not a split of
the view's time. Loops are bounded by a count and a deadline, and only 127.0.0.1 is ever
contacted.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@dataclass
class Server:
    process: subprocess.Popen
    base_url: str
    log: Path
    # gunicorn's access log, one line per request in ACCESS_LOG_FORMAT (see access_log_times).
    access_log: Path

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the gunicorn master and its workers."""
        ticks = os.sysconf("SC_CLK_TCK")
        pids = [self.process.pid]
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        if children.exists():
            pids += [int(p) for p in children.read_text().split()]
        total = 0.0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        return total

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# The web service's gunicorn settings (docker-compose.yml; tests/test_bench_loadgen.py checks
# that both say the same).
GUNICORN_WORKERS = 3
GUNICORN_THREADS = 4
# Seconds gunicorn keeps an idle connection open (docker-compose.yml says why 75).
GUNICORN_KEEPALIVE = 75
# The client drops an idle connection this long before gunicorn would close it, so it never
# reuses one at the moment the server closes it (a ReadError).
CLIENT_KEEPALIVE = GUNICORN_KEEPALIVE - 5

# One access-log line per request: method, path (PATH_INFO), status and gunicorn's request
# time in microseconds. gunicorn logs it through a logging.FileHandler opened in append mode,
# which writes and flushes each line as one write(); the workers share the file.
ACCESS_LOG_FORMAT = "%(m)s %(U)s %(s)s %(D)s"


def gunicorn_start(
    *, workers: int = GUNICORN_WORKERS, threads: int = GUNICORN_THREADS, log: Path
) -> Server:
    port = free_port()
    access_log = log.with_suffix(".access.log")
    env = dict(os.environ)
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        "-w",
        str(workers),
        "--threads",
        str(threads),
        "--keep-alive",
        str(GUNICORN_KEEPALIVE),
        "-b",
        f"{HOST}:{port}",
        "--log-level",
        "warning",
        "--access-logfile",
        str(access_log),
        "--access-logformat",
        ACCESS_LOG_FORMAT,
    ]
    access_log.write_text("")  # gunicorn appends: start each server on an empty file
    handle = open(log, "w")  # noqa: SIM115 - closed when the process is reaped
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=handle)
    base_url = f"http://{HOST}:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base_url}/login/", timeout=2).status_code == 200:
                return Server(process, base_url, log, access_log)
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    process.kill()
    raise RuntimeError("gunicorn did not answer within 60 s")


_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _save_url_re(slug: str) -> re.Pattern:
    return re.compile(rf"/p/{re.escape(slug)}/label/(\d+)/save/")


def access_log_size(server: Server) -> int:
    """The access log's size in bytes: where the next request's line will start."""
    return server.access_log.stat().st_size


def _following_url_re(slug: str) -> re.Pattern:
    return re.compile(rf"/p/{re.escape(slug)}/label/(\d+)/following/")


# What a save's answer shows: the whole next screen, or (read-ahead) its confirmation.
_SHOWN_RE = re.compile(r'id="screen" class="label-screen" data-claim-id="(\d+)"')


def _save_lines_read(
    path: Path, start: int, slug: str, *, ahead: bool = False
) -> tuple[list[float], int]:
    """The request times (ms) of the save POSTs logged from byte `start` (`ahead`: of the
    read-ahead GETs instead), and where the last complete line read ends (a line being written
    is left for the next read)."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    end = data.rfind(b"\n") + 1
    method_wanted, pattern = (
        ("GET", _following_url_re(slug)) if ahead else ("POST", _save_url_re(slug))
    )
    times = []
    for line in data[:end].decode().splitlines():
        method, rest = line.split(" ", 1)
        path_info, _status, micros = rest.rsplit(" ", 2)
        if method == method_wanted and pattern.fullmatch(path_info):
            times.append(int(micros) / 1000)
    return times, start + end


async def access_log_times(
    server: Server,
    slug: str,
    start: int,
    expected: int,
    *,
    timeout: float = 10.0,
    ahead: bool = False,
) -> tuple[list[float], int]:
    """gunicorn's request times (ms, sorted) of the save POSTs logged since byte `start`
    (`ahead`: of the read-ahead GETs).

    gunicorn writes a request's line after it has sent the answer, so the client can have its
    answer a moment before the line is in the file: this waits (up to `timeout`) until
    `expected` requests (the number the client sent) are logged. Returns the times and the
    offset where they end, the start of the next phase; the caller compares the count with
    `expected`.
    """
    deadline = time.monotonic() + timeout
    while True:
        times, end = _save_lines_read(server.access_log, start, slug, ahead=ahead)
        if len(times) >= expected or time.monotonic() >= deadline:
            return sorted(times), end
        await asyncio.sleep(0.05)


@dataclass
class Analyst:
    username: str
    client: httpx.AsyncClient
    claim_id: int | None = None
    latencies: list[float] = field(default_factory=list)
    ahead_latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def _login(base_url: str, username: str, password: str) -> httpx.AsyncClient:
    # As a browser does, the client keeps its connection between saves; gunicorn closes one
    # idle for GUNICORN_KEEPALIVE seconds, and a client reusing it at that moment gets a
    # ReadError, so the client lets it go first (CLIENT_KEEPALIVE).
    client = httpx.AsyncClient(
        base_url=base_url,
        timeout=30,
        follow_redirects=False,
        limits=httpx.Limits(keepalive_expiry=CLIENT_KEEPALIVE),
    )
    page = await client.get("/login/")
    token = _CSRF_INPUT.search(page.text).group(1)
    answer = await client.post(
        "/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token},
    )
    if answer.status_code != 302:
        raise RuntimeError(f"login of {username} failed ({answer.status_code})")
    return client


async def analysts_login(base_url: str, usernames: list[str], password: str) -> list[Analyst]:
    clients = []
    for name in usernames:  # one at a time: password hashing is slow by design
        clients.append(Analyst(name, await _login(base_url, name, password)))
    return clients


async def _open_screen(analyst: Analyst, slug: str) -> None:
    page = await analyst.client.get(f"/p/{slug}/label/")
    if page.status_code != 200:
        raise RuntimeError(f"{analyst.username}: labelling screen answered {page.status_code}")
    found = _save_url_re(slug).search(page.text)
    analyst.claim_id = int(found.group(1)) if found else None


async def _ahead_fetch(analyst: Analyst, slug: str) -> int | None:
    """label.js's read-ahead: GET the screen the save of the claim shown will answer with
    (…/following/, which reserves that claim); its claim id, None when nothing follows (204)."""
    started = time.perf_counter()
    response = await analyst.client.get(
        f"/p/{slug}/label/{analyst.claim_id}/following/",
        headers={"HX-Request": "true", "HX-Target": "screen"},
    )
    analyst.ahead_latencies.append(time.perf_counter() - started)
    if response.status_code == 204:
        return None
    if response.status_code != 200:
        analyst.errors.append(f"read-ahead HTTP {response.status_code}")
        return None
    found = _SHOWN_RE.search(response.text)
    return int(found.group(1)) if found else None


async def _work(
    analyst: Analyst,
    slug: str,
    *,
    saves: int,
    deadline: float,
    think: float,
    rng: random.Random,
    ahead: bool = True,
) -> None:
    """Save claim after claim as the labelling screen does. `ahead` (label.js in a browser):
    once a claim is shown, its next screen is fetched ahead; the analyst then thinks; the save
    is posted naming the claim shown ahead (X-Screen-Ahead), and the answer confirms it. Without
    `ahead` (no JavaScript's read-ahead), the save's answer is the whole next screen."""
    done = 0
    if think:
        await asyncio.sleep(rng.uniform(0, think))  # analysts do not all start at once
    while analyst.claim_id is not None and done < saves and time.monotonic() < deadline:
        headers = {"HX-Request": "true", "HX-Target": "screen"}
        if ahead:
            shown_ahead = await _ahead_fetch(analyst, slug)
            if shown_ahead is not None:
                headers["X-Screen-Ahead"] = str(shown_ahead)
        if think and done:
            pause = rng.expovariate(1 / think)
            if time.monotonic() + pause >= deadline:
                break
            await asyncio.sleep(pause)
        headers["X-CSRFToken"] = analyst.client.cookies.get("csrftoken", "")
        started = time.perf_counter()
        response = await analyst.client.post(
            f"/p/{slug}/label/{analyst.claim_id}/save/",
            data={"verdict": "NOT_IN_PILE", "note": ""},
            headers=headers,
        )
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            analyst.errors.append(f"HTTP {response.status_code}")
        analyst.latencies.append(elapsed)
        found = _SHOWN_RE.search(response.text)
        saved = found is None or int(found.group(1)) != analyst.claim_id
        if not saved:
            analyst.errors.append("same claim served again (save refused)")
        analyst.claim_id = int(found.group(1)) if found else None
        done += 1


async def save_next_run(
    analysts: list[Analyst],
    slug: str,
    *,
    saves: int,
    seconds: float,
    think: float = 0.0,
    seed: int = 7,
    ahead: bool = True,
) -> dict:
    """Each analyst opens the screen, then saves up to `saves` claims within `seconds`.

    `think` is the mean pause between the next screen fetched ahead and the analyst's save of
    the claim shown (exponential, seeded by `seed` and the analyst's place in the list); 0
    posts back to back. `ahead`: the read-ahead GET before each save, as label.js does
    (`_work`). Returns the saves' latencies, the read-ahead GETs' (`ahead_latencies`), the
    errors and the wall time.
    """
    for analyst in analysts:
        analyst.latencies.clear()
        analyst.ahead_latencies.clear()
        analyst.errors.clear()
    await asyncio.gather(*(_open_screen(a, slug) for a in analysts))
    deadline = time.monotonic() + seconds
    started = time.perf_counter()
    await asyncio.gather(
        *(
            _work(
                a,
                slug,
                saves=saves,
                deadline=deadline,
                think=think,
                rng=random.Random(seed * 1000 + i),
                ahead=ahead,
            )
            for i, a in enumerate(analysts)
        )
    )
    wall = time.perf_counter() - started
    latencies = sorted(x for a in analysts for x in a.latencies)
    ahead_latencies = sorted(x for a in analysts for x in a.ahead_latencies)
    errors = [e for a in analysts for e in a.errors]
    return {
        "latencies": latencies,
        "ahead_latencies": ahead_latencies,
        "errors": errors,
        "wall": wall,
    }


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-quantile (0–1) by linear interpolation, as numpy's default."""
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)
