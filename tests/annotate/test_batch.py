"""annotate.batch: statements in one round trip (PostgreSQL), model rows built as the ORM does.

The labelling screen's save-and-next sends its writes and reads through these, so a wrong
result index, a write that survives a failed batch or a field converted differently from the
ORM would show up as a wrong screen or a wrong label.
"""

import datetime

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from annotate.batch import StatementBatch, model_rows
from annotate.models import Answer, Claim, Project
from tests.factories import AnswerFactory, ClaimFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def test_each_statement_gets_its_own_rows_in_order():
    project = ProjectFactory(name="before")
    table = Project._meta.db_table
    batch = StatementBatch()
    renamed = batch.add(f"UPDATE {table} SET name = %s WHERE id = %s", ["after", project.pk])
    read = batch.add(f"SELECT name, slug FROM {table} WHERE id = %s", [project.pk])
    nothing = batch.add(f"SELECT name FROM {table} WHERE id = %s", [-1])
    with transaction.atomic():
        results = batch.run()
    assert results[renamed] is None
    assert results[read] == [("after", project.slug)]
    assert results[nothing] == []
    assert len(batch) == 0  # a batch runs its statements once


def test_a_check_sees_its_own_statements_rows_and_refusing_them_rolls_the_batch_back():
    project = ProjectFactory(name="before")
    table = Project._meta.db_table
    seen = []
    first = StatementBatch()
    first.add(f"UPDATE {table} SET name = %s WHERE id = %s", ["after", project.pk])
    first.add(f"SELECT slug FROM {table} WHERE id = %s", [project.pk], check=seen.append)
    batch = StatementBatch()
    batch.add(f"SELECT name FROM {table} WHERE id = %s", [-1])
    batch.extend(first)  # the check moves with its statement, to index 2
    assert batch.run_then(f"SELECT 1 FROM {table} WHERE id = %s", [project.pk]) == [(1,)]
    assert seen == [[(project.slug,)]]

    def refuse(rows):
        if not rows:
            raise LookupError("no such project")

    refused = StatementBatch()
    refused.add(f"UPDATE {table} SET name = %s WHERE id = %s", ["lost", project.pk])
    refused.add(f"SELECT 1 FROM {table} WHERE id = %s", [-1], check=refuse)
    with pytest.raises(LookupError), transaction.atomic():
        refused.run()
    project.refresh_from_db()
    assert project.name == "after"


def _three_renames() -> tuple[Project, StatementBatch]:
    project = ProjectFactory()
    table = Project._meta.db_table
    batch = StatementBatch()
    for name in ("a", "b", "c"):
        batch.add(f"UPDATE {table} SET name = %s WHERE id = %s", [name, project.pk])
    return project, batch


@pytest.mark.postgres
def test_postgresql_gets_the_whole_batch_in_one_round_trip():
    assert connection.vendor == "postgresql"
    project, batch = _three_renames()
    with CaptureQueriesContext(connection) as queries:
        batch.run()
    assert len(queries.captured_queries) == 1
    project.refresh_from_db()
    assert project.name == "c"


def test_other_databases_run_the_batch_statement_by_statement():
    if connection.vendor == "postgresql":
        pytest.skip("PostgreSQL sends the batch in one round trip (the test above)")
    project, batch = _three_renames()
    with CaptureQueriesContext(connection) as queries:
        batch.run()
    assert len(queries.captured_queries) == 3
    project.refresh_from_db()
    assert project.name == "c"


def test_a_failing_statement_leaves_nothing_of_the_batch_written():
    project = ProjectFactory(name="kept")
    other = ProjectFactory()
    table = Project._meta.db_table
    batch = StatementBatch()
    batch.add(f"UPDATE {table} SET name = %s WHERE id = %s", ["lost", project.pk])
    # The slug is unique: this one fails after the rename has run.
    batch.add(f"UPDATE {table} SET slug = %s WHERE id = %s", [other.slug, project.pk])
    with pytest.raises(IntegrityError), transaction.atomic():
        batch.run()
    project.refresh_from_db()
    assert project.name == "kept"


def test_run_then_reads_after_the_queued_writes():
    project = ProjectFactory(name="old")
    table = Project._meta.db_table
    batch = StatementBatch()
    batch.add(f"UPDATE {table} SET name = %s WHERE id = %s", ["new", project.pk])
    with transaction.atomic():
        rows = batch.run_then(f"SELECT name FROM {table} WHERE id = %s", [project.pk])
    assert rows == [("new",)]


def _fields(instance) -> dict:
    return {
        field.attname: getattr(instance, field.attname)
        for field in type(instance)._meta.concrete_fields
    }


def test_model_rows_build_the_same_instances_as_the_orm():
    """JSON, dates, booleans and nulls come back as the ORM gives them, on either database."""
    answer = AnswerFactory(
        metadata={"model": "m-1", "scores": [0.5, 1]}, abstention=True, reference=""
    )
    claim = ClaimFactory(answer=answer, project=answer.project, tags=["number"], span_start=None)
    for model, pk in ((Answer, answer.pk), (Claim, claim.pk)):
        rows = model_rows(model)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {rows.columns('t')} FROM {model._meta.db_table} t WHERE t.id = %s", [pk]
            )
            (built,) = rows.instances(cursor.fetchall())
        assert _fields(built) == _fields(model.objects.get(pk=pk))
        assert not built._state.adding
    assert isinstance(built.created_at, datetime.datetime)
    assert built.tags == ["number"]


def test_model_rows_from_a_batch_build_the_same_instances_as_the_orm():
    """The same through a batch (prepared statements with server-side binding on PostgreSQL):
    JSON, dates, booleans and nulls converted as the ORM converts them."""
    answer = AnswerFactory(metadata={"model": "m-2", "n": [1, 2.5]}, abstention=False)
    claim = ClaimFactory(answer=answer, project=answer.project, tags=["date"], span_end=None)
    for model, pk in ((Answer, answer.pk), (Claim, claim.pk)):
        rows = model_rows(model)
        for _ in range(2):  # the second run reuses the prepared statement
            found = StatementBatch().run_then(
                f"SELECT {rows.columns('t')} FROM {model._meta.db_table} t WHERE t.id = %s", [pk]
            )
            (built,) = rows.instances(found)
            assert _fields(built) == _fields(model.objects.get(pk=pk))


def _prepared_texts() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [text for (text,) in cursor.fetchall()]


@pytest.mark.postgres
def test_postgresql_prepares_a_batch_once_per_connection_and_logs_it_as_one_query():
    project = ProjectFactory(name="before")
    table = Project._meta.db_table
    rename = f"UPDATE {table} SET name = %s WHERE id = %s AND slug <> 'prepared-test'"

    def run(name):
        batch = StatementBatch()
        batch.add(rename, [name, project.pk])
        batch.add(f"SELECT name FROM {table} WHERE id = %s", [project.pk])
        with CaptureQueriesContext(connection) as queries:
            rows = batch.run()
        return rows, queries.captured_queries

    (_, first), logged = run("one")
    assert first == [("one",)]
    # Django's query log holds the batch as one query, with its parameters written in.
    assert len(logged) == 1
    assert "'one'" in logged[0]["sql"]
    assert ";" in logged[0]["sql"]
    texts = [t for t in _prepared_texts() if "prepared-test" in t]
    assert texts == [f"UPDATE {table} SET name = $1 WHERE id = $2 AND slug <> 'prepared-test'"]
    (_, second), _ = run("two")
    assert second == [("two",)]
    assert [t for t in _prepared_texts() if "prepared-test" in t] == texts  # the same one


@pytest.mark.postgres
def test_with_prepared_statements_off_a_batch_goes_as_one_client_side_query(settings):
    settings.FAITHAUDIT_PREPARED_STATEMENTS = False
    project = ProjectFactory(name="before")
    table = Project._meta.db_table
    batch = StatementBatch()
    batch.add(
        f"UPDATE {table} SET name = %s WHERE id = %s AND slug <> 'not-prepared'", ["x", project.pk]
    )
    batch.add(f"SELECT name FROM {table} WHERE id = %s", [project.pk])
    with CaptureQueriesContext(connection) as queries:
        assert batch.run()[1] == [("x",)]
    assert len(queries.captured_queries) == 1
    assert not [t for t in _prepared_texts() if "not-prepared" in t]
