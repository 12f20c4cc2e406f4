"""Measurement 1: save-and-next under gunicorn, driven by simulated analysts over loopback.

`gunicorn_start()` serves the product as in production: the `web` service's command in
docker-compose.yml (`gunicorn config.wsgi --workers 3 --threads 4`; change both together)
against the bench database. `save_next_run()` has each
logged-in analyst do: GET the labelling screen, then repeatedly POST the screen's save form as
htmx does (HX-Request, X-CSRFToken), which saves the label and answers with the next claim's
screen — the one request an analyst waits for.

Two ways to drive it:
- `think=0`: a closed loop, every analyst posting again the moment the previous answer arrives.
  With 16 analysts on 2 cores that is a stress test, not analysts: the server always has 16
  requests queued, so p95 is roughly 16 x CPU-per-request / 2 whatever the code does.
- `think=1.0`: each analyst pauses between saves for a think time drawn from a seeded
  exponential distribution with that mean (1 s), after a random start within the first mean.
  A person reading a pile and quoting a sentence takes tens of seconds per claim, so this is
  still many times faster than real analysts; it is the load the 16-analyst p95 target is read
  against.

Every POST's latency is measured at the client (loopback, so it is server time plus a fraction
of a millisecond of socket and HTTP parsing); the app sends no Server-Timing header, so no
server-side split is claimed. Loops are bounded by a count and a deadline, and only 127.0.0.1
is ever contacted.
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


# The web service's gunicorn settings (docker-compose.yml): change both together.
GUNICORN_WORKERS = 3
GUNICORN_THREADS = 4


def gunicorn_start(
    *, workers: int = GUNICORN_WORKERS, threads: int = GUNICORN_THREADS, log: Path
) -> Server:
    port = free_port()
    env = dict(os.environ)
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        "-w",
        str(workers),
        "--threads",
        str(threads),
        "-b",
        f"{HOST}:{port}",
        "--log-level",
        "warning",
    ]
    handle = open(log, "w")  # noqa: SIM115 - closed when the process is reaped
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=handle)
    base_url = f"http://{HOST}:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base_url}/login/", timeout=2).status_code == 200:
                return Server(process, base_url, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    process.kill()
    raise RuntimeError("gunicorn did not answer within 60 s")


_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _save_url_re(slug: str) -> re.Pattern:
    return re.compile(rf"/p/{re.escape(slug)}/label/(\d+)/save/")


@dataclass
class Analyst:
    username: str
    client: httpx.AsyncClient
    claim_id: int | None = None
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def _login(base_url: str, username: str, password: str) -> httpx.AsyncClient:
    # gunicorn closes a keep-alive connection idle for 2 s (its --keep-alive default); a client
    # reusing it at that moment gets a ReadError. Think times often exceed 2 s, so the client
    # drops idle connections first and opens a new one, as a browser would.
    client = httpx.AsyncClient(
        base_url=base_url,
        timeout=30,
        follow_redirects=False,
        limits=httpx.Limits(keepalive_expiry=1.0),
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


async def _work(
    analyst: Analyst, slug: str, *, saves: int, deadline: float, think: float, rng: random.Random
) -> None:
    pattern = _save_url_re(slug)
    done = 0
    if think:
        await asyncio.sleep(rng.uniform(0, think))  # analysts do not all start at once
    while analyst.claim_id is not None and done < saves and time.monotonic() < deadline:
        token = analyst.client.cookies.get("csrftoken", "")
        started = time.perf_counter()
        response = await analyst.client.post(
            f"/p/{slug}/label/{analyst.claim_id}/save/",
            data={"verdict": "NOT_IN_PILE", "note": ""},
            headers={"HX-Request": "true", "X-CSRFToken": token, "HX-Target": "screen"},
        )
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            analyst.errors.append(f"HTTP {response.status_code}")
        analyst.latencies.append(elapsed)
        found = pattern.search(response.text)
        saved = found is None or int(found.group(1)) != analyst.claim_id
        if not saved:
            analyst.errors.append("same claim served again (save refused)")
        analyst.claim_id = int(found.group(1)) if found else None
        done += 1
        if think:
            pause = rng.expovariate(1 / think)
            if time.monotonic() + pause >= deadline:
                break
            await asyncio.sleep(pause)


async def save_next_run(
    analysts: list[Analyst],
    slug: str,
    *,
    saves: int,
    seconds: float,
    think: float = 0.0,
    seed: int = 7,
) -> dict:
    """Each analyst opens the screen, then saves up to `saves` claims within `seconds`.

    `think` is the mean pause between an answer and the analyst's next save (exponential,
    seeded by `seed` and the analyst's place in the list); 0 posts back to back.
    """
    for analyst in analysts:
        analyst.latencies.clear()
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
            )
            for i, a in enumerate(analysts)
        )
    )
    wall = time.perf_counter() - started
    latencies = sorted(x for a in analysts for x in a.latencies)
    errors = [e for a in analysts for e in a.errors]
    return {"latencies": latencies, "errors": errors, "wall": wall}


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-quantile (0–1) by linear interpolation, as numpy's default."""
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)
