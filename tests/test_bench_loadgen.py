"""The bench's gunicorn is the web service's (docker-compose.yml): same workers, threads and
keep-alive, so the save-and-next rows of bench/RESULTS.md measure what is deployed."""

import re
import shlex
from pathlib import Path

import yaml

from bench.loadgen import (
    CLIENT_KEEPALIVE,
    GUNICORN_KEEPALIVE,
    GUNICORN_THREADS,
    GUNICORN_WORKERS,
)

ROOT = Path(__file__).resolve().parent.parent


def _web_gunicorn_options() -> dict[str, str]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    gunicorn = re.search(r"gunicorn [^\"&]+", command).group(0)
    words = shlex.split(gunicorn)
    return {
        w: words[i + 1] for i, w in enumerate(words) if w.startswith("--") and i + 1 < len(words)
    }


def test_the_bench_serves_with_the_web_services_gunicorn_settings():
    options = _web_gunicorn_options()
    assert options["--workers"] == str(GUNICORN_WORKERS) == "3"
    assert options["--threads"] == str(GUNICORN_THREADS) == "4"
    assert options["--keep-alive"] == str(GUNICORN_KEEPALIVE) == "75"


def test_the_client_lets_an_idle_connection_go_before_gunicorn_closes_it():
    assert 0 < CLIENT_KEEPALIVE < GUNICORN_KEEPALIVE
