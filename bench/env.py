"""The benchmark's own database and Django, set up before anything imports a model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/fa_bench"
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/7"


def environ_defaults() -> dict[str, str]:
    """DATABASE_URL and CELERY_BROKER_URL for the bench (the caller's own win), as os.environ."""
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("CELERY_BROKER_URL", DEFAULT_BROKER_URL)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Benchmarks measure the product, not a debug toolbar or query log.
    os.environ["DJANGO_DEBUG"] = "0"
    return dict(os.environ)


def database_ensure() -> str:
    """Create the bench database if it is missing; refuse anything but PostgreSQL."""
    import dj_database_url
    import psycopg

    url = os.environ["DATABASE_URL"]
    config = dj_database_url.parse(url)
    if "postgresql" not in config["ENGINE"]:
        raise SystemExit(f"The benchmarks need PostgreSQL; DATABASE_URL is {url!r}.")
    name = config["NAME"]
    admin = psycopg.connect(
        host=config["HOST"] or "127.0.0.1",
        port=config["PORT"] or 5432,
        user=config["USER"] or "postgres",
        password=config["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )
    with admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{name}"')
    return name


def django_setup(*, migrate: bool = False) -> None:
    environ_defaults()
    if migrate:
        database_ensure()
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, check=True
        )
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django

    django.setup()
