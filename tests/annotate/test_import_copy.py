"""How an import writes its rows: COPY with ids reserved from the sequences on PostgreSQL,
bulk_create elsewhere (annotate.bulk_insert). The rows must link up exactly as ORM-made rows
would, a late failure must leave nothing, and ordinary inserts afterwards must not collide."""

from pathlib import Path

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from annotate.bulk_insert import RowsInserter
from annotate.models import Answer, Claim, Gold, Label, LabelHistory, Passage, Verdict
from interchange.services import imports
from interchange.services.imports import ImportFailed, answers_import
from judges.models import JudgeVerdict
from tests.annotate.test_import_errors import counts, good, jsonl
from tests.annotate.test_import_formats import native_snapshot
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeRunFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

DATA = Path(__file__).parent / "data"


@pytest.fixture
def copies(monkeypatch):
    """The COPY statements run, in order."""
    statements = []
    original = psycopg.Cursor.copy

    def spy(self, statement, *args, **kwargs):
        statements.append(str(statement))
        return original(self, statement, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "copy", spy)
    return statements


@pytest.mark.django_db
def test_rows_inserter_returns_ids_in_row_order_and_fills_defaults():
    answer = AnswerFactory()
    rows = RowsInserter()
    ids = rows.insert(
        Claim,
        ("project_id", "answer_id", "text", "position", "tags"),
        [
            (answer.project_id, answer.pk, f"claim {n}", n, ["numeric"] if n else [])
            for n in range(3)
        ],
        ids=True,
    )
    claims = {claim.pk: claim for claim in Claim.objects.filter(pk__in=ids)}
    assert [claims[pk].text for pk in ids] == ["claim 0", "claim 1", "claim 2"]
    assert [claims[pk].tags for pk in ids] == [[], ["numeric"], ["numeric"]]
    first = claims[ids[0]]
    # Left out: the model's defaults, as Claim() would give them.
    assert (first.origin, first.labels_required, first.label_count) == ("manual", 1, 0)
    assert first.needs_review is False
    assert first.created_at is not None
    assert rows.insert(Claim, ("project_id",), []) == []


@pytest.mark.postgres
def test_import_on_postgresql_writes_by_copy_and_links_every_row(
    transactional_db, copies, monkeypatch
):
    monkeypatch.setattr(imports, "BATCH_ANSWERS", 2)  # two batches: ids reserved twice
    project = ProjectFactory(queue_seed=11, analysts_per_claim=1, double_labelled_share=0.5)
    result = answers_import(project=project, path_or_file=DATA / "native.jsonl")

    tables = [statement.split('"')[1] for statement in copies]
    assert tables[:3] == ["annotate_answer", "annotate_passage", "annotate_claim"]
    assert "annotate_label" in tables
    assert "judges_judgeverdict" in tables
    assert (result.answers, result.passages, result.claims, result.labels) == (3, 5, 3, 5)

    # The same rows an ORM import wrote (test_import_formats checks these values one by one)...
    snapshot = native_snapshot(project)
    assert [a["id"] for a in snapshot] == ["refund-1", "dose-2", "fee-3"]
    assert snapshot[0]["claims"][0]["cited"] == ["policy-7"]
    assert snapshot[0]["claims"][0]["tags"] == ["numeric"]
    assert Answer.objects.get(external_id="refund-1").metadata == {"citations": ["policy-7"]}
    # ...and every foreign key points inside its own answer.
    for claim in Claim.objects.filter(project=project):
        assert claim.project_id == project.pk
        pile = set(claim.answer.passages.values_list("pk", flat=True))
        assert set(claim.cited_passages.values_list("pk", flat=True)) <= pile
        for label in claim.labels.all():
            assert label.evidence_passage_id is None or label.evidence_passage_id in pile
    history = {h.label_id_at_time: h for h in LabelHistory.objects.all()}
    for label in Label.objects.all():
        assert history[label.pk].claim_id == label.claim_id
        assert history[label.pk].evidence_passage_id_at_time == label.evidence_passage_id
    verdicts = JudgeVerdict.objects.filter(claim__project=project)
    assert verdicts.count() == 3
    assert all(v.claim.answer.project_id == project.pk for v in verdicts)
    assert Gold.objects.filter(claim__project=project).count() == result.gold == 3


@pytest.mark.postgres
def test_import_on_postgresql_late_error_leaves_nothing(
    transactional_db, copies, tmp_path, monkeypatch
):
    """Batches already COPYed are rolled back with the rest: nothing of the file is committed."""
    monkeypatch.setattr(imports, "BATCH_ANSWERS", 2)
    project = ProjectFactory()
    records = [good(f"a{i}") for i in range(5)]
    records[4]["pile"] = "not a list"
    before = counts()
    with pytest.raises(ImportFailed):
        answers_import(project=project, path_or_file=jsonl(tmp_path, *records))
    assert copies, "the first batches were written before the bad line was read"
    assert counts() == before


@pytest.mark.postgres
def test_import_on_postgresql_database_error_mid_batch_leaves_nothing(
    transactional_db, tmp_path, monkeypatch
):
    monkeypatch.setattr(imports, "BATCH_ANSWERS", 2)
    project = ProjectFactory()
    records = [
        good(f"a{i}", claims=[{"text": "14 days.", "judge": {"name": "j", "verdict": "SUPPORTED"}}])
        for i in range(5)
    ]
    written = []
    insert = RowsInserter.insert

    def failing(self, model, attnames, rows, **kwargs):
        if model is JudgeVerdict and written:
            raise RuntimeError("the database went away")
        written.append(model)
        return insert(self, model, attnames, rows, **kwargs)

    monkeypatch.setattr(RowsInserter, "insert", failing)
    before = counts()
    with pytest.raises(RuntimeError):
        answers_import(project=project, path_or_file=jsonl(tmp_path, *records))
    assert Answer in written
    assert Claim in written
    assert counts() == before


@pytest.mark.postgres
def test_import_on_postgresql_leaves_sequences_ready_for_ordinary_inserts(transactional_db):
    project = ProjectFactory()
    answers_import(project=project, path_or_file=DATA / "native.jsonl")
    top = {
        model: model.objects.order_by("-pk").values_list("pk", flat=True).first()
        for model in (Answer, Passage, Claim, Label, LabelHistory, Gold, JudgeVerdict)
    }
    answer = AnswerFactory(project=project)
    passage = PassageFactory(answer=answer)
    claim = ClaimFactory(answer=answer, project=project)
    claim.cited_passages.add(passage)
    label = Label.objects.create(claim=claim, annotator=UserFactory(), verdict=Verdict.NOT_IN_PILE)
    history = LabelHistory.objects.create(
        claim=claim, annotator=label.annotator, action=LabelHistory.Action.CREATED
    )
    gold = Gold.objects.create(
        claim=claim, verdict=Verdict.NOT_IN_PILE, source=Gold.Source.ADJUDICATED
    )
    verdict = JudgeVerdict.objects.create(
        run=JudgeRunFactory(project=project), claim=claim, verdict="SUPPORTED"
    )
    for model, row in [
        (Answer, answer),
        (Passage, passage),
        (Claim, claim),
        (Label, label),
        (LabelHistory, history),
        (Gold, gold),
        (JudgeVerdict, verdict),
    ]:
        assert row.pk > top[model], model.__name__


@pytest.mark.postgres
def test_import_on_postgresql_reserves_ids_another_writer_cannot_take(transactional_db):
    """Ids come from nextval, so a concurrent ordinary insert gets a different one."""
    project = ProjectFactory()
    with transaction.atomic():
        rows = RowsInserter()
        reserved = rows._reserve(Answer, 3)
        other = AnswerFactory(project=project)
        assert other.pk not in reserved
        rows.insert(
            Answer,
            ("project_id", "external_id", "question", "text"),
            [(project.pk, f"x{n}", "q", "t") for n in range(3)],
            ids=True,
        )
    assert connection.vendor == "postgresql"
    assert Answer.objects.filter(project=project).count() == 4


@pytest.mark.postgres
def test_rows_inserter_copy_errors_are_django_database_errors(transactional_db):
    """A COPY that breaks a constraint raises django.db's IntegrityError, as bulk_create does."""
    answer = AnswerFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        RowsInserter().insert(
            Answer,
            ("project_id", "external_id", "question", "text"),
            [(answer.project_id, answer.external_id, "q", "t")],
        )
    assert Answer.objects.count() == 1


@pytest.mark.postgres
def test_import_with_labels_refreshes_the_planner_statistics(db):
    """Imported labels are followed by bulk queries (counters, unanimous gold) that PostgreSQL
    must plan for the rows just written, not for the tables as they were before."""

    def rows_known(model):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table]
            )
            return cursor.fetchone()[0]

    result = answers_import(project=ProjectFactory(), path_or_file=DATA / "native.jsonl")
    assert rows_known(Label) == result.labels == 5
    assert rows_known(Claim) == result.claims


@pytest.mark.postgres
def test_large_import_refreshes_the_statistics_its_commit_checks_need(db, tmp_path, monkeypatch):
    """The foreign-key checks at COMMIT look every answer up: planned for an answers table
    PostgreSQL still believes empty, they read a whole index per passage and claim."""
    monkeypatch.setattr(imports, "STATISTICS_MIN_ANSWERS", 3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotate_answer")  # empty: reltuples 0
        answers_import(
            project=ProjectFactory(),
            path_or_file=jsonl(tmp_path, *[good(f"a{i}") for i in range(3)]),
        )
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'annotate_answer'::regclass")
        assert cursor.fetchone()[0] == 3
