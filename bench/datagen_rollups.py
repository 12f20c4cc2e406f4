"""Projects of millions of claims for the rollups bench (issue 30), written by PostgreSQL itself.

`rollup_project_generate(slug=..., claims=10_000_000)` writes answers (4 claims each), claims
in 4 file strata, a finished judge run with a verdict and a confidence on every claim, and a
simple random gold sample of about `gold` claims, with `INSERT … SELECT generate_series`: no
row passes through Python, so 10M claims take minutes, not the COPY generator's (`datagen`)
Python-built lines. Every draw is a hash of the row's id (`hashint8`), so a size gives the same
data every time: truth SUPPORTED with p = 0.7, the judge right with p = 0.85, its confidence
uniform in [0.6, 1] when it says SUPPORTED and in [0, 0.4] otherwise.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from django.db import connection, transaction

from annotate.models import Answer, Claim, Gold, Project
from bench.datagen import _ids, project_delete
from judges.models import Judge, JudgeRun, JudgeVerdict

STRATA = ("risk health", "risk legal", "risk travel", "risk general")


def _u(expr: str, salt: int) -> str:
    """A uniform draw in [0, 1) from the hash of `expr` (an id) and `salt`."""
    return f"((hashint8(({expr}) * 7919 + {salt}) & 1048575) / 1048576.0)"


def _defaults(model, given: list[str]) -> tuple[list[str], list]:
    """Columns of `model` not in `given` and their field defaults (as query parameters)."""
    columns, values = [], []
    for f in model._meta.concrete_fields:
        if f.column in given or (f.primary_key and "id" not in given and f.column == "id"):
            continue
        columns.append(f.column)
        values.append(f.get_db_prep_save(f.get_default(), connection))
    return columns, values


def _insert(cursor, model, given: dict[str, str], source: str, params: list) -> None:
    """INSERT INTO model (given columns + defaults) SELECT their expressions FROM source;
    `params` are those of the given expressions, in order."""
    extra, values = _defaults(model, list(given))
    columns = [*given, *extra]
    exprs = [*given.values(), *(["%s"] * len(extra))]
    statement = (
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"SELECT {', '.join(exprs)} FROM {source}"
    )
    cursor.execute(statement, [*params, *values])


@transaction.atomic
def rollup_project_generate(*, slug: str, claims: int, gold: int = 5_000, say=print) -> dict:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
    project_delete(slug=slug)
    project = Project.objects.create(slug=slug, name=f"Rollups {slug}")
    judge = Judge.objects.create(project=project, name="bench judge", model="m-1")
    run = JudgeRun.objects.create(
        judge=judge, project=project, status=JudgeRun.Status.DONE, backend="openai", model="m-1"
    )
    n_answers = -(-claims // 4)
    a0 = _ids(Answer._meta.db_table, n_answers)
    c0 = _ids(Claim._meta.db_table, claims)
    now = datetime.now(UTC)
    share = gold / claims
    truth = f"{_u('c.id', 1)} < 0.7"
    right = f"{_u('c.id', 2)} < 0.85"
    said_s = f"(({truth}) = ({right}))"
    with connection.cursor() as cursor:
        _insert(
            cursor,
            Answer,
            {
                "id": f"{a0} + i",
                "project_id": str(project.pk),
                "external_id": "'b' || i",
                "created_at": "%s",
            },
            f"generate_series(0, {n_answers - 1}) AS i",
            [now],
        )
        say(f"{slug}: {n_answers:,} answers")
        strata = "ARRAY[" + ", ".join(f"'{s}'" for s in STRATA) + "]"
        _insert(
            cursor,
            Claim,
            {
                "id": f"{c0} + i",
                "project_id": str(project.pk),
                "answer_id": f"{a0} + i / 4",
                "position": "i %% 4",
                "text": "'claim ' || i",
                "stratum": f"({strata})[1 + (hashint8(i * 31 + 3) & 3)]",
                "created_at": "%s",
            },
            f"generate_series(0, {claims - 1}) AS i",
            [now],
        )
        say(f"{slug}: {claims:,} claims")
        _insert(
            cursor,
            JudgeVerdict,
            {
                "run_id": str(run.pk),
                "claim_id": "c.id",
                "verdict": f"CASE WHEN {said_s} THEN 'SUPPORTED' ELSE 'NOT_IN_PILE' END",
                "confidence": f"CASE WHEN {said_s} THEN 0.6 + 0.4 * {_u('c.id', 3)} "
                f"ELSE 0.4 * {_u('c.id', 3)} END",
                "created_at": "%s",
            },
            f"annotate_claim c WHERE c.project_id = {project.pk}",
            [now],
        )
        say(f"{slug}: {claims:,} verdicts")
        _insert(
            cursor,
            Gold,
            {
                "claim_id": "c.id",
                "verdict": f"CASE WHEN {truth} THEN 'SUPPORTED' ELSE 'NOT_IN_PILE' END",
                "source": "'unanimous'",
                "decided_at": "%s",
            },
            f"annotate_claim c WHERE c.project_id = {project.pk} AND {_u('c.id', 4)} < {share}",
            [now],
        )
        cursor.execute(
            "SELECT count(*) FROM annotate_gold g JOIN annotate_claim c ON c.id = "
            "g.claim_id WHERE c.project_id = %s",
            [project.pk],
        )
        n_gold = cursor.fetchone()[0]
        for model in (Answer, Claim, Gold, JudgeVerdict):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
    seconds = time.perf_counter() - started
    say(f"{slug}: {claims:,} claims, {n_gold:,} gold in {seconds:.0f} s")
    return {
        "slug": slug,
        "claims": claims,
        "answers": n_answers,
        "gold": n_gold,
        "run_id": run.pk,
        "seconds": seconds,
    }
