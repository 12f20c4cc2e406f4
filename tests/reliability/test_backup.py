"""Backup and restore with PostgreSQL's own tools, as README's "Backup and restore" says:
`pg_dump -Fc` the database, lose the labels, restore the dump into a fresh database, and find
the same labels (count and content) there."""

import os
import shutil
import subprocess

import psycopg
import pytest
from django.db import connection

from annotate.models import Label, LabelHistory
from tests.reliability.world import world_build

COLUMNS = "id, claim_id, annotator_id, verdict, evidence_passage_id, evidence_start, evidence_end, evidence_quote, note"


def _pg_env(settings: dict) -> dict:
    env = {**os.environ, "PGHOST": settings["HOST"] or "127.0.0.1", "PGUSER": settings["USER"]}
    if settings.get("PORT"):
        env["PGPORT"] = str(settings["PORT"])
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = settings["PASSWORD"]
    return env


def _labels(dsn_kwargs: dict) -> list[tuple]:
    with psycopg.connect(**dsn_kwargs) as conn:
        return conn.execute(f"SELECT {COLUMNS} FROM annotate_label ORDER BY id").fetchall()


@pytest.mark.postgres
def test_dump_lose_restore_gives_the_same_labels(transactional_db, tmp_path, figures):
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        pytest.fail("pg_dump/pg_restore are not installed (apt-get install postgresql-client)")
    for n in range(3):
        world_build(f"BACKUP{n}", slug=f"backup-{n}")
    settings = connection.settings_dict
    env = _pg_env(settings)
    source = settings["NAME"]
    scratch = f"{source}_restore"
    connect = {
        "host": env["PGHOST"],
        "user": env["PGUSER"],
        "port": env.get("PGPORT", "5432"),
        "password": env.get("PGPASSWORD"),
    }
    before = _labels({**connect, "dbname": source})
    history_before = LabelHistory.objects.count()
    assert len(before) == Label.objects.count() == 6

    dump = tmp_path / "faithaudit.dump"
    subprocess.run(["pg_dump", "-Fc", "-f", str(dump), source], env=env, check=True, timeout=120)
    Label.objects.all().delete()  # the accident
    assert Label.objects.count() == 0

    subprocess.run(["dropdb", "--if-exists", scratch], env=env, check=True, timeout=60)
    subprocess.run(["createdb", scratch], env=env, check=True, timeout=60)
    try:
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "-d", scratch, str(dump)],
            env=env,
            check=True,
            timeout=180,
        )
        after = _labels({**connect, "dbname": scratch})
        with psycopg.connect(**connect, dbname=scratch) as conn:
            history_after = conn.execute("SELECT count(*) FROM annotate_labelhistory").fetchone()[0]
    finally:
        subprocess.run(["dropdb", "--if-exists", scratch], env=env, check=False, timeout=60)
    assert after == before, "the restored labels differ from the dumped ones"
    assert history_after == history_before
    figures.add(
        "data safety",
        labels_dumped=len(before),
        labels_restored=len(after),
        labels_lost=len(set(before) - set(after)),
    )
